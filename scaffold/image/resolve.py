"""Resolve a dependency set for the image's platforms with pip, without installing anything.

`pip install --dry-run --report` with `--platform/--python-version/--only-binary=:all:` resolves for another
interpreter and machine and names each chosen file with its sha256; this module turns one such run per platform
into pins. pip evaluates environment markers against the interpreter running it (only wheel tags follow the
flags), so a lock made on Linux with the image's Python minor version is exact; elsewhere, markers on platform or
Python version may select differently (docs/commands/make-lock.md).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from pyop_scaffold.errors import ProjectError, UsageError

# glibc of the image's Debian release (python:<version>-slim-bookworm): the newest manylinux tag it can load.
GLIBC_MINOR = 36
# Docker's platform names and the machine names of wheel tags and of `platform_machine` markers.
MACHINES = {"linux/amd64": "x86_64", "linux/arm64": "aarch64"}


@dataclass(frozen=True)
class Pin:
    """One resolved distribution on one platform: a version from an index, or a file inside the project."""

    name: str  # canonical (PEP 503) name
    version: str
    sha256: str
    path: str | None = None  # a project-relative wheel path ("./wheels/...") when not from an index


def parse_platforms(text: str) -> list[str]:
    """`linux/amd64,linux/arm64` (docker buildx's spelling) as a sorted list, refusing platforms without wheels."""
    platforms = sorted({item.strip() for item in text.split(",") if item.strip()})
    unknown = [p for p in platforms if p not in MACHINES]
    if unknown or not platforms:
        allowed = ", ".join(MACHINES)
        raise UsageError(f"invalid --platform {text!r}: allowed are {allowed} (comma-separated)")
    return platforms


def platform_tags(platform: str) -> list[str]:
    """pip `--platform` values for a Debian-based image: manylinux from the image's glibc down, legacy aliases."""
    machine = MACHINES[platform]
    tags = [f"manylinux_2_{minor}_{machine}" for minor in range(GLIBC_MINOR, 16, -1)]
    tags.append(f"manylinux2014_{machine}")
    if machine == "x86_64":
        tags += [f"manylinux_2_{minor}_{machine}" for minor in (12, 5)] + ["manylinux2010_x86_64", "manylinux1_x86_64"]
    return tags


def resolve(
    requirements: Sequence[str],
    *,
    python_version: str,
    platform: str,
    root: Path,
    constraints: Sequence[str] = (),
    local_wheels: Mapping[Path, str] | None = None,
) -> list[Pin]:
    """The distributions pip would install for `requirements` on `platform`, sorted by name.

    `local_wheels` maps wheel files named in `requirements` to the project-relative path the lock gives them (the
    wheel is resolved from a scratch copy before the command writes anything into the project).
    """
    with tempfile.TemporaryDirectory(prefix="pyop-lock-") as scratch:
        report = Path(scratch) / "report.json"
        command = [
            sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
            "--report", str(report), "--only-binary=:all:", "--implementation", "cp",
            "--python-version", python_version,
            # pip before 23.3 takes --platform only with --target, dry run or not; nothing is written there.
            "--target", str(Path(scratch) / "target"),
        ]  # fmt: skip
        for tag in platform_tags(platform):
            command += ["--platform", tag]
        if constraints:
            constraint_file = Path(scratch) / "constraints.txt"
            constraint_file.write_text("".join(f"{line}\n" for line in constraints))
            command += ["--constraint", str(constraint_file)]
        command += ["--", *requirements]
        done = subprocess.run(command, cwd=root, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise ProjectError(f"cannot resolve the image's dependencies for {platform}: {_pip_error(done.stderr)}")
        data = json.loads(report.read_text())
    return sorted((_pin(item, root, local_wheels or {}) for item in data.get("install", [])), key=lambda pin: pin.name)


def _pin(item: dict[str, object], root: Path, local_wheels: Mapping[Path, str]) -> Pin:
    meta = item.get("metadata")
    download = item.get("download_info")
    assert isinstance(meta, dict) and isinstance(download, dict), "pip's installation report changed shape"
    name = canonical_name(str(meta["name"]))
    archive = download.get("archive_info")
    hashes = archive.get("hashes") if isinstance(archive, dict) else None
    sha256 = hashes.get("sha256") if isinstance(hashes, dict) else None
    url = str(download.get("url", ""))
    if not isinstance(sha256, str):
        raise ProjectError(f"{name} resolves to {url}, which has no sha256: the lock takes released files only")
    path = None
    if item.get("is_direct"):
        path = _project_path(url, root, name, local_wheels)
    return Pin(name=name, version=str(meta["version"]), sha256=sha256, path=path)


def _project_path(url: str, root: Path, name: str, local_wheels: Mapping[Path, str]) -> str:
    """A direct file requirement as a path relative to the project (the image's build context)."""
    parts = urlsplit(url)
    location = Path(unquote(parts.path)).resolve() if parts.scheme == "file" else None
    if location is not None and location in local_wheels:
        return local_wheels[location]
    if location is None or not location.is_relative_to(root.resolve()):
        raise ProjectError(f"{name} resolves to {url}, outside the project: the image cannot install it")
    return "./" + location.relative_to(root.resolve()).as_posix()


def canonical_name(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _pip_error(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("ERROR:")]
    chosen = errors[-1] if errors else (lines[-1] if lines else "pip failed without a message")
    return chosen.removeprefix("ERROR: ")
