"""The JSON patch a defaulter's changes make, computed so that fields the model does not know survive.

A pyop model ignores fields it does not declare (the API server may know newer fields than the operator), so
its dump lacks them. controller-runtime diffs the request's raw object against the re-encoded Go struct and
therefore emits `remove` operations for such fields (its `DefaulterRemoveUnknownOrOmitableFields` option is off
by default for that reason). Here the dump is laid over the raw object instead: a key the model at that level
does not declare keeps its raw value, a declared key takes the model's value (and is removed only when the
defaulter cleared it), so the patch holds exactly the defaulter's changes plus the model's own defaults.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import jsonpatch
from pydantic import BaseModel

from pyop.client.typed import dump

__all__ = ["defaulted_object", "defaulting_patch", "encode_patch", "overlay"]


def overlay(model: Any, dumped: Any, raw: Any) -> Any:
    """`dumped` (the dump of `model`) with every field `model` does not know taken from `raw`.

    Lists of models are matched by position, which is what a defaulter that appends or fills in items needs.
    """
    if isinstance(model, BaseModel) and isinstance(dumped, dict) and isinstance(raw, dict):
        return _overlay_model(model, dumped, raw)
    if isinstance(model, list) and isinstance(dumped, list) and isinstance(raw, list):
        return [
            overlay(item, dumped_item, raw[index]) if index < len(raw) else dumped_item
            for index, (item, dumped_item) in enumerate(zip(model, dumped, strict=False))
        ]
    if isinstance(model, dict) and isinstance(dumped, dict) and isinstance(raw, dict):
        return {key: overlay(model.get(key), value, raw[key]) if key in raw else value for key, value in dumped.items()}
    return dumped


def _overlay_model(model: BaseModel, dumped: dict[str, Any], raw: dict[str, Any]) -> dict[str, Any]:
    # A model that keeps every field it is given (ObjectMeta) has a dump that is the whole truth.
    known_everything = model.model_config.get("extra") == "allow"
    attributes = {(field.alias or name): name for name, field in type(model).model_fields.items()}
    result: dict[str, Any] = {}
    for key, raw_value in raw.items():  # raw order first: the patch then touches only what changed
        attribute = attributes.get(key)
        if key in dumped:
            value = getattr(model, attribute) if attribute is not None else (model.model_extra or {}).get(key)
            result[key] = overlay(value, dumped[key], raw_value)
        elif attribute is None and not known_everything:
            result[key] = raw_value  # unknown to the model: never removed
        elif raw_value is None and (attribute is None or getattr(model, attribute) is None):
            result[key] = None  # an explicit null the model reads as "unset": not a change
    for key, value in dumped.items():
        if key not in result:
            result[key] = value
    return result


def defaulted_object(obj: BaseModel, raw: dict[str, Any]) -> dict[str, Any]:
    """The raw request object as the defaulter left it (what the patch turns `raw` into)."""
    merged: dict[str, Any] = overlay(obj, dump(obj), raw)
    return merged


def defaulting_patch(obj: BaseModel, raw: dict[str, Any]) -> list[dict[str, Any]]:
    """RFC 6902 operations turning `raw` into the defaulted object; empty when the defaulter changed nothing."""
    operations: list[dict[str, Any]] = jsonpatch.make_patch(raw, defaulted_object(obj, raw)).patch
    return operations


def encode_patch(operations: list[dict[str, Any]]) -> str:
    """The `patch` field of an AdmissionResponse: base64 of the JSON operations."""
    return base64.b64encode(json.dumps(operations, separators=(",", ":")).encode()).decode()
