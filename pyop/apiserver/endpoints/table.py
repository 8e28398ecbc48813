"""Table output (``Accept: application/json;as=Table;v=v1;g=meta.k8s.io``): what ``kubectl get`` prints.

kubectl asks every get and list for a ``meta.k8s.io/v1`` Table and prints its columns; a server that answers with
the plain object makes kubectl fall back to NAME and AGE, so a test that reads ``kubectl get`` sees less than a
cluster shows. The columns are kube-apiserver's:

- custom resources: Name, then the version's ``additionalPrinterColumns`` (JSONPath evaluated as kube-apiserver
  does, cells typed integer/number/boolean/string/date; a date cell is already the age, "5m", as kube-apiserver's
  `ConvertToHumanReadableDateType` makes it: kubectl prints cells as they come), or Name and an ``Age`` date
  column when the CRD declares none;
- built-in kinds with a printer in kube-apiserver: the columns of `pyop.testing.builtins.printers` (Pods, Deployments,
  Services, ConfigMaps, Jobs and more), wide (priority 1) columns included;
- CustomResourceDefinitions: Name and Created At (kube-apiserver's default convertor); any other kind: Name, Age.

Rows carry the object as ``includeObject`` says: ``Metadata`` (the default: a PartialObjectMetadata),
``Object`` (the whole object) or ``None``. A list's Table keeps the list's resourceVersion and continue token.
A watch that asks for Tables (``kubectl get -w``) gets each event's object as a one-row Table.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from aiohttp import web

from pyop.api.status import bad_request
from pyop.apiserver.endpoints.jsonpath import find_results
from pyop.apiserver.endpoints.printing import AGE, NAME, Column, Row, default_row, human_duration, parse_time
from pyop.apiserver.endpoints.wire import dumps
from pyop.apiserver.registry.resources import ResourceType

INCLUDE_OBJECT = ("Metadata", "None", "Object")


def wants_table(accept: str) -> bool:
    """Whether an Accept header asks for a meta.k8s.io/v1 Table (kubectl lists it first, JSON as a fallback)."""
    for media_range in accept.split(","):
        parts = [part.strip() for part in media_range.split(";")]
        if parts[0] not in ("application/json", "*/*"):
            continue
        parameters = dict(part.split("=", 1) for part in parts[1:] if "=" in part)
        if parameters.get("as") == "Table" and parameters.get("g") == "meta.k8s.io":
            return parameters.get("v") == "v1"
    return False


# --- custom resources ---------------------------------------------------------------------------------------

_DEFAULT_CRD_COLUMNS = [{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}]


def _go_text(value: Any) -> str:
    """A value as the jsonpath printer writes it (strings bare, others as JSON)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    return json.dumps(value, separators=(",", ":"))


def crd_cell(column: Mapping[str, Any], obj: Any, now: datetime) -> Any:
    """One additionalPrinterColumn's cell (kube-apiserver's `cellForJSONValue`): None when nothing is found or
    the value is not of the column's type; a date is its age ("5m", `ConvertToHumanReadableDateType`: the server
    formats it, kubectl prints the cell as it is), ``<invalid>`` when it does not parse."""
    try:
        results = find_results(str(column.get("jsonPath", "")), obj)
    except ValueError:
        return None
    if not results or results[0] is None:
        return None
    value, kind = results[0], column.get("type", "string")
    if kind == "string":
        return _go_text(value)
    if isinstance(value, bool):
        return value if kind == "boolean" else None
    if kind == "integer" and isinstance(value, int | float):
        return int(value)
    if kind == "number" and isinstance(value, int | float):
        return float(value)
    if kind == "date" and isinstance(value, str):
        moment = parse_time(value)
        return "<invalid>" if moment is None else human_duration((now - moment).total_seconds())
    return None


def _printer_columns(resource_type: ResourceType) -> list[Mapping[str, Any]]:
    return list(resource_type.printer_columns or _DEFAULT_CRD_COLUMNS)


# --- the Table ----------------------------------------------------------------------------------------------


