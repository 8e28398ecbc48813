"""Where each scaffolded file of a kind lives: the Python translation of Kubebuilder's project layout.

Kubebuilder puts types in `api/<version>/` (`api/<group>/<version>/` with --multigroup) and controllers in
`internal/controller/`. A Python project keeps its code in one importable package, so pyop uses
`<package>/api/[<group>/]<version>/` and `<package>/controllers/[<group>/]`.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyop_scaffold.project.config import Project
from pyop_scaffold.project.names import snake_case


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
    # The kind's API module as PROJECT records it (a resource's `path`); it wins over the layout, because files
    # stay where `create api` put them when `pyop edit --multigroup` changes the layout later (as in Kubebuilder,
    # whose scaffolds import a resource's recorded path).
    api_package: str | None = None
    # A kind the project does not define (built-in or external): the API group the server serves it under ("" for
    # core) and the module its model is imported from.
    api_group: str | None = None
    model_module: str | None = None

    @property
    def qualified_group(self) -> str:
        if self.api_group is not None:
            return self.api_group
        return f"{self.group}.{self.project.domain}"

    @property
    def kind_module(self) -> str:
        return snake_case(self.kind)

    @property
    def api_dir(self) -> str:
        if self.api_package and self.api_package.startswith(f"{self.project.package}.api."):
            return self.api_package.replace(".", "/")
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
        if self.model_module is not None:
            return self.model_module
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

    @property
    def webhook_dir(self) -> str:
        """Kubebuilder's `internal/webhook/[<group>/]<version>/`, inside the project's package."""
        parts = [self.project.package, "webhook"]
        if self.project.multigroup:
            parts.append(_module_part(self.group))
        parts.append(_module_part(self.version))
        return "/".join(parts)

    @property
    def webhook_file(self) -> str:
        return f"{self.webhook_dir}/{self.kind_module}_webhook.py"

    @property
    def webhook_module(self) -> str:
        return self.webhook_file[: -len(".py")].replace("/", ".")

    @property
    def webhook_alias(self) -> str:
        """The name main.py imports the webhook module as; unique across groups and versions."""
        return f"{_module_part(self.group)}_{self.kind_module}_{_module_part(self.version)}_webhook"

    @property
    def webhook_test_file(self) -> str:
        return f"tests/test_{self.webhook_alias}.py"

    @property
    def webhook_setup_function(self) -> str:
        return f"setup_{self.kind_module}_webhook"

    @property
    def dashed_group_path(self) -> str:
        """`crew.my.domain`, `v1`, `Captain` -> `crew-my-domain-v1-captain`: Kubebuilder's webhook path suffix."""
        return f"{self.qualified_group.replace('.', '-')}-{self.version}-{self.kind.lower()}"

    @property
    def defaulting_path(self) -> str:
        return f"/mutate-{self.dashed_group_path}"

    @property
    def validation_path(self) -> str:
        return f"/validate-{self.dashed_group_path}"

    @property
    def conversion_file(self) -> str:
        """Where a spoke version's conversion functions live, next to its types (Kubebuilder's <kind>_conversion.go)."""
        return f"{self.api_dir}/{self.kind_module}_conversion.py"

    @property
    def conversion_module(self) -> str:
        return self.conversion_file[: -len(".py")].replace("/", ".")

    @property
    def crd_name(self) -> str:
        return f"{self.plural}.{self.qualified_group}"

    @property
    def conversion_patch_file(self) -> str:
        """The CRD patch that turns on the conversion webhook (`webhook_in_<group>_<plural>.yaml` with --multigroup)."""
        name = f"{self.group}_{self.plural}" if self.project.multigroup else self.plural
        return f"config/crd/patches/webhook_in_{name}.yaml"
