"""Markers that are misspelled, misplaced, malformed or contradicted: `pyop make manifests` names the file, the line
and both sides, exits 2 and writes nothing. controller-gen ignores most of these silently."""

from __future__ import annotations

from pathlib import Path

import pytest
from manifests_helpers import TYPES_HEADER, fails, generate, line_of, project, spec_of

TYPES = "shipyard_op/api/v1/ship_types.py"


def _module(spec_body: str, before_spec: str = "", spec_markers: str = "") -> str:
    return f"""
{before_spec}
{spec_markers}
class ShipSpec(KubeModel):
{spec_body}


# +kubebuilder:object:root=true
class Ship(Resource, group_version=GROUP_VERSION):
    spec: ShipSpec
"""


def _error_line(root: Path, stderr: str) -> tuple[int, str]:
    """(line number, message) of a one-line `Error: <file>:<line>: <message>` on stderr."""
    text = stderr.strip().removeprefix("Error: ")
    assert text.startswith(TYPES + ":"), stderr
    line, _, message = text[len(TYPES) + 1 :].partition(": ")
    return int(line), message


MARKER_CASES = [
    # Misspelled: an error with a suggestion, where controller-gen would silently skip the validation.
    (
        "    # +kubebuilder:validation:Maximun=3\n    crew: int",
        "unknown marker +kubebuilder:validation:Maximun; did you mean +kubebuilder:validation:Maximum?",
    ),
    (
        "    # +kubebuilder:validation:items:MaxLenght=3\n    names: list[str]",
        "did you mean +kubebuilder:validation:items:MaxLength?",
    ),
    ("    # +listtype=map\n    names: list[str]", "unknown marker +listtype; did you mean +listType?"),
    ("    # +optinal\n    name: str", "unknown marker +optinal; did you mean +optional?"),
    (
        "    # +kubebuilder:validation:items:Required\n    names: list[str]",
        "+kubebuilder:validation:Required has no items: form",
    ),
    # Misplaced: the marker and where it was written are both named.
    (
        "    # +kubebuilder:subresource:status\n    name: str",
        "+kubebuilder:subresource:status is a type marker and cannot be used on field ShipSpec.name",
    ),
    ("    # +k8s:enum\n    name: str", "+k8s:enum is a type marker and cannot be used on field ShipSpec.name"),
    (
        "    # +groupName=fleet.example.com\n    name: str",
        "+groupName is a package marker and cannot be used on field ShipSpec.name",
    ),
    (
        "    # +kubebuilder:validation:AtMostOneOf=a;b\n    name: str",
        "+kubebuilder:validation:AtMostOneOf is a type marker and cannot be used on field ShipSpec.name",
    ),
    # Malformed values and arguments.
    ("    # +kubebuilder:validation:MaxLength=abc\n    name: str", "expected an integer, found 'abc'"),
    ("    # +default=forty\n    name: str = ''", "expected JSON, found 'forty'"),
    (
        "    # +kubebuilder:validation:Maximum=3\n    # +kubebuilder:validation:Maximum=4\n    crew: int",
        "+kubebuilder:validation:Maximum is written twice on field ShipSpec.crew with different values",
    ),
    (
        '    # +kubebuilder:validation:XValidation:rule="self > 0",reason=Bogus\n    crew: int',
        "XValidation reason 'Bogus' is not one of FieldValueInvalid",
    ),
    (
        '    # +kubebuilder:externalDocs:url="not a url"\n    name: str',
        "externalDocs url 'not a url' is not an absolute",
    ),
    ("    # +kubebuilder:title=3\n    name: str", "title must be a string, got 3"),
    # Wrong for the field's type.
    (
        "    # +kubebuilder:validation:MinLength=2\n    crew: int",
        "MinLength=2: minLength applies to string fields, not to type integer",
    ),
    (
        "    # +kubebuilder:validation:items:MaxLength=2\n    name: str",
        "applies to list items, but the field is not a list",
    ),
    ("    # +listMapKey=name\n    names: list[str]", "listMapKey needs +listType=map on the same list"),
    ("    # +kubebuilder:validation:Minimum=1.5\n    crew: int", "minimum=1.5 is not an integer, but the field is"),
    ("    # +required\n    # +optional\n    name: str", "field is marked both required and optional"),
]


@pytest.mark.parametrize(("body", "message"), MARKER_CASES)
def test_marker_problems_name_file_line_and_problem(tmp_path: Path, body: str, message: str) -> None:
    root = project(tmp_path / "op", {"v1/ship_types.py": _module(body)})
    line, text = _error_line(root, fails(root))
    assert message in text
    source_line = (root / TYPES).read_text().splitlines()[line - 1].strip()
    assert source_line.startswith("# +"), f"line {line} should be a marker line, is {source_line!r}"