def include_object(query: Mapping[str, str]) -> str:
    value = query.get("includeObject", "") or "Metadata"
    if value not in INCLUDE_OBJECT:
        raise bad_request(
            f'includeObject: Unsupported value: "{value}": supported values: "Metadata", "None", "Object"'
        )
    return value


def _row_object(obj: dict[str, Any], mode: str) -> dict[str, Any] | None:
    if mode == "None":
        return None
    if mode == "Object":
        return obj
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": obj.get("metadata") or {}}


def to_table(
    result: dict[str, Any],
    resource_type: ResourceType,
    now: datetime,
    *,
    mode: str = "Metadata",
    kind_printer: tuple[list[Column], Row] | None = None,
) -> dict[str, Any]:
    """A get's object or a list as a meta.k8s.io/v1 Table: ``kind_printer``, the kind's strategy's, when it has
    one; else a custom resource's columns are its type's ``printer_columns`` (the served version's
    additionalPrinterColumns), any other kind's Name and Age."""
    is_list = isinstance(result.get("items"), list)
    objects: list[dict[str, Any]] = result["items"] if is_list else [result]
    if resource_type.custom and kind_printer is None:
        printer = _printer_columns(resource_type)
        columns: list[Column] = [NAME] + [
            (
                str(c.get("name", "")),
                str(c.get("type", "string")),
                str(c.get("format", "")),
                str(c.get("description", "")),
                int(c.get("priority", 0)),
            )
            for c in printer
        ]

        def row_of(obj: dict[str, Any], now: datetime) -> list[Any]:
            return [obj["metadata"]["name"], *(crd_cell(column, obj, now) for column in printer)]

        row: Row = row_of
    else:
        columns, row = kind_printer or ([NAME, AGE], default_row)
    rows = []
    for obj in objects:
        entry: dict[str, Any] = {"cells": row(obj, now)}
        attached = _row_object(obj, mode)
        if attached is not None:
            entry["object"] = attached
        rows.append(entry)
    metadata = dict(result.get("metadata") or {}) if is_list else {}
    if not is_list and (result.get("metadata") or {}).get("resourceVersion"):
        metadata = {"resourceVersion": result["metadata"]["resourceVersion"]}
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": metadata,
        "columnDefinitions": [
            {"name": name, "type": kind, "format": fmt, "description": doc, "priority": priority}
            for name, kind, fmt, doc, priority in columns
        ],
        "rows": rows,
    }


def as_table(
    request: web.BaseRequest, verb: str, target: Any, response: web.StreamResponse, operations: Any
) -> web.StreamResponse:
    """A successful get or list answered as a Table when the client asked for one (``target``: the parsed path);
    any other response as it is. Converting the encoded answer costs a decode, paid only by Table requests."""
    if verb not in ("get", "list") or target.subresource or response.status != 200:
        return response
    if not wants_table(request.headers.get("Accept", "")) or not isinstance(response, web.Response):
        return response
    mode = include_object(request.query)
    resource_type = operations.resources.lookup(target.group, target.version, target.plural)
    assert isinstance(response.body, bytes)
    printer = operations.strategy(resource_type).printer
    table = to_table(json.loads(response.body), resource_type, operations.clock(), mode=mode, kind_printer=printer)
    converted = web.Response(body=dumps(table), content_type="application/json")
    for value in response.headers.getall("Warning", []):
        converted.headers.add("Warning", value)
    return converted


def watch_converter(
    request: web.BaseRequest, resource_type: ResourceType, operations: Any
) -> Callable[[dict[str, Any]], dict[str, Any]] | None:
    """For a watch that asked for Tables (``kubectl get -w``): each event's object becomes a one-row Table, with
    the column definitions, as kube-apiserver streams them; None for any other watch."""
    if not wants_table(request.headers.get("Accept", "")):
        return None
    mode = include_object(request.query)
    printer = operations.strategy(resource_type).printer

    def convert(obj: dict[str, Any]) -> dict[str, Any]:
        return to_table(obj, resource_type, operations.clock(), mode=mode, kind_printer=printer)

    return convert
