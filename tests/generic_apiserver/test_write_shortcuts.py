"""The registry's write-path shortcuts give exactly the general path's answers: each test compares a shortcut with
the code it stands in for (and fails when the shortcut is broken)."""

from __future__ import annotations

import json
import os
import types
import uuid
from datetime import UTC, datetime
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from pyop.api.definitions import PINNED_KUBERNETES_VERSION
from pyop.apiserver.admission.plugins import Attributes
from pyop.apiserver.registry import object_meta
from pyop.apiserver.registry import operations as operations_module
from pyop.apiserver.registry.clock import utc_now
from pyop.apiserver.registry.object_meta import validate_object_meta
from pyop.apiserver.registry.operations import Operations, WriteOptions
from pyop.apiserver.registry.patch import clone_json, merge_patch
from pyop.apiserver.registry.resources import ResourceRegistry, ResourceType, types_from_crd
from pyop.apiserver.registry.strategy import Generation, desired_state, desired_state_changed
from pyop.apiserver.storage.store import Store
from pyop.testing import TestAPIServer
from pyop.testing.admission import kube_admission_plugins, kube_validating_plugins
from pyop.testing.builtins.catalog import builtin_types
from pyop.testing.crds import schemaless_crd
from pyop.uids import RandomUIDs, format_uids, new_uid


def _operations(clock: object) -> Operations:
    return Operations(Store(10), ResourceRegistry([]), clock=clock, users={}, bookmark_interval=1.0)  # type: ignore[arg-type]


# --- timestamps: the system clock read as time.time() ---------------------------------------------------------

_moments = st.lists(
    st.tuples(st.integers(0, 2**34), st.integers(0, 999_999)).map(lambda pair: pair[0] + pair[1] / 1e6),
    min_size=1,
    max_size=8,
)


@settings(max_examples=200, deadline=None)
@given(_moments)
def test_the_system_clock_shortcut_formats_what_the_general_path_formats(moments: list[float]) -> None:
    """`now()` of the system clock (`utc_now`: second from time.time()) is the general path's answer for a clock
    returning that moment as a datetime, call after call (the once-a-second cache included)."""
    current = [0.0]
    fast = _operations(utc_now)
    general = _operations(lambda: datetime.fromtimestamp(current[0], UTC))
    original = operations_module.time
    operations_module.time = types.SimpleNamespace(time=lambda: current[0])  # type: ignore[assignment]
    try:
        for moment in moments:
            current[0] = moment
            assert fast.now() == general.now()
    finally:
        operations_module.time = original


