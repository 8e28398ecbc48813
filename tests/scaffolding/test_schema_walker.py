"""Models to structural schemas: markers and pydantic spellings give the same keywords, disagreements fail."""

from __future__ import annotations

import importlib.util
import sys
import textwrap
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from pyop_scaffold.manifests.builtin import builtin_schema
from pyop_scaffold.manifests.crd.assemble import root_schema
from pyop_scaffold.manifests.crd.schema import SchemaBuilder
from pyop_scaffold.manifests.errors import MarkerError

HEADER = """
from __future__ import annotations
import enum
from typing import Annotated, Any, Literal
from pydantic import Field
from pyop.api import Condition, GroupVersion, KubeModel, Resource
from pyop.api.builtin_types import IntOrString, PodTemplateSpec, Quantity
GV = GroupVersion("test.example.com", "v1")
"""


@pytest.fixture
def load_module(tmp_path: Path) -> Iterator[Callable[[str], ModuleType]]:
    names: list[str] = []

    def load(body: str) -> ModuleType:
        name = f"walker_fixture_{len(names)}"
        path = tmp_path / f"{name}.py"
        path.write_text(HEADER + textwrap.dedent(body))
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        names.append(name)
        spec.loader.exec_module(module)
        return module

    yield load
    for name in names:
        sys.modules.pop(name, None)


def schema_of(cls: type) -> dict[str, Any]:
    return SchemaBuilder(builtin_schema).model_schema(cls)


