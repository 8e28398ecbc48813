"""Who owns which fields: the managers of an object, and how Apply and Update change them.

This is structured-merge-diff's ``Updater`` as kube-apiserver drives it (``managedfields`` in k8s.io/apiserver):

* an **Update** (create, update, any non-apply patch) makes its manager own every field it added or changed;
  other managers lose those fields and every manager loses the fields it removed;
* an **Apply** merges the configuration into the live object, makes the manager own exactly the configuration's
  fields, removes the fields it applied last time and no longer applies unless another manager owns them, and
  fails with conflicts when it changes a field another manager owns, unless forced (then they lose it);
* managers are told apart by (manager, operation, apiVersion for Update only, subresource): an Apply manager keeps
  one entry across versions; a second Update of the same manager merges into its entry;
* the fields a strategy resets (status on the main resource, everything but status on ``/status``) are owned by
  nobody there; identity and server-set metadata (``apiVersion``, ``kind``, name, uid, resourceVersion, ...) are
  never owned.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pyop.api.managedfields.changes import Path, changes
from pyop.api.managedfields.fieldpath import (
    SELF,
    FieldSet,
    children,
    difference,
    filter_top_level,
    insert,
    intersection,
    is_member,
    path_string,
    paths,
    union,
    validate,
)
from pyop.api.managedfields.schema import Type
from pyop.api.managedfields.typed import (
    _CONTAINERS,
    Comparison,
    added_field_set,
    compare,
    ensure_named_fields_are_members,
    merge,
    merge_and_compare,
    remove_items,
    to_field_set,
)

APPLY = "Apply"
UPDATE = "Update"
FIELDS_V1 = "FieldsV1"

# stripmeta: never owned by anyone.
_STRIPPED: FieldSet = {
    "f:apiVersion": {},
    "f:kind": {},
    "f:metadata": {
        ".": {},
        **{
            f"f:{name}": {}
            for name in (
                "name",
                "namespace",
                "creationTimestamp",
                "selfLink",
                "uid",
                "clusterName",
                "generation",
                "managedFields",
                "resourceVersion",
            )
        },
    },
}

_STRIPPED_TOP_ELEMENTS = frozenset(key for key in _STRIPPED if key != "f:metadata")
_STRIPPED_META_ELEMENTS = frozenset(key for key in _STRIPPED["f:metadata"] if key != SELF)


def _without_members(node: FieldSet, elements: frozenset[str]) -> FieldSet:
    """``node`` less the members among ``elements`` (what is below a member stays); ``node`` itself when none is."""
    if elements.isdisjoint(node):
        return node
    result: FieldSet | None = None
    for element, value in node.items():
        if element not in elements or (value and SELF not in value):
            continue
        if result is None:
            result = dict(node)
        below = children(value)
        if below:
            result[element] = below
        else:
            del result[element]
    return node if result is None else result


def without_stripped(fields: FieldSet) -> FieldSet:
    """``difference(fields, _STRIPPED)`` by a few lookups instead of a walk (every write takes the stripped
    fields out of what it owns): ``fields`` itself when it owns none of them."""
    result = _without_members(fields, _STRIPPED_TOP_ELEMENTS)
    meta = result.get("f:metadata")
    if meta is None:
        return result
    if SELF not in meta:
        if not meta:
            kept: FieldSet = {}
        else:
            kept = _without_members(meta, _STRIPPED_META_ELEMENTS)
            if kept is meta:
                return result
    else:
        kept = _without_members(children(meta), _STRIPPED_META_ELEMENTS)
    if result is fields:
        result = dict(fields)
    if kept:
        result["f:metadata"] = kept
    else:
        del result["f:metadata"]
    return result


Identity = tuple[str, str, str, str]
MAX_UPDATE_MANAGERS = 10
ANCIENT_CHANGES = "ancient-changes"  # the bucket the oldest Update entries are merged into beyond the cap


class Manager:
    """One managedFields entry; never modified once built (results share managers with their inputs).

    A plain class with slots rather than a frozen dataclass: several are built per write, and a frozen dataclass's
    ``__init__`` (one ``object.__setattr__`` per field) cost more than the rest of a small write's bookkeeping.
    Equality is the dataclass's: every field but ``source`` (the entry decoded, or encoded, from)."""

    __slots__ = ("manager", "operation", "api_version", "fields", "subresource", "time", "source", "identity")

    manager: str
    operation: str
    api_version: str
    fields: FieldSet
    subresource: str
    time: str | None
    source: Mapping[str, Any] | None
    identity: Identity  # what tells two entries apart (BuildManagerIdentifier): an applier's apiVersion is not part

    def __init__(
        self,
        manager: str,
        operation: str,
        api_version: str,
        fields: FieldSet,
        subresource: str = "",
        time: str | None = None,
        source: Mapping[str, Any] | None = None,
    ) -> None:
        self.manager = manager
        self.operation = operation
        self.api_version = api_version
        self.fields = fields
        self.subresource = subresource
        self.time = time
        self.source = source
        self.identity = (manager, operation, api_version if operation == UPDATE else "", subresource)

    def _compared(self) -> tuple[Any, ...]:
        return (self.manager, self.operation, self.api_version, self.fields, self.subresource, self.time)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not Manager:
            return NotImplemented
        return self._compared() == other._compared()  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]  # holds a dict, as the dataclass did (unhashable)

    def __repr__(self) -> str:
        return (
            f"Manager(manager={self.manager!r}, operation={self.operation!r}, api_version={self.api_version!r}, "
            f"fields={self.fields!r}, subresource={self.subresource!r}, time={self.time!r})"
        )

    def describe(self) -> str:
        """How kube-apiserver names the manager in a conflict (printManager)."""
        text = f'"{self.manager}"'
        if self.subresource:
            text += f' with subresource "{self.subresource}"'
        if self.operation == UPDATE:
            text += f" using {self.api_version}"
        return text

    def to_entry(self) -> Mapping[str, Any]:
        """The wire entry; the decoded one itself when nothing changed (stored versions share their entries)."""
        source = self.source
        if (
            source is not None
            and source.get("fieldsV1") is self.fields
            and source.get("time") == self.time
            and source.get("apiVersion") == self.api_version
        ):
            return source
        entry: dict[str, Any] = {"manager": self.manager, "operation": self.operation, "apiVersion": self.api_version}
        if self.time:
            entry["time"] = self.time
        entry["fieldsType"] = FIELDS_V1
        entry["fieldsV1"] = self.fields
        if self.subresource:
            entry["subresource"] = self.subresource
        return entry