def test_the_test_server_runs_on_the_clock_the_registry_reads_fastest() -> None:
    server = TestAPIServer(tls=False)
    assert server.operations.clock is utc_now
    before = datetime.now(UTC).replace(microsecond=0)
    stamp = datetime.strptime(server.operations.now(), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    assert before <= stamp <= datetime.now(UTC)


# --- uids: str(uuid.uuid4()) made in batches ------------------------------------------------------------------


@given(st.integers(1, 20).flatmap(lambda n: st.binary(min_size=16 * n, max_size=16 * n)))
def test_batched_uids_are_the_strings_uuid4_makes_of_the_same_bytes(raw: bytes) -> None:
    expected = [str(uuid.UUID(bytes=raw[i : i + 16], version=4)) for i in range(0, len(raw), 16)]
    assert format_uids(raw) == expected


def test_new_uids_are_version_4_and_unique_across_batches() -> None:
    made = [new_uid() for _ in range(1000)]  # several batches of 256
    assert len(set(made)) == len(made)
    for uid in made:
        parsed = uuid.UUID(uid)
        assert str(parsed) == uid and parsed.version == 4 and parsed.variant == uuid.RFC_4122


def test_a_forked_child_does_not_hand_out_its_parents_uids() -> None:
    source = RandomUIDs()
    source.next()  # a batch is pending in the parent
    reader, writer = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child process
        os.write(writer, source.next().encode())
        os._exit(0)
    os.close(writer)
    os.waitpid(child, 0)
    childs = os.read(reader, 100).decode()
    os.close(reader)
    assert childs != source.next()


# --- compiled-in admission plugins: chosen once per operation, resource and subresource ----------------------

_SUBRESOURCES = ("", "status", "scale", "approval", "ephemeralcontainers", "binding", "eviction", "resize")
_OLD_OBJECTS: tuple[dict[str, Any] | None, ...] = (
    None,
    {"metadata": {"name": "x"}},
    {"metadata": {"name": "x", "deletionTimestamp": "2026-01-01T00:00:00Z"}},
)


def _every_plugin() -> list[Any]:
    return [*kube_admission_plugins(), *kube_validating_plugins(lambda user, signer: True)]


def _every_resource_type() -> list[ResourceType]:
    crd = schemaless_crd("example.com", "Widget", "widgets")
    return [*builtin_types(PINNED_KUBERNETES_VERSION), *types_from_crd(crd)]


def test_may_handle_rules_out_only_requests_the_plugin_never_handles() -> None:
    """Every plugin's `may_handle` holds wherever its `handles` does, over every resource the test server serves,
    each operation and subresource, with and without a namespace, an old object, one being deleted."""
    plugins = _every_plugin()
    handled = dict.fromkeys(range(len(plugins)), 0)
    for resource_type in _every_resource_type():
        for operation in ("CREATE", "UPDATE", "DELETE", "CONNECT"):
            for subresource in _SUBRESOURCES:
                for namespace in ("", "ns"):
                    for old in _OLD_OBJECTS:
                        attributes = Attributes(
                            operation, resource_type, subresource, namespace, "x", old, None, False, []
                        )
                        for index, plugin in enumerate(plugins):
                            if plugin.handles(attributes):
                                handled[index] += 1
                                assert plugin.may_handle(operation, resource_type, subresource), (
                                    plugin.name,
                                    operation,
                                    resource_type.plural,
                                    subresource,
                                )
    assert all(handled.values())  # the loop reached every plugin's kinds (pods, claims, namespaces, CSRs ...)


class _Plugin:
    """A plugin that records who asked it what; it may handle ``kinds`` and handles those of them not named
    ``skip``."""

    def __init__(self, name: str, kinds: set[str], *, last: bool = False, skip: str = "") -> None:
        self.name, self.kinds, self.last, self.skip = name, kinds, last, skip
        self.asked: list[str] = []
        self.ran: list[str] = []

    def may_handle(self, operation: str, resource_type: ResourceType, subresource: str) -> bool:
        return resource_type.plural in self.kinds and not subresource

    def handles(self, attributes: Attributes) -> bool:
        self.asked.append(attributes.name)
        return attributes.name != self.skip

    def admit(self, attributes: Attributes, obj: dict[str, Any], store: Store) -> None:
        self.ran.append(attributes.name)

    def validate(self, attributes: Attributes, obj: dict[str, Any], store: Store) -> None:
        self.ran.append(attributes.name)


def test_the_registry_asks_the_chosen_plugins_in_order_and_chooses_again_when_they_change() -> None:
    crd = schemaless_crd("example.com", "Widget", "widgets", scope="Cluster")
    other = schemaless_crd("example.com", "Gadget", "gadgets", scope="Cluster")
    ops = _operations(lambda: datetime(2026, 1, 1, tzinfo=UTC))
    ops.resources = ResourceRegistry([*types_from_crd(crd), *types_from_crd(other)])
    widgets, gadgets = (
        ops.resources.lookup("example.com", "v1", "widgets"),
        ops.resources.lookup("example.com", "v1", "gadgets"),
    )
    order: list[str] = []
    mutate = _Plugin("mutate", {"widgets"}, skip="w2")
    first = _Plugin("first", {"widgets"})
    last = _Plugin("last", {"widgets", "gadgets"}, last=True)
    for plugin in (mutate, first, last):
        plugin.admit = plugin.validate = (lambda p: lambda a, o, s: order.append(f"{p.name}:{a.name}"))(plugin)  # type: ignore[method-assign]
    ops.admission_plugins, ops.validating_plugins = (mutate,), (last, first)  # `last` listed first: runs last
    options = WriteOptions()
    ops.create(widgets, "", {"metadata": {"name": "w1"}}, options)
    ops.create(widgets, "", {"metadata": {"name": "w2"}}, options)
    ops.create(gadgets, "", {"metadata": {"name": "g1"}}, options)
    assert order == ["mutate:w1", "first:w1", "last:w1", "first:w2", "last:w2", "last:g1"]
    assert mutate.asked == ["w1", "w2"] and first.asked == ["w1", "w2"]  # never asked about gadgets
    ops.patch(widgets, "", "w1", "application/merge-patch+json", {"status": {"a": 1}}, options, subresource="status")
    assert order[-1] == "last:g1"  # a subresource: no plugin may handle it
    order.clear()
    ops.patch(widgets, "", "w1", "application/merge-patch+json", {"spec": {"a": 0}}, options)
    assert order == ["first:w1", "last:w1"]
    # Other plugins plugged in: chosen again (the old choice would still run `first`).
    order.clear()
    ops.validating_plugins = (last,)
    ops.patch(widgets, "", "w1", "application/merge-patch+json", {"spec": {"a": 1}}, options)
    assert order == ["last:w1"]
    # A resource type served again (a CRD's new served type): chosen for the new one.
    order.clear()
    ops.resources.serve_crd("widgets.example.com", types_from_crd(crd))
    new_widgets = ops.resources.lookup("example.com", "v1", "widgets")
    assert new_widgets is not widgets
    last.kinds = {"gadgets"}  # the new type's choice differs from the old one's
    ops.patch(new_widgets, "", "w1", "application/merge-patch+json", {"spec": {"a": 2}}, options)
    assert order == []


# --- metadata validation: label pairs and annotation keys found valid before ---------------------------------


class _Str(str):
    """A str subclass (equal to, and hashing as, the plain string)."""


_KEYS = st.sampled_from(["app", "example.com/tier", "a" * 63, "a" * 64, "-bad", "x/y/z", "UPPER", "", _Str("app")])
_VALUES: st.SearchStrategy[Any] = st.sampled_from(
    ["v", "", "a" * 63, "a" * 64, "-x", _Str("v"), 5, None, True, ["l"], {"d": 1}]
)
_ANNOTATION_VALUES: st.SearchStrategy[Any] = st.sampled_from(["", "v", "x" * 140_000, 7, None, _Str("s")])
_REFERENCES: st.SearchStrategy[Any] = st.sampled_from(
    [None, [], [{"apiVersion": "v1", "kind": "K", "name": "n", "uid": "u"}], [{}], "not a list", {"a": 1}]
)
_metadata_maps = st.fixed_dictionaries(
    {},
    optional={
        "labels": st.one_of(st.dictionaries(_KEYS, _VALUES, max_size=4), st.sampled_from([None, [], "x", ["a"]])),
        "annotations": st.one_of(
            st.dictionaries(_KEYS, _ANNOTATION_VALUES, max_size=4), st.sampled_from([None, {}, "x"])
        ),
        "ownerReferences": _REFERENCES,
    },
)


@settings(max_examples=400, deadline=None)
@given(_metadata_maps)
@example({"annotations": {"app": "x" * 140_000, "example.com/tier": "x" * 140_000}})  # valid keys, too large
@example({"labels": {"app": "v"}, "annotations": {"app": None}})
def test_remembered_metadata_is_judged_as_the_full_rules_judge_it(metadata: dict[str, Any]) -> None:
    """validate_object_meta (whose shortcut answers from the label pairs and annotation keys found valid before)
    finds what the full rules (`_metadata`) find, on first sight and again once they are remembered."""
    for _ in range(2):
        assert list(validate_object_meta(metadata)) == list(object_meta._metadata(metadata))


def test_the_metadata_shortcut_is_taken_for_remembered_labels() -> None:
    metadata = {"labels": {"app": "web", "tier": "db"}, "annotations": {"example.com/a": "1"}}
    assert list(validate_object_meta(metadata)) == []
    assert object_meta._known_valid(metadata)
    assert not object_meta._known_valid({**metadata, "ownerReferences": [{"uid": "u"}]})


# --- generation: the desired state compared in place ----------------------------------------------------------

_json: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(allow_nan=True) | st.text(max_size=2),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=2), children, max_size=3),
    max_leaves=8,
)
_TOP_KEYS = ("apiVersion", "kind", "metadata", "spec", "status", "data")
_objects = st.dictionaries(st.sampled_from(_TOP_KEYS), _json, max_size=6).map(
    lambda obj: {**obj, "metadata": {"labels": obj.get("metadata"), "annotations": obj.get("data")}}
)


