"""The running pyop-kit as a wheel file, for images built before (or without) pyop-kit being on an index.

PEP 610 tells how a distribution was installed: `direct_url.json` exists only when it did not come from an index.
For an editable install the wheel is built from the checkout; for a wheel installed from a file, that file is used
when it is still there with its recorded hash, and otherwise the wheel is put back together from the installed
files that RECORD lists. Either way the bytes depend only on the files (fixed timestamps, sorted entries), so
re-running `pyop make lock` on unchanged sources gives the same wheel and the same hash in the lock.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlsplit

from pyop_scaffold.errors import ProjectError

DISTRIBUTION = "pyop-kit"
# 1980-01-01, the earliest time a zip entry can carry: wheels built or rebuilt here do not depend on file times.
SOURCE_DATE_EPOCH = "315532800"
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)
# Files an installer writes into .dist-info; a wheel does not hold them.
_INSTALLER_FILES = {"INSTALLER", "REQUESTED", "direct_url.json", "RECORD"}
# What a checkout holds besides its sources: build outputs, environments, caches.
_NOT_SOURCES = (
    ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", "build", "dist", "*.egg-info", "__pycache__",
    ".mypy_cache", ".ruff_cache", ".pytest_cache", ".hypothesis", "node_modules",
)  # fmt: skip


@dataclass(frozen=True)
class SelfWheel:
    filename: str
    content: bytes
    origin: str  # where the bytes came from, for the command's report

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.content).hexdigest()


def running_wheel(distribution: str = DISTRIBUTION) -> SelfWheel | None:
    """The wheel of the installed `distribution` when it was not installed from an index, else None."""
    # An installation has a RECORD; a checkout's *.egg-info (found when the checkout is on sys.path) is not one.
    installed = [d for d in metadata.distributions(name=distribution) if d.read_text("RECORD") is not None]
    if not installed:
        raise ProjectError(f"{distribution} is not installed in this Python ({sys.executable})")
    dist = installed[0]
    direct_url = dist.read_text("direct_url.json")
    if direct_url is None:
        return None  # from an index: the lock names it by version and the index's hash
    info = json.loads(direct_url)
    version = dist.version
    url = str(info.get("url", ""))
    if info.get("dir_info", {}).get("editable"):
        return build_from_checkout(_file_path(url), distribution, version)
    if "archive_info" in info and url.endswith(".whl"):
        original = _original_wheel(url, info["archive_info"])
        if original is not None:
            return original
    return rebuild_from_record(dist)


def build_from_checkout(checkout: Path, distribution: str, version: str) -> SelfWheel:
    """`pip wheel --no-deps` of an editable install's checkout, refused if it builds another version."""
    if not (checkout / "pyproject.toml").is_file():
        raise ProjectError(f"{distribution} is installed editable from {checkout}, which holds no pyproject.toml")
    with tempfile.TemporaryDirectory(prefix="pyop-wheel-") as scratch:
        # Built from a copy: pip builds a folder in place, and the checkout's build/ and *.egg-info are neither ours
        # to write nor safe to share with another build running at the same time.
        source = Path(scratch) / "source"
        shutil.copytree(checkout, source, symlinks=True, ignore=shutil.ignore_patterns(*_NOT_SOURCES))
        out = str(Path(scratch) / "out")
        env = {**os.environ, "SOURCE_DATE_EPOCH": SOURCE_DATE_EPOCH}
        command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", out, str(source)]
        done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
        if done.returncode != 0:
            raise ProjectError(f"cannot build a wheel of {checkout}: {_last_line(done.stderr)}")
        wheels = sorted(Path(out).glob("*.whl"))
        expected = f"{_wheel_name(distribution)}-{version}-"
        if len(wheels) != 1 or not wheels[0].name.startswith(expected):
            found = ", ".join(w.name for w in wheels) or "nothing"
            raise ProjectError(
                f"the checkout {checkout} builds {found}, not {distribution} {version} that is running: "
                f"reinstall it (pip install -e {checkout})"
            )
        return SelfWheel(wheels[0].name, wheels[0].read_bytes(), f"built from the checkout {checkout}")


