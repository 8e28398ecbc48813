"""`make manifests` with nothing to do: known without importing the project, pydantic or the generator.

`make test`, `make run` and `make build-installer` all run `make manifests` first, so most runs change nothing,
and most of a full run is imports (the project's models, pydantic, the schema walker). A full run records what it
read and what it wrote in a stamp in the user's cache directory (never in the project): a digest of its inputs
and the digest of each output file. The next run computes the input digest again, with stat and hashing only, and
when it and every output file are as recorded, there is nothing to do: it prints what a full run would print and
writes nothing.

The inputs are everything a run reads: PROJECT, every Python file of the project package and at the project root
(models, webhooks and controllers with their RBAC markers), the header file, the samples (with `--check`), the
options, `PYOP_*` environment variables, pyop's own code and the installed packages (each `sys.path` folder's
modification time changes when a package is installed or removed). Anything else found (a journal of an
interrupted command, an unreadable file) means a full run, which is always correct.

The stamp also records, for each CRD, the project files it was made from and their key; a run with something
to do keeps the CRDs whose key is unchanged (`partial`) and builds the others only.
"""

from __future__ import annotations

import dataclasses
import marshal
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pyop_scaffold.cache import cache_directory

try:  # hashlib's import loads OpenSSL, which costs more than this whole check; BLAKE2 is built into Python
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - an interpreter built without it
    from hashlib import blake2b

__all__ = [
    "RunOptions",
    "Stamp",
    "base_digest",
    "file_digest",
    "forget",
    "input_digest",
    "read_stamp",
    "up_to_date",
    "write_stamp",
]

_FORMAT = 2
_SKIPPED_DIRS = {"__pycache__", "node_modules"}


@dataclass(frozen=True)
class RunOptions:
    """The options of one `make manifests` run that change what it writes."""

    check_samples: bool = False
    max_description_length: int | None = None
    header_file: str | None = None


@dataclass(frozen=True)
class Stamp:
    """What the last full run read (`inputs`) and wrote ({path: digest}), and what it printed after the files."""

    inputs: str
    outputs: dict[str, str]
    notes: tuple[str, ...]
    next_step: str
    # Each CRD the run wrote, by "group/kind": (file, the project files it was made from, their key, its digest).
    crds: dict[str, tuple[str, tuple[str, ...], str, str]] = dataclasses.field(default_factory=dict)

    def outputs_unchanged(self, root: Path) -> bool:
        return all(_file_digest(root / path) == digest for path, digest in self.outputs.items())


def input_digest(root: Path, options: RunOptions) -> str | None:
    """The digest of everything a run of `make manifests` in `root` reads; None where that cannot be known
    cheaply (no PROJECT, no package in it, a journal of an interrupted command): then only a full run will do."""
    return _digest(root, options, frozenset())


def base_digest(root: Path, options: RunOptions, kind_modules: frozenset[str]) -> str | None:
    """The digest of what a run reads but the kinds' own modules (project-relative paths): what every CRD
    depends on, whichever kinds it is made of (`partial`)."""
    return _digest(root, options, kind_modules)


def _digest(root: Path, options: RunOptions, left_out: frozenset[str]) -> str | None:
    try:
        project = (root / "PROJECT").read_bytes()
    except OSError:
        return None
    package = _top_level_value(project, b"package:", indented=False)
    if not package or any(name.startswith(".pyop-journal-") for name in os.listdir(root)):
        return None
    digest = blake2b(digest_size=20)

    def add(*parts: object) -> None:
        digest.update(repr(parts).encode("utf-8", "surrogatepass"))
        digest.update(b"\0")

    add(_FORMAT, sys.version, sys.prefix, options.check_samples, options.max_description_length, options.header_file)
    add(sorted((key, value) for key, value in os.environ.items() if key.startswith("PYOP_")))
    add(project)
    try:
        for path in _project_sources(root, package.replace(".", "/")):
            relative = path.relative_to(root).as_posix()
            add(relative, "kind module" if relative in left_out else _file_digest(path))
        for path in _header_files(root, project, options.header_file):
            add("header", str(path), _file_digest(path))
        if options.check_samples:
            for path in _tree_files(root / "config" / "samples", suffixes=(".yaml", ".yml", ".json")):
                add(path.relative_to(root).as_posix(), _file_digest(path))
        for stamp in _code_stamps(root):
            add(stamp)
    except OSError:
        return None
    return digest.hexdigest()


def up_to_date(root: Path, options: RunOptions) -> Stamp | None:
    """The stamp of the last full run when nothing changed since (its inputs and its outputs), else None."""
    root = root.resolve()
    stamp = read_stamp(root)
    if stamp is None or input_digest(root, options) != stamp.inputs or not stamp.outputs_unchanged(root):
        return None
    return stamp


def read_stamp(root: Path) -> Stamp | None:
    path = _stamp_path(root)
    if path is None:
        return None
    try:
        form, inputs, outputs, notes, next_step, crds = marshal.loads(path.read_bytes())
        if form != _FORMAT:
            return None
        return Stamp(
            str(inputs),
            dict(outputs),
            tuple(notes),
            str(next_step),
            {
                str(key): (str(file), tuple(map(str, files)), str(digest), str(output))
                for key, (file, files, digest, output) in dict(crds).items()
            },
        )
    except (OSError, ValueError, EOFError, TypeError):
        return None


