"""Kubernetes' priority of API versions (k8s.io/apimachinery/pkg/version: CompareKubeAwareVersionStrings).

Versions that look like Kubernetes versions (``v<major>[alpha|beta<minor>]``) come first: GA before beta before
alpha, then the higher major, then the higher minor (``v2, v1, v2beta1, v1beta2, v1beta1, v1alpha1``); every other
name comes after them, in alphabetical order (``foo1, foo10``). Discovery lists a group's versions in this order, its
preferred version is the first, and the CRD generator orders a CRD's versions by it: one copy for the servers, the
client and the scaffolder.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

_KUBE_VERSION: Final = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")
_STAGE: Final = {None: 0, "beta": 1, "alpha": 2}


def version_priority(version: str) -> tuple[int, int, int, str]:
    """The sort key of ``version``: sorting by it puts the highest-priority version first."""
    match = _KUBE_VERSION.match(version)
    if not match:
        return (3, 0, 0, version)
    return (_STAGE[match[2]], -int(match[1]), -int(match[3] or 0), version)


def sort_versions(versions: Iterable[str]) -> list[str]:
    """``versions`` in priority order, highest first."""
    return sorted(versions, key=version_priority)


def is_kube_version(version: str) -> bool:
    """Whether ``version`` has the form of a Kubernetes API version (v1, v2beta1, v1alpha3)."""
    return _KUBE_VERSION.match(version) is not None


__all__ = ["is_kube_version", "sort_versions", "version_priority"]