def rebuild_from_record(dist: metadata.Distribution) -> SelfWheel:
    """A wheel put back together from the installed files RECORD lists (each checked against its hash)."""
    files = dist.files or []
    entries: dict[str, bytes] = {}
    scripts = {ep.name for ep in dist.entry_points if ep.group in ("console_scripts", "gui_scripts")}
    for record in files:
        name = record.as_posix()
        parts = name.split("/")
        if "__pycache__" in parts or name.endswith(".pyc"):
            continue
        if name.startswith("../"):
            if parts[-1] in scripts or parts[-1].removesuffix(".exe") in scripts:
                continue  # an entry-point script: installers write it from entry_points.txt
            raise ProjectError(f"cannot rebuild the {dist.name} wheel: it installed {name} outside site-packages")
        if len(parts) == 2 and parts[0].endswith(".dist-info") and parts[1] in _INSTALLER_FILES:
            continue
        data = Path(str(record.locate())).read_bytes()
        if record.hash is not None and record.hash.mode == "sha256" and _record_hash(data) != record.hash.value:
            raise ProjectError(
                f"cannot rebuild the {dist.name} wheel: {name} changed since it was installed; reinstall {dist.name}"
            )
        entries[name] = data
    info = next((n.split("/")[0] for n in entries if n.split("/")[0].endswith(".dist-info")), None)
    if info is None or f"{info}/WHEEL" not in entries:
        raise ProjectError(f"cannot rebuild the {dist.name} wheel: its .dist-info/WHEEL file is missing")
    filename = f"{_wheel_name(dist.name)}-{dist.version}-{_wheel_tag(entries[f'{info}/WHEEL'])}.whl"
    return SelfWheel(filename, _zip_wheel(entries, info), f"rebuilt from the installed files of {dist.name}")


def _zip_wheel(entries: dict[str, bytes], info: str) -> bytes:
    """The wheel archive: package files sorted, then .dist-info, RECORD last (as wheel builders order them)."""
    names = sorted(entries, key=lambda n: (n.startswith(f"{info}/"), n))
    record_lines = [f"{n},sha256={_record_hash(entries[n])},{len(entries[n])}" for n in names]
    record = ("\n".join([*record_lines, f"{info}/RECORD,,"]) + "\n").encode()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in [*((n, entries[n]) for n in names), (f"{info}/RECORD", record)]:
            item = zipfile.ZipInfo(name, date_time=_ZIP_TIME)
            item.compress_type = zipfile.ZIP_DEFLATED
            item.external_attr = 0o644 << 16
            archive.writestr(item, data)
    return buffer.getvalue()


def _wheel_tag(wheel_file: bytes) -> str:
    """The compressed tag set of a WHEEL file's `Tag:` lines (py3-none-any for a pure wheel)."""
    tags = [line.split(":", 1)[1].strip() for line in wheel_file.decode().splitlines() if line.startswith("Tag:")]
    if not tags:
        return "py3-none-any"
    columns = [sorted({tag.split("-")[i] for tag in tags}) for i in range(3)]
    return "-".join(".".join(column) for column in columns)


def _original_wheel(url: str, archive_info: dict[str, object]) -> SelfWheel | None:
    """The very wheel file an install came from, if it is still on disk with the hash pip recorded."""
    if urlsplit(url).scheme != "file":
        return None
    path = _file_path(url)
    hashes = archive_info.get("hashes")
    expected = hashes.get("sha256") if isinstance(hashes, dict) else None
    if not path.is_file() or expected is None:
        return None
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != expected:
        return None
    return SelfWheel(path.name, data, f"the wheel it was installed from ({path})")


def _file_path(url: str) -> Path:
    parts = urlsplit(url)
    if parts.scheme != "file":
        raise ProjectError(f"{DISTRIBUTION} was installed from {url}, which is not a local folder or file")
    return Path(unquote(parts.path))


def _record_hash(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _wheel_name(distribution: str) -> str:
    """A distribution name as wheel file names spell it (pyop-kit -> pyop_kit)."""
    return distribution.replace("-", "_").replace(".", "_").lower()


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("WARNING:")]
    return lines[-1] if lines else "pip failed without a message"
