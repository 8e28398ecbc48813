"""Label selectors: build the query string from Python values, and match objects in the cache.

The server filters lists and watches; the informer cache must filter the same way locally (listers), so both parse
with `pyop.api.selectors` (apimachinery's `labels.Parse` grammar: `a=b`, `a==b`, `a!=b`, `a in (x,y)`,
`a notin (x,y)`, `a`, `!a`, `a>1`, `a<1`, comma-separated, all must hold).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pyop.api.selectors import Requirement, SelectorError, escape_field_value, parse_label_selector

LabelSelectorInput = str | Mapping[str, str] | None


def format_label_selector(selector: LabelSelectorInput) -> str | None:
    """A selector string for the query: dicts become `k=v,k2=v2`; strings pass through."""
    if selector is None:
        return None
    if isinstance(selector, str):
        return selector or None
    return ",".join(f"{key}={value}" for key, value in selector.items()) or None


def format_field_selector(selector: str | Mapping[str, str] | None) -> str | None:
    """Field selectors have the same `k=v` form (`metadata.name=x,status.phase!=Running` as a string); a dict's
    values are escaped as fields.EscapeValue does (`a,b` is sent as `a\\,b`)."""
    if isinstance(selector, Mapping):
        return ",".join(f"{key}={escape_field_value(value)}" for key, value in selector.items()) or None
    return format_label_selector(selector)


@dataclass(frozen=True)
class LabelSelector:
    """A parsed selector; the empty selector matches everything. Parsed by `pyop.api.selectors` (the parser the
    servers use), so the cache filters exactly as the server does; a bad selector raises `SelectorError`, a
    ValueError."""

    requirements: tuple[Requirement, ...] = ()

    @classmethod
    def parse(cls, selector: LabelSelectorInput) -> LabelSelector:
        text = format_label_selector(selector)
        if not text:
            return cls()
        return cls(parse_label_selector(text))

    def matches(self, labels: Mapping[str, Any] | None) -> bool:
        labels = labels or {}
        return all(requirement.matches(labels) for requirement in self.requirements)

    @property
    def empty(self) -> bool:
        return not self.requirements


__all__ = [
    "LabelSelector",
    "LabelSelectorInput",
    "Requirement",
    "SelectorError",
    "format_field_selector",
    "format_label_selector",
]