Managers = dict[Identity, Manager]


class InvalidManagedFields(ValueError):
    """managedFields that cannot be decoded (kube-apiserver then keeps the live object's)."""


def decode(entries: Any, *, validate_fields: bool = True) -> Managers:
    """The managers of a ``metadata.managedFields`` list, validated as DecodeManagedFields does
    (``validate_fields=False``: entries known to be well formed, their field sets are not walked)."""
    managers: Managers = {}
    if not entries:
        return managers
    if not isinstance(entries, list):
        raise InvalidManagedFields("managedFields must be a list")
    for position, entry in enumerate(entries):
        if not isinstance(entry, Mapping):
            raise InvalidManagedFields(f"managed fields entry {position} is not an object")
        operation = entry.get("operation")
        if operation not in (APPLY, UPDATE):
            raise InvalidManagedFields("operation must be `Apply` or `Update`")
        if not entry.get("apiVersion"):
            raise InvalidManagedFields("apiVersion must not be empty")
        fields_type = entry.get("fieldsType")
        if not fields_type:
            raise InvalidManagedFields(f"missing fieldsType in managed fields entry {position}")
        if fields_type != FIELDS_V1:
            raise InvalidManagedFields(f"invalid fieldsType {fields_type!r} in managed fields entry {position}")
        fields = entry.get("fieldsV1") or {}
        if validate_fields:  # sent by a client: checked, and what nobody may own taken out
            problem = validate(fields)
            if problem:
                raise InvalidManagedFields(f"managed fields entry {position}: {problem}")
            fields = without_stripped(fields)
        manager = Manager(
            manager=str(entry.get("manager") or ""),
            operation=operation,
            api_version=str(entry["apiVersion"]),
            fields=fields,
            subresource=str(entry.get("subresource") or ""),
            time=entry.get("time") or None,
            source=entry,
        )
        if manager.identity in managers:
            raise InvalidManagedFields(f"duplicate manager entry {position}")
        managers[manager.identity] = manager
    return managers


def is_reset(entries: Any) -> bool:
    """``[{}]``: the documented way to clear managedFields in an update or non-apply patch."""
    return isinstance(entries, list) and len(entries) == 1 and entries[0] == {}


def encode(managers: Managers) -> list[Mapping[str, Any]]:
    """The managedFields list, ordered as kube-apiserver orders it (operation, time, manager, apiVersion,
    subresource)."""
    return encode_with_managers(managers)[0]


