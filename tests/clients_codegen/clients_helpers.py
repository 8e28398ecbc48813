"""A small project whose kinds carry every client-gen tag, and running `pyop make clients` on it in-process."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from pathlib import Path

import yaml
from typer.testing import CliRunner

from pyop_scaffold.cli.app import app

PACKAGE = "harbor_op"
GROUP = "harbor.example.com"
HEADER = "# Copyright The harbor Authors.\n#\n# Licensed under the Apache License, Version 2.0.\n\n"

GROUP_VERSION_INFO = '''"""Group and version of the models in this package.

+groupName=harbor.example.com
+k8s:deepcopy-gen=package
"""

from pyop.api import GroupVersion

GROUP_VERSION = GroupVersion(group="harbor.example.com", version="v1")
'''

# One kind per tag (and every verb of `+genclient:method=`), as client-gen reads them.
TYPES = '''
from __future__ import annotations

from pydantic import BaseModel

from pyop.api import KubeModel, Resource

from .groupversion_info import GROUP_VERSION


class ShipSpec(KubeModel):
    crew: int = 1


class ShipStatus(KubeModel):
    phase: str | None = None
    replicas: int = 0


class Report(BaseModel):
    """The body of the report subresource."""

    summary: str = ""


# +kubebuilder:object:root=true
# +kubebuilder:subresource:status
# +genclient
# +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
class Ship(Resource, group_version=GROUP_VERSION):
    """Every verb: +genclient alone."""

    spec: ShipSpec = ShipSpec()
    status: ShipStatus | None = None


# +kubebuilder:object:root=true
# +kubebuilder:resource:scope=Cluster
# +genclient
# +genclient:nonNamespaced
class Harbor(Resource, group_version=GROUP_VERSION, namespaced=False):
    """Cluster-scoped."""

    spec: ShipSpec = ShipSpec()
    status: ShipStatus | None = None


# +kubebuilder:object:root=true
# +genclient
# +genclient:noStatus
class Logbook(Resource, group_version=GROUP_VERSION):
    """No status verbs although it has a status."""

    spec: ShipSpec = ShipSpec()
    status: ShipStatus | None = None


# +kubebuilder:object:root=true
# +genclient
# +genclient:noVerbs
# +genclient:method=GetScale,verb=get,subresource=scale,result=k8s.io/api/autoscaling/v1.Scale
class Beacon(Resource, group_version=GROUP_VERSION):
    """Only an extra method."""

    spec: ShipSpec = ShipSpec()


# +kubebuilder:object:root=true
# +genclient
# +genclient:readonly
class Chart(Resource, group_version=GROUP_VERSION):
    """get, list, watch."""

    spec: ShipSpec = ShipSpec()


# +kubebuilder:object:root=true
# +genclient
# +genclient:onlyVerbs=create,delete
class Sailor(Resource, group_version=GROUP_VERSION):
    """create and delete only."""

    spec: ShipSpec = ShipSpec()


# +kubebuilder:object:root=true
# +kubebuilder:subresource:status
# +genclient
# +genclient:skipVerbs=deleteCollection,apply,applyStatus
class Cargo(Resource, group_version=GROUP_VERSION):
    """Every verb but three."""

    spec: ShipSpec = ShipSpec()
    status: ShipStatus | None = None


# +kubebuilder:object:root=true
# +kubebuilder:subresource:status
# +kubebuilder:subresource:scale:specpath=.spec.crew,statuspath=.status.replicas
# +genclient
# +genclient:onlyVerbs=get
# +genclient:method=UpdateScale,verb=update,subresource=scale,input=@SCALE@,result=@SCALE@
# +genclient:method=PatchScale,verb=patch,subresource=scale,result=k8s.io/api/autoscaling/v1.Scale
# +genclient:method=ApplyScale,verb=apply,subresource=scale,input=@SCALE@,result=@SCALE@
# +genclient:method=CreateReport,verb=create,subresource=report,input=Report,result=Report
# +genclient:method=CreateStatus,verb=create,result=k8s.io/apimachinery/pkg/apis/meta/v1.Status
# +genclient:method=ListSummaries,verb=list,result=Report
# +genclient:method=Retire,verb=delete
class Fleet(Resource, group_version=GROUP_VERSION):
    """Extra methods of every verb."""

    spec: ShipSpec = ShipSpec()
    status: ShipStatus | None = None


# +kubebuilder:object:root=true
class Anchor(Resource, group_version=GROUP_VERSION):
    """No +genclient: no client."""

    spec: ShipSpec = ShipSpec()
'''.replace("@SCALE@", "k8s.io/api/autoscaling/v1.Scale")

# A second API package whose group comes from its +groupName only (no group_version= keyword).
BETA_INIT = '''"""The v1beta1 API.

+groupName=beta.harbor.example.com
+versionName=v1beta1
"""
'''
BETA_TYPES = '''
from __future__ import annotations

from pyop.api import KubeModel, Resource


class BuoySpec(KubeModel):
    light: bool = True


# +kubebuilder:object:root=true
# +genclient
class Buoy(Resource):
    """Its group is the package's +groupName."""

    spec: BuoySpec = BuoySpec()
'''


def tagged_project(root: Path, types: str = TYPES) -> Path:
    """PROJECT, the boilerplate header, harbor_op/api/v1 (every tag) and harbor_op/api/v1beta1 (+groupName)."""
    root.mkdir(parents=True, exist_ok=True)
    data = {
        "domain": "example.com",
        "layout": ["python.pyop.io/v1"],
        "package": PACKAGE,
        "projectName": "harbor-op",
        "version": "3",
    }
    (root / "PROJECT").write_text(yaml.safe_dump(data))
    (root / "hack").mkdir(exist_ok=True)
    (root / "hack" / "boilerplate.py.txt").write_text(HEADER)
    api = root / PACKAGE / "api"
    (api / "v1").mkdir(parents=True, exist_ok=True)
    (api / "v1beta1").mkdir(parents=True, exist_ok=True)
    (root / PACKAGE / "__init__.py").write_text("")
    (api / "__init__.py").write_text('"""APIs."""\n')
    (api / "v1" / "__init__.py").write_text('"""The v1 API."""\n')
    (api / "v1" / "groupversion_info.py").write_text(GROUP_VERSION_INFO)
    (api / "v1" / "harbor_types.py").write_text(textwrap.dedent(types).lstrip("\n"))
    (api / "v1beta1" / "__init__.py").write_text(BETA_INIT)
    (api / "v1beta1" / "buoy_types.py").write_text(textwrap.dedent(BETA_TYPES).lstrip("\n"))
    return root


@dataclass
class Result:
    exit_code: int
    stdout: str
    stderr: str


def pyop(*args: str, cwd: Path) -> Result:
    """`pyop <args> --project-dir cwd`, in-process."""
    result = CliRunner().invoke(app, [*args, "--project-dir", str(cwd)])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Result(result.exit_code, result.stdout, result.stderr)


def generated(root: Path, package: str = f"{PACKAGE}.generated") -> dict[str, str]:
    """{file name: text} of the generated package."""
    folder = root / package.replace(".", "/")
    return {path.name: path.read_text() for path in sorted(folder.glob("*.py"))}
