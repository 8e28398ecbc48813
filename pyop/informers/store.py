"""The informer cache: objects by key, plus secondary indices (client-go's `cache.Indexer`).

Objects are kept exactly once, as the dicts decoded from the API server (no typed copy next to them); listers
parse them into models on the way out. Keys are client-go's: `namespace/name`, or `name` for cluster-scoped
objects. Callers must not mutate returned dicts: they are the cache.
"""

from __future__ import annotations

import builtins
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any, NamedTuple

import orjson

RawObject = dict[str, Any]
IndexFunc = Callable[[RawObject], Iterable[str]]

NAMESPACE_INDEX = "namespace"


def object_key(obj: RawObject) -> str:
    """`namespace/name` (or `name` when cluster-scoped): the cache and work-queue key of an object."""
    metadata = obj.get("metadata") or {}
    namespace = metadata.get("namespace")
    name = metadata.get("name") or ""
    return f"{namespace}/{name}" if namespace else name


def split_key(key: str) -> tuple[str | None, str]:
    """`ns/name` -> (`ns`, `name`); `name` -> (None, `name`)."""
    namespace, sep, name = key.partition("/")
    return (namespace, name) if sep else (None, namespace)


def namespace_index(obj: RawObject) -> builtins.list[str]:
    """The built-in index: objects by namespace (`""` for cluster-scoped objects)."""
    return [(obj.get("metadata") or {}).get("namespace") or ""]


def resource_version(obj: RawObject) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")


class StringInterner:
    """Makes equal strings in cached objects one string object, to keep the cache small.

    Objects decoded one by one (every watch event) get their own copy of every key (`metadata`, `namespace`,
    `f:spec`, ...) and of repeated values (namespace names, label values, `FieldsV1`, the apiVersion, managers);
    sharing them saves about a fifth of a small object's footprint. Keys go through `sys.intern`; short values
    through a bounded table that is emptied when full, so unique values (uids, timestamps) cannot grow it forever.
    """

    def __init__(self, max_values: int = 50_000, max_value_length: int = 64) -> None:
        self.max_values = max_values
        self.max_value_length = max_value_length
        self._values: dict[str, str] = {}

    def __call__(self, obj: RawObject, previous: RawObject | None = None) -> RawObject:
        """`obj` with shared strings; parts equal to the same part of `previous` (the cached version it
        replaces) are that part itself: a status update then walks only the status and the metadata fields
        that changed, and the rest of the object is compared (in C) rather than rebuilt."""
        if previous is None:
            result: RawObject = self._walk(obj)
        else:
            result = self._walk_dict_like(obj, previous)
        return result

    def _walk_dict_like(self, value: dict[str, Any], previous: dict[str, Any]) -> dict[str, Any]:
        intern = sys.intern
        result: dict[str, Any] = {}
        for key, item in value.items():
            before = previous.get(key)
            if before is not None and type(before) is type(item):
                if _identical(before, item):
                    item = before
                elif type(item) is dict:
                    item = self._walk_dict_like(item, before)
                else:
                    item = self._walk(item)
            else:
                item = self._walk(item)
            result[intern(key)] = item
        return result

    def _walk(self, value: Any) -> Any:
        if isinstance(value, dict):
            return self._walk_dict(value)
        if isinstance(value, list):
            return self._walk_list(value)
        return self._share(value) if isinstance(value, str) else value

    # Leaves (most values) are handled inline rather than by a call each: this runs for every object listed or
    # watched, and a call per scalar was most of its cost. Decoded JSON holds exact dicts, lists and strs; other
    # types (from a transform) take the general `_walk`.

    def _walk_dict(self, value: dict[str, Any]) -> dict[str, Any]:
        intern = sys.intern
        values = self._values
        limit = self.max_value_length
        result: dict[str, Any] = {}
        for key, item in value.items():
            kind = type(item)
            if kind is str:
                if len(item) <= limit:
                    shared = values.get(item)
                    item = self._remember(item) if shared is None else shared
            elif kind is dict:
                item = self._walk_dict(item)
            elif kind is list:
                item = self._walk_list(item)
            elif kind is not int and kind is not bool and item is not None and kind is not float:
                item = self._walk(item)
            result[intern(key)] = item
        return result

    def _walk_list(self, value: list[Any]) -> list[Any]:
        result = []
        for item in value:
            kind = type(item)
            if kind is dict:
                item = self._walk_dict(item)
            elif kind is not int and kind is not bool and item is not None and kind is not float:
                item = self._walk(item)
            result.append(item)
        return result

    def _share(self, value: str) -> str:
        if len(value) > self.max_value_length:
            return value
        shared = self._values.get(value)
        return self._remember(value) if shared is None else shared

    def _remember(self, value: str) -> str:
        values = self._values
        if len(values) >= self.max_values:
            values.clear()
        values[value] = value
        return value