@st.composite
def _changed(draw: st.DrawFn, old: dict[str, Any]) -> dict[str, Any]:
    """``old`` after an update: each field the same object, an equal copy, another value or gone; maybe more."""
    new: dict[str, Any] = {}
    for key, value in old.items():
        choice = draw(
            st.sampled_from(["same", "copy", "other"] if key == "metadata" else ["same", "copy", "other", "gone"])
        )
        if choice == "same":
            new[key] = value
        elif choice == "copy":
            new[key] = clone_json(value)
        elif choice == "other" and key == "metadata":  # metadata stays a map
            new[key] = {"labels": draw(_json), "annotations": value["annotations"]}
        elif choice == "other":
            new[key] = draw(_json)
    for key in draw(st.lists(st.sampled_from([key for key in _TOP_KEYS if key != "metadata"]), max_size=2)):
        new.setdefault(key, draw(_json))
    return new


_RULES = (Generation(), Generation(metadata_fields=("labels",)), Generation(metadata_fields=("annotations", "labels")))


@settings(max_examples=500, deadline=None)
@given(_objects.flatmap(lambda old: st.tuples(st.just(old), _changed(old))), st.sampled_from(_RULES), st.booleans())
def test_desired_state_changed_is_the_views_compared(
    pair: tuple[dict[str, Any], dict[str, Any]], rule: Generation, has_status: bool
) -> None:
    old, new = pair
    expected = desired_state(rule, new, has_status=has_status) != desired_state(rule, old, has_status=has_status)
    assert desired_state_changed(rule, new, old, has_status=has_status) == expected


