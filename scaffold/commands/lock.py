"""`pyop make lock`: requirements.lock, the operator image's dependencies with their hashes (go.sum's role).

The lock is generated output, as go.sum is: the command rewrites it whenever pyproject.toml's dependencies or the
running pyop-kit change, and a re-run with the same resolution writes the same bytes. Versions already locked are
kept unless `--upgrade` (as `pip-compile` does), so `make docker-build`, which runs it first, never takes in a new
upstream release by itself. A lock whose entries were edited by hand (its digest no longer matches) is left alone
without --force. When pyop-kit was not installed from an index, its exact wheel goes into wheels/ and the lock
names that file by path and hash: the image never looks pyop-kit up on an index.
"""

from __future__ import annotations

import re
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

from pyop_scaffold.commands.report import Report
from pyop_scaffold.errors import ConflictError, ProjectError, UsageError
from pyop_scaffold.image import lockfile
from pyop_scaffold.image.resolve import Pin, canonical_name, parse_platforms, resolve
from pyop_scaffold.image.self_wheel import DISTRIBUTION, SelfWheel, running_wheel
from pyop_scaffold.project.config import load_project
from pyop_scaffold.render.changeset import IfExists
from pyop_scaffold.render.lock import holding_project_lock

LOCK_FILE = "requirements.lock"
WHEELS_DIR = "wheels"
DEFAULT_PLATFORMS = "linux/amd64,linux/arm64"
WHEELS_README = """\
# wheels/

`pyop make lock` puts the pyop-kit wheel here when the pyop that runs it was not installed from an index (an
editable checkout or a local wheel), and requirements.lock names that file by its hash: the image installs exactly
that pyop-kit. The wheels are build inputs, not sources (.gitignore leaves them out); `make lock` writes them again.
"""
# The base image's Python version: `ARG BASE_IMAGE=python:3.12-slim-bookworm` (or a registry path, or a digest).
_BASE_IMAGE = re.compile(r"^ARG\s+BASE_IMAGE=\S*?python:(3\.\d+)\b", re.MULTILINE)
_PYTHON_VERSION_ARG = re.compile(r"^ARG\s+PYTHON_VERSION=(3\.\d+)\b", re.MULTILINE)


@dataclass(frozen=True)
class LockOptions:
    platforms: str = DEFAULT_PLATFORMS
    python_version: str | None = None
    upgrade: bool = False
    force: bool = False


@holding_project_lock
def make_lock(root: Path, options: LockOptions) -> Report:
    """Resolve the project's dependencies for the image and write requirements.lock (and pyop-kit's wheel)."""
    from pyop_scaffold.render.changeset import ChangeSet

    root = root.resolve()
    load_project(root)
    platforms = parse_platforms(options.platforms)
    python_version = image_python_version(root, options.python_version)
    requirements = project_dependencies(root)
    current = (root / LOCK_FILE).read_text(encoding="utf-8") if (root / LOCK_FILE).is_file() else None
    if current is not None and lockfile.is_hand_edited(current) and not options.force:
        raise ConflictError(
            f"refusing to overwrite {LOCK_FILE}: its entries were edited by hand (the digest in its header no longer "
            f"matches); pass --force to lock again"
        )
    kept = [] if current is None or options.upgrade else lockfile.locked_entries(current)
    wheel = running_wheel()
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="pyop-lock-wheel-") as scratch:
        pins, relocked = _resolve_all(root, requirements, wheel, Path(scratch), platforms, python_version, kept)
    if relocked:
        notes.append(f"the versions in {LOCK_FILE} no longer fit pyproject.toml: resolved afresh")

    changes = ChangeSet(root)
    if wheel is not None:
        changes.add_file(f"{WHEELS_DIR}/README.md", WHEELS_README, if_exists=IfExists.SKIP)
        changes.update_file(f"{WHEELS_DIR}/{wheel.filename}", wheel.content)
        notes.append(f"{DISTRIBUTION} comes from {WHEELS_DIR}/{wheel.filename}, {wheel.origin}")
    text = lockfile.render_lock(pins, header_lines=_header(python_version, platforms))
    changes.update_file(LOCK_FILE, text)
    return Report(files=changes.apply(), next_step="build the image: make docker-build", notes=notes)


