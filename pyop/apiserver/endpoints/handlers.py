"""HTTP layer: turn aiohttp requests into registry operations and results into JSON responses."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

import yaml
from aiohttp import web

from pyop.api.selectors import parse_field_selector, parse_label_selector
from pyop.api.status import ApiError, bad_request, warning_header
from pyop.apiserver.admission.chain import AdmissionChain
from pyop.apiserver.authentication.user import UserInfo
from pyop.apiserver.endpoints.plain_response import plain_response
from pyop.apiserver.endpoints.protobuf import negotiation as protobuf
from pyop.apiserver.endpoints.request_parts import PerQuery, media_type, request_body
from pyop.apiserver.endpoints.routing import DiscoveryPath, Target, parse_path, verb_of
from pyop.apiserver.endpoints.table import watch_converter
from pyop.apiserver.endpoints.wire import dumps
from pyop.apiserver.registry import bridge
from pyop.apiserver.registry.operations import APPLY_PATCH, PATCH_TYPES, Operations, WriteOptions
from pyop.apiserver.registry.resources import ResourceType
from pyop.apiserver.registry.strategy import DEFAULT_FIELD_VALIDATION, FIELD_VALIDATION_MODES
from pyop.client.jsoncodec import decode_json


class _YamlLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """The safe loader, but timestamps stay strings: sigs.k8s.io/yaml turns YAML into JSON, which has no dates."""


_YamlLoader.add_constructor("tag:yaml.org,2002:timestamp", lambda loader, node: loader.construct_scalar(node))
_YAML_LOADER = _YamlLoader
JSON_TYPE = "application/json"
YAML_TYPE = "application/yaml"
BODY_TYPES = (JSON_TYPE, YAML_TYPE)
PROTOBUF_BODY_TYPES = (protobuf.PROTOBUF_TYPE,)  # built-in kinds only
_REGISTRY_SUBRESOURCES = ("", "status", "scale", "finalize", "token")  # and each kind's update_subresources
T = TypeVar("T")
# A POST to an object's subresource that is no registry write (a ServiceAccount's `token`): (operations, namespace,
# name, body) -> the answer, sent with 201.
SubresourceCreate = Callable[[Any, str, str, Any], dict[str, Any]]
# GET of a subresource that is no stored object (a pod's `log`): (operations, namespace, name, query) -> response.
SubresourceGet = Callable[[Any, str, str, Any], web.StreamResponse]
# A streaming subresource (a pod's `exec`, `attach`, `portforward`: GET for a websocket upgrade, POST for SPDY):
# (operations, namespace, name, request, user) -> the response (the upgraded connection, served to its end).
SubresourceConnect = Callable[[Any, str, str, web.BaseRequest, Any], Awaitable[web.StreamResponse]]


def query_bool(query: Any, name: str) -> bool:
    """A boolean query parameter as kube-apiserver reads it (Convert_Slice_string_To_bool): absent, `0` or `false`
    (any case) is false, anything else, the empty string included, is true (`?watch=True`, `?watch`)."""
    values = query.getall(name, [])
    if not values:
        return False
    return not (values[0] == "0" or values[0].lower() == "false")


def field_validation(query: Any) -> str:
    value = query.get("fieldValidation", "")
    if not value:
        return DEFAULT_FIELD_VALIDATION
    if value not in FIELD_VALIDATION_MODES:
        raise bad_request(
            f'fieldValidation: Unsupported value: "{value}": supported values: "Ignore", "Strict", "Warn"'
        )
    return value


def body_type(request: web.BaseRequest) -> str:
    """The request body's media type; none given is JSON (what clients that send no Content-Type mean)."""
    raw = request.headers.get("Content-Type", "")
    return raw.split(";", 1)[0].strip().lower() or JSON_TYPE


