"""The helm plugin (`pyop edit --plugins=helm`, Kubebuilder's helm/v2-alpha): dist/chart from config/default,
recorded in PROJECT's `plugins` so `make helm-chart` and later runs know the project has one."""

from __future__ import annotations

from typing import Any

from pyop_scaffold.chart.chart import CHART_DIR, build_chart
from pyop_scaffold.chart.kustomize import DEFAULT_DIR, render_project
from pyop_scaffold.chart.write import plan_chart
from pyop_scaffold.errors import UsageError
from pyop_scaffold.project.config import Project
from pyop_scaffold.render.changeset import ChangeSet

PLUGIN_KEY = "helm.pyop.io/v2-alpha"
# The spellings `--plugins` accepts for the helm plugin (Kubebuilder's own included).
HELM_NAMES = ("helm", "helm/v2-alpha", "helm.pyop.io/v2-alpha", "helm.kubebuilder.io/v2-alpha")


def parse_plugins(value: str) -> tuple[str, ...]:
    """`--plugins=helm[,...]`: each name must be one pyop has (today only the helm plugin)."""
    names = tuple(name.strip() for name in value.split(",") if name.strip())
    if not names:
        raise UsageError(f"invalid --plugins {value!r}: name a plugin ({HELM_NAMES[0]} or {HELM_NAMES[1]})")
    for name in names:
        if name not in HELM_NAMES:
            raise UsageError(f"invalid --plugins value {name!r}: pyop has the plugin {', '.join(HELM_NAMES[:2])}")
    return tuple(dict.fromkeys("helm" for _ in names))


def plan_helm_chart(changes: ChangeSet, project: Project) -> list[str]:
    """Plan dist/chart and the PROJECT record; returns the report's notes."""
    chart = build_chart(render_project(changes), project.project_name)
    notes = plan_chart(changes, chart)
    extra = project.model_extra  # PROJECT keys pyop has no field for (Kubebuilder's `plugins` among them)
    assert extra is not None  # the model allows extra keys
    plugins: dict[str, Any] = dict(extra.get("plugins") or {})
    plugins[PLUGIN_KEY] = {"manifests": DEFAULT_DIR, "output": CHART_DIR}
    extra["plugins"] = plugins
    return notes