def _resolve_all(
    root: Path,
    requirements: list[str],
    wheel: SelfWheel | None,
    scratch: Path,
    platforms: list[str],
    python_version: str,
    kept: list[lockfile.LockedEntry],
) -> tuple[dict[str, list[Pin]], bool]:
    """Pins per platform, keeping the versions of the existing lock where they still fit (else resolved afresh)."""
    from pyop_scaffold import __version__

    local: dict[Path, str] = {}
    if wheel is not None:
        scratch_wheel = (scratch / wheel.filename).resolve()
        scratch_wheel.write_bytes(wheel.content)
        local[scratch_wheel] = f"./{WHEELS_DIR}/{wheel.filename}"
        # First: pip looks named requirements up on the index unless the file that satisfies them came before.
        requirements = [f"{DISTRIBUTION} @ {scratch_wheel.as_uri()}", *requirements]
    else:
        requirements = [*requirements, f"{DISTRIBUTION}=={__version__}"]  # the pyop that made the project

    def run(with_kept: bool) -> dict[str, list[Pin]]:
        result = {}
        for platform in platforms:
            constraints = lockfile.constraints_for(kept, platform, leave_out={DISTRIBUTION}) if with_kept else []
            result[platform] = resolve(
                requirements,
                python_version=python_version,
                platform=platform,
                root=root,
                constraints=constraints,
                local_wheels=local,
            )
        return result

    if not kept:
        return run(False), False
    try:
        return run(True), False
    except ProjectError:
        return run(False), True


def project_dependencies(root: Path) -> list[str]:
    """`[project].dependencies` of the project's pyproject.toml: what the image installs besides the operator."""
    path = root / "pyproject.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ProjectError(f"{path} is missing: the lock is made from its [project] dependencies") from None
    except tomllib.TOMLDecodeError as exc:
        raise ProjectError(f"{path}: not valid TOML ({exc})") from None
    project = data.get("project", {})
    if "dependencies" in project.get("dynamic", []):
        raise ProjectError(f"{path}: dependencies are dynamic; the lock needs them listed in [project] dependencies")
    dependencies = project.get("dependencies", [])
    if not isinstance(dependencies, list) or not all(isinstance(d, str) for d in dependencies):
        raise ProjectError(f"{path}: [project] dependencies must be a list of requirement strings")
    if any(canonical_name(re.split(r"[\s\[<>=!~;@(]", d.strip(), maxsplit=1)[0]) == "pyop" for d in dependencies):
        raise ProjectError(
            f"{path}: the dependency 'pyop' is an unrelated OpenID Connect package on PyPI; depend on {DISTRIBUTION}"
        )
    return list(dependencies)


def image_python_version(root: Path, given: str | None) -> str:
    """The image's Python `major.minor`: --python-version, else the Dockerfile's base image tag."""
    if given is not None:
        if not re.fullmatch(r"3\.\d{1,2}", given):
            raise UsageError(f"invalid --python-version {given!r}: give major.minor, e.g. 3.12")
        return given
    dockerfile = root / "Dockerfile"
    text = dockerfile.read_text(encoding="utf-8") if dockerfile.is_file() else ""
    match = _BASE_IMAGE.search(text) or _PYTHON_VERSION_ARG.search(text)
    if match is None:
        raise ProjectError(
            f"cannot tell the image's Python version from {dockerfile} (no `ARG BASE_IMAGE=python:3.X...`): "
            f"pass --python-version"
        )
    return match.group(1)


def _header(python_version: str, platforms: list[str]) -> list[str]:
    return [
        f"{LOCK_FILE}: the operator image's dependencies, each file named by its sha256 (as go.sum is for Go).",
        f"Generated by `pyop make lock` (`make lock`) from pyproject.toml's dependencies for CPython {python_version}",
        f"on {', '.join(platforms)}; the Dockerfile installs exactly these files:",
        f"  pip install --require-hashes --no-deps -r {LOCK_FILE}",
        "Do not edit: change pyproject.toml and run `make lock` (`--upgrade` takes newer releases).",
    ]
