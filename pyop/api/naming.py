"""Kubernetes naming: the English plural a kind gets when nobody names it, and the wire name of a field.

Kubebuilder derives the plural with `flect.Pluralize(strings.ToLower(kind))`; the runtime (typed clients) and the
scaffolder must agree on that word, so the one implementation lives here, in the runtime package. Likewise the
JSON name of a model field: the models, the CRD generator and the built-in models' generator use one function.
"""

from __future__ import annotations

import re

# Words whose plural does not follow a rule (singular -> plural), as flect has them.
_IRREGULAR: dict[str, str] = {
    "alias": "aliases",
    "analysis": "analyses",
    "axis": "axes",
    "basis": "bases",
    "cactus": "cacti",
    "child": "children",
    "crisis": "crises",
    "criterion": "criteria",
    "datum": "data",
    "diagnosis": "diagnoses",
    "echo": "echoes",
    "foot": "feet",
    "fungus": "fungi",
    "goose": "geese",
    "hero": "heroes",
    "index": "indices",
    "leaf": "leaves",
    "louse": "lice",
    "man": "men",
    "matrix": "matrices",
    "medium": "media",
    "mouse": "mice",
    "ox": "oxen",
    "person": "people",
    "phenomenon": "phenomena",
    "potato": "potatoes",
    "quiz": "quizzes",
    "radius": "radii",
    "thesis": "theses",
    "tomato": "tomatoes",
    "tooth": "teeth",
    "vertex": "vertices",
    "woman": "women",
}

# Words that are the same in singular and plural.
_UNCOUNTABLE: frozenset[str] = frozenset(
    {
        "data",
        "deer",
        "endpoints",
        "equipment",
        "fish",
        "information",
        "metadata",
        "money",
        "news",
        "police",
        "rice",
        "series",
        "sheep",
        "species",
    }
)

# Suffix rules tried in order; the first match wins.
_SUFFIX_RULES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), replacement)
    for pattern, replacement in (
        (r"(quiz)$", r"\1zes"),
        (r"(matr|vert|ind)(ix|ex)$", r"\1ices"),
        (r"(ss|sh|ch|x|z)$", r"\1es"),
        (r"(us)$", r"\1es"),  # status -> statuses, bus -> buses
        (r"([^aeiouy])y$", r"\1ies"),
        (r"(?<!ch)(?<!ro)(?<!he)(?<!be)(?<!ru)(?<!f)(lf|rf|af|eaf)$", r"\1ves"),
        (r"(kni|wi|li)fe$", r"\1ves"),
        (r"(s)is$", r"\1es"),
    )
)


def pluralize(word: str) -> str:
    """Return the English plural of a lower-case word, handling irregular and uncountable words."""
    if not word:
        return word
    if word in _UNCOUNTABLE:
        return word
    for singular, plural in _IRREGULAR.items():
        # Short irregulars ("ox", "man") only match whole words: "box" and "human" follow the rules.
        if word == singular or (len(singular) >= 4 and word.endswith(singular)):
            return word[: len(word) - len(singular)] + plural
    for pattern, replacement in _SUFFIX_RULES:
        if pattern.search(word):
            if replacement.endswith("ves"):
                return _to_ves(word)
            return pattern.sub(replacement, word)
    if word.endswith("s"):
        return word
    return word + "s"


def _to_ves(word: str) -> str:
    if word.endswith("fe"):
        return word[:-2] + "ves"
    return word[:-1] + "ves"


def default_plural(kind: str) -> str:
    """The plural resource name Kubebuilder gives a kind: plural of the lower-cased kind."""
    return pluralize(kind.lower())


def json_name(field: str) -> str:
    """The wire name of a snake_case field, as a Go field's json tag is written: `max_surge` -> `maxSurge`.

    Each word after the first starts with a capital; nothing else changes case. pydantic's `to_camel` also
    capitalises a letter that follows a digit (`k8s_set_list` -> `k8SSetList`), a name no Kubernetes API uses
    (Go: `k8sSetList`). A name without underscores keeps its letters, first one lowered (`minReadySeconds`).
    """
    head, *words = field.split("_")
    return head[:1].lower() + head[1:] + "".join(word[:1].upper() + word[1:] for word in words)

