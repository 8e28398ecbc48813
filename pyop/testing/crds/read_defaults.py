"""Defaults a CRD gains later reach the objects already stored: kube-apiserver defaults on read.

kube-apiserver applies a custom resource's structural defaults three times: to the request, after mutating
admission, and when it reads the object from etcd, with the schema of the version the object is stored in. A
default added to a CRD (or changed) therefore shows on every existing object from then on, though etcd still
holds the bytes as written and the resourceVersion is unchanged. The test server's watch cache holds decoded
objects, so when a CRD's schema changes it decodes its stored objects again (`Store.redecode`): same
resourceVersions, no watch events, the backend untouched.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyop.apiserver.storage.store import Store
from pyop.schema.defaulting import defaulted_shared


def _schemas(crd: Mapping[str, Any] | None) -> dict[str, Any]:
    """Version name -> its openAPIV3Schema (versions without a schema are left out)."""
    if not crd:
        return {}
    schemas = {}
    for version in (crd.get("spec") or {}).get("versions") or []:
        schema = (version.get("schema") or {}).get("openAPIV3Schema")
        if isinstance(schema, dict):
            schemas[version["name"]] = schema
    return schemas


def redefault_stored_objects(store: Store, crd: Mapping[str, Any], previous: Mapping[str, Any] | None) -> None:
    """After a CRD update: every stored object of a version whose schema changed, defaulted by that schema."""
    schemas = _schemas(crd)
    before = _schemas(previous)
    changed = {version: schema for version, schema in schemas.items() if before.get(version) != schema}
    if not changed:
        return
    spec = crd["spec"]
    group = spec["group"]
    storage_key = f"{spec['names']['plural']}.{group}"

    def decode(obj: dict[str, Any]) -> dict[str, Any]:
        api_version = str(obj.get("apiVersion") or "")
        schema = changed.get(api_version.removeprefix(f"{group}/"))
        return obj if schema is None else defaulted_shared(obj, schema)

    store.redecode(storage_key, decode)
