"""RBAC roles from `+kubebuilder:rbac` markers, normalised as controller-gen does (merged, sorted, deterministic)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyop_scaffold.manifests.crd.docs import read_docs
from pyop_scaffold.manifests.markers.parser import ParsedMarker

RBAC_MARKER = "kubebuilder:rbac"
DEFAULT_ROLE_NAME = "manager-role"


@dataclass(frozen=True)
class Rule:
    groups: tuple[str, ...]
    resources: tuple[str, ...]
    resource_names: tuple[str, ...]
    urls: tuple[str, ...]
    verbs: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        rule: dict[str, Any] = {}
        if self.urls:
            rule["nonResourceURLs"] = list(self.urls)
        else:
            rule["apiGroups"] = list(self.groups)
            rule["resources"] = list(self.resources)
        if self.resource_names:
            rule["resourceNames"] = list(self.resource_names)
        rule["verbs"] = list(self.verbs)
        return rule


def collect_rbac_markers(root: Path, package: str) -> list[ParsedMarker]:
    """Every rbac marker in the project's package, in file order (controllers usually hold them)."""
    markers: list[ParsedMarker] = []
    for path in sorted((root / package).rglob("*.py")):
        markers.extend(m for m in read_docs(path).all_markers if m.name == RBAC_MARKER)
    return markers


def build_roles(markers: list[ParsedMarker], *, namespaced_project: bool) -> list[dict[str, Any]]:
    """One role per (namespace, roleName); the manager's role is a ClusterRole, or a Role in a namespaced project."""
    grouped: dict[tuple[str, str], list[Rule]] = defaultdict(list)
    for marker in markers:
        args = marker.value
        key = (args.get("namespace") or "", args.get("roleName") or DEFAULT_ROLE_NAME)
        grouped[key].append(_rule(args))
    grouped.setdefault(("", DEFAULT_ROLE_NAME), [])
    roles = []
    for (namespace, name), rules in sorted(grouped.items()):
        kind = "Role" if namespace or namespaced_project else "ClusterRole"
        metadata: dict[str, Any] = {"name": name}
        if namespace:
            metadata["namespace"] = namespace
        roles.append(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": kind,
                "metadata": metadata,
                "rules": [rule.to_dict() for rule in normalise(rules)],
            }
        )
    return roles


def _rule(args: dict[str, Any]) -> Rule:
    groups = ["" if g == "core" else g for g in args.get("groups") or []]
    return Rule(
        groups=_sorted(groups),
        resources=_sorted(args.get("resources") or []),
        resource_names=_sorted(args.get("resourceNames") or []),
        urls=_sorted(args.get("urls") or []),
        verbs=_sorted(args.get("verbs") or []),
    )


def _sorted(values: list[str]) -> tuple[str, ...]:
    return tuple(sorted(set(values)))


def normalise(rules: list[Rule]) -> list[Rule]:
    """Merge verbs of identical targets, then targets with identical verbs (resources, then groups), then sort."""
    by_target: dict[tuple[Any, ...], set[str]] = defaultdict(set)
    for rule in rules:
        by_target[(rule.groups, rule.resources, rule.resource_names, rule.urls)].update(rule.verbs)
    merged = [
        Rule(groups, resources, names, urls, ("*",) if "*" in verbs else tuple(sorted(verbs)))
        for (groups, resources, names, urls), verbs in by_target.items()
    ]
    merged = _merge_on(merged, "resources")
    merged = _merge_on(merged, "groups")
    return sorted(merged, key=lambda r: (r.urls, r.groups, r.resources, r.resource_names, r.verbs))


def _merge_on(rules: list[Rule], field_name: str) -> list[Rule]:
    """Union `field_name` across rules that are equal in every other field."""
    buckets: dict[tuple[Any, ...], set[str]] = defaultdict(set)
    for rule in rules:
        rest = tuple(
            getattr(rule, f) for f in ("groups", "resources", "resource_names", "urls", "verbs") if f != field_name
        )
        buckets[rest].update(getattr(rule, field_name))
    result = []
    fields = [f for f in ("groups", "resources", "resource_names", "urls", "verbs") if f != field_name]
    for rest, values in buckets.items():
        kwargs = dict(zip(fields, rest, strict=True))
        kwargs[field_name] = tuple(sorted(values))
        result.append(Rule(**kwargs))
    return result