def _identical(cached: Any, fresh: Any) -> bool:
    """Equal, and equal as JSON too: Python's `==` makes `1`, `1.0` and `True` equal, which a cache must not
    (a field turning from `1` into `true` is a change). Both checks run in C; the second only after the first."""
    if cached != fresh:
        return False
    try:
        return bool(orjson.dumps(cached) == orjson.dumps(fresh))
    except TypeError:  # not JSON (a transform's own types): not shared
        return False


def strip_managed_fields(obj: RawObject) -> RawObject:
    """An informer transform dropping `metadata.managedFields` (often half of a small object's size)."""
    metadata = obj.get("metadata")
    if isinstance(metadata, dict):
        metadata.pop("managedFields", None)
    return obj


class DeletedFinalStateUnknown(NamedTuple):
    """Delivered to delete handlers for an object that vanished while the watch was down.

    The informer noticed the deletion only by relisting, so `obj` is the last state it saw, not the state at
    deletion (client-go's tombstone of the same name).
    """

    key: str
    obj: RawObject


class Indexer:
    """A key -> object map with indices; single-threaded (one event loop), so no locking."""

    def __init__(self, indexers: dict[str, IndexFunc] | None = None) -> None:
        self._items: dict[str, RawObject] = {}
        self._indexers: dict[str, IndexFunc] = {NAMESPACE_INDEX: namespace_index}
        self._indices: dict[str, dict[str, set[str]]] = {NAMESPACE_INDEX: {}}
        if indexers:
            self.add_indexers(indexers)

    def add_indexers(self, indexers: dict[str, IndexFunc]) -> None:
        """Register more indices; existing objects are indexed at once, so this works after sync too."""
        for name, func in indexers.items():
            if name in self._indexers:
                raise ValueError(f"indexer {name!r} already exists")
            self._indexers[name] = func
            index: dict[str, set[str]] = {}
            self._indices[name] = index
            for key, obj in self._items.items():
                for value in func(obj):
                    index.setdefault(value, set()).add(key)

    # reads

    def get_by_key(self, key: str) -> RawObject | None:
        return self._items.get(key)

    def get(self, name: str, namespace: str | None = None) -> RawObject | None:
        return self._items.get(f"{namespace}/{name}" if namespace else name)

    def list(self) -> builtins.list[RawObject]:
        return list(self._items.values())

    def list_keys(self) -> builtins.list[str]:
        return list(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def __iter__(self) -> Iterator[RawObject]:
        return iter(list(self._items.values()))

    def index_keys(self, index_name: str, value: str) -> builtins.list[str]:
        """Keys of the objects whose index function returned `value`."""
        return sorted(self._index(index_name).get(value, ()))

    def by_index(self, index_name: str, value: str) -> builtins.list[RawObject]:
        return [self._items[key] for key in self._index(index_name).get(value, ())]

    def index_values(self, index_name: str) -> builtins.list[str]:
        return [value for value, keys in self._index(index_name).items() if keys]

    # writes (the informer's)

    def put(self, obj: RawObject, key: str | None = None) -> RawObject | None:
        """Insert or replace; returns the previous object."""
        key = key or object_key(obj)
        old = self._items.get(key)
        self._items[key] = obj
        if old is not None:
            self._unindex(key, old)
        self._reindex(key, obj)
        return old

    def pop(self, key: str) -> RawObject | None:
        """Remove by key; returns the removed object or None."""
        old = self._items.pop(key, None)
        if old is not None:
            self._unindex(key, old)
        return old

    def keys_in_namespace(self, namespace: str | None) -> set[str]:
        """All keys (namespace None) or the keys of one namespace."""
        if namespace is None:
            return set(self._items)
        return set(self._indices[NAMESPACE_INDEX].get(namespace, ()))

    def _index(self, index_name: str) -> dict[str, set[str]]:
        try:
            return self._indices[index_name]
        except KeyError:
            raise KeyError(f"no indexer named {index_name!r}") from None

    def _reindex(self, key: str, obj: RawObject) -> None:
        for name, func in self._indexers.items():
            index = self._indices[name]
            for value in func(obj):
                bucket = index.get(value)
                if bucket is None:
                    index[value] = {key}
                else:
                    bucket.add(key)

    def _unindex(self, key: str, obj: RawObject) -> None:
        for name, func in self._indexers.items():
            index = self._indices[name]
            for value in func(obj):
                bucket = index.get(value)
                if bucket is not None:
                    bucket.discard(key)
                    if not bucket:
                        del index[value]
