"""The marker grammar (controller-tools'), the registry, and reading markers from Python comments."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyop_scaffold.manifests.errors import MarkerError, SourceLocation
from pyop_scaffold.manifests.markers.comments import read_module_docs
from pyop_scaffold.manifests.markers.parser import parse_marker
from pyop_scaffold.manifests.markers.registry import MARKERS, REGISTRY, Target

HERE = SourceLocation("types.py", 7)


@pytest.mark.parametrize(
    ("text", "name", "value"),
    [
        ("kubebuilder:validation:Minimum=0", "kubebuilder:validation:Minimum", 0),
        ("kubebuilder:validation:Minimum=-0.5", "kubebuilder:validation:Minimum", -0.5),
        ('kubebuilder:validation:Enum=A;B;"c d"', "kubebuilder:validation:Enum", ["A", "B", "c d"]),
        ('kubebuilder:validation:Enum=1;2;"foo"', "kubebuilder:validation:Enum", [1, 2, "foo"]),
        ("kubebuilder:validation:Enum={Allow,Forbid}", "kubebuilder:validation:Enum", ["Allow", "Forbid"]),
        ("kubebuilder:validation:Pattern=`^[a-z]+,[0-9]$`", "kubebuilder:validation:Pattern", "^[a-z]+,[0-9]$"),
        ('kubebuilder:validation:Pattern="^a\\\\.b$"', "kubebuilder:validation:Pattern", "^a\\.b$"),
        ("kubebuilder:subresource:status", "kubebuilder:subresource:status", True),
        ('kubebuilder:default={a: 1, b: "x"}', "kubebuilder:default", {"a": 1, "b": "x"}),
        ("kubebuilder:default={}", "kubebuilder:default", {}),
        ("kubebuilder:default={a,b}", "kubebuilder:default", ["a", "b"]),
        ("kubebuilder:default=forty-two", "kubebuilder:default", "forty-two"),
        ('default="x"', "default", "x"),
        ("k8s:listType=map", "listType", "map"),
        ("optional", "optional", True),
        ("kubebuilder:object:root=true", "kubebuilder:object:root", True),
        # controller-tools reads `name:=value` as the unnamed argument, as `name=value`.
        ("kubebuilder:default:=Allow", "kubebuilder:default", "Allow"),
        ("kubebuilder:validation:Minimum:=3", "kubebuilder:validation:Minimum", 3),
        ("kubebuilder:validation:Enum:=a;b", "kubebuilder:validation:Enum", ["a", "b"]),
    ],
)
def test_values(text: str, name: str, value: object) -> None:
    marker = parse_marker(text, HERE)
    assert marker is not None
    assert (marker.name, marker.value) == (name, value)


def test_named_arguments_with_quotes_commas_and_lists() -> None:
    marker = parse_marker(
        'kubebuilder:validation:XValidation:rule="self.a <= self.b",message="a, then b",reason=FieldValueInvalid',
        HERE,
    )
    assert marker is not None
    assert marker.value["rule"] == "self.a <= self.b"
    assert marker.value["message"] == "a, then b"
    assert marker.value["reason"] == "FieldValueInvalid"
    resource = parse_marker("kubebuilder:resource:scope=Cluster,shortName=cap;ca,categories={all,fleet}", HERE)
    assert resource is not None
    assert resource.value["shortName"] == ["cap", "ca"] and resource.value["categories"] == ["all", "fleet"]


def test_items_markers_apply_to_list_items() -> None:
    marker = parse_marker("kubebuilder:validation:items:MaxLength=5", HERE)
    assert marker is not None and marker.items and marker.name == "kubebuilder:validation:MaxLength"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "kubebuilder:validation:Minimun=0",
            "unknown marker +kubebuilder:validation:Minimun; did you mean +kubebuilder:validation:Minimum?",
        ),
        ("kubebuilder:subresource:stats", "did you mean +kubebuilder:subresource:status?"),
        ("kubebuilder:validation:nullable", "unknown marker +kubebuilder:validation:nullable; did you mean +nullable?"),
        ("kubebuilder:validation:optional", "did you mean +kubebuilder:validation:Optional?"),
        ("kubebuilder:validation:Minimum=abc", "expected a number, found 'abc'"),
        ("kubebuilder:validation:MaxLength=1.5", "expected an integer, found '1.5'"),
        ("kubebuilder:printcolumn:name=Age", "missing argument(s) type, JSONPath"),
        ("kubebuilder:printcolumn:name=Age,type=date,JSONPath=.x,colour=red", "unknown argument 'colour'"),
        ("kubebuilder:validation:Pattern=`^a", "unterminated backtick string"),
        ("kubebuilder:subresource:status=maybe", "takes no value"),
    ],
)
def test_errors_name_location_and_problem(text: str, message: str) -> None:
    with pytest.raises(MarkerError) as error:
        parse_marker(text, HERE)
    assert str(error.value).startswith("types.py:7: ")
    assert message in str(error.value)


def test_foreign_markers_are_ignored() -> None:
    for text in ("k8s:openapi-gen=true", "kubebuilder:scaffold:builder", "some:other=1"):
        assert parse_marker(text, HERE) is None


def test_registry_is_one_consistent_table() -> None:
    names = [d.name for d in MARKERS]
    assert len(names) == len(set(names))
    for definition in MARKERS:
        assert definition.help
        assert REGISTRY[definition.name] is definition
        if definition.apply is not None:
            assert definition.targets & (Target.TYPE | Target.FIELD)


def test_comments_attach_to_the_class_or_field_right_below(tmp_path: Path) -> None:
    source = tmp_path / "types.py"
    source.write_text(
        "# +kubebuilder:object:root=true\n"
        "# +kubebuilder:subresource:status\n"
        "@decorator\n"
        "class Thing:\n"
        '    """Thing is a thing.\n'
        "\n"
        '    +kubebuilder:printcolumn:name="Size",type=integer,JSONPath=".spec.size"\n'
        '    """\n'
        "\n"
        "    # size is the size.\n"
        "    #\n"
        "    # It has two paragraphs.\n"
        "    # +kubebuilder:validation:Minimum=1\n"
        "    size: int\n"
        "\n"
        "    # not attached: a blank line follows\n"
        "\n"
        '    note: str = "# +kubebuilder:validation:Minimum=1 inside a string is no marker"\n'
        "\n"
        "# +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get\n"
    )
    docs = read_module_docs(source)
    thing = docs.for_class("Thing")
    assert [m.name for m in thing.markers] == [
        "kubebuilder:object:root",
        "kubebuilder:subresource:status",
        "kubebuilder:printcolumn",
    ]
    assert thing.description == "Thing is a thing."
    size = docs.for_field("Thing", "size")
    assert size.description == "size is the size.\n\nIt has two paragraphs."
    assert [m.name for m in size.markers] == ["kubebuilder:validation:Minimum"]
    assert docs.for_field("Thing", "note").markers == ()
    assert [m.name for m in docs.all_markers][-1] == "kubebuilder:rbac"


