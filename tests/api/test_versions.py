"""Kubernetes' version priority, one copy for servers, client and scaffolder (pyop.api.versions)."""

from __future__ import annotations

import random

from pyop.api.versions import is_kube_version, sort_versions
from pyop.apiserver.registry.resources import version_priority as registry_priority
from pyop_scaffold.manifests.crd.versions import sort_versions as scaffold_sort

# The example of k8s.io/apimachinery/pkg/version's CompareKubeAwareVersionStrings doc comment.
KUBE_ORDER = ["v10", "v2", "v1", "v11beta2", "v10beta3", "v3beta1", "v12alpha1", "v11alpha2", "foo1", "foo10"]


def test_kube_documented_order() -> None:
    shuffled = KUBE_ORDER[:]
    random.Random(7).shuffle(shuffled)
    assert sort_versions(shuffled) == KUBE_ORDER
    assert sort_versions(["foo", "v1alpha1", "v1beta2", "v1"]) == ["v1", "v1beta2", "v1alpha1", "foo"]


def test_every_user_sorts_alike() -> None:
    shuffled = KUBE_ORDER[::-1]
    assert sorted(shuffled, key=registry_priority) == KUBE_ORDER
    assert scaffold_sort(shuffled) == KUBE_ORDER


def test_kube_version_form() -> None:
    assert all(is_kube_version(v) for v in ("v1", "v2beta1", "v1alpha3"))
    assert not any(is_kube_version(v) for v in ("1", "v1gamma1", "v1beta", "V1", "foo"))
