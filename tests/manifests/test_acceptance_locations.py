"""Acceptance-check errors name the file and line behind them: the marker that set the keyword, else the field
the path ends at, else the kind's class; one line per error, every line located."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from manifests_helpers import fails, line_of, project, pyop

TYPES = "shipyard_op/api/v1/ship_types.py"
LOCATED = re.compile(r"^(Error: )?(?P<file>[\w./-]+\.py):(?P<line>\d+): The CustomResourceDefinition ")


def _module(spec_body: str, kind_markers: str = "", extra: str = "") -> str:
    return f"""
class ShipSpec(KubeModel):
{spec_body}

{extra}
# +kubebuilder:object:root=true
{kind_markers}
class Ship(Resource, group_version=GROUP_VERSION):
    spec: ShipSpec
"""


def _located(stderr: str) -> list[tuple[str, int, str]]:
    lines = stderr.strip().splitlines()
    found = []
    for line in lines:
        match = LOCATED.match(line)
        assert match is not None, f"no file:line in {line!r}"
        found.append((match["file"], int(match["line"]), line))
    return found


@pytest.mark.parametrize(
    ("body", "marker", "message"),
    [
        (
            "    # +kubebuilder:validation:UniqueItems=true\n    names: list[str] = []",
            "UniqueItems",
            "uniqueItems cannot be set to true",
        ),
        ("    # +kubebuilder:validation:Schemaless\n    free: Any = None", "Schemaless", "type: Required value"),
        (
            '    # name is a name.\n    # +kubebuilder:validation:XValidation:rule="self.size() >",message="x"\n'
            "    name: str",
            "XValidation",
            "compilation failed",
        ),
        ("    # +kubebuilder:validation:Pattern=`[`\n    name: str", "Pattern", "must be a valid regular expression"),
        (
            "    # +kubebuilder:validation:items:Pattern=`(`\n    names: list[str] = []",
            "items:Pattern",
            "items.pattern",
        ),
        ("    # +kubebuilder:default=abc\n    crew: int | None = None", "kubebuilder:default", "default"),
    ],
)
def test_an_error_names_the_marker_that_caused_it(tmp_path: Path, body: str, marker: str, message: str) -> None:
    root = project(tmp_path / "op", {"v1/ship_types.py": _module(body)})
    found = _located(fails(root))
    assert len(found) == 1
    file, line, text = found[0]
    assert (file, line) == (TYPES, line_of(root / TYPES, marker))
    assert message in text and 'The CustomResourceDefinition "ships.fleet.example.com" is invalid: ' in text


def test_a_marker_on_a_nested_model_class_is_named(tmp_path: Path) -> None:
    extra = "class PortSpec(KubeModel):\n    # +kubebuilder:validation:UniqueItems=true\n    numbers: list[int] = []\n"
    root = project(tmp_path / "op", {"v1/ship_types.py": _module("    port: PortSpec | None = None", extra=extra)})
    [(file, line, text)] = _located(fails(root))
    assert (file, line) == (TYPES, line_of(root / TYPES, "UniqueItems"))
    assert "properties[port].properties[numbers].uniqueItems" in text


def test_kind_level_errors_name_the_kind_marker(tmp_path: Path) -> None:
    root = project(
        tmp_path / "op",
        {
            "v1/ship_types.py": _module(
                "    name: str", kind_markers="# +kubebuilder:selectablefield:JSONPath=`.spec.nope`"
            )
        },
    )
    [(file, line, text)] = _located(fails(root))
    assert (file, line) == (TYPES, line_of(root / TYPES, "selectablefield"))
    assert "selectableFields[0]" in text


def test_each_version_names_its_own_file(tmp_path: Path) -> None:
    body = _module("    # +kubebuilder:validation:Pattern=`[`\n    name: str")
    # v2 has another schema, so errors are reported per version.
    v2 = _module(
        "    # +kubebuilder:validation:Pattern=`[`\n    name: str\n    size: int = 1", "# +kubebuilder:storageversion"
    )
    root = project(tmp_path / "op", {"v1/ship_types.py": body, "v2/ship_types.py": v2})
    found = _located(fails(root))
    files = {(file, line) for file, line, _ in found}
    assert files == {
        (TYPES, line_of(root / TYPES, "Pattern")),
        ("shipyard_op/api/v2/ship_types.py", line_of(root / "shipyard_op/api/v2/ship_types.py", "Pattern")),
    }
    assert all("spec.versions[" in text for _, _, text in found)


def test_a_rule_over_the_cost_budget_names_the_bounds_to_add(tmp_path: Path) -> None:
    body = (
        '    # +kubebuilder:validation:XValidation:rule="self.all(n, n.matches(\'^[a-z]+$\'))",message="lowercase"\n'
        "    names: list[str] = []"
    )
    root = project(tmp_path / "op", {"v1/ship_types.py": _module(body)})
    found = _located(fails(root))
    assert len(found) == 3  # the rule, the same rule as the schema total's main contributor, the total
    rule_errors = [text for _, _, text in found if "rule: Forbidden: estimated rule cost exceeds budget" in text]
    assert len(rule_errors) == 1
    assert "by factor of more than 100x" in rule_errors[0]
    assert rule_errors[0].endswith(
        "; bound it: add maxItems to spec.names (+kubebuilder:validation:MaxItems), "
        "add maxLength to spec.names[*] (+kubebuilder:validation:MaxLength)"
    )
    assert found[0][:2] == (TYPES, line_of(root / TYPES, "XValidation"))


def test_bounding_the_list_and_its_strings_makes_the_rule_affordable(tmp_path: Path) -> None:
    body = (
        '    # +kubebuilder:validation:XValidation:rule="self.all(n, n.matches(\'^[a-z]+$\'))",message="lowercase"\n'
        "    # +kubebuilder:validation:MaxItems=100\n"
        "    # +kubebuilder:validation:items:MaxLength=63\n"
        "    names: list[str] = []"
    )
    root = project(tmp_path / "op", {"v1/ship_types.py": _module(body)})
    assert pyop("make", "manifests", cwd=root).exit_code == 0
