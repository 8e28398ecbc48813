"""The docs and markers read from a module's source, kept beside its bytecode: an unchanged module is not read again.

Reading a module's docs means parsing its syntax tree and every marker in its comments, a millisecond a module;
`make manifests` reads every API module on every run. Python keeps compiled modules in `__pycache__` for the same
reason, and this cache follows its rules: the file sits next to the module's `.pyc` (under `PYTHONPYCACHEPREFIX`
if set) and nothing is written when Python writes no bytecode (`PYTHONDONTWRITEBYTECODE`, `-B`). An entry is used
only for the same source text (a digest of it, so an edit within a file system's clock tick is seen too), the same
displayed path, the same Python and the same marker code (the modification times and sizes of the modules that read
and define markers), so any edit to either is a miss. Only a successful read is stored: a module whose markers are
wrong is read, and refused, every time.

Entries are marshalled tuples; markers refer to the registry by name and keep their identities (a marker shared by
a block and `all_markers` is one object after loading too). A value marshal cannot hold is simply not cached.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import marshal
import os
import sys
from pathlib import Path
from typing import Any

from pyop_scaffold.manifests.errors import SourceLocation
from pyop_scaffold.manifests.markers.comments import DocBlock, ModuleDocs
from pyop_scaffold.manifests.markers.parser import ParsedMarker
from pyop_scaffold.manifests.markers.registry import REGISTRY

_FORMAT = 2
_SUFFIX = ".pyop-docs"


def load(path: str, source: str, display: str) -> ModuleDocs | None:
    """The cached docs of the module at `path` if the cache holds them for exactly this source, else None."""
    try:
        data = Path(_cache_path(path)).read_bytes()
        header, body = marshal.loads(data)
        if header != _header(source, display):
            return None
    except (OSError, ValueError, EOFError, TypeError, NotImplementedError):
        return None
    try:
        return _decode(body)
    except (KeyError, ValueError, TypeError, IndexError):
        return None  # written by something else: read the module instead


def store(path: str, source: str, display: str, docs: ModuleDocs) -> None:
    """Keep `docs` for the next run, as Python keeps bytecode; any trouble just means no cache."""
    if sys.dont_write_bytecode:
        return
    try:
        data = marshal.dumps((_header(source, display), _encode(docs)))
        target = _cache_path(path)
    except (ValueError, OSError, NotImplementedError):  # a value marshal cannot hold, no stat, no cache tag
        return
    temporary = f"{target}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(temporary, "wb") as file:
            file.write(data)
        os.replace(temporary, target)  # readers see the old entry or the new one, never half of one
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)


def _cache_path(path: str) -> str:
    bytecode = importlib.util.cache_from_source(path)
    return bytecode.removesuffix(".pyc") + _SUFFIX


def _header(source: str, display: str) -> tuple[Any, ...]:
    digest = hashlib.blake2b(source.encode("utf-8", "surrogatepass"), digest_size=20).digest()
    return (_FORMAT, digest, display, _code_version())


@functools.cache
def _code_version() -> tuple[Any, ...]:
    """Python's version and the state of the code that reads and defines markers: an upgrade or an edit misses."""
    package = Path(__file__).parent
    stamps: list[Any] = [sys.version_info[:2]]
    for source in sorted(package.glob("*.py")) + [package.parent / "errors.py"]:
        info = source.stat()
        stamps.append((source.name, info.st_mtime_ns, info.st_size))
    return tuple(stamps)


# -- encoding -----------------------------------------------------------------------------------------------------


def _encode(docs: ModuleDocs) -> tuple[Any, ...]:
    markers: list[tuple[Any, ...]] = []
    numbers: dict[int, int] = {}  # id(marker) -> its index in `markers`

    def marker_number(marker: ParsedMarker) -> int:
        number = numbers.get(id(marker))
        if number is None:
            number = numbers[id(marker)] = len(markers)
            location = marker.location
            markers.append(
                (marker.definition.name, marker.value, location.file, location.line, marker.items, marker.text)
            )
        return number

    def block(doc: DocBlock) -> tuple[Any, ...]:
        return (tuple(marker_number(m) for m in doc.markers), doc.description, doc.line)

    all_markers = tuple(marker_number(m) for m in docs.all_markers)
    encoded = (
        docs.path,
        block(docs.module),
        tuple((name, block(doc)) for name, doc in docs.classes.items()),
        tuple((key, block(doc)) for key, doc in docs.fields.items()),
        tuple((name, block(doc)) for name, doc in docs.aliases.items()),
        all_markers,
        tuple(docs.renames.items()),
        tuple(docs.annotations.items()),
    )
    for name, *_ in markers:
        if REGISTRY.get(name) is None:
            raise ValueError(f"marker {name} is not in the registry")
    return (tuple(markers), encoded)


def _decode(body: tuple[Any, ...]) -> ModuleDocs:
    raw_markers, (path, module, classes, fields, aliases, all_markers, renames, annotations) = body
    markers = [
        ParsedMarker(REGISTRY[name], value, SourceLocation(file, line), items=items, text=text)
        for name, value, file, line, items, text in raw_markers
    ]

    def block(encoded: tuple[Any, ...]) -> DocBlock:
        numbers, description, line = encoded
        return DocBlock(tuple(markers[n] for n in numbers), description, line)

    docs = ModuleDocs(path)
    docs.module = block(module)
    docs.classes = {name: block(doc) for name, doc in classes}
    docs.fields = {tuple(key): block(doc) for key, doc in fields}
    docs.aliases = {name: block(doc) for name, doc in aliases}
    docs.all_markers = tuple(markers[n] for n in all_markers)
    docs.renames = dict(renames)
    docs.annotations = {tuple(key): source for key, source in annotations}
    return docs