@pytest.mark.parametrize(
    ("markers", "body", "message"),
    [
        ("# +optional", "    name: str", "+optional is a field marker and cannot be used on class ShipSpec"),
        ("# +kubebuilder:default=1", "    name: str", "+kubebuilder:default is a field marker"),
        ("# +k8s:enum", "    name: str", "k8s:enum belongs on a str Enum class"),
        (
            "# +kubebuilder:validation:ExactlyOneOf=a;b",
            "    a: str\n    b: str | None = None",
            "ExactlyOneOf members must be optional (give them a default or +optional); required: a",
        ),
        (
            "# +kubebuilder:validation:AtLeastOneOf=a;c",
            "    a: str | None = None",
            "AtLeastOneOf names field(s) c that the type does not have",
        ),
        (
            "# +kubebuilder:validation:AtMostOneOf=a;b.c",
            "    a: str | None = None",
            "AtMostOneOf cannot reference nested fields: b.c",
        ),
    ],
)
def test_type_marker_problems(tmp_path: Path, markers: str, body: str, message: str) -> None:
    root = project(tmp_path / "op", {"v1/ship_types.py": _module(body, spec_markers=markers)})
    assert message in fails(root)


def test_a_type_marker_in_a_module_docstring(tmp_path: Path) -> None:
    module = '#!raw\n"""Ships.\n\n+kubebuilder:subresource:status\n"""\n' + TYPES_HEADER + _module("    name: str")
    root = project(tmp_path / "op", {"v1/ship_types.py": module})
    line, text = _error_line(root, fails(root))
    assert "+kubebuilder:subresource:status is a type marker and cannot be used on the module docstring" in text


def test_a_field_marker_above_a_type_alias(tmp_path: Path) -> None:
    before = "# +optional\nName = Annotated[str, Field(max_length=5)]\n"
    root = project(tmp_path / "op", {"v1/ship_types.py": _module("    name: Name", before_spec=before)})
    line, text = _error_line(root, fails(root))
    assert "+optional is a field marker and cannot be used on alias Name" in text


CONFLICTS = [
    ("    # +kubebuilder:validation:Minimum=5\n    crew: int = Field(1, ge=0)", "Field(ge=0) (minimum: 0)"),
    ("    # +kubebuilder:validation:Maximum=8\n    crew: int = Field(1, le=9)", "Field(le=9) (maximum: 9)"),
    (
        "    # +kubebuilder:validation:ExclusiveMinimum=false\n    crew: int = Field(1, gt=0)",
        "Field(gt=0) (exclusiveMinimum: true)",
    ),
    (
        "    # +kubebuilder:validation:MultipleOf=3\n    crew: int = Field(2, multiple_of=2)",
        "Field(multiple_of=2) (multipleOf: 2)",
    ),
    ("    # +kubebuilder:validation:MinLength=2\n    name: str = Field(min_length=1)", "Field(min_length=1)"),
    ("    # +kubebuilder:validation:MaxLength=2\n    name: str = Field(max_length=3)", "Field(max_length=3)"),
    (
        "    # +kubebuilder:validation:MinItems=2\n    names: list[str] = Field(min_length=1)",
        "Field(min_length=1) (minItems: 1)",
    ),
    (
        "    # +kubebuilder:validation:MaxProperties=2\n    labels: dict[str, str] = Field(max_length=3)",
        "Field(max_length=3) (maxProperties: 3)",
    ),
    ('    # +kubebuilder:validation:Pattern=`^b$`\n    name: str = Field(pattern="^a$")', "Field(pattern='^a$')"),
    ("    # +kubebuilder:validation:Enum=a;c\n    mode: Literal['a', 'b']", "Literal['a', 'b']"),
    ("    # +kubebuilder:validation:Enum=x\n    hull: Hull", "the members of Hull"),
    ("    # +kubebuilder:default=4\n    crew: int = 3", "the Python default 3 (default: 3)"),
    ("    # +default=4\n    crew: int = 3", "the Python default 3"),
    ('    # +kubebuilder:title="B"\n    name: str = Field(title="A")', "Field(title='A')"),
    ("    # +kubebuilder:example=2\n    crew: int = Field(examples=[1])", "Field(examples=[1, ...])"),
    ("    # +kubebuilder:validation:Format=int64\n    crew: Int32", 'Int32 (format: "int32")'),
    ("    # +kubebuilder:validation:Type=number\n    crew: Int32", 'Int32 (format: "int32")'),
    (
        "    # +kubebuilder:validation:MinLength=4\n    callsign: Callsign",
        "the Python type of alias Callsign (minLength: 3)",
    ),
    (
        "    # +kubebuilder:validation:items:MaxLength=6\n    names: list[Annotated[str, Field(max_length=5)]]",
        "the Python type (maxLength: 5)",
    ),
]