async def read_body(request: web.BaseRequest, resource_type: ResourceType | None = None) -> Any:
    """A create/update/delete body: JSON, YAML, or protobuf for built-in kinds (`resource_type`: the resource the
    body is for; custom resources have no protobuf encoding); any other media type is a 415, as on kube-apiserver."""
    media_type = body_type(request)
    if media_type == JSON_TYPE:
        return await read_json(request)
    if media_type == YAML_TYPE:
        return await read_yaml(request)
    custom = resource_type is None or resource_type.custom
    accepted = BODY_TYPES if custom else BODY_TYPES + PROTOBUF_BODY_TYPES
    if media_type == protobuf.PROTOBUF_TYPE:
        return protobuf.decode_body(await request_body(request), custom=custom, accepted=accepted)
    raise protobuf.unsupported_media_type(accepted)


def json_response(body: Any, status: int = 200) -> web.Response:
    return plain_response(dumps(body), status, JSON_TYPE)


def error_response(error: ApiError) -> web.Response:
    response = json_response(error.to_status(), error.code)
    if error.retry_after is not None:
        response.headers["Retry-After"] = str(error.retry_after)
    add_warnings(response, error.warnings)
    return response


def add_warnings(response: web.StreamResponse, warnings: list[str]) -> None:
    """Admission warnings as ``Warning`` headers, each text once (kube-apiserver drops repeats)."""
    for text in dict.fromkeys(warnings):
        response.headers.add("Warning", warning_header(text))


async def read_json(request: web.BaseRequest) -> Any:
    raw = await request_body(request)
    if not raw:
        return None
    try:
        return decode_json(raw)
    except ValueError as error:
        raise bad_request(f"the request body is not valid JSON: {error}") from None


async def read_yaml(request: web.BaseRequest) -> Any:
    raw = await request_body(request)
    if raw.lstrip()[:1] == b"{":  # JSON, as clients send apply bodies: the YAML loader takes ~20x longer for it
        try:
            return decode_json(raw)
        except ValueError:
            pass  # YAML's flow style (`{a: 1}`), not JSON
    try:
        return yaml.load(raw, Loader=_YAML_LOADER)  # noqa: S506 - safe loader
    except yaml.YAMLError as error:
        raise bad_request(f"error decoding YAML: {error}") from None


def _write_query(request: web.BaseRequest) -> tuple[bool, str, bool, str]:
    """What a write's query asks: dry run, field manager, force, field validation (or the 400 of a bad value)."""
    query = request.query
    dry_run = query.getall("dryRun", [])
    for value in dry_run:
        if value != "All":
            raise bad_request(f'dryRun: Unsupported value: "{value}": supported values: "All"')
    return bool(dry_run), query.get("fieldManager", ""), query_bool(query, "force"), field_validation(query)


_write_query_of = PerQuery(_write_query)  # clients send the same few queries again and again


_DEFAULT_MANAGERS: dict[str, str] = {}  # User-Agent -> the field manager it names (a server sees a handful)


def _default_manager(user_agent: str) -> str:
    """The field manager of a write that names none: the User-Agent's product (`kubectl/v1.32 ...` -> kubectl)."""
    manager = _DEFAULT_MANAGERS.get(user_agent)
    if manager is None:
        manager = user_agent.split("/")[0] or "unknown"
        if len(_DEFAULT_MANAGERS) < 256:
            _DEFAULT_MANAGERS[user_agent] = manager
    return manager


def write_options(request: web.BaseRequest, user: UserInfo | None = None) -> WriteOptions:
    dry_run, field_manager, force, validation = _write_query_of(request)
    return WriteOptions(
        dry_run=dry_run,
        field_manager=field_manager,
        default_manager=_default_manager(request.headers.get("User-Agent", "")),
        force=force,
        field_validation=validation,
        user=user,
    )


