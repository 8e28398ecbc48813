"""From marker text to a typed value: `kubebuilder:validation:Minimum=0` -> (Minimum's definition, 0)."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Any

from pyop_scaffold.manifests.errors import MarkerError, SourceLocation
from pyop_scaffold.manifests.markers.registry import ITEMS_PREFIX, REGISTRY, MarkerDef
from pyop_scaffold.manifests.markers.values import Scanner, ValueSyntaxError, read_value, shown

# Markers of other tools that may sit in the same comments; pyop neither uses nor rejects them.
_VALIDATION = "kubebuilder:validation:"
_FOREIGN_PREFIXES = ("kubebuilder:scaffold:", "kubebuilder:ac:", "k8s:openapi-gen")
# Families pyop reads whole: an unknown name in them is a typo (`+genclient:onlyVerb`), not another tool's marker.
_OWNED_PREFIXES = ("kubebuilder:", "genclient", "k8s:deepcopy-gen")


@dataclass(frozen=True)
class ParsedMarker:
    definition: MarkerDef
    value: Any
    location: SourceLocation
    items: bool = False  # written as kubebuilder:validation:items:<Name>: applies to list items
    text: str = ""

    @property
    def name(self) -> str:
        return self.definition.name

    @property
    def written_name(self) -> str:
        """The name as written: an alias (`k8s:listType`) or items form stays as the user spelled it."""
        body = self.text[len(ITEMS_PREFIX) :] if self.items else self.text
        prefix = ITEMS_PREFIX if self.items else ""
        for name in sorted((self.definition.name, *self.definition.aliases), key=len, reverse=True):
            bare = name[len(_VALIDATION) :] if self.items and name.startswith(_VALIDATION) else name
            if body.startswith(bare):
                return prefix + bare
        return self.name


def parse_marker(text: str, location: SourceLocation) -> ParsedMarker | None:
    """Parse marker text (after the `+`). Unknown `kubebuilder:` markers are errors; other unknown ones are ignored.

    controller-gen silently ignores a misspelled marker, which turns a typo into a missing validation; pyop
    names the marker, the place, and the closest known spelling.
    """
    body = text.strip()
    if _SURROGATE.search(body):
        raise MarkerError(f"invalid marker +{_head(body)}: a lone surrogate is not text (not valid UTF-8)", location)
    if "\n" in body or "\r" in body:  # comments cannot hold one; parse_marker's other callers might
        raise MarkerError(f"invalid marker +{_head(body)}: a marker stays on one line", location)
    known = _PARSED.get(body)
    if known is not None:
        definition, value, items = known
        return ParsedMarker(definition, _fresh(value), location, items=items, text=body)
    parsed = _parse(body, location)
    if parsed is not None:
        if len(_PARSED) >= _MAX_PARSED:
            _PARSED.clear()
        _PARSED[body] = (parsed.definition, _fresh(parsed.value), parsed.items)
    return parsed


# Marker text -> (definition, value, items form) of the markers parsed so far: the same text says the same thing
# wherever it is written (only the location differs), and a project repeats its markers a lot.
_PARSED: dict[str, tuple[MarkerDef, Any, bool]] = {}
_MAX_PARSED = 1 << 14
_SURROGATE = re.compile("[\ud800-\udfff]")
# The longest registered name: a longer prefix of a marker cannot be a name, so finding the name costs O(1) prefixes.
_LONGEST_NAME = max(len(name) for name in REGISTRY)


def _fresh(value: Any) -> Any:
    """A copy of the lists and dicts in a parsed value, so that no two markers share a mutable value."""
    if type(value) is list:
        return [_fresh(item) for item in value]
    if type(value) is dict:
        return {key: _fresh(item) for key, item in value.items()}
    return value


def _parse(body: str, location: SourceLocation) -> ParsedMarker | None:
    items = False
    lookup = body
    if body.startswith(ITEMS_PREFIX):
        items = True
        lookup = _VALIDATION + body[len(ITEMS_PREFIX) :]
    name, rest = _split_name(lookup)
    definition = REGISTRY.get(name)
    if definition is None:
        raise_if_misspelled(name, items, location)
        return None
    if items and not definition.items:
        raise MarkerError(
            f"unknown marker +{_head(body.split('=', 1)[0])}: +{definition.name} has no items: form", location
        )
    if definition.is_flag and rest.startswith(":"):  # `+genclient:onlyVerb=x` read as `+genclient` + `:...`
        raise_if_misspelled(name + rest.split("=", 1)[0], items, location)
    try:
        value = _parse_arguments(definition, rest)
    except ValueSyntaxError as exc:
        raise MarkerError(f"invalid marker +{_head(body)}: {exc}", location) from None
    return ParsedMarker(definition, value, location, items=items, text=body)


def raise_if_misspelled(name: str, items: bool, location: SourceLocation) -> None:
    """An unknown `kubebuilder:` marker is an error; so is a near miss of a known marker of another family
    (`+listtype=map`, `+optinal`). Other unknown markers belong to other tools and are left alone."""
    if name.startswith(_FOREIGN_PREFIXES) or " " in name:
        return
    if len(name) > 2 * _LONGEST_NAME:  # no known name is close (difflib's ratio is at most 2*shorter/total)
        if name.startswith(_OWNED_PREFIXES):
            raise MarkerError(f"unknown marker +{_head(name)}", location)
        return
    known = list(REGISTRY)
    # `name:arg=value` puts an argument name after the marker name; match with and without it.
    shorter = name.rsplit(":", 1)[0]
    suggestion = difflib.get_close_matches(name, known, n=1, cutoff=0.8) or difflib.get_close_matches(
        shorter, known, n=1, cutoff=0.8
    )
    if not name.startswith(_OWNED_PREFIXES):
        near = difflib.get_close_matches(name, known, n=1, cutoff=0.85)
        if not near or len(name) < 6:
            return
        suggestion = near
    word = name.rsplit(":", 1)[-1].lower()
    same_word = [k for k in known if k.rsplit(":", 1)[-1].lower() == word]
    if same_word:  # a wrong case or prefix (`+kubebuilder:validation:nullable` is `+nullable`)
        suggestion = difflib.get_close_matches(name, same_word, n=1, cutoff=0) or same_word[:1]
    if suggestion and items and suggestion[0].startswith(_VALIDATION):
        suggestion = [ITEMS_PREFIX + suggestion[0][len(_VALIDATION) :]]
    written = _head(ITEMS_PREFIX + name[len(_VALIDATION) :] if items else name)
    hint = f"; did you mean +{suggestion[0]}?" if suggestion else ""
    raise MarkerError(f"unknown marker +{written}{hint}", location)


def _split_name(body: str) -> tuple[str, str]:
    """Find the longest registered name that `body` starts with, followed by `=`, `:` or the end."""
    best = ""
    for name in _candidates(body):
        if name in REGISTRY and len(name) > len(best):
            best = name
    if best:
        return best, body[len(best) :]
    cut = body.find("=")
    head = body if cut < 0 else body[:cut]
    return head, body[len(head) :]


def _candidates(body: str) -> list[str]:
    head = body[: _LONGEST_NAME + 1]
    ends = [i for i, c in enumerate(head) if c in "=:"] + [len(body)]
    return [body[:i] for i in ends if i <= _LONGEST_NAME]


def _head(body: str) -> str:
    """A marker as an error message shows it: cut to a readable length, unprintable characters escaped."""
    shown = body if len(body) <= 120 else f"{body[:120]}... (+{len(body) - 120} more characters)"
    return shown if shown.isprintable() else "".join(c if c.isprintable() else repr(c)[1:-1] for c in shown)


def _parse_arguments(definition: MarkerDef, rest: str) -> Any:
    if rest.startswith(":=") and (definition.parse is not None or definition.value is not None):
        # controller-tools reads `+name:=value` as the unnamed argument (an empty argument name): same as `=`.
        rest = rest[1:]
    if definition.parse is not None:
        if not rest.startswith("="):
            raise ValueSyntaxError(f"expected '=<{definition.value.value if definition.value else 'value'}>'")
        return definition.parse(rest[1:])
    if definition.is_flag:
        if rest in ("", "=true"):
            return True
        if rest == "=false":
            return False
        raise ValueSyntaxError(f"+{definition.name} takes no value")
    if definition.value is not None:
        if not rest.startswith("="):
            if definition.value.name == "BOOL" and rest == "":
                return True
            raise ValueSyntaxError(f"expected '=<{definition.value.value}>'")
        scanner = Scanner(rest[1:])
        value = read_value(scanner, definition.value, "")
        if not scanner.at_end():
            raise ValueSyntaxError(f"unexpected text {scanner.text[scanner.pos :]!r}")
        return value
    return _parse_named_args(definition, rest)


def _parse_named_args(definition: MarkerDef, rest: str) -> dict[str, Any]:
    values: dict[str, Any] = {}
    known = {arg.name: arg for arg in definition.args}
    if rest.startswith(":"):
        scanner = Scanner(rest[1:])
        while not scanner.at_end():
            scanner.skip_spaces()
            name = scanner.read_string("=,")
            if name not in known:
                allowed = ", ".join(known)
                raise ValueSyntaxError(f"unknown argument {shown(name)} (allowed: {allowed})")
            if name in values:  # controller-gen keeps the last one silently: `rule=a,rule=true` would drop a rule
                raise ValueSyntaxError(f"argument {name} is given twice; keep one")
            scanner.expect("=")
            values[name] = read_value(scanner, known[name].type, ",")
            scanner.skip_spaces()
            if not scanner.at_end():
                scanner.expect(",")
    elif rest:
        raise ValueSyntaxError("expected ':arg=value,...'")
    missing = [arg.name for arg in definition.args if not arg.optional and arg.name not in values]
    if missing:
        raise ValueSyntaxError(f"missing argument(s) {', '.join(missing)}")
    for arg in definition.args:
        values.setdefault(arg.name, None)
    return values
