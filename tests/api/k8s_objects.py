"""Hypothesis strategies of random Kubernetes objects in their wire form, built from the OpenAPI definitions.

Values are what the API server writes: camelCase keys, no nulls (Go's omitempty), times as RFC 3339 with `Z`
(whole seconds for Time, microseconds for MicroTime), quantities as strings, plus undeclared keys with arbitrary JSON
values at every object level (what a newer API server, or a field a partial model leaves out, looks like).
"""

from __future__ import annotations

import base64
import functools
import string
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from hypothesis import strategies as st

from pyop.api.definitions import load_definitions, reference_target
from pyop.api.k8s import KUBERNETES_VERSION
from pyop.api.types import INT32_RANGE, INT64_RANGE

DEFINITIONS = load_definitions(KUBERNETES_VERSION)
_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
MAX_DEPTH = 4

_names = st.text(string.ascii_lowercase + string.digits + "-.", min_size=1, max_size=8)
_texts = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=8)
_json_scalars = st.booleans() | st.integers(-(2**40), 2**40) | _texts
_json = st.recursive(
    _json_scalars,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(_names, inner, max_size=2),
    max_leaves=4,
)
_moments = st.datetimes(datetime(1990, 1, 1), datetime(2090, 1, 1), timezones=st.just(UTC))
_times = _moments.map(lambda moment: moment.strftime("%Y-%m-%dT%H:%M:%SZ"))
_micro_times = _moments.map(lambda moment: moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ"))
_base64 = st.binary(max_size=6).map(lambda data: base64.b64encode(data).decode("ascii"))
_quantities = st.sampled_from(["1", "500m", "1Gi", "128974848", "2.5", "1e3", "100Ki", 2, 0.5])

# Values, not objects: their wire forms.
SPECIAL: Mapping[str, st.SearchStrategy[Any]] = {
    _META + "Time": _times,
    _META + "MicroTime": _micro_times,
    "io.k8s.apimachinery.pkg.api.resource.Quantity": _quantities,
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": st.integers(0, 65535) | st.sampled_from(["http", "25%"]),
    "io.k8s.apimachinery.pkg.runtime.RawExtension": st.dictionaries(_names, _json, max_size=2),
    _META + "FieldsV1": st.dictionaries(st.sampled_from(["f:metadata", "f:spec", "."]), st.just({}), max_size=2),
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON": _json,
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray": st.dictionaries(
        _names, _json, max_size=2
    ),
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool": st.booleans(),
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray": st.lists(
        _names, max_size=2
    ),
}


def _types(schema: Mapping[str, Any]) -> set[str]:
    kind = schema.get("type")
    if kind is None:
        return set()
    return {kind} if isinstance(kind, str) else {k for k in kind if k != "null"}


def _unknown_keys(properties: Mapping[str, Any]) -> st.SearchStrategy[str]:
    """Undeclared camelCase keys, as the API server names fields (never a declared name, never snake_case)."""
    return st.text(string.ascii_letters, min_size=1, max_size=6).map(lambda s: "zz" + s).filter(
        lambda key: key not in properties
    )


def value_of(schema: Mapping[str, Any], depth: int) -> st.SearchStrategy[Any]:
    if "$ref" in schema and isinstance(schema["$ref"], str):
        return object_of(reference_target(schema["$ref"]), depth)
    kinds = _types(schema)
    if kinds == {"string"} and schema.get("format") == "byte":
        return _base64  # what the API server writes for []byte (and accepts: anything else is a 400)
    if kinds == {"string"}:
        enum = schema.get("enum")
        return st.sampled_from(enum) if enum else _texts
    if kinds == {"boolean"}:
        return st.booleans()
    if kinds == {"integer"}:
        low, high = {"int32": INT32_RANGE, "int64": INT64_RANGE}.get(schema.get("format", ""), INT64_RANGE)
        return st.integers(low, high)
    if kinds == {"number"}:
        return st.integers(-1000, 1000) | st.floats(-1e6, 1e6, allow_nan=False).filter(lambda f: not f.is_integer())
    if kinds == {"array"}:
        if depth >= MAX_DEPTH:
            return st.just([])
        return st.lists(value_of(schema.get("items") or {}, depth + 1), max_size=2)
    if kinds == {"object"}:
        values = schema.get("additionalProperties")
        if depth >= MAX_DEPTH or not isinstance(values, Mapping):
            return st.dictionaries(_names, _json, max_size=1 if depth < MAX_DEPTH else 0)
        return st.dictionaries(_names, value_of(values, depth + 1), max_size=2)
    return _json


def _shallow_ref(prop: Mapping[str, Any], depth: int) -> bool:
    """A required reference drawn at this depth: always for values (Time), for objects until MAX_DEPTH (some
    definitions require themselves through a chain of references)."""
    ref = prop.get("$ref")
    return isinstance(ref, str) and (reference_target(ref) in SPECIAL or depth < MAX_DEPTH)


@functools.cache
def object_of(definition: str, depth: int = 0) -> st.SearchStrategy[Any]:
    """A random object of `definition`: its required fields (the API server always writes them), any subset of the
    others, and undeclared keys."""
    if definition in SPECIAL:
        return SPECIAL[definition]
    schema = DEFINITIONS[definition]
    properties: Mapping[str, Mapping[str, Any]] = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    must = {
        name: value_of(prop, depth + 1)
        for name, prop in properties.items()
        if name in required and ("null" not in (prop.get("type") or []) or _shallow_ref(prop, depth))
    }
    may = {
        name: value_of(prop, depth + 1)
        for name, prop in properties.items()
        if name not in must and (depth < MAX_DEPTH or name == "metadata")
    }
    gvks = schema.get("x-kubernetes-group-version-kind") or []
    if len(gvks) == 1:
        gvk = gvks[0]
        must["apiVersion"] = st.just(f"{gvk['group']}/{gvk['version']}" if gvk["group"] else gvk["version"])
        must["kind"] = st.just(gvk["kind"])
        may.pop("apiVersion", None)
        may.pop("kind", None)
        if "metadata" in may and definition.endswith(gvk["kind"]):
            must["metadata"] = may.pop("metadata")
    if depth >= MAX_DEPTH:
        may.pop("metadata", None)
    known = st.fixed_dictionaries(must, optional=may)
    unknown = st.dictionaries(_unknown_keys(properties), _json, max_size=1)
    return st.tuples(known, unknown).map(lambda parts: {**parts[1], **parts[0]})
