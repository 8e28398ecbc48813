"""celpy's CEL parser, loaded from Lark's on-disk cache of the analysed grammar instead of analysed anew.

celpy builds one Lark LALR parser per process, on first use; analysing its grammar is most of a quarter second,
which every `pyop make manifests` with a CEL rule would pay. Lark can cache the analysed parser in a file and
checks the file against a digest of the grammar, the parser options and the Lark and Python versions, rebuilding
it when anything changed, so a stale or foreign file is never used. celpy passes its own options; this module only
adds `cache=` to them, in the user's cache directory (`$XDG_CACHE_HOME/pyop`, else `~/.cache/pyop`), which must
be the user's own and closed to others' writes because the file is a pickle (POSIX only). Where no such directory
can be had, celpy builds its parser as usual.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pyop_scaffold.cache import cache_directory

_CACHE_FILE_NAME = "cel-grammar.lark"
_tried = False


def load_cel_parser() -> None:
    """Give celpy its shared parser from the cache (built and cached on a miss); once per process, cheap after."""
    global _tried
    if _tried:
        return
    _tried = True
    try:
        import celpy
        from celpy import celparser
    except ImportError:  # no CEL support installed: nothing to load
        return
    if celparser.CELParser.CEL_PARSER is not None:
        return
    cache_file = _cache_file()
    if cache_file is None:
        return
    parser_module: Any = celparser
    build = parser_module.Lark

    def build_with_cache(*args: Any, **kwargs: Any) -> Any:
        return build(*args, cache=str(cache_file), **kwargs)

    parser_module.Lark = build_with_cache  # for this one call: celpy's options, plus the cache
    try:
        # The parser celpy.Environment() makes first, with the tree class of its default runner.
        celparser.CELParser(tree_class=celpy.InterpretedRunner.tree_node_class)
    except Exception:  # noqa: BLE001 - any trouble with the cache: let celpy build its parser itself
        celparser.CELParser.CEL_PARSER = None
    finally:
        parser_module.Lark = build


def _cache_file() -> Path | None:
    directory = cache_directory()
    return None if directory is None else directory / _CACHE_FILE_NAME