def encode_with_managers(managers: Managers) -> tuple[list[Mapping[str, Any]], Managers]:
    """``encode``, and the managers as ``decode`` would read that list back (their entries as sources).

    A manager built for this write (no source yet) is given its new entry as its source rather than copied: the
    source is only a cache of the manager's wire form (not part of its value), and filling it in is what lets the
    next write reuse the entry."""
    ordered = [manager for manager in managers.values() if manager.fields]
    if len(ordered) > 1:
        ordered.sort(key=_order)
    entries: list[Mapping[str, Any]] = []
    decoded: Managers = {}
    for manager in ordered:
        entry = manager.to_entry()
        entries.append(entry)
        if entry is not manager.source:
            if manager.source is None:
                manager.source = entry
            else:
                manager = Manager(
                    manager.manager,
                    manager.operation,
                    manager.api_version,
                    manager.fields,
                    manager.subresource,
                    manager.time,
                    entry,
                )
        decoded[manager.identity] = manager
    return entries, decoded


def _order(manager: Manager) -> tuple[str, str, str, str, str]:
    """How kube-apiserver orders managedFields: operation, time, manager, apiVersion, subresource."""
    return (manager.operation, manager.time or "", manager.manager, manager.api_version, manager.subresource)


@dataclass(frozen=True)
class Conflict:
    manager: Manager
    path: tuple[str, ...]

    @property
    def field(self) -> str:
        return path_string(self.path)

    @property
    def message(self) -> str:
        return f"conflict with {self.manager.describe()}"


class ApplyConflict(Exception):
    """An apply changed fields other managers own (kube-apiserver answers 409 with one cause per field)."""

    def __init__(self, conflicts: list[Conflict]) -> None:
        self.conflicts = conflicts
        super().__init__(self.summary())

    def summary(self) -> str:
        """getConflictMessage's text."""
        if len(self.conflicts) == 1:
            conflict = self.conflicts[0]
            return f"Apply failed with 1 conflict: {conflict.message}: {conflict.field}"
        lines: list[str] = []
        by_manager: dict[str, list[str]] = {}
        for conflict in self.conflicts:
            by_manager.setdefault(conflict.manager.describe(), []).append(conflict.field)
        for described in sorted(by_manager):
            lines.append(f"conflicts with {described}:")
            lines.extend(f"- {field}" for field in by_manager[described])
        return f"Apply failed with {len(self.conflicts)} conflicts: " + "\n".join(lines)


@dataclass(frozen=True)
class Scope:
    """What a write may own: ``keep`` top-level fields only (a subresource) or all but ``drop`` (reset fields)."""

    keep: frozenset[str] | None = None
    drop: frozenset[str] = frozenset()

    def filter(self, fields: FieldSet) -> FieldSet:
        return filter_top_level(fields, self.keep, self.drop)


_NEVER_COMPARED = frozenset({"managedFields"})


def _changes(old: Any, new: Any, t: Type, scope: Scope) -> tuple[FieldSet, FieldSet]:
    keep = scope.keep
    if keep is not None and isinstance(old, dict) and isinstance(new, dict):
        # Only the kept top-level fields survive the filter below: compare those alone, in the objects' order (a
        # status write no longer walks metadata to throw its changes away).
        old = {key: value for key, value in old.items() if "f:" + key in keep}
        new = {key: value for key, value in new.items() if "f:" + key in keep}
    comparison = compare(old, new, t, skip_metadata=_NEVER_COMPARED)
    changed = union(comparison.modified, comparison.added)
    return scope.filter(changed), scope.filter(comparison.removed)


def _non_empty(managers: Iterable[Manager]) -> Managers:
    return {manager.identity: manager for manager in managers if manager.fields}


def _lose(managers: Managers, skip: Identity | None, changed: FieldSet, removed: FieldSet) -> list[Manager]:
    out: list[Manager] = []
    for identity, manager in managers.items():
        if identity == skip:
            out.append(manager)
            continue
        fields = difference(difference(manager.fields, changed), removed)
        out.append(manager if fields is manager.fields else _with(manager, fields, manager.time))
    return out


