"""Manifest YAML: the one-walk event writer gives exactly what PyYAML's own dump gives, for every kind of scalar."""

from __future__ import annotations

import math
from typing import Any

import pytest
import yaml

from pyop_scaffold.manifests.yaml_output import _Dumper, dump_documents

TRICKY_STRINGS = [
    "", "true", "True", "yes", "no", "on", "off", "null", "~", "1", "1.5", "0x1F", "0o7", "1e3", "1_000", ".5",
    "2001-12-14", "12:30", " leading", "trailing ", "a\nb", "ends with newline\n", "-", "- a", "*x", "&x", "!x", "%x",
    "@x", "`x", "'q'", '"q"', "{x}", "[x]", "x: y", "# not a comment", "a #b", "é ü 漢字", "tab\there", "=", "<<",
    "> folded", "| literal", "?", "?x", ":", "::", "https://example.com/a#b", "^(\\+|-)?([0-9]+)$", "x" * 300,
]  # fmt: skip
SCALARS: list[Any] = [0, -3, 10**20, 1.5, -0.5, 0.1, 1e20, 1e-7, math.inf, -math.inf, True, False, None]


def _pyyaml(documents: list[Any], header: str) -> str:
    """The reference: PyYAML's representer and serializer, one `---` document per item, as before."""

    parts = [header]
    for document in documents:
        parts.append("---\n")
        parts.append(
            yaml.dump(
                document, Dumper=_Dumper, sort_keys=True, default_flow_style=False, width=4096, allow_unicode=True
            )
        )
    return "".join(parts)


@pytest.mark.parametrize("value", TRICKY_STRINGS + SCALARS, ids=repr)
def test_every_scalar_is_written_as_pyyaml_writes_it(value: Any) -> None:
    documents = [{"value": value, "list": [value], "nested": {"key": {"deeper": value}}}]
    assert dump_documents(documents) == _pyyaml(documents, "")


def test_documents_header_empty_collections_and_key_order() -> None:
    documents = [
        {"b": {}, "a": [], "c": [{"z": 1, "y": [[], {}]}], "d": {"true": 1, "1": "x", "": None}},
        {"kind": "Second", "items": [1, "two", 3.0]},
    ]
    header = "# Copyright\n#\n# Licensed.\n"
    text = dump_documents(documents, header)
    assert text == _pyyaml(documents, header)
    assert text.startswith(header + "---\n")
    assert list(yaml.safe_load_all(text)) == documents


def test_nan_and_unrepresentable_values() -> None:
    text = dump_documents([{"x": math.nan}])
    assert text == _pyyaml([{"x": math.nan}], "") and ".nan" in text
    with pytest.raises(Exception, match="cannot|represent"):
        dump_documents([{"x": object()}])


def test_strings_are_quoted_as_go_yaml_quotes_them() -> None:
    """controller-gen's output double-quotes a string that would read as another type (`- ""` for the core API
    group, `"true"` for a label value) and single-quotes one that YAML syntax forbids plain (`'*'`)."""
    text = dump_documents([{"groups": ["", "apps"], "labels": {"on": "true", "n": "1", "": "~"}, "verbs": ["*"]}])
    assert text == ('---\ngroups:\n- ""\n- apps\nlabels:\n  "": "~"\n  n: "1"\n  "on": "true"\nverbs:\n- \'*\'\n')