def write_stamp(
    root: Path,
    inputs: str,
    outputs: list[str],
    notes: list[str],
    next_step: str,
    crds: dict[str, tuple[str, tuple[str, ...], str]] | None = None,
) -> None:
    """Record a run (best effort: without a cache directory every run is a full one); `crds` maps each CRD's
    "group/kind" to (its file, the project files it was made from, their key)."""
    path = _stamp_path(root)
    if path is None:
        return
    digests = {output: _file_digest(root / output) for output in outputs}
    made = {
        key: (file, files, digest, digests.get(file) or _file_digest(root / file))
        for key, (file, files, digest) in (crds or {}).items()
    }
    body = (_FORMAT, inputs, digests, tuple(notes), next_step, made)  # marshal: no json (and re) to import
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        temporary.write_bytes(marshal.dumps(body))
        os.replace(temporary, path)
    except OSError:
        temporary.unlink(missing_ok=True)


def forget(root: Path) -> None:
    """Drop the stamp of `root` (a run that failed or changed files outside what the stamp knows)."""
    path = _stamp_path(root)
    if path is not None:
        path.unlink(missing_ok=True)


def _stamp_path(root: Path) -> Path | None:
    directory = cache_directory()
    if directory is None:
        return None
    folder = directory / "manifests"
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
    except OSError:
        return None
    key = blake2b(str(root.resolve()).encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
    return folder / f"{key}.stamp"


def file_digest(path: Path) -> str:
    """The content digest of a file, or "missing"."""
    return _file_digest(path)


def _file_digest(path: Path) -> str:
    """The content digest of a file, or "missing" (a deleted output, a header file not there)."""
    try:
        return blake2b(path.read_bytes(), digest_size=20).hexdigest()
    except FileNotFoundError:
        return "missing"


def _project_sources(root: Path, package_path: str) -> Iterator[Path]:
    """The Python files a run imports or scans: the package's, and those at the project root."""
    yield from sorted(p for p in root.glob("*.py") if p.is_file())
    yield from _tree_files(root / package_path, suffixes=(".py",))


def _tree_files(top: Path, suffixes: tuple[str, ...]) -> Iterator[Path]:
    found: list[Path] = []
    for folder, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS and not d.startswith("."))
        found.extend(Path(folder, name) for name in files if name.endswith(suffixes))
    yield from sorted(found)


def _header_files(root: Path, project: bytes, flag: str | None) -> list[Path]:
    """The header file a run reads: the flag's, else PROJECT's `manifests.headerFile` (read as text here; a
    PROJECT the pattern misreads only costs a full run, as any change of PROJECT does)."""
    written = flag if flag is not None else _top_level_value(project, b"headerFile:", indented=True)
    if not written:
        return []
    path = Path(written)
    return [path if path.is_absolute() else root / path]


def _top_level_value(text: bytes, key: bytes, *, indented: bool) -> str | None:
    """The scalar after `key` on a line of PROJECT (a regular expression would cost more to compile than this
    whole check takes); a form this misreads only costs a full run."""
    for line in text.splitlines():
        stripped = line.lstrip(b" \t")
        if (len(stripped) < len(line)) == indented and stripped.startswith(key):
            return stripped[len(key) :].strip().strip(b"\"'").decode("utf-8", "replace") or None
    return None


def _code_stamps(root: Path) -> Iterator[tuple[str, int, int]]:
    """pyop's own code (an upgrade or an edit of a checkout) and the installed packages, by stat alone (the
    project itself, on `sys.path` while it is imported, is read file by file instead: a run changes its
    folder's modification time)."""
    scaffold = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    runtime_api = _runtime_api_folder()
    for folder in [scaffold, runtime_api] if runtime_api else [scaffold]:
        # The generated built-in models (pyop/api/k8s) change only with pyop's version; the folder's own
        # modification time stands for them.
        yield from _python_file_stamps(folder, skipped=frozenset({"k8s"}))
    project = os.path.realpath(root)
    for entry in sys.path:
        if os.path.realpath(entry or ".") == project:
            continue
        try:
            info = os.stat(entry or ".")
        except OSError:
            continue
        yield (entry, info.st_mtime_ns, 0)


def _python_file_stamps(top: str, skipped: frozenset[str]) -> Iterator[tuple[str, int, int]]:
    stack = [top]
    while stack:
        folder = stack.pop()
        with os.scandir(folder) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                if entry.is_dir():
                    if entry.name in skipped:
                        info = entry.stat()
                        yield (entry.path, info.st_mtime_ns, 0)
                    elif entry.name not in _SKIPPED_DIRS and not entry.name.startswith("."):
                        stack.append(entry.path)
                elif entry.name.endswith(".py"):
                    info = entry.stat()
                    yield (entry.path, info.st_mtime_ns, info.st_size)


def _runtime_api_folder() -> str | None:
    """pyop.api's folder, found without importing pyop (its import is what a no-op run avoids)."""
    import importlib.util

    spec = importlib.util.find_spec("pyop")
    locations = list(spec.submodule_search_locations or []) if spec else []
    return os.path.join(os.path.realpath(locations[0]), "api") if locations else None
