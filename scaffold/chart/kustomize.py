"""The objects `kubectl kustomize config/default` renders, from the project as the running command leaves it.

The chart is derived from this output and nothing else, so it cannot drift from the kustomize installer. It is
rendered from a scratch copy of config/ with the command's planned writes laid over it: `pyop edit --namespaced
--plugins=helm` builds the chart of the namespaced configuration it is about to write, and nothing is written to the
project by rendering. The ServiceMonitor of config/prometheus, which config/default leaves out until the user lists
it, is rendered the same way from a copy whose config/default lists it (the chart offers it switched off).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from pyop_scaffold.errors import ProjectError
from pyop_scaffold.render.changeset import Action, ChangeSet

DEFAULT_DIR = "config/default"
PROMETHEUS_DIR = "config/prometheus"
KUSTOMIZATION = "kustomization.yaml"
# libyaml's parser when PyYAML has it: the rendered CRDs are most of the command's time with the Python one.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class Rendered:
    """config/default's objects, its namespace, and the objects it would add with config/prometheus listed."""

    objects: list[dict[str, Any]]
    namespace: str
    prometheus: list[dict[str, Any]]


def kubectl() -> str:
    """The kubectl to render with: $KUBECTL, else the one on PATH."""
    found = os.environ.get("KUBECTL") or shutil.which("kubectl")
    if not found:
        raise ProjectError(
            "kubectl not found: the chart is rendered from `kubectl kustomize config/default`; install kubectl "
            "or set KUBECTL to its path"
        )
    return found


def render_project(changes: ChangeSet) -> Rendered:
    """Render config/default (and the ServiceMonitor variant) as the project will be after `changes`."""
    if changes.read(f"{DEFAULT_DIR}/{KUSTOMIZATION}") is None:
        raise ProjectError(f"no {DEFAULT_DIR}/{KUSTOMIZATION}: the chart is made from the project's kustomize config")
    with tempfile.TemporaryDirectory(prefix="pyop-chart-") as scratch:
        copy = Path(scratch) / "project"
        _copy_config(changes, copy)
        objects = _kustomize(copy, DEFAULT_DIR, DEFAULT_DIR)
        namespace = _namespace(changes)
        prometheus: list[dict[str, Any]] = []
        has_monitor = any(o.get("kind") == "ServiceMonitor" for o in objects)
        if not has_monitor and (copy / PROMETHEUS_DIR / KUSTOMIZATION).is_file():
            _list_prometheus(copy / DEFAULT_DIR / KUSTOMIZATION)
            known = {_identity(o) for o in objects}
            with_monitor = _kustomize(copy, DEFAULT_DIR, f"{DEFAULT_DIR} with ../prometheus")
            prometheus = [o for o in with_monitor if _identity(o) not in known]
    return Rendered(objects=objects, namespace=namespace, prometheus=prometheus)


def _copy_config(changes: ChangeSet, target: Path) -> None:
    source = changes.root / "config"
    if source.is_dir():
        shutil.copytree(source, target / "config", symlinks=False)
    for planned in changes.planned.values():
        if planned.path.startswith("config/") and planned.action is not Action.SKIP:
            path = target / planned.path
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(planned.content)


def _namespace(changes: ChangeSet) -> str:
    text = changes.read_text(f"{DEFAULT_DIR}/{KUSTOMIZATION}") or ""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ProjectError(f"cannot read {DEFAULT_DIR}/{KUSTOMIZATION}: {str(exc).splitlines()[0]}") from exc
    namespace = data.get("namespace") if isinstance(data, dict) else None
    if not isinstance(namespace, str) or not namespace:
        raise ProjectError(
            f"{DEFAULT_DIR}/{KUSTOMIZATION} sets no namespace: the chart installs into the release's namespace "
            "in its place, so it needs one to find (add `namespace: <project>-system`)"
        )
    return namespace


def _list_prometheus(kustomization: Path) -> None:
    data = yaml.safe_load(kustomization.read_text(encoding="utf-8")) or {}
    resources = data.setdefault("resources", []) or []
    resources.append("../prometheus")
    data["resources"] = resources
    kustomization.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")


def _kustomize(copy: Path, folder: str, shown: str) -> list[dict[str, Any]]:
    """`kubectl kustomize` of `folder` in the scratch copy; its errors name paths relative to the project."""
    try:
        result = subprocess.run(
            [kubectl(), "kustomize", folder], cwd=copy, capture_output=True, text=True, check=False, timeout=300
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ProjectError(f"cannot run kubectl kustomize {shown}: {exc}") from exc
    if result.returncode != 0:
        detail = (result.stderr.strip().splitlines() or ["no message"])[-1]
        logged = re.search(r'err="(.*)"$', detail)  # klog's `E1201 ... run.go:72] "command failed" err="..."`
        detail = logged.group(1).replace('\\"', '"') if logged else detail.removeprefix("error: ")
        detail = detail.replace(f"{copy}{os.sep}", "")
        raise ProjectError(f"kubectl kustomize {shown} failed: {detail}")
    try:
        documents = list(yaml.load_all(result.stdout, Loader=_LOADER))
    except yaml.YAMLError as exc:
        raise ProjectError(f"kubectl kustomize {shown} printed YAML pyop cannot read: {exc}") from exc
    return [d for d in documents if isinstance(d, dict)]


def _identity(obj: dict[str, Any]) -> tuple[str, str, str, str]:
    meta = obj.get("metadata") or {}
    return (str(obj.get("apiVersion")), str(obj.get("kind")), str(meta.get("namespace", "")), str(meta.get("name")))
