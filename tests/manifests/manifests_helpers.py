"""Helpers for `pyop make manifests` tests: tiny project trees, running the CLI in-process, checking what it wrote."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import kubernetes_validate
import yaml
from typer.testing import CliRunner

from pyop_scaffold.cli.app import app

KUBERNETES_VERSION = "1.32"
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: CRDs embedding a PodSpec are large
PACKAGE = "shipyard_op"

GROUP_VERSION_INFO = '''"""Group and version of the models in this package.

+groupName={group}
"""

from pyop.api import GroupVersion

GROUP_VERSION = GroupVersion(group="{group}", version="{version}")
'''

TYPES_HEADER = """from __future__ import annotations

import datetime
import decimal
import enum
from typing import Annotated, Any, Literal

from pydantic import Field

from pyop.api import Condition, Int32, Int64, KubeModel, ObjectMeta, Resource, ResourceList
from pyop.api.builtin_types import IntOrString, PodTemplateSpec, Quantity

from .groupversion_info import GROUP_VERSION
"""


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


def project(root: Path, modules: dict[str, str], *, manifests: dict[str, Any] | None = None) -> Path:
    """A minimal pyop project: PROJECT, the package, and `modules` ({"v1/ship_types.py": source, ...}) under api/.

    A version folder gets a groupversion_info.py for group `fleet.example.com` unless `modules` brings one;
    a `*_types.py` body is prefixed with TYPES_HEADER (dedented) unless it starts with `#!raw`.
    """
    root.mkdir(parents=True, exist_ok=True)
    data: dict[str, Any] = {
        "domain": "example.com",
        "layout": ["python.pyop.io/v1"],
        "package": PACKAGE,
        "projectName": "shipyard-op",
        "version": "3",
    }
    if manifests is not None:
        data["manifests"] = manifests
    (root / "PROJECT").write_text(yaml.safe_dump(data))
    api = root / PACKAGE / "api"
    api.mkdir(parents=True, exist_ok=True)
    (root / PACKAGE / "__init__.py").write_text("")
    (api / "__init__.py").write_text('"""APIs."""\n')
    for relative, source in modules.items():
        path = api / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        body = textwrap.dedent(source).lstrip("\n")
        if body.startswith("#!raw\n"):
            body = body[len("#!raw\n") :]
        elif path.name.endswith("_types.py"):
            body = TYPES_HEADER + "\n" + body
        path.write_text(body)
        version_dir = path.parent
        if version_dir != api and not (version_dir / "__init__.py").exists():
            (version_dir / "__init__.py").write_text(f'"""The {version_dir.name} API."""\n')
        info = version_dir / "groupversion_info.py"
        if version_dir != api and not info.exists() and f"{version_dir.name}/groupversion_info.py" not in modules:
            info.write_text(GROUP_VERSION_INFO.format(group="fleet.example.com", version=version_dir.name))
    return root


def crds(root: Path) -> dict[str, dict[str, Any]]:
    """{file name: CRD} of everything under config/crd/bases."""
    bases = root / "config" / "crd" / "bases"
    return {path.name: yaml.load(path.read_text(), Loader=LOADER) for path in sorted(bases.glob("*.yaml"))}


def generate(root: Path, *args: str) -> dict[str, dict[str, Any]]:
    """Run `pyop make manifests`, expect success, and check every CRD against Kubernetes' own CRD schema."""
    result = pyop("make", "manifests", *args, cwd=root)
    assert result.exit_code == 0, result.stderr
    written = crds(root)
    for crd in written.values():
        kubernetes_validate.validate(crd, KUBERNETES_VERSION, strict=True)
    return written


def version_schema(crd: dict[str, Any], version: str | None = None) -> dict[str, Any]:
    versions = crd["spec"]["versions"]
    entry = versions[0] if version is None else next(v for v in versions if v["name"] == version)
    return entry["schema"]["openAPIV3Schema"]  # type: ignore[no-any-return]


def spec_of(crd: dict[str, Any], version: str | None = None) -> dict[str, Any]:
    return version_schema(crd, version)["properties"]["spec"]  # type: ignore[no-any-return]


def fails(root: Path, *args: str) -> str:
    """Run `pyop make manifests`, expect exit code 2 and nothing written; returns stderr."""
    before = snapshot(root)
    result = pyop("make", "manifests", *args, cwd=root)
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert snapshot(root) == before, "a failed run must write nothing"
    return result.stderr


def snapshot(root: Path) -> dict[str, str]:
    """{relative path: sha256} of every file under root, to prove a command wrote nothing."""
    return {
        path.relative_to(root).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


def kustomize(folder: Path) -> list[dict[str, Any]]:
    """`kubectl kustomize folder`, parsed; the caller skips when kubectl is missing."""
    kubectl = shutil.which("kubectl")
    assert kubectl is not None
    built = subprocess.run([kubectl, "kustomize", str(folder)], capture_output=True, text=True, check=False)
    assert built.returncode == 0, built.stderr
    return [document for document in yaml.load_all(built.stdout, Loader=LOADER) if document]


def line_of(path: Path, text: str) -> int:
    """The 1-based line of the first line of `path` containing `text`."""
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if text in line:
            return number
    raise AssertionError(f"{text!r} not in {path}")