def update(
    old: Any,
    new: Any,
    t: Type,
    managers: Managers,
    writer: Manager,
    scope: Scope = Scope(),
) -> Managers:
    """The managers after an Update by ``writer`` (its fields are computed; ``writer.fields`` is ignored).

    One walk of the two objects records what changed (``changes``). When nothing was added or removed (values
    changed in place: most updates and patches), the changed leaves are looked up in the managers' sets
    (``_updated_at``); else the record's sets are what ``_changes`` would compare."""
    if isinstance(old, dict) and isinstance(new, dict):
        found = changes(old, new, t, scope.keep, scope.drop)
        if not found.added and not found.removed:
            return _updated_at(managers, writer, found.modified)
        # Out-of-scope fields were not visited, so the sets need no filter.
        return _updated(managers, writer, union(found.modified_set(), found.added_set()), found.removed_set())
    changed, removed = _changes(old, new, t, scope)
    return _updated(managers, writer, changed, removed)


def create(
    obj: Mapping[str, Any],
    t: Type,
    managers: Managers,
    writer: Manager,
    scope: Scope = Scope(),
    *,
    existing: frozenset[str] = frozenset(),
) -> Managers:
    """``update`` from the kind's empty object to ``obj``, the fields of a create: ``existing`` are the top-level
    struct fields the empty object has (a built-in's metadata, spec, status), so they are not owned as a whole;
    everything else is new. One walk of ``obj`` instead of a comparison."""
    if not managers:
        owned = _created_owned(obj, t, existing)
        if owned is not None:
            owned = scope.filter(owned)
            return {writer.identity: _with(writer, owned, writer.time)} if owned else {}
    changed: FieldSet = {}
    for key, value in obj.items():
        child_type = t.child(key)
        if key not in existing:
            below = added_field_set(value, child_type)
            changed["f:" + key] = {".": {}, **below} if below else {}
        elif isinstance(value, dict):
            if value:
                below = added_field_set(value, child_type)
                if below:
                    changed["f:" + key] = below
        else:
            changed["f:" + key] = {}
    return _updated(managers, writer, scope.filter(changed), {})


_STRIPPED_METADATA = frozenset(key[2:] for key in _STRIPPED["f:metadata"] if key != ".")
_STRIPPED_TOP = frozenset(key[2:] for key in _STRIPPED if key != "f:metadata")


def _created_owned(obj: Mapping[str, Any], t: Type, existing: frozenset[str]) -> FieldSet | None:
    """What the writer of a create owns when nobody else owns anything: ``create``'s changed paths less the
    stripped ones (apiVersion, kind, metadata's name, uid, ...), built without them instead of walking them and
    taking them away again. None when a stripped field holds a non-empty object or list (taking it away keeps what
    is below it: the general path computes that)."""
    owned: FieldSet = {}
    for key, value in obj.items():
        if key in _STRIPPED_TOP:
            if isinstance(value, _CONTAINERS) and value:
                return None
            continue
        child_type = t.child(key)
        if key == "metadata":
            if not isinstance(value, dict):
                return None
            kept: dict[str, Any] = {}
            for name, item in value.items():
                if name not in _STRIPPED_METADATA:
                    kept[name] = item
                elif isinstance(item, _CONTAINERS) and item:
                    return None
            below = added_field_set(kept, child_type) if kept else {}
            if below:
                owned["f:metadata"] = below  # not a member: the object's metadata itself is never owned
        elif key not in existing:
            below = added_field_set(value, child_type)
            owned["f:" + key] = {".": {}, **below} if below else {}
        elif isinstance(value, dict):
            if value:
                below = added_field_set(value, child_type)
                if below:
                    owned["f:" + key] = below
        else:
            owned["f:" + key] = {}
    return owned


def _updated(managers: Managers, writer: Manager, changed: FieldSet, removed: FieldSet) -> Managers:
    if not changed and not removed:
        return managers
    if not removed:
        # The writer changed values it already owns and nobody else owns (the common update of an object, or of
        # its status, by its own writer): it keeps the same fields, with this write's time, and the others keep
        # theirs. What the general path below computes (the writer loses the changed paths and owns them again),
        # without building the sets anew. The changed paths may include stripped ones (a spec change bumps
        # metadata.generation): the writer never owns those, so when it owns none of them either, losing and owning
        # again still leaves its fields as they were.
        own = managers.get(writer.identity)
        owned = without_stripped(changed) if own is not None and own.fields else None
        if (
            own is not None
            and owned
            and is_subset(owned, own.fields)
            and (owned is changed or without_stripped(own.fields) is own.fields)
            and all(m is own or (m.fields and difference(m.fields, changed) is m.fields) for m in managers.values())
        ):
            return _kept(managers, own, writer)
    return _reowned(managers, writer, changed, removed)


