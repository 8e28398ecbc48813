"""What the CEL compile checks need from parsing an expression, kept on disk so unchanged rules skip cel-python.

Importing cel-python (with lark and pendulum) and loading its parser costs a tenth of a second, which every
`pyop make manifests` of a project with a single rule paid. The checks read little from a parse: the syntax error,
the free identifiers with their positions, a misused `has()`, the `self.`/`oldSelf.` field chains with the
position of each chain's last name, and the reduced tree the type check and cost estimate walk. That summary
is plain data, stored as JSON (never code) in the user's cache directory beside the grammar cache and under the
same ownership rules, and keyed by the expression and by what computes it: the state (modification time, size)
of cel-python's and lark's parsing files and of the modules that rewrite and summarise. Anything else (an
unreadable, foreign or stale file) means parsing as before.
"""

from __future__ import annotations

import importlib.util
import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from pyop_scaffold.cache import cache_directory

_CACHE_FILE_NAME: Final = "cel-summaries.json"
_FORMAT: Final = 2
_MAX_ENTRIES: Final = 4096


@dataclass(frozen=True)
class Summary:
    """One expression's parse, as the compile checks read it. Positions are (line, column) as they report them."""

    syntax_error: str | None  # the parser's message, or None when the expression parses
    parsed: bool  # a tree to check (False: no syntax error, but nothing to check either)
    free_identifiers: tuple[tuple[str, int, int], ...]  # names not bound by a macro, in tree order
    bad_has: str | None  # the error of a has() whose argument is no field selection
    field_chains: tuple[tuple[tuple[str, ...], int, int], ...]  # self.a.b / oldSelf.a chains, top-down
    tree: list[Any] | None = None  # the reduced tree the type check and cost estimate walk (`cel_ast`)

    def to_json(self) -> list[Any]:
        return [
            self.syntax_error,
            self.parsed,
            [list(item) for item in self.free_identifiers],
            self.bad_has,
            [[list(names), line, column] for names, line, column in self.field_chains],
            self.tree,
        ]

    @classmethod
    def from_json(cls, data: Any) -> Summary:
        """Raises (TypeError, ValueError) on anything but what `to_json` writes."""
        syntax_error, parsed, free, bad_has, chains, tree = data
        if not (
            _optional_str(syntax_error)
            and isinstance(parsed, bool)
            and _optional_str(bad_has)
            and isinstance(free, list)
            and isinstance(chains, list)
            and (tree is None or isinstance(tree, list))
        ):
            raise ValueError("not a summary")
        return cls(
            syntax_error,
            parsed,
            tuple((_str(name), _int(line), _int(column)) for name, line, column in free),
            bad_has,
            tuple((tuple(_str(name) for name in names), _int(line), _int(column)) for names, line, column in chains),
            tree,
        )


class SummaryCache:
    """Summaries by expression: in memory for the process, on disk across runs."""

    def __init__(self, path: Path | None, code_state: list[Any]) -> None:
        self._path = path
        self._key = [_FORMAT, code_state]
        self._entries: dict[str, Summary] | None = None
        self._stored: dict[str, Any] = {}

    def get(self, expression: str, summarize: Callable[[str], Summary]) -> Summary:
        """The summary of `expression`, from `summarize` (then stored) when not known yet."""
        entries = self._load()
        found = entries.get(expression)
        if found is None:
            found = entries[expression] = summarize(expression)
            self._store(expression, found)
        return found

    def _load(self) -> dict[str, Summary]:
        if self._entries is not None:
            return self._entries
        self._entries = {}
        if self._path is None:
            return self._entries
        try:
            data = json.loads(self._path.read_text(encoding="utf-8"))
            if not isinstance(data, dict) or data.get("key") != self._key or not isinstance(data.get("entries"), dict):
                return self._entries
            for expression, item in data["entries"].items():
                self._entries[expression] = Summary.from_json(item)
            self._stored = dict(data["entries"])
        except (OSError, ValueError, TypeError):  # no file yet, or not ours: parse as before
            self._entries = {}
            self._stored = {}
        return self._entries

    def _store(self, expression: str, summary: Summary) -> None:
        if self._path is None:
            return
        if len(self._stored) >= _MAX_ENTRIES:
            self._stored.clear()
        self._stored[expression] = summary.to_json()
        try:
            descriptor, temporary = tempfile.mkstemp(dir=self._path.parent, prefix=".cel-summaries-")
            with os.fdopen(descriptor, "w", encoding="utf-8") as stream:
                json.dump({"key": self._key, "entries": self._stored}, stream)
            os.replace(temporary, self._path)
        except OSError:  # a read-only or full disk: no cache, same results
            return


def code_state(own_modules: list[str]) -> list[Any] | None:
    """What a summary depends on: cel-python's and lark's parsing files and `own_modules` (paths), as
    [folder/name, mtime_ns, size] each (no full paths: installs of the same files share summaries); None when
    cel-python is not installed."""
    files: list[str] = list(own_modules)
    for module, names in (("celpy", ("__init__.py", "celparser.py", "cel.lark")), ("lark", ("__init__.py",))):
        spec = importlib.util.find_spec(module)
        if spec is None or spec.origin is None:
            return None
        files.extend(str(Path(spec.origin).parent / name) for name in names)
    state: list[Any] = []
    try:
        for file in files:
            info = os.stat(file)
            path = Path(file)
            state.append([f"{path.parent.name}/{path.name}", info.st_mtime_ns, info.st_size])
    except OSError:
        return None
    return state


def cache_file() -> Path | None:
    directory = cache_directory()
    return None if directory is None else directory / _CACHE_FILE_NAME


def _optional_str(value: Any) -> bool:
    return value is None or isinstance(value, str)


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError("not a name")
    return value


def _int(value: Any) -> int:
    if type(value) is not int:
        raise TypeError("not a position")
    return value