# --- merge patch: scalars and lists without a call each -------------------------------------------------------


def _reference_merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 as the registry applied it before (a call per patch value)."""
    if not isinstance(patch, dict):
        return clone_json(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = _reference_merge_patch(result.get(key), value)
    return result


def _lists(value: Any) -> list[int]:
    if isinstance(value, dict):
        return [found for item in value.values() for found in _lists(item)]
    if isinstance(value, list):
        return [id(value), *(found for item in value for found in _lists(item))]
    return []


@settings(max_examples=500, deadline=None)
@given(_json, _json)
def test_merge_patch_is_rfc_7386_as_before(target: Any, patch: Any) -> None:
    before = json.dumps(target)
    result = merge_patch(target, patch)
    assert json.dumps(result) == json.dumps(_reference_merge_patch(target, patch))  # NaN-safe, order-sensitive
    assert json.dumps(target) == before  # the target is not changed
    assert not set(_lists(result)) & set(_lists(patch))  # the patch's lists are copied, not shared


# --- the store: resources with nothing stored -----------------------------------------------------------------


def test_objects_of_a_resource_with_nothing_stored_and_of_one_namespace() -> None:
    store = Store(10)
    assert list(store.objects("widgets")) == [] and list(store.objects("widgets", "a")) == []
    assert store.get("widgets", "a", "w") is None
    made = {}
    for namespace, name in (("a", "w1"), ("b", "w2"), ("a", "w3")):
        made[name] = {"metadata": {"namespace": namespace, "name": name, "uid": name}}
        store.commit("widgets", "ADDED", made[name], None)
    assert list(store.objects("widgets")) == [made["w1"], made["w2"], made["w3"]]
    assert list(store.objects("widgets", "a")) == [made["w1"], made["w3"]]
    assert list(store.objects("widgets", "c")) == []
    assert store.get("widgets", "b", "w2") is made["w2"] and store.get("widgets", "b", "w1") is None
    for name in made:
        store.commit("widgets", "DELETED", made[name], made[name])
    assert list(store.objects("widgets")) == [] and list(store.objects("widgets", "a")) == []


# --- validating plugins that consult one resource: skipped while the namespace holds none of it ---------------


class _Consulting(_Plugin):
    """A validating plugin that checks requests against the namespace's configmaps (as ResourceQuota its quotas):
    records each request it found something to check against."""

    consults = "configmaps"

    def __init__(self, name: str, *, last: bool) -> None:
        super().__init__(name, {"widgets"}, last=last)
        self.checked: list[str] = []

    def validate(self, attributes: Attributes, obj: dict[str, Any], store: Store) -> None:
        self.ran.append(attributes.name)
        if list(store.objects("configmaps", attributes.namespace)):
            self.checked.append(attributes.name)


def _namespaced_operations() -> tuple[Operations, ResourceType, ResourceType]:
    crd = schemaless_crd("example.com", "Widget", "widgets")
    ops = _operations(lambda: datetime(2026, 1, 1, tzinfo=UTC))
    ops.resources = ResourceRegistry([*types_from_crd(crd), *builtin_types(PINNED_KUBERNETES_VERSION)])
    namespaces = ops.resources.lookup("", "v1", "namespaces")
    for namespace in ("a", "b", "c"):
        ops.create(namespaces, "", {"metadata": {"name": namespace}}, WriteOptions())
    return ops, ops.resources.lookup("example.com", "v1", "widgets"), ops.resources.lookup("", "v1", "configmaps")


MERGE = "application/merge-patch+json"


def _general(ops: Operations) -> Operations:
    """``ops`` choosing plugins as if none named what it consults: the general path, which asks them all."""

    def plugins_for(operation: str, resource_type: ResourceType, subresource: str) -> Any:
        choice = Operations.plugins_for(ops, operation, resource_type, subresource)
        return type(choice)(choice.mutating, choice.validating, choice.validating_last, None)

    ops.plugins_for = plugins_for  # type: ignore[method-assign]
    return ops


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["widget", "configmap", "delete-configmap"]), st.sampled_from(["a", "b", "c"])),
        max_size=12,
    )
)
def test_plugins_that_consult_a_resource_are_skipped_exactly_when_they_would_check_nothing(
    steps: list[tuple[str, str]],
) -> None:
    """Creates and merge patches of widgets while configmaps come and go in three namespaces: the plugins find
    something to check for the same writes as on the general path, which asks them about every write, and are
    asked about no other write."""
    sides = []
    for shortcut in (True, False):
        ops, widgets, configmaps = _namespaced_operations()
        plugins = (_Consulting("first", last=False), _Consulting("last", last=True))
        ops.validating_plugins = plugins
        sides.append((ops if shortcut else _general(ops), widgets, configmaps, plugins))
    for number, (step, namespace) in enumerate(steps):
        for ops, widgets, configmaps, _ in sides:
            held = ops.store.get("configmaps", namespace, "cm")
            if step == "widget":
                name = f"w{number}"
                ops.create(widgets, namespace, {"metadata": {"name": name}}, WriteOptions())
                ops.patch(widgets, namespace, name, MERGE, {"spec": {"a": 1}}, WriteOptions())
            elif step == "configmap" and held is None:
                ops.create(configmaps, namespace, {"metadata": {"name": "cm"}}, WriteOptions())
            elif step == "delete-configmap" and held is not None:
                ops.delete(configmaps, namespace, "cm", {}, WriteOptions())
    (_, _, _, fast), (_, _, _, general) = sides
    writes = [f"w{number}" for number, (step, _) in enumerate(steps) if step == "widget"]
    for shortcut, plain in zip(fast, general, strict=True):
        assert plain.ran == [name for name in writes for _ in range(2)]  # create and patch, each asked
        assert shortcut.checked == plain.checked
        assert shortcut.ran == shortcut.checked  # asked only where there was something to check


def test_consulting_plugins_run_while_webhooks_are_configured() -> None:
    """With admission webhooks configured the choice is not skipped (a webhook answering before the last plugins
    might create what they consult): the registry builds the plugins' attributes as the general path does."""
    ops, widgets, _ = _namespaced_operations()
    last = _Consulting("last", last=True)
    ops.validating_plugins = (last,)
    ops.create(widgets, "a", {"metadata": {"name": "w1"}}, WriteOptions())
    assert last.ran == []  # no configmap in `a`, no webhook: skipped
    choice = ops.plugins_for("CREATE", widgets, "")
    for admitting in (True, False):
        attributes = ops._validating(choice, "CREATE", widgets, "", "a", "w2", None, WriteOptions(), admitting)
        assert (attributes is not None) is admitting


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.sampled_from(["a", "b", ""]), st.sampled_from(["x", "y"])), max_size=10))
def test_holds_is_whether_objects_of_the_namespace_has_one(steps: list[tuple[bool, str, str]]) -> None:
    store = Store(100)
    for add, namespace, name in steps:
        current = store.get("widgets", namespace, name)
        if add and current is None:
            store.commit("widgets", "ADDED", {"metadata": {"namespace": namespace, "name": name}}, None)
        elif not add and current is not None:
            store.commit("widgets", "DELETED", current, current)
        for asked in ("a", "b", "", "c"):
            assert store.holds("widgets", asked) == (next(store.objects("widgets", asked), None) is not None)
    assert not store.holds("gadgets", "a")


