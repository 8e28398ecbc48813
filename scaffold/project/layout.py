"""Where each scaffolded file of a kind lives: the Python translation of Kubebuilder's project layout.

Kubebuilder puts types in `api/<version>/` (`api/<group>/<version>/` with --multigroup) and controllers in
`internal/controller/`. A Python project keeps its code in one importable package, so pyop uses
`<package>/api/[<group>/]<version>/` and `<package>/controllers/[<group>/]`.
"""

from __future__ import annotations

from dataclasses import dataclass

from scaffold.project.config import Project
from scaffold.project.names import snake_case


def _module_part(name: str) -> str:
    """A group or version as a Python identifier (`cache-x` -> `cache_x`)."""
    return name.replace("-", "_").replace(".", "_")


@dataclass(frozen=True)
class KindLayout:
    """Paths (relative, '/') and module names for one group/version/kind in a project."""

    project: Project
    group: str
    version: str
    kind: str
    plural: str

    @property
    def qualified_group(self) -> str:
        return f"{self.group}.{self.project.domain}"

    @property
    def kind_module(self) -> str:
        return snake_case(self.kind)

    @property
    def api_dir(self) -> str:
        parts = [self.project.package, "api"]
        if self.project.multigroup:
            parts.append(_module_part(self.group))
        parts.append(_module_part(self.version))
        return "/".join(parts)

    @property
    def api_module(self) -> str:
        return self.api_dir.replace("/", ".")

    @property
    def types_file(self) -> str:
        return f"{self.api_dir}/{self.kind_module}_types.py"

    @property
    def types_module(self) -> str:
        return f"{self.api_module}.{self.kind_module}_types"

    @property
    def group_dir(self) -> str | None:
        """The group package above the version package, with --multigroup only."""
        if not self.project.multigroup:
            return None
        return f"{self.project.package}/api/{_module_part(self.group)}"

    @property
    def controllers_dir(self) -> str:
        parts = [self.project.package, "controllers"]
        if self.project.multigroup:
            parts.append(_module_part(self.group))
        return "/".join(parts)

    @property
    def controller_file(self) -> str:
        return f"{self.controllers_dir}/{self.kind_module}_controller.py"

    @property
    def controller_module(self) -> str:
        return self.controller_file[: -len(".py")].replace("/", ".")

    @property
    def controller_alias(self) -> str:
        """The name main.py imports the controller module as; unique across groups."""
        return f"{_module_part(self.group)}_{self.kind_module}_controller"

    @property
    def controller_test_file(self) -> str:
        """The controller's test: flat under tests/, named after the (group-unique) alias main.py uses."""
        return f"tests/test_{self.controller_alias}.py"

    @property
    def sample_file(self) -> str:
        return f"config/samples/{self.group}_{self.version}_{self.kind.lower()}.yaml"

    @property
    def role_prefix(self) -> str:
        """Kubebuilder's helper-role naming: `<kind>` or `<group>-<kind>` with --multigroup."""
        return f"{self.group}-{self.kind.lower()}" if self.project.multigroup else self.kind.lower()

    def helper_role_file(self, role: str) -> str:
        prefix = f"{self.group}_{self.kind.lower()}" if self.project.multigroup else self.kind.lower()
        return f"config/rbac/{prefix}_{role}_role.yaml"

    @property
    def crd_file(self) -> str:
        """The CRD that `make manifests` writes for this kind (all versions of the group/kind together)."""
        return f"config/crd/bases/{self.qualified_group}_{self.plural}.yaml"

    @property
    def main_file(self) -> str:
        return f"{self.project.package}/main.py"
