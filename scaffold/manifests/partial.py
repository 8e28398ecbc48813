"""`make manifests` after a change to some kinds: the CRDs of the others are kept, not built again.

A full run records, for every CRD, the project files it was made from: the modules of its kinds and of every
model class and alias its schemas came from (`SchemaBuilder.recording`), and every kind module any of those
mentions by name (a constant imported from another kind's module feeds a bound without being a class). All other
project files (shared types, group info, controllers) and everything else a run reads (PROJECT, options, header,
pyop's code, the installed packages) form the *base*, which every CRD depends on. The key of a CRD is the digest
of the base, of its kinds' modules and of the files it was made from.

The next run imports the project as always (the kinds must be known), computes each CRD's key from the files the
last run recorded, and keeps a CRD whose key and file are both as recorded: it is not built, checked or
serialised again, and its file is left as it is, which is what a full run would write, since nothing it was made
of changed. A changed kind module changes its own CRD's key (and the keys of the CRDs made from it); a change of
a shared module changes the base, so every CRD is built. With --check or --check-compat every CRD is needed in
memory, so nothing is kept.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pyop_scaffold.manifests.incremental import RunOptions, Stamp, base_digest, file_digest

try:  # as in `incremental`: BLAKE2 without hashlib's OpenSSL import
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - an interpreter built without it
    from hashlib import blake2b

_WORD = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Kept:
    """A CRD the last run wrote and this one keeps: its "group/kind", file and record."""

    key: str
    file: str
    files: tuple[str, ...]
    digest: str


class Planner:
    """The keys of a project's CRDs for one run."""

    def __init__(self, root: Path, options: RunOptions, kind_modules: dict[str, str]) -> None:
        """`kind_modules` maps the module name of every kind to its project-relative file."""
        self.root = root
        self._kind_files = kind_modules
        self._basenames = {name.rsplit(".", 1)[-1].encode(): name for name in kind_modules}
        self._digests: dict[str, str] = {}
        self._mentions: dict[str, frozenset[str]] = {}
        self.base = base_digest(root, options, frozenset(kind_modules.values()))

    def key(self, own: Iterable[str], files: Iterable[str]) -> str | None:
        """The key of a CRD whose kinds live in the files `own` and which was made from `files`."""
        if self.base is None:
            return None
        digest = blake2b(digest_size=20)
        digest.update(self.base.encode())
        for part in ("own", *sorted(set(own)), "made of", *sorted(set(files))):
            digest.update(b"\0" + part.encode("utf-8", "surrogatepass") + b"=" + self._digest(part).encode())
        return digest.hexdigest()

    def made_of(self, modules: Iterable[str]) -> tuple[str, ...]:
        """The project files of `modules` (module names) and of every kind module they mention, transitively."""
        pending = [name for name in modules if name in self._kind_files or self._project_file(name) is not None]
        seen: set[str] = set()
        files: set[str] = set()
        while pending:
            name = pending.pop()
            if name in seen:
                continue
            seen.add(name)
            file = self._kind_files.get(name) or self._project_file(name)
            if file is None:
                continue
            files.add(file)
            if name in self._kind_files:
                pending.extend(self._mentioned_kind_modules(name, file))
        return tuple(sorted(files))

    def _mentioned_kind_modules(self, name: str, file: str) -> frozenset[str]:
        found = self._mentions.get(name)
        if found is None:
            try:
                words = set(_WORD.findall((self.root / file).read_bytes()))
            except OSError:
                words = set()
            found = frozenset(self._basenames[word] for word in words & self._basenames.keys())
            self._mentions[name] = found
        return found

    def _project_file(self, module_name: str) -> str | None:
        module = sys.modules.get(module_name)
        path = getattr(module, "__file__", None)
        if not path:
            return None
        try:
            return Path(path).resolve().relative_to(self.root).as_posix()
        except ValueError:
            return None  # not the project's: pyop's and the installed packages' code are in the base

    def _digest(self, part: str) -> str:
        if part in ("own", "made of"):
            return ""
        found = self._digests.get(part)
        if found is None:
            found = self._digests[part] = file_digest(self.root / part)
        return found


def kept_crds(planner: Planner, stamp: Stamp | None, own_files: dict[str, tuple[str, ...]]) -> dict[str, Kept]:
    """The CRDs (by "group/kind", with the files of their kinds in `own_files`) that the last run wrote from
    inputs that are all unchanged, and whose files are as it wrote them."""
    kept: dict[str, Kept] = {}
    if stamp is None:
        return kept
    for name, own in own_files.items():
        record = stamp.crds.get(name)
        if record is None:
            continue
        file, files, key, output = record
        if planner.key(own, files) == key and file_digest(planner.root / file) == output:
            kept[name] = Kept(name, file, files, key)
    return kept
