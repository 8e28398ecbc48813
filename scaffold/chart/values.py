"""values.yaml: the defaults (what config/default renders), its text, and keeping a user's edits on regeneration.

A user's values.yaml is merged three ways: against the values pyop generated last time (kept beside the chart in
`.pyop/values.base.yaml`, which .helmignore leaves out of the package) and the values generated now. A value the user
changed (or removed, or added) stays as the user has it; a value the user left alone follows config/default. The
edit is made on the user's file with ruamel.yaml, so its comments and order stay.
"""

from __future__ import annotations

import io
from typing import Any

import yaml

from pyop_scaffold.chart import yamltpl
from pyop_scaffold.errors import ProjectError

SECTION_DOCS = {
    "manager": "The manager Deployment (defaults: config/manager and the patches of config/default).",
    "rbac": "The manager's Role/ClusterRole, leader election role and their bindings.",
    "rbacHelpers": "The admin, editor and viewer roles of each kind, for cluster administrators to bind.",
    "crd": "CustomResourceDefinitions. keep: an uninstall leaves them (and every custom resource) in the cluster.",
    "metrics": "The metrics Service on :8443 and the roles that protect it.",
    "prometheus": "A ServiceMonitor for the Prometheus Operator (needs the monitoring.coreos.com CRDs).",
    "certManager": "cert-manager Issuer and Certificates (needs cert-manager in the cluster).",
    "webhook": "Webhook configurations, their Service, and the manager's webhook server.",
    "networkPolicy": "NetworkPolicies for metrics and webhook traffic.",
}


def switches(present: set[str], *, has_monitor: bool) -> dict[str, Any]:
    """The `enable` sections of the parts the chart has, in a fixed order; the ServiceMonitor starts off unless
    config/default lists it."""
    sections: dict[str, Any] = {}
    for name in SECTION_DOCS:
        if name == "manager" or name not in present:
            continue
        sections[name] = {"enable": has_monitor if name == "prometheus" else True}
        if name == "crd":
            sections[name]["keep"] = True
    return sections


def values_text(values: dict[str, Any], header: str) -> str:
    """values.yaml: each section under a comment saying what it switches."""
    parts = [header]
    for key, value in values.items():
        parts.append(f"\n# {SECTION_DOCS.get(key, key)}\n")
        parts.append(yamltpl.dump({key: value}))
    return "".join(parts)


def merge(user_text: str, base: dict[str, Any], new: dict[str, Any], source: str) -> str:
    """The user's values.yaml with what pyop changed since `base` applied where the user did not change it."""
    from ruamel.yaml import YAML

    rt = YAML()
    rt.preserve_quotes = True
    rt.width = 4096
    rt.indent(mapping=2, sequence=2, offset=0)
    try:
        doc = rt.load(user_text)
    except Exception as exc:  # ruamel raises many parser error types
        raise ProjectError(f"cannot read {source}: not valid YAML ({str(exc).splitlines()[0]}); fix it") from exc
    if doc is None:
        return _dump(rt, new)
    if not isinstance(doc, dict):
        raise ProjectError(f"cannot read {source}: it is not a mapping of values; fix it")
    _merge(doc, base, new)
    return _dump(rt, doc)


def _merge(doc: Any, base: dict[str, Any], new: dict[str, Any]) -> None:
    for key, value in new.items():
        if key not in doc:
            if key not in base:  # new in config/default (the user did not remove it)
                doc[key] = value
            continue
        mine, old = doc[key], base.get(key)
        if isinstance(value, dict) and isinstance(mine, dict) and isinstance(old, dict):
            _merge(mine, old, value)
        elif key in base and _plain(mine) == old:
            doc[key] = value
    for key in list(doc):
        if key not in new and key in base and _plain(doc[key]) == base[key]:
            del doc[key]


def _plain(value: Any) -> Any:
    """A ruamel value as plain Python, for comparing with the base."""
    return yaml.safe_load(yaml.safe_dump(_to_builtin(value)))


def _to_builtin(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _to_builtin(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_to_builtin(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    return str(value)


def _dump(rt: Any, data: Any) -> str:
    stream = io.StringIO()
    rt.dump(data, stream)
    return stream.getvalue()


def load_base(text: str | None) -> dict[str, Any]:
    """The values generated last time (empty when the file is missing or unreadable: every user value is kept)."""
    if not text:
        return {}
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return {}
    return data if isinstance(data, dict) else {}