ALIASES = """
class Hull(enum.StrEnum):
    WOOD = "Wood"


Callsign = Annotated[str, Field(min_length=3)]
\"\"\"Callsign is a radio call sign.\"\"\"
"""


@pytest.mark.parametrize(("body", "message"), CONFLICTS)
def test_a_marker_that_contradicts_the_python_spelling_names_both(tmp_path: Path, body: str, message: str) -> None:
    root = project(tmp_path / "op", {"v1/ship_types.py": _module(body, before_spec=ALIASES)})
    line, text = _error_line(root, fails(root))
    marker = body.strip().splitlines()[0].removeprefix("# ")
    assert f"{marker} disagrees with {message}" in text
    assert "keep one of them" in text
    assert (root / TYPES).read_text().splitlines()[line - 1].strip() == f"# {marker}"


def test_a_marker_agreeing_with_the_python_spelling_is_fine(tmp_path: Path) -> None:
    body = (
        "    # +kubebuilder:validation:Minimum=0\n    # +kubebuilder:default=3\n    crew: int = Field(3, ge=0)\n"
        "    # +kubebuilder:validation:Enum=b;a\n    mode: Literal['a', 'b'] = 'a'\n"
    )
    root = project(tmp_path / "op", {"v1/ship_types.py": _module(body)})
    spec = spec_of(generate(root)["fleet.example.com_ships.yaml"])
    assert spec["properties"]["crew"] == {"type": "integer", "minimum": 0, "default": 3}
    assert spec["properties"]["mode"]["enum"] == ["b", "a"]  # the marker's order, same values


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("    free: Any = None", "type Any has no schema; mark the field +kubebuilder:validation:Schemaless"),
        ("    things: list[Any] = []", "type Any has no schema"),
        ("    pick: Engine | Sail", "union of Engine, Sail is not a structural schema"),
        ("    engines: set[Engine] = set()", "set items must be scalars"),
        ("    pair: tuple[int, str]", "mixes item types"),
        ("    price: decimal.Decimal = Field(ge=0)", "Field(ge=0) needs a number, not string (Decimal travels as a"),
        ("    crews: dict[int, str] = {}", "map keys must be str, not 'int'"),
        ("    nothing: Literal[None] = None", "Literal[None] has no schema"),
    ],
)
def test_types_without_a_structural_schema(tmp_path: Path, body: str, message: str) -> None:
    before = "class Engine(KubeModel):\n    power: int\n\n\nclass Sail(KubeModel):\n    area: float\n"
    root = project(tmp_path / "op", {"v1/ship_types.py": _module(body, before_spec=before)})
    stderr = fails(root)
    assert f"{TYPES}:" in stderr and message in stderr


@pytest.mark.parametrize(
    ("body", "message"),
    [
        # The offline acceptance check refuses what the API server would, in its words.
        (
            "    # +kubebuilder:validation:UniqueItems=true\n    names: list[str] = []",
            "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        ),
        (
            "    # +kubebuilder:validation:Schemaless\n    free: Any = None",
            "spec.validation.openAPIV3Schema.properties[spec].properties[free].type: Required value",
        ),
        (
            '    # +kubebuilder:validation:XValidation:rule="self.size() >",message="broken"\n    name: str',
            "compilation failed",
        ),
        ("    # +kubebuilder:default=abc\n    crew: int | None = None", "default"),
    ],
)
def test_the_acceptance_check_refuses_what_the_api_server_would(tmp_path: Path, body: str, message: str) -> None:
    root = project(tmp_path / "op", {"v1/ship_types.py": _module(body)})
    stderr = fails(root)
    assert 'The CustomResourceDefinition "ships.fleet.example.com" is invalid' in stderr
    assert message in stderr


def test_printer_column_type_is_checked_at_the_marker(tmp_path: Path) -> None:
    module = _module("    name: str").replace(
        "# +kubebuilder:object:root=true\n",
        '# +kubebuilder:object:root=true\n# +kubebuilder:printcolumn:name="Name",type=colour,JSONPath=".spec.name"\n',
    )
    root = project(tmp_path / "op", {"v1/ship_types.py": module})
    stderr = fails(root)
    line = line_of(root / TYPES, "+kubebuilder:printcolumn")
    assert f"{TYPES}:{line}: +kubebuilder:printcolumn type=colour is not one of integer, number" in stderr