def _updated_at(managers: Managers, writer: Manager, leaves: list[Path]) -> Managers:
    """``_updated(managers, writer, changed, {})`` where ``changed`` is the set of ``leaves`` (changed values:
    members, the maps and lists above them not), with the shortcut's conditions looked up path by path instead
    of set operations: the writer owns every changed leaf that is not stripped (and at least one), owns nothing
    stripped if a stripped leaf changed, and no other manager owns any changed leaf (or owns nothing at all)."""
    if not leaves:
        return managers
    own = managers.get(writer.identity)
    if own is not None and own.fields:
        fields = own.fields
        owns_one = stripped = False
        for path in leaves:
            if _is_stripped(path):
                stripped = True
            elif _has_member(fields, path):
                owns_one = True
            else:
                break
            if any(m is not own and (not m.fields or _has_member(m.fields, path)) for m in managers.values()):
                break
        else:
            if owns_one and (not stripped or without_stripped(fields) is fields):
                return _kept(managers, own, writer)
    changed: FieldSet = {}
    for path in leaves:
        insert(changed, path)  # in the walk's order: the set compare's ``modified`` is, key order included
    return _reowned(managers, writer, changed, {})


def _is_stripped(path: Path) -> bool:
    """Whether ``without_stripped`` takes the member ``path`` out of a set (metadata as a leaf included)."""
    if len(path) == 1:
        return path[0] in _STRIPPED_TOP_ELEMENTS or path[0] == "f:metadata"
    return len(path) == 2 and path[0] == "f:metadata" and path[1] in _STRIPPED_META_ELEMENTS


def _has_member(fields: FieldSet, path: Path) -> bool:
    """Whether ``path`` is a member of ``fields``: what ``difference`` and ``is_subset`` decide for one path."""
    node = fields
    for element in path:
        found = node.get(element)
        if found is None:
            return False
        node = found
    return not node or SELF in node


def _kept(managers: Managers, own: Manager, writer: Manager) -> Managers:
    """The writer keeps its fields, with this write's time; the others keep theirs."""
    if own.time == writer.time:
        return _cap_updaters(managers)
    result = dict(managers)
    result[writer.identity] = _with(writer, own.fields, writer.time)
    return _cap_updaters(result)


def _reowned(managers: Managers, writer: Manager, changed: FieldSet, removed: FieldSet) -> Managers:
    """The general Update: every manager loses what changed and what was removed; the writer owns what changed
    (less what nobody may own)."""
    result = _non_empty(_lose(managers, None, changed, removed))
    owned = without_stripped(difference(changed, removed))
    if owned:
        previous = result.get(writer.identity)
        fields = union(previous.fields, owned) if previous is not None else owned
        original = managers.get(writer.identity)
        if original is not None and original.time == writer.time and original.fields == fields:
            result[writer.identity] = original  # the same entry again (a writer repeating itself within a second)
        else:
            result[writer.identity] = _with(writer, fields, writer.time)
    return _cap_updaters(result)


def is_subset(part: FieldSet, whole: FieldSet) -> bool:
    """Whether every path of ``part`` (members and paths below alike) is in ``whole``."""
    if part is whole:
        return True
    for key, node in part.items():
        if key == SELF:
            if SELF not in whole:
                return False
            continue
        other = whole.get(key)
        if other is None:
            return False
        if is_member(node) and not is_member(other):
            return False
        if node and not is_subset(children(node), children(other)):
            return False
    return True


