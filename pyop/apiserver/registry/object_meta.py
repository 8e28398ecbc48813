"""The metadata rules every kind shares (k8s.io/apimachinery's ValidateObjectMeta, the parts a request can break):
label keys and values, annotation keys and their total size, owner references (a version, kind, name and uid each;
one controller at most). The test API server's built-in kinds run them before their own rules, custom resources
and an aggregated server's kinds with their schema's.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from pyop.api.status import StatusCause
from pyop.api.validation import label_value_problems, qualified_name_problems

TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024
# Label pairs and annotation keys found valid (the rules are a function of the strings alone): every write of an
# object checks its labels again, and they seldom change; bounded, so arbitrary input cannot grow it past that.
_VALID_LABELS: set[tuple[str, str]] = set()
_VALID_ANNOTATION_KEYS: set[str] = set()
_REMEMBERED = 8192


def validate_object_meta(metadata: Mapping[str, Any]) -> Iterator[StatusCause]:
    """Every problem of ``metadata`` these rules find, as Status causes."""
    if _known_valid(metadata):
        return iter(())
    return _metadata(metadata)


def _known_valid(metadata: Mapping[str, Any]) -> bool:
    """Whether `_metadata` would find nothing, decided from the remembered labels and annotation keys alone (every
    write of an object checks them again, and they seldom change): plain dicts of strings, every label pair and
    annotation key found valid before, the annotations within their size, no owner references. False: ask
    `_metadata` (it may still find nothing)."""
    labels = metadata.get("labels")
    if labels:
        if type(labels) is not dict:
            return False
        try:
            if not _VALID_LABELS.issuperset(labels.items()):  # only (str, str) pairs are in it
                return False
        except TypeError:  # an unhashable value (bad input)
            return False
    annotations = metadata.get("annotations")
    if annotations:
        if type(annotations) is not dict or not _VALID_ANNOTATION_KEYS.issuperset(annotations):
            return False
        size = 0
        for key, value in annotations.items():
            if type(value) is not str:
                return False
            size += len(key) + len(value)
        if size > TOTAL_ANNOTATION_SIZE_LIMIT:
            return False
    return not metadata.get("ownerReferences")


def _invalid(path: str, value: Any, detail: str) -> StatusCause:
    return StatusCause(
        "FieldValueInvalid", f"Invalid value: {json.dumps(str(value), ensure_ascii=False)}: {detail}", path
    )


def _metadata(metadata: Mapping[str, Any]) -> Iterator[StatusCause]:
    labels = metadata.get("labels") or {}
    if isinstance(labels, Mapping):
        for key, value in labels.items():
            plain = type(key) is str and type(value) is str  # a dict or list (bad input) is not hashable
            if plain and (key, value) in _VALID_LABELS:
                continue
            key_problems, value_problems = qualified_name_problems(str(key)), label_value_problems(str(value))
            for problem in key_problems:
                yield _invalid("metadata.labels", key, problem)
            for problem in value_problems:
                yield _invalid("metadata.labels", value, problem)
            if plain and not (key_problems or value_problems):
                _remember(_VALID_LABELS, (key, value))
    annotations = metadata.get("annotations") or {}
    if isinstance(annotations, Mapping):
        for key in annotations:
            if type(key) is str and key in _VALID_ANNOTATION_KEYS:
                continue
            problems = qualified_name_problems(str(key).lower())
            for problem in problems:
                yield _invalid("metadata.annotations", key, problem)
            if not problems and type(key) is str:
                _remember(_VALID_ANNOTATION_KEYS, key)
        size = sum(len(str(k)) + len(str(v)) for k, v in annotations.items())
        if size > TOTAL_ANNOTATION_SIZE_LIMIT:
            yield StatusCause(
                "FieldValueTooLong",
                f"Too long: may not be more than {TOTAL_ANNOTATION_SIZE_LIMIT} bytes",
                "metadata.annotations",
            )
    references = metadata.get("ownerReferences") or []
    if isinstance(references, list):
        yield from _owner_references([r for r in references if isinstance(r, Mapping)])


def _remember(found: set[Any], item: Any) -> None:
    if len(found) >= _REMEMBERED:
        found.clear()  # arbitrary input: start over rather than grow
    found.add(item)


def _owner_references(references: list[Mapping[str, Any]]) -> Iterator[StatusCause]:
    path = "metadata.ownerReferences"
    controller = ""
    for reference in references:
        api_version = str(reference.get("apiVersion") or "")
        if not api_version.rpartition("/")[2]:
            yield _invalid(f"{path}.apiVersion", api_version, "version must not be empty")
        for field in ("kind", "name", "uid"):
            if not reference.get(field):
                yield _invalid(f"{path}.{field}", str(reference.get(field) or ""), f"{field} must not be empty")
        if reference.get("controller") is True:
            if controller:
                yield StatusCause(
                    "FieldValueInvalid",
                    'Invalid value: "": Only one reference can have Controller set to true. Found "true" in '
                    f"references for {controller} and {reference.get('name', '')}",
                    path,
                )
            controller = controller or f"{reference.get('kind', '')}/{reference.get('name', '')}"


__all__ = ["TOTAL_ANNOTATION_SIZE_LIMIT", "validate_object_meta"]
