"""Label selectors: build the query string from Python values, and match objects in the cache.

The server filters lists and watches; the informer cache must filter the same way locally (listers), so the
grammar is parsed here once: `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x,y)`, `a`, `!a`, comma-separated
(all must hold), as in apimachinery's `labels.Parse`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

LabelSelectorInput = str | Mapping[str, str] | None

_IN_RE = re.compile(r"^\s*(?P<key>[^\s!=(),]+)\s+(?P<op>in|notin)\s*\((?P<values>[^)]*)\)\s*$")
_EQ_RE = re.compile(r"^\s*(?P<key>[^\s!=(),]+)\s*(?P<op>==|=|!=)\s*(?P<value>[^\s!=(),]*)\s*$")
_EXISTS_RE = re.compile(r"^\s*(?P<neg>!?)\s*(?P<key>[^\s!=(),]+)\s*$")


def format_label_selector(selector: LabelSelectorInput) -> str | None:
    """A selector string for the query: dicts become `k=v,k2=v2`; strings pass through."""
    if selector is None:
        return None
    if isinstance(selector, str):
        return selector or None
    return ",".join(f"{key}={value}" for key, value in selector.items()) or None


def format_field_selector(selector: str | Mapping[str, str] | None) -> str | None:
    """Field selectors have the same `k=v` form (`metadata.name=x,status.phase!=Running` as a string)."""
    return format_label_selector(selector)


@dataclass(frozen=True)
class Requirement:
    key: str
    operator: str  # "=", "!=", "in", "notin", "exists", "!"
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, Any]) -> bool:
        present = self.key in labels
        value = labels.get(self.key)
        if self.operator == "exists":
            return present
        if self.operator == "!":
            return not present
        if self.operator in ("=", "in"):
            return present and value in self.values
        # "!=" and "notin" match objects without the label too.
        return not present or value not in self.values


@dataclass(frozen=True)
class LabelSelector:
    """A parsed selector; the empty selector matches everything."""

    requirements: tuple[Requirement, ...] = ()

    @classmethod
    def parse(cls, selector: LabelSelectorInput) -> LabelSelector:
        text = format_label_selector(selector)
        if not text:
            return cls()
        return cls(tuple(_parse_requirement(part) for part in _split_top_level(text)))

    def matches(self, labels: Mapping[str, Any] | None) -> bool:
        labels = labels or {}
        return all(requirement.matches(labels) for requirement in self.requirements)

    @property
    def empty(self) -> bool:
        return not self.requirements


def _split_top_level(text: str) -> list[str]:
    """Split on commas that are not inside `( ... )` value sets."""
    parts: list[str] = []
    depth = 0
    current: list[str] = []
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    if depth != 0:
        raise ValueError(f"unbalanced parentheses in label selector {text!r}")
    return [part for part in parts if part.strip()]


def _parse_requirement(part: str) -> Requirement:
    if match := _IN_RE.match(part):
        values = frozenset(v.strip() for v in match["values"].split(",") if v.strip())
        return Requirement(match["key"], match["op"], values)
    if match := _EQ_RE.match(part):
        operator = "!=" if match["op"] == "!=" else "="
        return Requirement(match["key"], operator, frozenset({match["value"]}))
    if match := _EXISTS_RE.match(part):
        return Requirement(match["key"], "!" if match["neg"] else "exists")
    raise ValueError(f"invalid label selector requirement {part!r}")
