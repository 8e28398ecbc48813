"""`pyop make manifests --check`: validate the samples under config/samples against the CRDs about to be written.

Each sample goes through what the API server does to a create: unknown fields are reported (kubectl's strict field
validation rejects them; a lenient apply would drop them silently), nulls and defaults are applied, then the object
is validated (types, required, enums, bounds, patterns, formats, list uniqueness, CEL). Errors name the sample file
and the line of the offending field, then the API server's own message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

SAMPLES_DIR = "config/samples"

_PATH_PART = re.compile(r"([^.\[\]]+)|\[([^\]]*)\]")


@dataclass(frozen=True)
class _Version:
    schema: dict[str, Any]
    served: bool


def check_samples(root: Path, crds: list[dict[str, Any]]) -> tuple[int, list[str]]:
    """(number of samples checked, problems) for every sample of a kind these CRDs define."""
    from pyop.schema import normalize, unknown_fields, validate

    versions: dict[tuple[str, str], dict[str, _Version]] = {}
    for crd in crds:
        spec = crd["spec"]
        versions[(spec["group"], spec["names"]["kind"])] = {
            v["name"]: _Version(v["schema"]["openAPIV3Schema"], bool(v.get("served", True))) for v in spec["versions"]
        }
    groups = {group for group, _ in versions}
    problems: list[str] = []
    checked = 0
    for path in sorted((root / SAMPLES_DIR).glob("*.y*ml")):
        if path.name in ("kustomization.yaml", "kustomization.yml"):
            continue
        rel = path.relative_to(root).as_posix()
        text = path.read_text(encoding="utf-8")
        try:
            nodes = list(yaml.compose_all(text, Loader=yaml.SafeLoader))
            documents = list(yaml.safe_load_all(text))
        except yaml.YAMLError as exc:
            problems.append(f"{rel}: not valid YAML: {_one_line(exc)}")
            continue
        for node, document in zip(nodes, documents, strict=True):
            if not isinstance(document, dict):
                continue
            group, _, version = str(document.get("apiVersion", "")).rpartition("/")
            kind = document.get("kind")
            line = (node.start_mark.line + 1) if node is not None else 1
            kind_versions = versions.get((group, str(kind)))
            if kind_versions is None:
                if group in groups:
                    problems.append(f"{rel}:{line}: kind {kind} is not an API of group {group}")
                continue
            found = kind_versions.get(version)
            if found is None or not found.served:
                known = ", ".join(name for name, v in kind_versions.items() if v.served)
                what = "not served" if found is not None else "not a version of"
                problems.append(f"{rel}:{line}: {group}/{version} is {what} the {kind} CRD (served: {known})")
                continue
            checked += 1
            for field in unknown_fields(document, found.schema):
                problems.append(f"{rel}:{line_of(node, field)}: {field}: unknown field (the API server would drop it)")
            for error in validate(normalize(document, found.schema), found.schema):
                problems.append(f"{rel}:{line_of(node, error.field)}: {error}")
    return checked, problems


def line_of(node: yaml.Node | None, field_path: str) -> int:
    """The line of the deepest node of `field_path` (`spec.ports[0].name`, `spec.labels[app]`) in a sample.

    A missing field (a Required value error) points at its parent, the last node that exists.
    """
    if node is None:
        return 1
    current = node
    line = node.start_mark.line
    for name, bracket in _PATH_PART.findall(field_path):
        step = name or bracket
        if isinstance(current, yaml.MappingNode):
            entry = next(((k, v) for k, v in current.value if k.value == step), None)
            if entry is None:
                break
            line = entry[0].start_mark.line  # the key's line: where the reader looks for the field
            current = entry[1]
        elif isinstance(current, yaml.SequenceNode) and step.isdigit() and int(step) < len(current.value):
            current = current.value[int(step)]
            line = current.start_mark.line
        else:
            break
    return int(line) + 1


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())