class ApiHandler:
    """Dispatches one parsed API request; returns the response (a stream for watches)."""

    def __init__(
        self,
        operations: Operations,
        admission: AdmissionChain | None = None,
        *,
        subresource_creates: Mapping[str, SubresourceCreate] | None = None,
        subresource_gets: Mapping[str, SubresourceGet] | None = None,
        subresource_connects: Mapping[str, SubresourceConnect] | None = None,
    ) -> None:
        """``admission``: what drives writes through admission (None: writes run straight through and no
        conversion webhook can be called). ``subresource_creates``: POST handlers of subresources that are not
        registry writes, by subresource name (the test server's ``token``, for every kind that has one) or by
        `<storage key>/<subresource>` (`pods/eviction`). ``subresource_gets``: GET handlers, keyed the second way
        (`pods/log`); ``subresource_connects``: streaming ones, GET and POST (`pods/exec`)."""
        self.operations = operations
        self.resources = operations.resources
        self.admission = admission
        self.subresource_creates = dict(subresource_creates or {})
        self.subresource_gets = dict(subresource_gets or {})
        self.subresource_connects = dict(subresource_connects or {})

    def _subresource_create(self, resource_type: ResourceType, subresource: str) -> SubresourceCreate | None:
        own = self.subresource_creates.get(f"{resource_type.storage_key}/{subresource}")
        if own is not None:
            return own
        return self.subresource_creates.get("token") if subresource == "token" and resource_type.token else None

    async def _admitted(self, write: Callable[[Any], T], body: Any, warnings: list[str]) -> T:
        """Run a write; through the webhooks only while some are configured (admission webhooks, or a CRD's
        conversion webhook)."""
        if self.admission is None or (not self.operations.admission_active and not self.resources.webhook_converted):
            return write(body)
        try:
            return await self.admission.drive(write, body, warnings)
        except ApiError as error:
            error.warnings = warnings
            raise

    async def _read(self, read: Callable[[], T]) -> T:
        """Run a read; in a bridge while a CRD has a conversion webhook (its objects are converted on the way out)."""
        if self.admission is None or not self.resources.webhook_converted:
            return read()
        return await bridge.run(read, caller=self.admission.caller)

    def discovery(self, path: DiscoveryPath, server_address: str) -> web.Response:
        if path.legacy:
            if path.version is None:
                return json_response(self.resources.api_versions(server_address))
            return json_response(self.resources.resource_list("", path.version))
        if path.group is None:
            return json_response(self.resources.api_group_list())
        if path.version is None:
            return json_response(self.resources.api_group(path.group))
        return json_response(self.resources.resource_list(path.group, path.version))

    def resolve(self, target: Target) -> ResourceType:
        resource_type = self.resources.lookup(target.group, target.version, target.plural)
        if target.namespace is not None and not resource_type.namespaced:
            raise ApiError(404, "the server could not find the requested resource")
        if target.subresource == "status" and not resource_type.has_status:
            raise ApiError(404, "the server could not find the requested resource")
        if target.subresource == "scale" and resource_type.scale is None:
            raise ApiError(404, "the server could not find the requested resource")
        if target.subresource == "token" and not (resource_type.token and "token" in self.subresource_creates):
            raise ApiError(404, "the server could not find the requested resource")
        subresource = target.subresource
        if subresource in _REGISTRY_SUBRESOURCES or subresource in resource_type.update_subresources:
            return resource_type
        special = f"{resource_type.storage_key}/{subresource}"
        if not (
            special in self.subresource_creates
            or special in self.subresource_gets
            or special in self.subresource_connects
        ):
            raise ApiError(404, "the server could not find the requested resource")
        return resource_type

    async def handle(
        self, request: web.BaseRequest, target: Target, verb: str, user: UserInfo | None = None
    ) -> web.StreamResponse:
        resource_type = self.resolve(target)
        if verb not in resource_type.verbs:
            raise ApiError(405, "the server does not allow this method on the requested resource")
        namespace = target.namespace if resource_type.namespaced else ""
        if resource_type.namespaced and namespace is None and verb not in ("list", "watch", "deletecollection"):
            raise ApiError(404, "the server could not find the requested resource")
        ns = namespace or ""
        ops = self.operations
        if target.subresource and self.subresource_connects and verb in ("get", "create"):
            connect = self.subresource_connects.get(f"{resource_type.storage_key}/{target.subresource}")
            if connect is not None:
                return await connect(ops, ns, target.name, request, user)
        if verb == "get":
            get = self.subresource_gets.get(f"{resource_type.storage_key}/{target.subresource}")
            if get is not None:
                return get(ops, ns, target.name, request.query)
            if target.subresource == "scale":
                return json_response(ops.get_scale(resource_type, ns, target.name))
            return json_response(await self._read(lambda: ops.get(resource_type, ns, target.name)))
        if verb in ("list", "watch", "deletecollection"):
            query = request.query  # only here and for deletes: writes read theirs per raw query (write_options)
            labels = parse_label_selector(query.get("labelSelector"))
            field_selector = query.get("fieldSelector", "")
            if target.name:
                field_selector = ",".join(filter(None, [field_selector, f"metadata.name={target.name}"]))
            fields = parse_field_selector(field_selector, resource_type.field_getters())
            if verb == "list":
                limit = _int_param(query, "limit")
                return json_response(
                    await self._read(
                        lambda: ops.list(
                            resource_type,
                            namespace,
                            labels,
                            fields,
                            limit=limit,
                            continue_token=query.get("continue", ""),
                            resource_version=query.get("resourceVersion", ""),
                            resource_version_match=query.get("resourceVersionMatch", ""),
                        )
                    )
                )
            if verb == "deletecollection":
                body = await read_body(request, resource_type) or {}
                delete_options = _delete_options(query, body)
                options = write_options(request, user)
                warnings: list[str] = []
                deleted = await self._admitted(
                    lambda body: ops.delete_collection(
                        resource_type, namespace, labels, fields, delete_options, options
                    ),
                    body,
                    warnings,
                )
                return _with_warnings(json_response(deleted), warnings + options.warnings)
            return await self._watch(request, resource_type, namespace, labels, fields)
        warnings = []
        create = self._subresource_create(resource_type, target.subresource) if verb == "create" else None
        if create is not None:  # TokenRequest, Eviction, Binding
            return json_response(create(ops, ns, target.name, await read_body(request, resource_type)), 201)
        if verb == "create" and target.name:  # POST to an object's path (or to its status or scale): no such route
            raise ApiError(405, "the server does not allow this method on the requested resource")
        if verb == "create":
            body = await read_body(request, resource_type)
            options = write_options(request, user)
            created = await self._admitted(lambda body: ops.create(resource_type, ns, body, options), body, warnings)
            return _with_warnings(json_response(created, 201), warnings + options.warnings)
        if verb == "update":
            body = await read_body(request, resource_type)
            options = write_options(request, user)
            name = target.name
            if target.subresource == "scale":
                scaled = await self._admitted(
                    lambda body: ops.update_scale(resource_type, ns, name, body, options), body, warnings
                )
                return _with_warnings(json_response(scaled), warnings + options.warnings)
            subresource = _registry_subresource(resource_type, target.subresource)
            updated = await self._admitted(
                lambda body: ops.update(resource_type, ns, name, body, options, subresource=subresource),
                body,
                warnings,
            )
            return _with_warnings(json_response(updated), warnings + options.warnings)
        if verb == "patch":
            content_type = media_type(request)
            if content_type not in PATCH_TYPES:
                raise ApiError(
                    415,
                    f"the body of the request was in an unknown format: {content_type}",
                    reason="UnsupportedMediaType",
                )
            body = await (read_yaml(request) if content_type == APPLY_PATCH else read_json(request))
            options = write_options(request, user)
            name = target.name
            if target.subresource == "scale":
                scaled = await self._admitted(
                    lambda body: ops.patch_scale(resource_type, ns, name, content_type, body, options),
                    body,
                    warnings,
                )
                return _with_warnings(json_response(scaled), warnings + options.warnings)
            subresource = _registry_subresource(resource_type, target.subresource)
            result, was_created = await self._admitted(
                lambda body: ops.patch(resource_type, ns, name, content_type, body, options, subresource=subresource),
                body,
                warnings,
            )
            return _with_warnings(json_response(result, 201 if was_created else 200), warnings + options.warnings)
        if verb == "delete":
            body = await read_body(request, resource_type) or {}
            delete_options = _delete_options(request.query, body)
            options = write_options(request, user)
            name = target.name
            result, gone = await self._admitted(
                lambda body: ops.delete(resource_type, ns, name, delete_options, options), body, warnings
            )
            # kube-apiserver's delete handler: 200 with the object, gone or held by finalizers; 202 only when
            # the object stays and the (deprecated) orphanDependents=false asked for cascading deletion.
            held_cascade = not gone and delete_options.get("orphanDependents") is False
            return _with_warnings(json_response(result, 202 if held_cascade else 200), warnings)
        raise ApiError(405, "the server does not allow this method on the requested resource")

    async def _watch(
        self,
        request: web.BaseRequest,
        resource_type: ResourceType,
        namespace: str | None,
        labels: Any,
        fields: Any,
    ) -> web.StreamResponse:
        query = request.query
        timeout = _int_param(query, "timeoutSeconds")
        frames = protobuf.watch_encoder(request, {"apiVersion": resource_type.api_version, "kind": resource_type.kind})
        watcher = self.operations.watch(
            resource_type,
            namespace,
            labels,
            fields,
            resource_version=query.get("resourceVersion", ""),
            bookmarks=query_bool(query, "allowWatchBookmarks"),
            timeout=float(timeout) if timeout else None,
            send_initial_events=query_bool(query, "sendInitialEvents"),
        )
        admission = self.admission
        watcher.caller = admission.caller if admission is not None and resource_type.conversion is not None else None
        watcher.table = watch_converter(request, resource_type, self.operations)
        if frames is not None:  # a client that accepts protobuf only: length-prefixed WatchEvent frames
            watcher.encode_event = frames
        content_type = protobuf.WATCH_STREAM_TYPE if frames is not None else "application/json"
        response = web.StreamResponse(status=200, headers={"Content-Type": content_type})
        response.enable_chunked_encoding()
        try:
            await response.prepare(request)
            await watcher.stream(response, lambda: request.transport is None or request.transport.is_closing())
        except (ConnectionResetError, ConnectionError):
            pass
        finally:
            watcher.close()
            self.operations.end_watch(watcher)
        return response


def _registry_subresource(resource_type: ResourceType, subresource: str) -> str:
    """The subresource an update or patch writes through the registry as: `status`, or one of the kind's own."""
    return subresource if subresource == "status" or subresource in resource_type.update_subresources else ""


def _with_warnings(response: web.Response, warnings: list[str]) -> web.Response:
    if warnings:
        add_warnings(response, warnings)
    return response


def _int_param(query: Any, name: str) -> int:
    raw = query.get(name)
    if not raw:
        return 0
    try:
        value = int(raw)
    except ValueError:
        raise bad_request(f"{name}: invalid value {raw!r}: must be an integer") from None
    if value < 0:
        raise bad_request(f"{name}: invalid value {raw!r}: must be non-negative")
    return value


def _delete_options(query: Any, body: Any) -> dict[str, Any]:
    options = dict(body) if isinstance(body, dict) else {}
    if "propagationPolicy" in query:
        options["propagationPolicy"] = query["propagationPolicy"]
    if query_bool(query, "orphanDependents"):
        options["orphanDependents"] = True
    return options


def is_watch(request: web.BaseRequest) -> bool:
    return query_bool(request.query, "watch")


__all__ = ["ApiHandler", "error_response", "is_watch", "json_response", "parse_path", "verb_of"]
