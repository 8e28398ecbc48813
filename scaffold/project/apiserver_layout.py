"""Where each scaffolded file of an aggregated API server's kind lives (`pyop create apiserver`).

The server's kinds are not CRDs, so they stay out of `<package>/api/` (whose models `make manifests` turns into
CRDs): they live in `<package>/apiserver/<group>/<version>/`, always by group (a server may serve several groups,
and its package layout does not follow the project's --multigroup). Config goes to `config/apiserver/`; samples and
helper roles beside the CRD kinds' ones, with the group in their names.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyop_scaffold.project.config import Project
from pyop_scaffold.project.names import snake_case

PACKAGE_DIR = "apiserver"
CONFIG_DIR = "config/apiserver"


def module_part(name: str) -> str:
    """A group or version as a Python identifier (`cache-x` -> `cache_x`)."""
    return name.replace("-", "_").replace(".", "_")


@dataclass(frozen=True)
class APIServerLayout:
    """Paths (relative, '/') and module names for one group/version/kind of the aggregated API server."""

    project: Project
    group: str
    version: str
    kind: str
    plural: str

    @property
    def qualified_group(self) -> str:
        return f"{self.group}.{self.project.domain}"

    @property
    def package_dir(self) -> str:
        return f"{self.project.package}/{PACKAGE_DIR}"

    @property
    def package_module(self) -> str:
        return self.package_dir.replace("/", ".")

    @property
    def group_dir(self) -> str:
        return f"{self.package_dir}/{module_part(self.group)}"

    @property
    def group_version_dir(self) -> str:
        return f"{self.group_dir}/{module_part(self.version)}"

    @property
    def group_version_module(self) -> str:
        return self.group_version_dir.replace("/", ".")

    @property
    def group_version_alias(self) -> str:
        """The name the server package's __init__ imports the group version's APIGroupVersion as."""
        return f"{module_part(self.group)}_{module_part(self.version)}"

    @property
    def kind_module(self) -> str:
        return snake_case(self.kind)

    @property
    def types_file(self) -> str:
        return f"{self.group_version_dir}/{self.kind_module}_types.py"

    @property
    def types_module(self) -> str:
        return self.types_file[: -len(".py")].replace("/", ".")

    @property
    def strategy_file(self) -> str:
        return f"{self.group_version_dir}/{self.kind_module}_strategy.py"

    @property
    def strategy_module(self) -> str:
        return self.strategy_file[: -len(".py")].replace("/", ".")

    @property
    def test_file(self) -> str:
        return f"tests/test_apiserver_{module_part(self.group)}_{module_part(self.version)}_{self.kind_module}.py"

    @property
    def sample_file(self) -> str:
        return f"config/samples/{self.group}_{self.version}_{self.kind.lower()}.yaml"

    @property
    def role_prefix(self) -> str:
        """Helper roles are named with the group (a CRD kind of another group may share the kind's name)."""
        return f"{self.group}-{self.kind.lower()}"

    def helper_role_file(self, role: str) -> str:
        return f"config/rbac/{self.group}_{self.kind.lower()}_{role}_role.yaml"

    @property
    def apiservice_name(self) -> str:
        """kube-aggregator requires an APIService to be named `<version>.<group>`."""
        return f"{self.version}.{self.qualified_group}"

    @property
    def apiservice_file(self) -> str:
        return f"{CONFIG_DIR}/apiservice_{self.group}_{self.version}.yaml"
