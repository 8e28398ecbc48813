"""``/openapi/v2`` and ``/openapi/v3``: the served kinds' schemas, as kube-apiserver publishes them.

kubectl reads them for ``kubectl explain``, to learn whether the server validates fields itself (``kubectl apply``'s
default ``--validate=strict`` looks for the ``fieldValidation`` parameter of the kind's PATCH operation in the v3
document of its group-version, and validates on the client when it is missing) and for strategic-merge patch
metadata; so do OpenAPI-driven clients. Built-in kinds are described by `pyop.api.definitions` (the definitions
the models, the defaulting and the decoding of built-ins use), custom resources by their CRD's schema, so the
documents change when CRDs do (they are rebuilt when the set of served types changes, and cached until then).

The definitions are stored as JSON Schema (kubernetes-validate's form); they are turned back into OpenAPI here:
``["string", "null"]`` types become ``string``, ``#/$defs/`` references ``#/definitions/`` (v2) or
``#/components/schemas/`` (v3), IntOrString and Quantity are ``string`` with their ``int-or-string`` /
``quantity`` formats, and the ``enum`` pinning ``apiVersion``/``kind`` is dropped. v3 documents wrap a reference
with siblings in ``allOf`` as kube-apiserver does. Both are served as JSON; v2 also as gnostic's protobuf when
asked for by name (``application/com.github.proto-openapi.spec.v2@v1.0+protobuf``, what client-go's
``OpenAPISchema()`` and ``kubectl explain --output=plaintext-openapiv2`` accept; `openapi_v2_proto`). Any other
Accept is a 406.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from pyop.api.definitions import definition_for_kind, load_definitions, reference_target
from pyop.api.status import ApiError
from pyop.apiserver.endpoints import openapi_v2_proto
from pyop.apiserver.endpoints.served import GroupVersion, group_versions, same_snapshot, snapshot
from pyop.apiserver.endpoints.wire import dumps
from pyop.apiserver.registry.resources import ResourceRegistry, ResourceType

V2_PREFIX = "#/definitions/"
V3_PREFIX = "#/components/schemas/"
_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
_SPECIAL_FORMATS = {
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": "int-or-string",
    "io.k8s.apimachinery.pkg.api.resource.Quantity": "quantity",
}
_OPERATION_SCHEMAS = (f"{_META}DeleteOptions", f"{_META}Status", f"{_META}Patch", f"{_META}WatchEvent")
_API_VERSION_DOC = (
    "APIVersion defines the versioned schema of this representation of an object. Servers should convert "
    "recognized schemas to the latest internal value, and may reject unrecognized values. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources"
)
_KIND_DOC = (
    "Kind is a string value representing the REST resource this object represents. Servers may infer this from "
    "the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"
)
_METADATA_DOC = (
    "Standard object's metadata. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
)

# Query parameters of each action (kube-apiserver's names; descriptions are short).
_WRITE = ("dryRun", "fieldManager", "fieldValidation", "pretty")
_PARAMETERS: dict[str, tuple[str, ...]] = {
    "list": (
        "allowWatchBookmarks",
        "continue",
        "fieldSelector",
        "labelSelector",
        "limit",
        "pretty",
        "resourceVersion",
        "resourceVersionMatch",
        "sendInitialEvents",
        "timeoutSeconds",
        "watch",
    ),
    "post": _WRITE,
    "put": _WRITE,
    "patch": (*_WRITE, "force"),
    "get": ("pretty",),
    "delete": ("dryRun", "gracePeriodSeconds", "orphanDependents", "pretty", "propagationPolicy"),
    "deletecollection": ("dryRun", "gracePeriodSeconds", "labelSelector", "fieldSelector", "propagationPolicy"),
}
_BOOLEAN_PARAMETERS = frozenset({"allowWatchBookmarks", "force", "orphanDependents", "sendInitialEvents", "watch"})
_INTEGER_PARAMETERS = frozenset({"gracePeriodSeconds", "limit", "timeoutSeconds"})
_PATCH_TYPES = (
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
)


def crd_definition_name(group: str, version: str, kind: str) -> str:
    """kube-apiserver's name for a custom kind's schema: the group reversed (``example.com`` -> ``com.example``)."""
    return ".".join([*reversed(group.split(".")), version, kind])


def to_openapi(schema: Any, prefix: str, *, v3: bool) -> Any:
    """One JSON Schema definition (kubernetes-validate's form) as an OpenAPI schema."""
    if isinstance(schema, list):
        return [to_openapi(item, prefix, v3=v3) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "$ref":
            out[key] = prefix + reference_target(value)
        elif key == "type" and isinstance(value, list):
            types = [item for item in value if item != "null"]
            out[key] = types[0] if len(types) == 1 else value
        elif key == "properties":
            out[key] = {name: _property(name, sub, prefix, v3=v3) for name, sub in value.items()}
        elif key in ("additionalProperties", "items", "not"):
            out[key] = to_openapi(value, prefix, v3=v3)
        elif key in ("oneOf", "anyOf", "allOf"):
            out[key] = [to_openapi(item, prefix, v3=v3) for item in value]
        else:
            out[key] = value
    if v3 and "$ref" in out and len(out) > 1:
        out = {"allOf": [{"$ref": out.pop("$ref")}], **out}
    return out


def _property(name: str, schema: Any, prefix: str, *, v3: bool) -> Any:
    converted = to_openapi(schema, prefix, v3=v3)
    if name in ("apiVersion", "kind") and isinstance(converted, dict):
        converted.pop("enum", None)
    return converted


@functools.lru_cache(maxsize=8192)
def definition(name: str, kubernetes_version: str, prefix: str, *, v3: bool) -> dict[str, Any]:
    """One built-in definition in OpenAPI form; cached, shared by every document (never mutated)."""
    special = _SPECIAL_FORMATS.get(name)
    if special is not None:
        return {"type": "string", "format": special}
    result = to_openapi(load_definitions(kubernetes_version)[name], prefix, v3=v3)
    assert isinstance(result, dict)
    return result


def _references(schema: Any, prefix: str, found: set[str]) -> None:
    if isinstance(schema, dict):
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith(prefix):
            found.add(ref[len(prefix) :])
        for value in schema.values():
            _references(value, prefix, found)
    elif isinstance(schema, list):
        for item in schema:
            _references(item, prefix, found)


@functools.lru_cache(maxsize=8192)
def _definition_references(name: str, kubernetes_version: str, prefix: str, v3: bool) -> frozenset[str]:
    found: set[str] = set()
    _references(definition(name, kubernetes_version, prefix, v3=v3), prefix, found)
    return frozenset(found)


def _close(schemas: dict[str, Any], kubernetes_version: str, prefix: str, *, v3: bool) -> dict[str, Any]:
    """Add every definition the schemas reference, transitively (a v3 document is self-contained)."""
    pending: set[str] = set()
    _references(schemas, prefix, pending)
    while pending:
        name = pending.pop()
        if name in schemas:
            continue
        schemas[name] = definition(name, kubernetes_version, prefix, v3=v3)
        pending |= _definition_references(name, kubernetes_version, prefix, v3)
    return dict(sorted(schemas.items()))


def _ref(name: str, prefix: str) -> dict[str, str]:
    return {"$ref": prefix + name}


def custom_schemas(resource_type: ResourceType, prefix: str) -> dict[str, dict[str, Any]]:
    """A CRD version's object and list schemas, named and shaped as kube-apiserver builds them."""
    group, version, kind = resource_type.group, resource_type.version, resource_type.kind
    name = crd_definition_name(group, version, kind)
    schema: dict[str, Any] = json.loads(json.dumps(resource_type.schema or {}))
    if not resource_type.schema:
        schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    properties = schema.setdefault("properties", {})
    properties["apiVersion"] = {"description": _API_VERSION_DOC, "type": "string"}
    properties["kind"] = {"description": _KIND_DOC, "type": "string"}
    metadata = _ref(f"{_META}ObjectMeta", prefix)
    properties["metadata"] = (
        {"allOf": [metadata], "description": _METADATA_DOC} if prefix == V3_PREFIX else {**metadata}
    )
    schema["properties"] = dict(sorted(properties.items()))
    schema["x-kubernetes-group-version-kind"] = [{"group": group, "kind": kind, "version": version}]
    listed = {
        "description": f"{kind}List is a list of {kind}",
        "required": ["items"],
        "type": "object",
        "properties": {
            "apiVersion": {"description": _API_VERSION_DOC, "type": "string"},
            "items": {"description": f"List of {resource_type.plural}.", "type": "array", "items": _ref(name, prefix)},
            "kind": {"description": _KIND_DOC, "type": "string"},
            "metadata": _ref(f"{_META}ListMeta", prefix),
        },
        "x-kubernetes-group-version-kind": [{"group": group, "kind": f"{kind}List", "version": version}],
    }
    return {name: schema, f"{name}List": listed}


def _parameter(name: str, *, v3: bool) -> dict[str, Any]:
    kind = "boolean" if name in _BOOLEAN_PARAMETERS else "integer" if name in _INTEGER_PARAMETERS else "string"
    parameter: dict[str, Any] = {"name": name, "in": "query", "uniqueItems": True}
    if v3:
        parameter["schema"] = {"type": kind, "uniqueItems": True}
        parameter.pop("uniqueItems")
    else:
        parameter["type"] = kind
    return parameter


def _path_parameter(name: str, *, v3: bool) -> dict[str, Any]:
    parameter: dict[str, Any] = {"name": name, "in": "path", "required": True, "uniqueItems": True}
    if v3:
        parameter.pop("uniqueItems")
        parameter["schema"] = {"type": "string", "uniqueItems": True}
    else:
        parameter["type"] = "string"
    return parameter


@dataclass
class _Paths:
    """Builds one document's paths (v2 or v3 shapes)."""

    v3: bool
    prefix: str
    paths: dict[str, dict[str, Any]] = field(default_factory=dict)

    def operation(
        self,
        path: str,
        method: str,
        action: str,
        gvk: dict[str, str],
        response: str,
        *,
        body: str | None = None,
        path_parameters: tuple[str, ...] = (),
    ) -> None:
        parameters = [_parameter(name, v3=self.v3) for name in _PARAMETERS[action if action != "watch" else "list"]]
        item = self.paths.setdefault(path, {})
        if path_parameters:
            item["parameters"] = [_path_parameter(name, v3=self.v3) for name in path_parameters]
        operation: dict[str, Any] = {
            "description": f"{action} {gvk['kind']}",
            "operationId": f"{action}{gvk['kind']}{gvk['group'].replace('.', '')}{gvk['version']}".replace("-", ""),
            "parameters": parameters,
            "x-kubernetes-action": action,
            "x-kubernetes-group-version-kind": gvk,
        }
        if self.v3:
            if body is not None:
                types = _PATCH_TYPES if method == "patch" else ("*/*",)
                schema = _ref(body, self.prefix)
                operation["requestBody"] = {"content": {t: {"schema": schema} for t in types}, "required": True}
            ok = {"content": {"application/json": {"schema": _ref(response, self.prefix)}}, "description": "OK"}
            operation["responses"] = {"200": ok, "401": {"description": "Unauthorized"}}
        else:
            if body is not None:
                parameters.insert(
                    0, {"in": "body", "name": "body", "required": True, "schema": _ref(body, self.prefix)}
                )
                operation["consumes"] = list(_PATCH_TYPES) if method == "patch" else ["*/*"]
            operation["produces"] = ["application/json", "application/yaml"]
            ok = {"description": "OK", "schema": _ref(response, self.prefix)}
            operation["responses"] = {"200": ok, "401": {"description": "Unauthorized"}}
        item[method] = operation

    def resource(self, resource_type: ResourceType, kind_schema: str) -> None:
        rt = resource_type
        base = f"/apis/{rt.group}/{rt.version}" if rt.group else f"/api/{rt.version}"
        gvk = {"group": rt.group, "kind": rt.kind, "version": rt.version}
        list_schema = f"{kind_schema}List"
        namespace = ("namespace",) if rt.namespaced else ()
        collection = f"{base}/namespaces/{{namespace}}/{rt.plural}" if rt.namespaced else f"{base}/{rt.plural}"
        item, names = f"{collection}/{{name}}", (*namespace, "name")
        verbs = set(rt.verbs)
        status = f"{_META}Status"
        if "list" in verbs:
            self.operation(collection, "get", "list", gvk, list_schema, path_parameters=namespace)
            if rt.namespaced:
                self.operation(f"{base}/{rt.plural}", "get", "list", gvk, list_schema)
        if "create" in verbs:
            self.operation(collection, "post", "post", gvk, kind_schema, body=kind_schema, path_parameters=namespace)
        if "deletecollection" in verbs:
            self.operation(collection, "delete", "deletecollection", gvk, status, path_parameters=namespace)
        if "get" in verbs:
            self.operation(item, "get", "get", gvk, kind_schema, path_parameters=names)
        if "update" in verbs:
            self.operation(item, "put", "put", gvk, kind_schema, body=kind_schema, path_parameters=names)
        if "patch" in verbs:
            patch = f"{_META}Patch"
            self.operation(item, "patch", "patch", gvk, kind_schema, body=patch, path_parameters=names)
        if "delete" in verbs:
            self.operation(item, "delete", "delete", gvk, status, body=f"{_META}DeleteOptions", path_parameters=names)
        subresources = (["status"] if rt.has_status else []) + (["scale"] if rt.scale is not None else [])
        for subresource in subresources:
            target, sub_gvk = kind_schema, gvk
            if subresource == "scale":
                target = "io.k8s.api.autoscaling.v1.Scale"
                sub_gvk = {"group": "autoscaling", "kind": "Scale", "version": "v1"}
            path = f"{item}/{subresource}"
            self.operation(path, "get", "get", sub_gvk, target, path_parameters=names)
            self.operation(path, "put", "put", sub_gvk, target, body=target, path_parameters=names)
            self.operation(path, "patch", "patch", sub_gvk, target, body=f"{_META}Patch", path_parameters=names)


def _schema_name(resource_type: ResourceType, kubernetes_version: str) -> str:
    if resource_type.custom:
        return crd_definition_name(resource_type.group, resource_type.version, resource_type.kind)
    return definition_for_kind(resource_type.group, resource_type.version, resource_type.kind, kubernetes_version)


def _info(kubernetes_version: str) -> dict[str, str]:
    return {"title": "Kubernetes", "version": f"v{kubernetes_version}.0"}


def _encode(document: dict[str, Any]) -> bytes:
    return dumps(document)


def v2_document(served: list[GroupVersion], kubernetes_version: str, *, every_builtin: bool = True) -> dict[str, Any]:
    """The whole API in one Swagger 2.0 document (kube-apiserver's /openapi/v2). ``every_builtin``: every built-in
    definition, as kube-apiserver's document has them; else only those the served kinds' paths reach (an aggregated
    server's document, as sample-apiserver's: its kinds and the meta types they use)."""
    paths = _Paths(v3=False, prefix=V2_PREFIX)
    definitions: dict[str, Any] = {}
    if every_builtin:
        definitions = {
            name: definition(name, kubernetes_version, V2_PREFIX, v3=False)
            for name in load_definitions(kubernetes_version)
        }
        for name, special in _SPECIAL_FORMATS.items():
            definitions[name] = {"type": "string", "format": special}
    for gv in served:
        for resource_type in gv.types:
            name = _schema_name(resource_type, kubernetes_version)
            if not name:
                continue
            if resource_type.custom:
                definitions.update(custom_schemas(resource_type, V2_PREFIX))
            elif not every_builtin:
                for own in (name, f"{name}List"):
                    if own in load_definitions(kubernetes_version):
                        definitions[own] = definition(own, kubernetes_version, V2_PREFIX, v3=False)
            paths.resource(resource_type, name)
    if not every_builtin:  # what the paths reference (Status, Patch, DeleteOptions ...), then what those reference
        reached: set[str] = set()
        _references(paths.paths, V2_PREFIX, reached)
        for name in reached - definitions.keys():
            definitions[name] = definition(name, kubernetes_version, V2_PREFIX, v3=False)
        definitions = _close(definitions, kubernetes_version, V2_PREFIX, v3=False)
    return {
        "swagger": "2.0",
        "info": _info(kubernetes_version),
        "paths": dict(sorted(paths.paths.items())),
        "definitions": dict(sorted(definitions.items())),
        "securityDefinitions": {"BearerToken": {"type": "apiKey", "name": "authorization", "in": "header"}},
        "security": [{"BearerToken": []}],
    }


def v3_document(gv: GroupVersion, kubernetes_version: str) -> dict[str, Any]:
    """One group-version's OpenAPI 3.0 document, self-contained (every referenced schema included)."""
    paths = _Paths(v3=True, prefix=V3_PREFIX)
    schemas: dict[str, Any] = {
        name: definition(name, kubernetes_version, V3_PREFIX, v3=True) for name in _OPERATION_SCHEMAS
    }
    for resource_type in gv.types:
        name = _schema_name(resource_type, kubernetes_version)
        if not name:
            continue
        if resource_type.custom:
            schemas.update(custom_schemas(resource_type, V3_PREFIX))
        else:
            for own in (name, f"{name}List"):
                if own in load_definitions(kubernetes_version):
                    schemas[own] = definition(own, kubernetes_version, V3_PREFIX, v3=True)
        paths.resource(resource_type, name)
    return {
        "openapi": "3.0.0",
        "info": _info(kubernetes_version),
        "paths": dict(sorted(paths.paths.items())),
        "components": {
            "schemas": _close(schemas, kubernetes_version, V3_PREFIX, v3=True),
            "securitySchemes": {
                "BearerToken": {
                    "type": "apiKey",
                    "description": "Bearer Token authentication",
                    "name": "authorization",
                    "in": "header",
                }
            },
        },
    }


@dataclass
class _Built:
    types: tuple[ResourceType, ...]
    served: list[GroupVersion]
    v2: bytes | None = None
    v2_protobuf: bytes | None = None
    v3: dict[str, tuple[bytes, str]] = field(default_factory=dict)  # path -> (JSON, hash)


class OpenAPIDocuments:
    """The served documents, rebuilt lazily when the set of served types changes (a CRD added, changed, removed)."""

    def __init__(self, resources: ResourceRegistry, kubernetes_version: str) -> None:
        self.resources = resources
        self.kubernetes_version = kubernetes_version
        # /openapi/v2 with every built-in definition (kube-apiserver's); an aggregated server sets False (its own).
        self.every_builtin_v2 = True
        self._built: _Built | None = None

    def _current(self) -> _Built:
        served = group_versions(self.resources)
        types = snapshot(served)
        if self._built is None or not same_snapshot(self._built.types, types):
            self._built = _Built(types, served)
        return self._built

    def v2(self) -> bytes:
        built = self._current()
        if built.v2 is None:
            built.v2 = _encode(v2_document(built.served, self.kubernetes_version, every_builtin=self.every_builtin_v2))
        return built.v2

    def v2_protobuf(self) -> bytes:
        """``v2`` as gnostic's protobuf Document (`openapi_v2_proto`)."""
        built = self._current()
        if built.v2_protobuf is None:
            built.v2_protobuf = openapi_v2_proto.document(json.loads(self.v2()))
        return built.v2_protobuf

    def v3(self, path: str) -> tuple[bytes, str] | None:
        """(document, hash) of ``api/v1`` or ``apis/<group>/<version>``; None when not served."""
        return self._v3(self._current(), path)

    def _v3(self, built: _Built, path: str) -> tuple[bytes, str] | None:
        if path not in built.v3:
            gv = next((gv for gv in built.served if gv.path == path), None)
            if gv is None:
                return None
            body = _encode(v3_document(gv, self.kubernetes_version))
            built.v3[path] = (body, hashlib.sha512(body).hexdigest().upper())
        return built.v3[path]

    def v3_index(self) -> dict[str, Any]:
        """``{"paths": {"apis/apps/v1": {"serverRelativeURL": "/openapi/v3/apis/apps/v1?hash=..."}}}``."""
        built = self._current()
        paths = {}
        for gv in built.served:
            found = self._v3(built, gv.path)
            assert found is not None
            paths[gv.path] = {"serverRelativeURL": f"/openapi/v3/{gv.path}?hash={found[1]}"}
        return {"paths": dict(sorted(paths.items()))}


def v2_as_protobuf(accept: str) -> bool:
    """Whether ``/openapi/v2`` is answered as protobuf (asked for by name), else JSON; ApiError 406 when the
    Accept header allows neither."""
    if openapi_v2_proto.wants_protobuf(accept):
        return True
    if accept and not any(t in accept for t in ("application/json", "*/*", "application/*")):
        raise ApiError(
            406,
            f"the server does not serve /openapi/v2 as {accept!r}: only as application/json or "
            f"{openapi_v2_proto.PROTOBUF_TYPE}",
            reason="NotAcceptable",
        )
    return False


def openapi_response(request: web.BaseRequest, documents: OpenAPIDocuments) -> web.Response:
    """GET /openapi/v2, /openapi/v3 (the index) and /openapi/v3/<group-version path>."""
    if request.method != "GET":
        raise ApiError(405, "the server does not allow this method on the requested resource")
    path = request.path.rstrip("/")
    if path == "/openapi/v2":
        accept = request.headers.get("Accept", "")
        if v2_as_protobuf(accept):
            return web.Response(body=documents.v2_protobuf(), headers={"Content-Type": openapi_v2_proto.PROTOBUF_TYPE})
        return web.Response(body=documents.v2(), content_type="application/json")
    if path == "/openapi/v3":
        return web.Response(body=_encode(documents.v3_index()), content_type="application/json")
    found = documents.v3(path.removeprefix("/openapi/v3/"))
    if found is None:
        raise ApiError(404, "the server could not find the requested resource")
    body, digest = found
    wanted = request.query.get("hash")
    if wanted is not None and wanted != digest:
        # kube-apiserver's answer to an old hash: the document under its current one.
        location = f"{path}?hash={digest}"
        return web.Response(status=301, headers={"Location": location, "Cache-Control": "no-cache"})
    cache = "public, immutable" if wanted else "no-cache"
    response = web.Response(body=body, content_type="application/json", headers={"Cache-Control": cache})
    response.headers["Etag"] = f'"{digest}"'
    return response
