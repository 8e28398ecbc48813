"""The licence header at the top of generated Python files (Kubebuilder's hack/boilerplate.go.txt), and the
template context every scaffold of a kind starts from (it carries that header)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyop_scaffold.errors import UsageError

if TYPE_CHECKING:
    from pyop_scaffold.project.config import Project
    from pyop_scaffold.project.layout import KindLayout

LICENSES = ("apache2", "none")

_APACHE2 = """\
# Copyright {owner}.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""


BOILERPLATE_FILE = "hack/boilerplate.py.txt"


def validate_license(license_name: str) -> str:
    if license_name not in LICENSES:
        raise UsageError(f"invalid license {license_name!r}: must be one of {', '.join(LICENSES)}")
    return license_name


def license_header(license_name: str, owner: str, project_name: str) -> str:
    """The header, ending with a blank line; no year, so the same input renders the same bytes in any year.

    `pyop init` stores it in hack/boilerplate.py.txt, where later commands read it and the user may change it.
    """
    validate_license(license_name)
    if license_name == "none":
        return ""
    return _APACHE2.format(owner=owner or f"The {project_name} Authors")


def kind_template_context(root: Path, project: Project, layout: KindLayout) -> dict[str, Any]:
    """What every template of one kind is given (create api's and create webhook's add their own keys): the
    project's names, the kind's names, and the licence header as the user keeps it in hack/boilerplate.py.txt."""
    from pyop_scaffold.commands.project_files import read_file_text

    return {
        "project_name": project.project_name,
        "package": project.package,
        "license_header": read_file_text(root, BOILERPLATE_FILE) or "",
        "group": layout.group,
        "qualified_group": layout.qualified_group,
        "version": layout.version,
        "kind": layout.kind,
        "kind_lower": layout.kind.lower(),
        "kind_module": layout.kind_module,
        "plural": layout.plural,
        "types_module": layout.types_module,
    }