# --- no-op updates: a bumped generation is a change -----------------------------------------------------------

_SPECS = st.sampled_from([None, {"a": 1}, {"a": 2}, {"a": 1, "b": [1]}])
_LABELS = st.sampled_from([None, {"x": "1"}, {"x": "2"}])
_STATUSES = st.sampled_from([None, {"ok": True}, {"ok": False}])


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["put", "merge", "status"]), _SPECS, _LABELS, _STATUSES), max_size=8))
def test_the_no_op_check_of_a_bumped_write_is_the_full_comparisons_answer(
    writes: list[tuple[str, Any, Any, Any]],
) -> None:
    """PUTs, merge patches and status patches of a custom resource (which has a generation and a status
    subresource), changing spec, labels and status or sending them back as they are: for each, `_unchanged` (which
    skips the comparison when the generation was bumped) answers what comparing the objects answers."""
    ops, widgets, _ = _namespaced_operations()
    ops.create(widgets, "a", {"metadata": {"name": "w"}, "spec": {"a": 1}}, WriteOptions())
    original = operations_module._unchanged
    answers: list[bool] = []

    def checked(current: dict[str, Any], new: dict[str, Any], bumped: bool) -> bool:
        answer = original(current, new, bumped)
        assert answer == operations_module._same_but_volatile(current, new)
        answers.append(answer)
        return answer

    operations_module._unchanged = checked  # type: ignore[assignment]
    try:
        for kind, spec, labels, status in writes:
            stored = ops.get(widgets, "a", "w")
            body = clone_json(stored)
            for key, value in (("spec", spec), ("status", status)):
                body.pop(key, None) if value is None else body.__setitem__(key, value)
            if labels is None:
                body["metadata"].pop("labels", None)
            else:
                body["metadata"]["labels"] = labels
            if kind == "put":
                ops.update(widgets, "a", "w", body, WriteOptions(field_manager="m"))
            else:
                patch = {"spec": spec, "metadata": {"labels": labels}, "status": status}
                subresource = "status" if kind == "status" else ""
                ops.patch(widgets, "a", "w", MERGE, patch, WriteOptions(field_manager="m"), subresource=subresource)
    finally:
        operations_module._unchanged = original
    assert len(answers) == len(writes)


