"""Controllers in controller-runtime's spirit: requests, results, a builder, predicates, event handlers, and the
helpers reconcilers use (finalizers, owner references, status conditions, events, create-or-update).

    from pyop.controller import Request, Result, set_status_condition

    class CaptainReconciler:
        async def reconcile(self, request: Request) -> Result:
            ...

    manager.controller_for(Captain).owns(ConfigMap).complete(CaptainReconciler(manager))

See docs/runtime/controllers.md.
"""

from pyop.controller.builder import Builder, ControllerHost, Target, resolve_target
from pyop.controller.conditions import (
    ConditionStatus,
    find_status_condition,
    is_status_condition_false,
    is_status_condition_present_and_equal,
    is_status_condition_true,
    remove_status_condition,
    set_status_condition,
)
from pyop.controller.controller import Controller, ControllerNotSynced
from pyop.controller.enqueue import (
    EnqueueRequestForObject,
    EnqueueRequestForOwner,
    EnqueueRequestsFromMapFunc,
    EventHandler,
    MapFunc,
)
from pyop.controller.events import EventBroadcaster, EventRecorder, EventType
from pyop.controller.finalizers import add_finalizer, contains_finalizer, remove_finalizer
from pyop.controller.mutate import OperationResult, create_or_patch, create_or_update, merge_patch_between
from pyop.controller.ownership import (
    AlreadyOwnedError,
    OwnerReferenceError,
    get_controller_of,
    has_controller_reference,
    is_controlled_by,
    remove_owner_reference,
    set_controller_reference,
    set_owner_reference,
)
from pyop.controller.predicates import (
    AnnotationsChanged,
    GenerationChanged,
    LabelsChanged,
    Predicate,
    PredicateFuncs,
    ResourceVersionChanged,
    all_of,
    any_of,
    object_predicate,
)
from pyop.controller.reconcile import ReconcileFunc, Reconciler, Request, Result, TerminalError
from pyop.controller.source import Source

__all__ = [
    "AlreadyOwnedError",
    "AnnotationsChanged",
    "Builder",
    "ConditionStatus",
    "Controller",
    "ControllerHost",
    "ControllerNotSynced",
    "EnqueueRequestForObject",
    "EnqueueRequestForOwner",
    "EnqueueRequestsFromMapFunc",
    "EventBroadcaster",
    "EventHandler",
    "EventRecorder",
    "EventType",
    "GenerationChanged",
    "LabelsChanged",
    "MapFunc",
    "OperationResult",
    "OwnerReferenceError",
    "Predicate",
    "PredicateFuncs",
    "ReconcileFunc",
    "Reconciler",
    "Request",
    "ResourceVersionChanged",
    "Result",
    "Source",
    "Target",
    "TerminalError",
    "add_finalizer",
    "all_of",
    "any_of",
    "contains_finalizer",
    "create_or_patch",
    "create_or_update",
    "find_status_condition",
    "get_controller_of",
    "has_controller_reference",
    "is_controlled_by",
    "is_status_condition_false",
    "is_status_condition_present_and_equal",
    "is_status_condition_true",
    "merge_patch_between",
    "object_predicate",
    "remove_finalizer",
    "remove_owner_reference",
    "remove_status_condition",
    "resolve_target",
    "set_controller_reference",
    "set_owner_reference",
    "set_status_condition",
]
