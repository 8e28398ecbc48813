"""The CRDs a change is checked against: those of a git ref (default HEAD), or of a file or folder.

A ref is read with `git show` from `config/crd/bases` as committed there, so the gate compares with what was
released or reviewed, not with whatever the working tree holds. A path names a file (one or many YAML documents,
such as `dist/install.yaml`; objects other than CRDs are ignored) or a folder of them.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import yaml

from pyop_scaffold.manifests.errors import ManifestError

CRD_DIR = "config/crd/bases"
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_baseline(root: Path, ref: str) -> tuple[str, dict[str, dict[str, Any]]]:
    """(what was read, {CRD name: CRD}) for `ref`: an existing path (relative to `root`) or a git ref."""
    path = Path(ref) if Path(ref).is_absolute() else root / ref
    if path.exists():
        files = sorted(path.rglob("*.y*ml")) if path.is_dir() else [path]
        return str(ref), _crds((file.read_text(encoding="utf-8"), str(file)) for file in files)
    return f"{CRD_DIR} at {ref}", _crds(_git_files(root, ref))


def _git_files(root: Path, ref: str) -> list[tuple[str, str]]:
    if ref.startswith("-"):
        raise ManifestError([f"--check-compat {ref!r}: a git ref or a path, not an option"])
    listing = _git(root, "ls-tree", "--name-only", f"{ref}:{CRD_DIR}")
    if listing is None:
        raise ManifestError(
            [f"--check-compat {ref!r}: not a file or folder, and no {CRD_DIR} at git ref {ref!r} to compare with"]
        )
    files = []
    for name in sorted(listing.split()):
        if name.endswith((".yaml", ".yml")):
            text = _git(root, "show", f"{ref}:{CRD_DIR}/{name}")
            if text is not None:
                files.append((text, f"{ref}:{CRD_DIR}/{name}"))
    return files


def _git(root: Path, *args: str) -> str | None:
    try:
        result = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)
    except OSError:
        return None
    return result.stdout if result.returncode == 0 else None


def _crds(sources: Any) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for text, where in sources:
        try:
            documents = list(yaml.load_all(text, Loader=_LOADER))
        except yaml.YAMLError as exc:
            raise ManifestError([f"{where}: not valid YAML ({exc})"]) from None
        for document in documents:
            if isinstance(document, dict) and document.get("kind") == "CustomResourceDefinition":
                name = (document.get("metadata") or {}).get("name")
                if isinstance(name, str):
                    found[name] = document
    return found