# --- _same_but_volatile: the objects compared without resourceVersion and managedFields, in place -------------

_LEAVES = st.sampled_from([0, 1, "a", None, [1], {"k": 1}, {"k": 2}])
_META_NAMES = st.sampled_from(["name", "labels", "uid", "generation", "resourceVersion", "managedFields"])
_TOP_NAMES = st.sampled_from(["apiVersion", "kind", "spec", "status"])


def _without_volatile(obj: dict[str, Any]) -> dict[str, Any]:
    return {
        key: {name: item for name, item in value.items() if name not in ("resourceVersion", "managedFields")}
        if key == "metadata"
        else value
        for key, value in obj.items()
    }


@settings(max_examples=500, deadline=None)
@given(
    st.dictionaries(_TOP_NAMES, _LEAVES, max_size=4),
    st.dictionaries(_META_NAMES, _LEAVES, max_size=5),
    st.lists(
        st.tuples(
            st.sampled_from(["top", "meta"]), st.sampled_from(["set", "drop", "copy"]), _TOP_NAMES, _META_NAMES, _LEAVES
        ),
        max_size=4,
    ),
    st.booleans(),
)
def test_same_but_volatile_is_the_comparison_without_the_volatile_fields(
    top: dict[str, Any], metadata: dict[str, Any], changes: list[tuple[str, str, str, str, Any]], no_metadata: bool
) -> None:
    """Objects whose copy shares, copies, changes, adds or drops top-level and metadata fields (the volatile ones
    included): the in-place answer is the comparison of the two objects with the volatile fields left out."""
    current: dict[str, Any] = dict(top) if no_metadata else {**top, "metadata": metadata}
    new = clone_json(current) if changes and changes[0][1] == "copy" else _writable_copy(current)
    for where, action, top_name, meta_name, value in changes:
        target, name = (new, top_name) if where == "top" or "metadata" not in new else (new["metadata"], meta_name)
        if action == "set":
            target[name] = value
        elif action == "drop":
            target.pop(name, None)
    expected = _without_volatile(current) == _without_volatile(new)
    assert operations_module._same_but_volatile(current, new) is expected


