"""What `make manifests` takes from the aggregated API server's models: their schemas, for `--check`.

The server's kinds are no CRDs (the server serves them; nothing is written for them), but their samples under
config/samples deserve the check a CRD kind's get: `make manifests --check` validates them against the schema the
server itself builds from the model (the same walk, pyop.apiserver.groups), so a misspelt field or a value out of
bounds fails before the sample reaches a cluster.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from pyop_scaffold.project.config import Project
from pyop_scaffold.project.names import snake_case


def served_schemas(root: Path, project: Project, builder: Any) -> list[dict[str, Any]]:
    """One CRD-shaped definition per aggregated kind (all its versions), never written; call with the project
    imported (`pyop_scaffold.manifests.loader.imported_project`)."""
    from pyop_scaffold.manifests.crd.assemble import CRDOptions, build_crds
    from pyop_scaffold.manifests.crd.schema import class_docs, package_markers
    from pyop_scaffold.manifests.loader import KindVersion, resource_info

    by_kind: dict[tuple[str, str], dict[str, Any]] = {}
    for entry in project.resources:
        if entry.apiserver is None or entry.path is None:
            continue
        module_name = f"{entry.path}.{snake_case(entry.kind)}_types"
        model = getattr(importlib.import_module(module_name), entry.kind, None)
        if not isinstance(model, type):
            continue  # renamed or moved by the user: the server's own start-up names what it cannot find
        docs = class_docs(model)
        info = resource_info(model, package_markers(model), docs)
        source = module_name.replace(".", "/") + ".py"
        # One version at a time: the versions of a served kind need no storage-version marker between them.
        for crd in build_crds([KindVersion(model, docs, source, info)], builder, CRDOptions("pyop")):
            key = (crd.obj["spec"]["group"], crd.obj["spec"]["names"]["kind"])
            if key in by_kind:
                by_kind[key]["spec"]["versions"].extend(crd.obj["spec"]["versions"])
            else:
                by_kind[key] = crd.obj
    return list(by_kind.values())
