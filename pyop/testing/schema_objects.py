"""Random valid custom resources from a CRD version's schema (hypothesis strategies), for property tests.

A conversion round-trip test that converts only the sample proves little: the fields the sample leaves out are
the ones a hand-written conversion forgets. ``objects`` draws objects from the structural schema the project's
CRD declares for a version (types, required fields, enums, bounds, patterns, ``date-time``/``date``/``int-or-
string``/``quantity``-like formats, maps, lists with their ``x-kubernetes-list-type``), then admits each as the API
server would store it (``pyop.testing.crds.validation.admit``: pruned, defaulted, CEL rules checked), keeping only those
it accepts. Sizes are small so that a property test of fifty objects runs in a second.

hypothesis is imported when a strategy is made (it is a test dependency of the projects that use this).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

__all__ = ["crd_version_schema", "objects"]

MAX_ITEMS = 3
MAX_STRING = 12
_NAME_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"


def crd_version_schema(crd_dir: str | Path, crd_name: str, version: str) -> dict[str, Any]:
    """The ``openAPIV3Schema`` of ``version`` of the CRD named ``crd_name`` among the YAML files of ``crd_dir``."""
    for path in sorted(Path(crd_dir).rglob("*.y*ml")):
        for document in yaml.safe_load_all(path.read_text()):
            if not isinstance(document, dict) or document.get("kind") != "CustomResourceDefinition":
                continue
            if (document.get("metadata") or {}).get("name") != crd_name:
                continue
            for served in (document.get("spec") or {}).get("versions") or []:
                if served.get("name") == version:
                    return dict((served.get("schema") or {}).get("openAPIV3Schema") or {})
            raise LookupError(f"the CRD {crd_name} in {path} has no version {version!r}")
    raise LookupError(f"no CRD named {crd_name} under {crd_dir}: run `make manifests` first")


def objects(
    schema: Mapping[str, Any], *, api_version: str, kind: str, namespace: str | None = "default"
) -> SearchStrategy[dict[str, Any]]:
    """Objects of ``api_version``/``kind`` valid for ``schema`` (the whole resource's schema), as stored."""
    from hypothesis import strategies as st

    from pyop.testing.crds.validation import admit

    properties = dict(schema.get("properties") or {})
    body = {key: value for key, value in properties.items() if key not in ("apiVersion", "kind", "metadata")}
    required = set(schema.get("required") or ()) - {"apiVersion", "kind", "metadata"}
    fields = _object_fields(st, body, required)
    names = st.text(_NAME_ALPHABET, min_size=1, max_size=10)

    def build(drawn: tuple[dict[str, Any], str]) -> dict[str, Any]:
        content, name = drawn
        metadata: dict[str, Any] = {"name": name}
        if namespace is not None:
            metadata["namespace"] = namespace
        return {"apiVersion": api_version, "kind": kind, "metadata": metadata, **content}

    def admitted(obj: dict[str, Any]) -> dict[str, Any] | None:
        stored, causes = admit(obj, schema, field_validation="Ignore")
        return None if causes else stored

    return st.tuples(fields, names).map(build).map(admitted).filter(lambda obj: obj is not None)  # type: ignore[return-value]


def _object_fields(st: Any, properties: Mapping[str, Any], required: set[str]) -> Any:
    """A dict with every required property and any of the others."""
    return st.fixed_dictionaries(
        {key: _value(st, value) for key, value in properties.items() if key in required},
        optional={key: _value(st, value) for key, value in properties.items() if key not in required},
    )


def _value(st: Any, schema: Mapping[str, Any]) -> Any:
    if "enum" in schema and schema["enum"]:
        return st.sampled_from(list(schema["enum"]))
    if schema.get("x-kubernetes-int-or-string"):
        return st.one_of(st.integers(0, 1000), st.integers(0, 1000).map(str))
    kind = schema.get("type")
    if kind == "object" or (kind is None and "properties" in schema):
        properties = schema.get("properties")
        if properties:
            return _object_fields(st, properties, set(schema.get("required") or ()))
        additional = schema.get("additionalProperties")
        if isinstance(additional, Mapping):
            keys = st.text(_NAME_ALPHABET, min_size=1, max_size=8)
            return st.dictionaries(keys, _value(st, additional), max_size=MAX_ITEMS)
        return st.just({})  # x-kubernetes-preserve-unknown-fields or an empty object: nothing to say about it
    if kind == "array":
        items = schema.get("items") or {}
        low = int(schema.get("minItems", 0))
        high = max(low, min(int(schema.get("maxItems", MAX_ITEMS)), low + MAX_ITEMS))
        unique = schema.get("x-kubernetes-list-type") == "set"
        return st.lists(_value(st, items), min_size=low, max_size=high, unique_by=_identity if unique else None)
    if kind == "integer":
        low = schema.get("minimum", -(2**31) if schema.get("format") == "int32" else -(2**53))
        high = schema.get("maximum", 2**31 - 1 if schema.get("format") == "int32" else 2**53)
        low += 1 if schema.get("exclusiveMinimum") else 0
        high -= 1 if schema.get("exclusiveMaximum") else 0
        return st.integers(int(low), int(high))
    if kind == "number":
        return st.floats(schema.get("minimum"), schema.get("maximum"), allow_nan=False, allow_infinity=False)
    if kind == "boolean":
        return st.booleans()
    if kind == "string":
        return _string(st, schema)
    return st.none()


def _string(st: Any, schema: Mapping[str, Any]) -> Any:
    fmt = schema.get("format")
    if fmt == "date-time":
        return st.datetimes(datetime(1970, 1, 1), datetime(9999, 12, 31), timezones=st.just(UTC)).map(
            lambda moment: moment.replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")
        )
    if fmt == "date":
        return st.dates(date(1970, 1, 1)).map(lambda day: day.isoformat())
    low = int(schema.get("minLength", 0))
    high = max(low, min(int(schema.get("maxLength", MAX_STRING)), low + MAX_STRING))
    if schema.get("pattern"):
        return st.from_regex(schema["pattern"], fullmatch=True).filter(lambda text: low <= len(text) <= high)
    return st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=low, max_size=high)


def _identity(value: Any) -> Any:
    return yaml.safe_dump(value, sort_keys=True)