def _writable_copy(obj: dict[str, Any]) -> dict[str, Any]:
    copy = dict(obj)
    if isinstance(copy.get("metadata"), dict):
        copy["metadata"] = dict(copy["metadata"])
    return copy


# --- merge patches: one copy of the patched document's top level and metadata --------------------------------

_PATCH_VALUES = st.sampled_from([None, 1, "x", [1], {"a": 1}, {"a": None}])
_merge_patches = st.fixed_dictionaries(
    {},
    optional={
        "metadata": st.one_of(
            st.fixed_dictionaries({}, optional={"labels": st.sampled_from([None, {"l": "1"}, {"l": None}])}),
            st.sampled_from([None, {}]),
        ),
        "spec": st.dictionaries(st.sampled_from(["a", "b"]), _PATCH_VALUES, max_size=2),
        "status": st.dictionaries(st.sampled_from(["ok"]), _PATCH_VALUES, max_size=1),
    },
)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(_merge_patches, st.booleans()), min_size=1, max_size=5))
def test_merge_patches_leave_every_stored_version_as_it_was(patches: list[tuple[dict[str, Any], bool]]) -> None:
    """Merge patches of the object and of its status, with and without metadata (labels set, removed, metadata
    null): no patch changes an object the store handed out before it (the patched document's metadata is the
    write's own even where the patch leaves it alone), and each answer is the stored object."""
    ops, widgets, _ = _namespaced_operations()
    ops.create(widgets, "a", {"metadata": {"name": "w", "labels": {"l": "0"}}, "spec": {"a": 0}}, WriteOptions())
    seen: list[tuple[dict[str, Any], str]] = []
    for patch, status in patches:
        before = ops.get(widgets, "a", "w")
        seen.append((before, json.dumps(before)))
        answer, _ = ops.patch(
            widgets, "a", "w", MERGE, clone_json(patch), WriteOptions(), subresource="status" if status else ""
        )
        assert answer is ops.get(widgets, "a", "w")
        for stored, text in seen:
            assert json.dumps(stored) == text