def test_python_types_map_to_schema_types(load_module) -> None:  # type: ignore[no-untyped-def]
    module = load_module(
        """
        import datetime
        class Color(str, enum.Enum):
            RED = "red"
            BLUE = "blue"
        class Inner(KubeModel):
            \"\"\"Inner holds one value.\"\"\"
            value: int
        class Spec(KubeModel):
            flag: bool
            count: int
            ratio: float
            name: str
            blob: bytes
            at: datetime.datetime
            day: datetime.date
            tags: list[str]
            unique: set[str]
            labels: dict[str, str]
            inner: Inner
            inners: list[Inner]
            mode: Literal["a", "b"]
            color: Color
            port: int | str
            maybe: int | None = None
        """
    )
    props = schema_of(module.Spec)["properties"]
    assert props["flag"] == {"type": "boolean"}
    assert props["count"] == {"type": "integer"}
    assert props["ratio"] == {"type": "number"}
    assert props["blob"] == {"type": "string", "format": "byte"}
    assert props["at"] == {"type": "string", "format": "date-time"}
    assert props["day"] == {"type": "string", "format": "date"}
    assert props["tags"] == {"type": "array", "items": {"type": "string"}}
    assert props["unique"] == {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"}
    assert props["labels"] == {"type": "object", "additionalProperties": {"type": "string"}}
    assert props["inner"] == {
        "type": "object",
        "description": "Inner holds one value.",
        "properties": {"value": {"type": "integer"}},
        "required": ["value"],
    }
    assert props["inners"]["items"]["properties"] == {"value": {"type": "integer"}}
    assert props["mode"] == {"type": "string", "enum": ["a", "b"]}
    assert props["color"] == {"type": "string", "enum": ["red", "blue"]}
    assert props["port"] == {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True}
    assert props["maybe"] == {"type": "integer"}  # Optional means "may be omitted", not nullable
    assert schema_of(module.Spec)["required"] == sorted(
        [
            "at",
            "blob",
            "color",
            "count",
            "day",
            "flag",
            "inner",
            "inners",
            "labels",
            "mode",
            "name",
            "port",
            "ratio",
            "tags",
            "unique",
        ]
    )


def test_markers_and_pydantic_spellings_give_the_same_schema(load_module) -> None:  # type: ignore[no-untyped-def]
    module = load_module(
        """
        class WithMarkers(KubeModel):
            # replicas is how many.
            # +kubebuilder:validation:Minimum=1
            # +kubebuilder:validation:Maximum=10
            replicas: int = 3
            # +kubebuilder:validation:MinLength=1
            # +kubebuilder:validation:MaxLength=63
            # +kubebuilder:validation:Pattern=`^[a-z]+$`
            name: str
            # +kubebuilder:validation:MinItems=1
            # +kubebuilder:validation:MaxItems=5
            items: list[str]
            # +kubebuilder:validation:Enum=Always;Never
            policy: str
            # +kubebuilder:validation:ExclusiveMinimum=true
            # +kubebuilder:validation:Minimum=0
            # +kubebuilder:validation:MultipleOf=2
            step: int
        class WithPydantic(KubeModel):
            replicas: int = Field(3, ge=1, le=10, description="replicas is how many.")
            name: Annotated[str, Field(min_length=1, max_length=63, pattern="^[a-z]+$")]
            items: list[str] = Field(min_length=1, max_length=5)
            policy: Literal["Always", "Never"]
            step: int = Field(gt=0, multiple_of=2)
        """
    )
    assert schema_of(module.WithMarkers) == schema_of(module.WithPydantic)
    replicas = schema_of(module.WithPydantic)["properties"]["replicas"]
    assert replicas == {
        "type": "integer",
        "minimum": 1,
        "maximum": 10,
        "default": 3,
        "description": "replicas is how many.",
    }


def test_marker_that_disagrees_with_field_constraint_fails(load_module) -> None:  # type: ignore[no-untyped-def]
    module = load_module(
        """
        class Spec(KubeModel):
            # +kubebuilder:validation:Minimum=5
            replicas: int = Field(1, ge=0)
        """
    )
    with pytest.raises(MarkerError) as error:
        schema_of(module.Spec)
    message = str(error.value)
    assert ":8:" in message or "walker_fixture" in message
    assert "+kubebuilder:validation:Minimum=5 disagrees with Field(ge=0)" in message


def test_requiredness_rules(load_module) -> None:  # type: ignore[no-untyped-def]
    module = load_module(
        """
        class Spec(KubeModel):
            plain: str
            defaulted: str = "x"
            optional_none: str | None = None
            # +optional
            marked_optional: str
            # +required
            marked_required: str | None = None
            # +kubebuilder:validation:Required
            kb_required: int = 0
        """
    )
    schema = schema_of(module.Spec)
    assert schema["required"] == ["kbRequired", "markedRequired", "plain"]
    assert schema["properties"]["defaulted"]["default"] == "x"


def test_defaults_nullable_and_nested_defaults(load_module) -> None:  # type: ignore[no-untyped-def]
    module = load_module(
        """
        class Tuning(KubeModel):
            level: int = 2
        class Spec(KubeModel):
            # +kubebuilder:default=forty-two
            word: str | None = None
            # +nullable
            # +optional
            maybe: str | None = None
            tuning: Tuning = Field(default_factory=Tuning)
            # +kubebuilder:default={a: 1}
            extra: dict[str, int] | None = None
        """
    )
    props = schema_of(module.Spec)["properties"]
    assert props["word"]["default"] == "forty-two"
    assert props["maybe"]["nullable"] is True
    # An omitted `tuning` gets {} so the API server applies the nested default level=2.
    assert props["tuning"]["default"] == {}
    assert props["tuning"]["properties"]["level"]["default"] == 2
    assert props["extra"]["default"] == {"a": 1}


def test_topology_and_type_level_markers(load_module) -> None:  # type: ignore[no-untyped-def]
    module = load_module(
        """
        class Port(KubeModel):
            name: str
            port: int
        # +structType=atomic
        # +kubebuilder:validation:XValidation:rule="self.port > 0",message="port must be positive"
        class Atomic(KubeModel):
            port: int
        class Spec(KubeModel):
            # +listType=map
            # +listMapKey=name
            # +listMapKey=port
            ports: list[Port]
            # +kubebuilder:validation:items:MinLength=3
            names: list[str]
            atomic: Atomic
            # +mapType=granular
            labels: dict[str, str]
            # +kubebuilder:validation:XIntOrString
            # +kubebuilder:validation:Pattern=`^\\d+%?$`
            size: str
        """
    )
    props = schema_of(module.Spec)["properties"]
    assert props["ports"]["x-kubernetes-list-type"] == "map"
    assert props["ports"]["x-kubernetes-list-map-keys"] == ["name", "port"]
    assert props["names"]["items"] == {"type": "string", "minLength": 3}
    assert props["atomic"]["x-kubernetes-map-type"] == "atomic"
    assert props["atomic"]["x-kubernetes-validations"] == [
        {"rule": "self.port > 0", "message": "port must be positive"}
    ]
    assert props["labels"]["x-kubernetes-map-type"] == "granular"
    assert props["size"] == {
        "anyOf": [{"type": "integer"}, {"type": "string"}],
        "x-kubernetes-int-or-string": True,
        "pattern": "^\\d+%?$",
    }


def test_marker_on_wrong_type_names_field_and_line(load_module) -> None:  # type: ignore[no-untyped-def]
    module = load_module(
        """
        class Spec(KubeModel):
            # +kubebuilder:validation:MinLength=2
            count: int
        """
    )
    with pytest.raises(MarkerError) as error:
        schema_of(module.Spec)
    assert "field Spec.count" in str(error.value) and "applies to string fields, not to type integer" in str(
        error.value
    )
    location = error.value.location
    assert location is not None
    lines = Path(location.file).read_text().splitlines()
    assert lines[location.line - 1].strip() == "# +kubebuilder:validation:MinLength=2"  # points at the marker


def test_any_needs_schemaless_or_preserve(load_module) -> None:  # type: ignore[no-untyped-def]
    module = load_module(
        """
        class Spec(KubeModel):
            # +kubebuilder:validation:Schemaless
            free: Any = None
            # +kubebuilder:pruning:PreserveUnknownFields
            kept: Any = None
            values: dict[str, Any] = Field(default_factory=dict)
        class Bad(KubeModel):
            loose: Any = None
        """
    )
    props = schema_of(module.Spec)["properties"]
    assert props["free"] == {}
    assert props["kept"] == {"x-kubernetes-preserve-unknown-fields": True}
    assert props["values"] == {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    with pytest.raises(MarkerError, match="field Bad.loose: type Any has no schema"):
        schema_of(module.Bad)


def test_unions_and_recursion_are_refused(load_module) -> None:  # type: ignore[no-untyped-def]
    module = load_module(
        """
        class Mixed(KubeModel):
            value: int | bool
        class Node(KubeModel):
            children: list[Node] = Field(default_factory=list)
        """
    )
    with pytest.raises(MarkerError, match="union of int, bool is not a structural schema"):
        schema_of(module.Mixed)
    module.Node.model_rebuild()
    with pytest.raises(MarkerError, match="refers to itself"):
        schema_of(module.Node)


def test_embedded_builtin_types(load_module) -> None:  # type: ignore[no-untyped-def]
    module = load_module(
        """
        class Spec(KubeModel):
            template: PodTemplateSpec
            size: Quantity
            port: IntOrString
            conditions: list[Condition] = Field(default_factory=list)
        class Thing(Resource, group_version=GV):
            spec: Spec
        """
    )
    schema = root_schema(module.Thing, SchemaBuilder(builtin_schema))
    props = schema["properties"]["spec"]["properties"]
    assert props["template"]["type"] == "object" and "spec" in props["template"]["properties"]
    assert props["size"]["x-kubernetes-int-or-string"] is True and "pattern" in props["size"]
    assert props["conditions"]["items"]["required"] == ["lastTransitionTime", "message", "reason", "status", "type"]
    assert schema["properties"]["metadata"] == {"type": "object"}
    assert schema["required"] == ["spec"]


def test_sized_integers_decimal_uuid_tuples_and_literal_unions(load_module) -> None:  # type: ignore[no-untyped-def]
    module = load_module(
        """
        import decimal
        import uuid
        from pyop.api import Int32, Int64
        class Spec(KubeModel):
            replicas: Int32 = 1
            size: Int64 | None = None
            sizes: list[Int32] = []
            price: decimal.Decimal
            id: uuid.UUID
            pair: tuple[str, str]
            many: tuple[int, ...] = ()
            frozen: frozenset[int] = frozenset()
            level: Literal["a", "b"] | Literal["c"] = "a"
            mixed: Literal[1, "auto"] = "auto"
        """
    )
    props = schema_of(module.Spec)["properties"]
    assert props["replicas"] == {"type": "integer", "format": "int32", "default": 1}
    assert props["size"] == {"type": "integer", "format": "int64"}
    assert props["sizes"]["items"] == {"type": "integer", "format": "int32"}
    assert props["price"]["type"] == "string" and props["price"]["pattern"].startswith("^[-+]?")
    assert props["id"] == {"type": "string", "format": "uuid"}
    assert props["pair"] == {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 2}
    assert props["many"] == {"type": "array", "items": {"type": "integer"}}
    assert props["frozen"]["x-kubernetes-list-type"] == "set"
    assert props["level"] == {"type": "string", "enum": ["a", "b", "c"], "default": "a"}
    assert props["mixed"] == {
        "anyOf": [{"type": "integer"}, {"type": "string"}],
        "enum": [1, "auto"],
        "x-kubernetes-int-or-string": True,
        "default": "auto",
    }
    # The runtime side of Int32: values outside 32 bits are refused when a model is built.
    with pytest.raises(ValueError, match="does not fit in int32"):
        module.Spec.model_validate({"replicas": 2**31, "price": "1", "id": str(uuid.uuid4()), "pair": ["a", "b"]})


def test_type_markers_on_enums_and_documented_aliases(load_module) -> None:  # type: ignore[no-untyped-def]
    module = load_module(
        '''
        # +k8s:enum
        class Hull(enum.StrEnum):
            """Hull is what a ship is built of."""
            WOOD = "Wood"
            CARBON = "Carbon"
        # +kubebuilder:validation:MaxLength=7
        # +kubebuilder:externalDocs:url="https://example.com/callsigns"
        Callsign = Annotated[str, Field(min_length=3)]
        """Callsign is a radio call sign."""
        class Spec(KubeModel):
            hull: Hull
            # own words win over the alias's
            callsign: Callsign
            callsigns: list[Callsign] = []
            backup: Callsign | None = None
        '''
    )
    props = schema_of(module.Spec)["properties"]
    assert props["hull"] == {
        "type": "string",
        "enum": ["Carbon", "Wood"],
        "description": "Hull is what a ship is built of.",
    }
    callsign = {
        "type": "string",
        "minLength": 3,
        "maxLength": 7,
        "description": "Callsign is a radio call sign.",
        "externalDocs": {"url": "https://example.com/callsigns"},
    }
    assert props["callsign"] == {**callsign, "description": "own words win over the alias's"}
    assert props["callsigns"]["items"] == callsign
    assert props["backup"] == callsign


def test_plain_aliases_bring_their_markers_by_name(load_module) -> None:  # type: ignore[no-untyped-def]
    """`ConcurrencyPolicy = str` is plain `str` at run time: the name the field is written with finds its markers
    (the Kubebuilder CronJob tutorial's `type ConcurrencyPolicy string` with an Enum marker)."""
    module = load_module(
        '''
        # ConcurrencyPolicy says how to treat concurrent runs.
        # +kubebuilder:validation:Enum=Allow;Forbid;Replace
        ConcurrencyPolicy = str
        class Spec(KubeModel):
            policy: ConcurrencyPolicy = "Allow"
            maybe: ConcurrencyPolicy | None = None
            history: list[ConcurrencyPolicy] = []
            name: str = ""
        '''
    )
    props = schema_of(module.Spec)["properties"]
    policy = {
        "type": "string",
        "enum": ["Allow", "Forbid", "Replace"],
        "description": "ConcurrencyPolicy says how to treat concurrent runs.",
    }
    assert props["policy"] == {**policy, "default": "Allow"}
    assert props["maybe"] == policy
    assert props["history"] == {"type": "array", "items": policy}
    assert props["name"] == {"type": "string", "default": ""}  # plain str fields are not the alias


def test_a_second_name_of_an_alias_keeps_its_markers_to_itself(load_module) -> None:  # type: ignore[no-untyped-def]
    """`Percent = Int32` is the Int32 object: identity would put Percent's marker on every Int32 field."""
    module = load_module(
        '''
        # +kubebuilder:validation:Maximum=1000
        Int32 = Annotated[int, Field(ge=-(2**31))]
        # Percent is a share of a hundred.
        # +kubebuilder:validation:MultipleOf=5
        Percent = Int32
        class Spec(KubeModel):
            count: Int32 = 0
            share: Percent = 0
            shares: list[Percent] = []
        '''
    )
    props = schema_of(module.Spec)["properties"]
    assert props["count"] == {"type": "integer", "minimum": -(2**31), "maximum": 1000, "default": 0}
    percent = {
        "type": "integer",
        "minimum": -(2**31),
        "maximum": 1000,
        "multipleOf": 5,
        "description": "Percent is a share of a hundred.",
    }
    assert props["share"] == {**percent, "default": 0}
    assert props["shares"]["items"] == percent


def test_a_field_marker_overriding_its_types_keeps_both_under_all_of(load_module) -> None:  # type: ignore[no-untyped-def]
    """controller-gen flattens a named type's schema and the field's into one node: a keyword they disagree on
    is kept under allOf (both hold), and the field's XValidation rules come first."""
    module = load_module(
        '''
        # +kubebuilder:validation:MinLength=1
        Name = str
        # +kubebuilder:validation:MaxLength=8
        Short = str
        """Short is a short name."""
        # +kubebuilder:validation:MaxLength=4
        Shorter = Short
        # +kubebuilder:validation:XValidation:rule="self.a >= 0",message="type rule"
        class Window(KubeModel):
            a: int = 0
        class Spec(KubeModel):
            # +kubebuilder:validation:MinLength=2
            # +kubebuilder:default=yy
            name: Name
            short: Shorter = "x"
            # +kubebuilder:validation:XValidation:rule="self.a <= 9",message="field rule"
            window: Window | None = None
        '''
    )
    props = schema_of(module.Spec)["properties"]
    assert props["name"] == {"type": "string", "default": "yy", "allOf": [{"minLength": 1}, {"minLength": 2}]}
    assert props["short"] == {
        "type": "string",
        "default": "x",
        "description": "Short is a short name.",
        "allOf": [{"maxLength": 8}, {"maxLength": 4}],
    }
    assert [rule["message"] for rule in props["window"]["x-kubernetes-validations"]] == ["field rule", "type rule"]
    # What the Python type itself enforces is not overridable: pydantic would accept what the CRD forbids.
    module = load_module(
        '''
        Short = Annotated[str, Field(max_length=8)]
        """Short is a short name."""
        # +kubebuilder:validation:MaxLength=4
        Shorter = Short
        class Spec(KubeModel):
            short: Shorter = "x"
        '''
    )
    with pytest.raises(MarkerError, match=r"MaxLength=4 disagrees with the Python type of alias Short \(maxLength: 8"):
        schema_of(module.Spec)


def test_a_plain_alias_where_its_markers_cannot_go_is_refused(load_module) -> None:  # type: ignore[no-untyped-def]
    module = load_module(
        '''
        # +kubebuilder:validation:Enum=Allow;Forbid
        ConcurrencyPolicy = str
        class Spec(KubeModel):
            policies: dict[str, ConcurrencyPolicy] = {}
        '''
    )
    with pytest.raises(MarkerError, match=r"markers of alias ConcurrencyPolicy apply where .* not inside"):
        schema_of(module.Spec)


def test_wire_names_excluded_fields_and_empty_nested_defaults(load_module) -> None:  # type: ignore[no-untyped-def]
    """`k8s_set_list` is `k8sSetList` as Go would tag it; `Field(exclude=True)` is `json:"-"`; a status model
    whose only defaults are empty lists brings nothing a `{}` default would apply."""
    module = load_module(
        '''
        class Status(KubeModel):
            conditions: list[Condition] = []
            names: list[str] = []
        class Knobs(KubeModel):
            level: int = 3
        class Spec(KubeModel):
            k8s_set_list: list[str] = []
            scratch: str = Field(default="", exclude=True)
            knobs: Knobs = Field(default_factory=Knobs)
            status: Status = Field(default_factory=Status)
        '''
    )
    props = schema_of(module.Spec)["properties"]
    assert set(props) == {"k8sSetList", "knobs", "status"}
    assert props["knobs"]["default"] == {}
    assert "default" not in props["status"]
    assert module.Spec(k8s_set_list=["a"]).to_dict()["k8sSetList"] == ["a"]  # the runtime model agrees


def test_conditions_are_a_map_list_keyed_by_type(load_module) -> None:  # type: ignore[no-untyped-def]
    module = load_module(
        """
        class Status(KubeModel):
            conditions: list[Condition] = []
            maybe: list[Condition] | None = None
            # +listType=atomic
            atomic: list[Condition] = []
        """
    )
    props = schema_of(module.Status)["properties"]
    for name in ("conditions", "maybe"):
        assert props[name]["x-kubernetes-list-type"] == "map"
        assert props[name]["x-kubernetes-list-map-keys"] == ["type"]
        assert "type" in props[name]["items"]["required"]  # a map key must be required (or defaulted)
    assert props["atomic"]["x-kubernetes-list-type"] == "atomic" and "x-kubernetes-list-map-keys" not in props["atomic"]


def test_immutable_fields_and_oneof_rules_are_controller_gens(load_module) -> None:  # type: ignore[no-untyped-def]
    module = load_module(
        """
        # +kubebuilder:validation:ExactlyOneOf=a;b
        class Spec(KubeModel):
            # +k8s:immutable
            name: str
            # +k8s:immutable
            zone: str | None = None
            a: str | None = None
            b: str | None = None
        """
    )
    schema = schema_of(module.Spec)
    assert schema["properties"]["name"]["x-kubernetes-validations"] == [
        {"message": "field is immutable", "rule": "self == oldSelf"}
    ]
    assert schema["x-kubernetes-validations"] == [
        {"message": "field zone is immutable once set", "rule": "!has(oldSelf.zone) || has(self.zone)"},
        {
            "message": "exactly one of the fields in [a b] must be set",
            "rule": "[has(self.a),has(self.b)].filter(x,x==true).size() == 1",
        },
    ]


def test_embedded_object_meta_option(load_module) -> None:  # type: ignore[no-untyped-def]
    module = load_module(
        """
        from pyop.api import ObjectMeta
        class Spec(KubeModel):
            meta: ObjectMeta
        """
    )
    assert schema_of(module.Spec)["properties"]["meta"] == {"type": "object"}
    embedded = SchemaBuilder(builtin_schema, embedded_object_meta=True).model_schema(module.Spec)
    assert sorted(embedded["properties"]["meta"]["properties"]) == [
        "annotations",
        "finalizers",
        "labels",
        "name",
        "namespace",
    ]


def test_models_referring_to_later_models_while_validators_are_deferred(load_module) -> None:  # type: ignore[no-untyped-def]
    from pyop_scaffold.manifests.loader import _deferred_validators

    with _deferred_validators():
        module = load_module(
            """
            class Spec(KubeModel):
                engine: Engine | None = None
            class Engine(KubeModel):
                power: int = 1
            """
        )
    assert schema_of(module.Spec)["properties"]["engine"]["properties"]["power"] == {"type": "integer", "default": 1}
    from pyop.api import KubeModel

    assert "defer_build" not in KubeModel.model_config  # restored


def test_camel_case_aliases_while_validators_are_deferred(load_module) -> None:  # type: ignore[no-untyped-def]

    from pyop.api import KubeModel, Resource
    from pyop.api.naming import json_name
    from pyop_scaffold.manifests.loader import _deferred_validators

    source = """
        class Spec(KubeModel):
            max_unavailable_pods: int = 1
            url_path: str | None = None
            x: int = 0
        """
    with _deferred_validators():
        deferred = load_module(source).Spec
    built = load_module(source).Spec
    assert {name: info.alias for name, info in deferred.model_fields.items()} == {
        "max_unavailable_pods": "maxUnavailablePods",
        "url_path": "urlPath",
        "x": "x",
    }
    assert {name: info.alias for name, info in built.model_fields.items()} == {
        name: info.alias for name, info in deferred.model_fields.items()
    }
    assert KubeModel.model_config["alias_generator"] is json_name  # restored
    assert Resource.model_config["alias_generator"] is json_name
