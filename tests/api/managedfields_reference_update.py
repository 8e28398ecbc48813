"""An Update's managers as ``ownership.update`` computed them at b8c9b2a, before the single walk of
``managedfields.changes``: the comparison as three sets (``managedfields_reference.compare``, the walk as of
6c99a5d), their union filtered by the scope, then the sole writer's shortcut or the general loss and gain of
fields. Kept as a second copy on purpose (the tests only): the oracle test_managedfields_update compares the new
path with, entries byte for byte. The set operations (``fieldpath``) and the manager cap are shared: this change
does not touch them.
"""

# ruff: noqa
from __future__ import annotations

from typing import Any

import managedfields_reference as reference

from pyop.api.managedfields.fieldpath import FieldSet, difference, union
from pyop.api.managedfields.ownership import _STRIPPED, Manager, Managers, Scope, _cap_updaters, is_subset


def changes(old: Any, new: Any, t: Any, scope: Scope) -> tuple[FieldSet, FieldSet]:
    keep = scope.keep
    if keep is not None and isinstance(old, dict) and isinstance(new, dict):
        old = {key: value for key, value in old.items() if "f:" + key in keep}
        new = {key: value for key, value in new.items() if "f:" + key in keep}
    comparison = reference.compare(old, new, t, skip_metadata=frozenset({"managedFields"}))
    changed = union(comparison.modified, comparison.added)
    return scope.filter(changed), scope.filter(comparison.removed)


def _with(manager: Manager, fields: FieldSet, time: str | None) -> Manager:
    source = manager.source if fields is manager.fields and time == manager.time else None
    return Manager(manager.manager, manager.operation, manager.api_version, fields, manager.subresource, time, source)


def update(old: Any, new: Any, t: Any, managers: Managers, writer: Manager, scope: Scope = Scope()) -> Managers:
    changed, removed = changes(old, new, t, scope)
    return updated(managers, writer, changed, removed)


def updated(managers: Managers, writer: Manager, changed: FieldSet, removed: FieldSet) -> Managers:
    if not changed and not removed:
        return managers
    if not removed:
        own = managers.get(writer.identity)
        owned = difference(changed, _STRIPPED) if own is not None and own.fields else None
        if (
            own is not None
            and owned
            and is_subset(owned, own.fields)
            and (owned is changed or difference(own.fields, _STRIPPED) is own.fields)
            and all(m is own or (m.fields and difference(m.fields, changed) is m.fields) for m in managers.values())
        ):
            if own.time == writer.time:
                return _cap_updaters(managers)
            result = dict(managers)
            result[writer.identity] = _with(writer, own.fields, writer.time)
            return _cap_updaters(result)
    lost: list[Manager] = []
    for manager in managers.values():
        fields = difference(difference(manager.fields, changed), removed)
        lost.append(manager if fields is manager.fields else _with(manager, fields, manager.time))
    result = {manager.identity: manager for manager in lost if manager.fields}
    owned = difference(difference(changed, removed), _STRIPPED)
    if owned:
        previous = result.get(writer.identity)
        fields = union(previous.fields, owned) if previous is not None else owned
        original = managers.get(writer.identity)
        if original is not None and original.time == writer.time and original.fields == fields:
            result[writer.identity] = original
        else:
            result[writer.identity] = _with(writer, fields, writer.time)
    return _cap_updaters(result)
