"""Finalizers: keep an object from disappearing until the controller has cleaned up after it.

The helpers only edit the object in memory and say whether they changed it; the reconciler writes it back
(`client.update` or a patch) when they return True, so a reconcile that changes nothing sends nothing.
"""

from __future__ import annotations

from pyop.controller.objects import KubeObject, meta_get, meta_set

__all__ = ["add_finalizer", "contains_finalizer", "remove_finalizer"]


def contains_finalizer(obj: KubeObject, finalizer: str) -> bool:
    return finalizer in (meta_get(obj, "finalizers") or ())


def add_finalizer(obj: KubeObject, finalizer: str) -> bool:
    """Add `finalizer` unless present; returns whether the object changed."""
    finalizers = list(meta_get(obj, "finalizers") or ())
    if finalizer in finalizers:
        return False
    finalizers.append(finalizer)
    meta_set(obj, "finalizers", finalizers)
    return True


def remove_finalizer(obj: KubeObject, finalizer: str) -> bool:
    """Remove every occurrence of `finalizer`; returns whether the object changed."""
    finalizers = list(meta_get(obj, "finalizers") or ())
    kept = [name for name in finalizers if name != finalizer]
    if len(kept) == len(finalizers):
        return False
    meta_set(obj, "finalizers", kept or None)
    return True