def apply(
    live: Any,
    config: Any,
    t: Type,
    managers: Managers,
    applier: Manager,
    *,
    force: bool,
    scope: Scope = Scope(),
) -> tuple[Any, Managers]:
    """Apply ``config`` over ``live`` (``{}`` or a skeleton for a create): the new object and managers.

    Raises ``ApplyConflict`` when the result changes fields other managers own and ``force`` is not set, and
    ``SchemaError`` when the configuration cannot be placed in the schema (a list item without its key).
    """
    # One walk of the configuration merges it, lists its fields and finds what changed (typed.merge_and_compare);
    # a status write (only status compared) or a configuration it does not take goes the general way.
    fused = merge_and_compare(live, config, t) if scope.keep is None else None
    comparison: Comparison | None = None
    if fused is None:
        # Unstripped while applying (the config's name keeps the live metadata from being pruned), as in SMD.
        config_fields = scope.filter(to_field_set(config, t))
        merged = merge(live, config, t)
    else:
        merged, config_fields, comparison = fused
        config_fields = scope.filter(config_fields)
    identity = applier.identity
    last = managers.get(identity)
    candidates = dict(managers)
    owned = without_stripped(config_fields)
    # Only fields applied last time and not now can go: none (the same fields re-applied, the steady state of a
    # controller; equal sets are told in C) skips the walks.
    if last is not None and last.fields and last.fields != owned and difference(last.fields, config_fields):
        candidates[identity] = _with(applier, config_fields, applier.time)
        pruned = _prune(merged, candidates, last.fields, t)
        if pruned is not merged:
            merged, comparison = pruned, None  # compared again below
    if comparison is None:
        changed, removed = _changes(live, merged, t, scope)
    else:
        changed = scope.filter(union(comparison.modified, comparison.added))
        removed = scope.filter(comparison.removed)
    if changed and not force:  # forced: the others just lose what changed (below)
        conflicts: list[Conflict] = []
        for other_identity, manager in sorted(managers.items(), key=lambda item: item[0]):
            if other_identity != identity:
                overlap = intersection(manager.fields, changed)
                conflicts.extend(Conflict(manager, path) for path in paths(overlap))
        if conflicts:
            raise ApplyConflict(conflicts)
    # The entry's time is the time of the last change the applier made (none yet for one that changed nothing).
    time = applier.time if changed or removed else (last.time if last is not None else None)
    if last is not None and owned == last.fields and time == last.time and last.api_version == applier.api_version:
        candidates[identity] = last  # the stored entry stays as it is
    else:
        candidates[identity] = _with(applier, owned, time)
    result = _non_empty(_lose(candidates, identity, changed, removed))
    return merged, _cap_updaters(result)


def _cap_updaters(managers: Managers) -> Managers:
    """At most ten Update entries: the oldest are merged, per apiVersion, into an ``ancient-changes`` entry
    (kube-apiserver's capManagersManager)."""
    if len(managers) <= MAX_UPDATE_MANAGERS:
        return managers
    updaters = [m for m in managers.values() if m.operation == UPDATE]
    if len(updaters) <= MAX_UPDATE_MANAGERS:
        return managers
    updaters.sort(key=lambda m: (m.time or "", m.manager, m.api_version, m.subresource))
    result = dict(managers)
    first_of_version: dict[str, Manager] = {}
    remaining = len(updaters)
    for manager in updaters:
        if remaining <= MAX_UPDATE_MANAGERS:
            break
        first = first_of_version.get(manager.api_version)
        if first is None:
            first_of_version[manager.api_version] = manager
            continue
        bucket_identity: Identity = (ANCIENT_CHANGES, UPDATE, manager.api_version, "")
        bucket = result.get(bucket_identity)
        if bucket is None:
            del result[first.identity]
            bucket = Manager(ANCIENT_CHANGES, UPDATE, manager.api_version, first.fields, "", first.time)
        result[bucket_identity] = Manager(
            ANCIENT_CHANGES, UPDATE, manager.api_version, union(bucket.fields, manager.fields), "", manager.time
        )
        del result[manager.identity]
        remaining -= 1
    return result


def _with(manager: Manager, fields: FieldSet, time: str | None) -> Manager:
    """``manager`` with other fields and time (dataclasses.replace costs a tenth of a small write)."""
    source = manager.source if fields is manager.fields and time == manager.time else None
    return Manager(manager.manager, manager.operation, manager.api_version, fields, manager.subresource, time, source)


def _prune(merged: Any, managers: Managers, last: FieldSet, t: Type) -> Any:
    """Remove what the applier applied last time and no longer applies, unless some manager owns it (SMD's
    prune, addBackOwnedItems and addBackDanglingItems)."""
    last_members = ensure_named_fields_are_members(last, t)
    pruned = remove_items(merged, last_members, t)
    if pruned is merged:
        return merged
    pruned = pruned if pruned is not None else {}
    managed: FieldSet = {}
    for manager in managers.values():
        managed = union(managed, manager.fields)
    merged_set = ensure_named_fields_are_members(to_field_set(merged, t, allow_duplicates=True), t)
    pruned_set = ensure_named_fields_are_members(to_field_set(pruned, t, allow_duplicates=True), t)
    owned = union(pruned_set, ensure_named_fields_are_members(managed, t))
    pruned = remove_items(merged, difference(merged_set, owned), t) or {}
    pruned_set = ensure_named_fields_are_members(to_field_set(pruned, t, allow_duplicates=True), t)
    dangling = intersection(difference(merged_set, pruned_set), last_members)
    return remove_items(merged, dangling, t) or {}