def test_items_forms_exist_for_validation_markers_only() -> None:
    items = {d.name for d in MARKERS if d.items}
    assert "kubebuilder:validation:Maximum" in items and "kubebuilder:validation:XValidation" in items
    assert "kubebuilder:validation:Required" not in items and "kubebuilder:validation:Schemaless" not in items
    marker = parse_marker("kubebuilder:validation:items:XValidation:rule=\"self != ''\"", HERE)
    assert marker is not None and marker.items and marker.written_name == "kubebuilder:validation:items:XValidation"
    with pytest.raises(MarkerError, match="has no items: form"):
        parse_marker("kubebuilder:validation:items:Schemaless", HERE)


def test_kubernetes_default_is_strict_json_and_skips_go_references() -> None:
    marker = parse_marker('default={"policy": "delete"}', HERE)
    assert marker is not None and marker.value == {"policy": "delete"}
    reference = parse_marker("default=ref(DefaultPolicy)", HERE)
    assert reference is not None
    schema: dict[str, object] = {"type": "string"}
    assert reference.definition.apply is not None
    reference.definition.apply(schema, reference.value)
    assert "default" not in schema  # controller-gen cannot evaluate Go constants either
    with pytest.raises(MarkerError, match='strings need double quotes: \\+default="text"'):
        parse_marker("default=delete", HERE)


