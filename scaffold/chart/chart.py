"""The chart's files, in memory, from the objects kustomize rendered: Chart.yaml, values.yaml and its schema,
_helpers.tpl, .helmignore, one template per object (templates/<part>/<name>.yaml), and the CI workflow that checks
the chart."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pyop_scaffold.chart import parts, values, yamltpl
from pyop_scaffold.chart.kustomize import DEFAULT_DIR, Rendered
from pyop_scaffold.chart.schema import schema_text
from pyop_scaffold.chart.seal import PLACEHOLDER, seal, yaml_header
from pyop_scaffold.chart.templatize import template_for
from pyop_scaffold.chart.workflow import WORKFLOW_FILE, workflow_text

CHART_DIR = "dist/chart"
VALUES_FILE = f"{CHART_DIR}/values.yaml"
VALUES_BASE_FILE = f"{CHART_DIR}/.pyop/values.base.yaml"
# The files pyop generated last time: one the user deleted since is not made again.
GENERATED_LIST_FILE = f"{CHART_DIR}/.pyop/generated.txt"
CHART_VERSION = "0.1.0"


@dataclass(frozen=True)
class Chart:
    files: dict[str, str]  # path in the project -> text (sealed)
    values: dict[str, Any]  # the default values (also the merge base of the next regeneration)


def build_chart(rendered: Rendered, project_name: str) -> Chart:
    """Every file of dist/chart; byte-identical for the same rendered objects."""
    header = yaml_header(DEFAULT_DIR)
    objects = [(o, parts.part_of(o), False) for o in rendered.objects]
    objects += [(o, parts.part_of(o), True) for o in rendered.prometheus]
    kept = [(o, p, extra) for o, p, extra in objects if p is not None]
    present = {p.switch for _, p, _ in kept if p is not None and p.switch}
    files: dict[str, str] = {}
    manager_values: dict[str, Any] = {}
    paths = _template_paths([(o, p) for o, p, _ in kept], project_name)
    for (obj, part, _), path in zip(kept, paths, strict=True):
        assert part is not None
        text, found = template_for(obj, part, chart=project_name, namespace=rendered.namespace, present=present)
        manager_values = manager_values or found
        files[path] = seal(header + text)
    has_monitor = any(o.get("kind") == "ServiceMonitor" for o in rendered.objects)
    defaults: dict[str, Any] = {}
    if manager_values:
        defaults["manager"] = manager_values
    defaults.update(values.switches(present, has_monitor=has_monitor))
    files[VALUES_FILE] = seal(values.values_text(defaults, header))
    files[f"{CHART_DIR}/values.schema.json"] = seal(schema_text(defaults))
    files[f"{CHART_DIR}/Chart.yaml"] = seal(header + _chart_yaml(project_name))
    files[f"{CHART_DIR}/templates/_helpers.tpl"] = seal(header + _helpers(project_name))
    files[f"{CHART_DIR}/.helmignore"] = seal(header + HELMIGNORE)
    files[VALUES_BASE_FILE] = yamltpl.dump(defaults)
    files[WORKFLOW_FILE] = seal(workflow_text(header, rendered.namespace))
    files[GENERATED_LIST_FILE] = "".join(f"{path}\n" for path in sorted(files))
    return Chart(files=dict(sorted(files.items())), values=defaults)


def _template_paths(objects: list[tuple[dict[str, Any], parts.Part | None]], project: str) -> list[str]:
    """templates/<part>/<name>.yaml, the project's name prefix left out; names two objects of a part share get
    their kinds appended (the manager's ServiceAccount and Deployment)."""
    names = []
    for obj, part in objects:
        assert part is not None
        name = str((obj.get("metadata") or {}).get("name", "object")).removeprefix(f"{project}-")
        names.append((part.folder, name, str(obj.get("kind", "")).lower()))
    counts: dict[tuple[str, str], int] = {}
    for folder, name, _ in names:
        counts[(folder, name)] = counts.get((folder, name), 0) + 1
    return [
        f"{CHART_DIR}/templates/{folder}/{name}{'-' + kind if counts[(folder, name)] > 1 else ''}.yaml"
        for folder, name, kind in names
    ]


def _chart_yaml(name: str) -> str:
    return (
        "apiVersion: v2\n"
        f"name: {name}\n"
        f"description: A Helm chart of the {name} operator, generated from its kustomize configuration.\n"
        "type: application\n"
        f"version: {CHART_VERSION}\n"
        f'appVersion: "{CHART_VERSION}"\n'
    )


def _helpers(name: str) -> str:
    return (
        f"{{{{/* The labels Helm adds to every object of the chart (selectors keep kustomize's labels). */}}}}\n"
        f'{{{{- define "{name}.labels" -}}}}\n'
        'helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}\n'
        "app.kubernetes.io/instance: {{ .Release.Name }}\n"
        "app.kubernetes.io/managed-by: {{ .Release.Service }}\n"
        "{{- end }}\n"
    )


HELMIGNORE = """\
# Patterns to ignore when building packages.
.DS_Store
.git/
.gitignore
*.swp
*.bak
*.tmp
*.orig
*~
.idea/
.vscode/
# pyop's record of the values it generated last (the base of merging your values.yaml edits).
.pyop/
"""

__all__ = ["CHART_DIR", "GENERATED_LIST_FILE", "VALUES_FILE", "VALUES_BASE_FILE", "Chart", "build_chart", "PLACEHOLDER"]
