"""YAML text with Helm template actions in it, written from plain objects.

A template is made by dumping an object with PyYAML, so every literal part is valid YAML whatever its content, and
then replacing placeholder tokens with template text. A `Template` hands out the tokens:
- `inline(text)`: a scalar replaced in place (`replicas: {{ .Values.manager.replicas }}`);
- `block(lines)`: a mapping key (or list item) whose whole line is replaced by lines at that line's indentation,
  where `{indent}` in a line is that line's indentation and `{child}` two more (for `nindent`).
`{{` in the object's own strings (a CRD description quoting Go templates, say) is escaped so Helm prints it as is.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

_TOKEN = "__PYOP_TPL_{}__"
_TOKEN_RE = re.compile(r"__PYOP_TPL_(\d+)__")
_LINE_RE = re.compile(r"^( *)(- )?__PYOP_TPL_(\d+)__(: null)?$")
NAMESPACE_TOKEN = "__PYOP_NAMESPACE__"


# libyaml's emitter when PyYAML was built with it (as scaffold/manifests/yaml_output.py): same output, faster.
_BaseDumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _Dumper(_BaseDumper):  # type: ignore[valid-type,misc]
    """Multi-line strings as literal blocks (a CRD's descriptions stay readable); keys in their given order."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


def dump(data: Any) -> str:
    """Deterministic YAML: keys in insertion order, no line wrapping, two-space indentation, lists not indented."""
    text: str = yaml.dump(data, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=1 << 30)
    return text


@dataclass
class Template:
    """Hands out placeholder tokens and turns a dumped object into template text."""

    _inline: dict[int, str] = field(default_factory=dict)
    _blocks: dict[int, Sequence[str]] = field(default_factory=dict)

    def inline(self, text: str) -> str:
        index = len(self._inline) + len(self._blocks)
        self._inline[index] = text
        return _TOKEN.format(index)

    def block(self, lines: Sequence[str]) -> str:
        index = len(self._inline) + len(self._blocks)
        self._blocks[index] = tuple(lines)
        return _TOKEN.format(index)

    def render(self, data: Any) -> str:
        text = escape_actions(dump(data))
        out: list[str] = []
        for line in text.splitlines():
            match = _LINE_RE.match(line)
            if match and int(match.group(3)) in self._blocks:
                indent = match.group(1)
                if match.group(2) and match.group(4):  # the first key of a list item's mapping
                    out.append(indent + "-")  # `-` then the mapping below it, two deeper: still that item
                    indent += "  "
                width, child = str(len(indent)), str(len(indent) + 2)
                lines = self._blocks[int(match.group(3))]
                out.extend(indent + part.replace("{indent}", width).replace("{child}", child) for part in lines)
                continue
            out.append(line)
        body = "\n".join(out) + "\n"
        body = body.replace(NAMESPACE_TOKEN, "{{ .Release.Namespace }}")
        return _TOKEN_RE.sub(self._replace_inline, body)

    def _replace_inline(self, match: re.Match[str]) -> str:
        index = int(match.group(1))
        if index not in self._inline:
            raise ValueError(f"placeholder {match.group(0)} is a block where only a scalar fits")
        return self._inline[index]


def escape_actions(text: str) -> str:
    """`{{` of literal text as Helm prints it (`{{ "{{" }}`); one pass, so the replacement is not re-read."""
    return re.sub(r"\{\{", '{{ "{{" }}', text)


def wrap(condition: str | None, body: str) -> str:
    """The whole file under `{{- if condition }}`."""
    if not condition:
        return body
    return f"{{{{- if {condition} }}}}\n{body}{{{{- end }}}}\n"