def test_webhook_and_rbac_markers_parse_anywhere_in_a_module() -> None:
    webhook = parse_marker(
        "kubebuilder:webhook:path=/mutate-v1-ship,mutating=true,failurePolicy=fail,sideEffects=None,"
        "groups=fleet.example.com,resources=ships,verbs=create;update,versions=v1,name=mship.kb.io,"
        'admissionReviewVersions=v1,timeoutSeconds=5,patch=`{"namespaceSelector":{"matchLabels":{"a":"b"}}}`',
        HERE,
    )
    assert webhook is not None and webhook.value["verbs"] == ["create", "update"]
    assert webhook.value["timeoutSeconds"] == 5 and webhook.value["patch"].startswith('{"namespaceSelector"')
    assert webhook.definition.targets == Target.FILE
    with pytest.raises(MarkerError, match="missing argument"):
        parse_marker("kubebuilder:webhook:path=/x,mutating=true", HERE)
    config = parse_marker("kubebuilder:webhookconfiguration:mutating=false,name=fleet-validating", HERE)
    assert config is not None and config.value == {"mutating": False, "name": "fleet-validating"}


def test_aliases_keep_the_spelling_the_user_wrote() -> None:
    for text, written in (
        ("k8s:listType=map", "k8s:listType"),
        ("k8s:required", "k8s:required"),
        ('kubebuilder:externalDoc:url="https://example.com"', "kubebuilder:externalDoc"),
    ):
        marker = parse_marker(text, HERE)
        assert marker is not None and marker.written_name == written


def test_markers_in_docstrings_keep_their_own_line(tmp_path: Path) -> None:
    source = tmp_path / "types.py"
    source.write_text(
        '"""Module.\n\n+groupName=fleet.example.com\n"""\n'
        "\n"
        "class Thing:\n"
        '    """\n'
        "    Thing is a thing.\n"
        "\n"
        "    +kubebuilder:resource:scope=Cluster\n"
        '    """\n'
    )
    docs = read_module_docs(source)
    assert docs.module.markers[0].location.line == 3
    thing = docs.for_class("Thing")
    assert thing.description == "Thing is a thing." and thing.markers[0].location.line == 10


def test_registry_covers_every_marker_of_the_issue() -> None:
    wanted = [
        "groupName",
        "versionName",
        "kubebuilder:skip",
        "kubebuilder:object:root",
        "kubebuilder:subresource:status",
        "kubebuilder:subresource:scale",
        "kubebuilder:printcolumn",
        "kubebuilder:resource",
        "kubebuilder:storageversion",
        "kubebuilder:unservedversion",
        "kubebuilder:deprecatedversion",
        "kubebuilder:skipversion",
        "kubebuilder:metadata",
        "kubebuilder:selectablefield",
        "kubebuilder:externalDocs",
        "kubebuilder:validation:ExactlyOneOf",
        "kubebuilder:validation:AtMostOneOf",
        "kubebuilder:validation:AtLeastOneOf",
        "kubebuilder:validation:Minimum",
        "kubebuilder:validation:Maximum",
        "kubebuilder:validation:ExclusiveMinimum",
        "kubebuilder:validation:ExclusiveMaximum",
        "kubebuilder:validation:MultipleOf",
        "kubebuilder:validation:MinLength",
        "kubebuilder:validation:MaxLength",
        "kubebuilder:validation:Pattern",
        "kubebuilder:validation:MinItems",
        "kubebuilder:validation:MaxItems",
        "kubebuilder:validation:UniqueItems",
        "kubebuilder:validation:MinProperties",
        "kubebuilder:validation:MaxProperties",
        "kubebuilder:validation:Enum",
        "kubebuilder:validation:Format",
        "kubebuilder:validation:Type",
        "kubebuilder:validation:XPreserveUnknownFields",
        "kubebuilder:pruning:PreserveUnknownFields",
        "kubebuilder:validation:XEmbeddedResource",
        "kubebuilder:validation:XIntOrString",
        "kubebuilder:validation:XValidation",
        "kubebuilder:validation:Schemaless",
        "kubebuilder:validation:Required",
        "kubebuilder:validation:Optional",
        "required",
        "optional",
        "nullable",
        "kubebuilder:default",
        "default",
        "kubebuilder:example",
        "kubebuilder:title",
        "k8s:immutable",
        "k8s:enum",
        "listType",
        "listMapKey",
        "mapType",
        "structType",
        "k8s:listType",
        "k8s:listMapKey",
        "k8s:mapType",
        "k8s:structType",
        "k8s:required",
        "k8s:optional",
        "kubebuilder:rbac",
        "kubebuilder:webhook",
        "kubebuilder:webhookconfiguration",
    ]
    assert [name for name in wanted if name not in REGISTRY] == []
