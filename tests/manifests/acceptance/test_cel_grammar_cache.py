"""celpy's parser loaded from Lark's grammar cache parses exactly like the one celpy builds itself."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from celpy import celparser

from pyop_scaffold.manifests.acceptance import cel_grammar

EXPRESSIONS = [
    "self.minReplicas <= self.replicas",
    "self.all(x, x.name.startsWith('a')) && size(self) < 10",
    "has(self.spec) ? self.spec.replicas : 0",
    "self.map(k, self[k] * 2.5).exists(v, v > 3u)",
    "oldSelf == self || !has(oldSelf.x)",
    "'multi\\nline' + string(1) in ['a', \"b\"]",
    "self.enabled == true || false",  # true/false become literals through celpy's lexer callback
    "has(self.x) ? true : null",
]
BROKEN = ["self.", "self.a <<= 1", "(self"]


@pytest.fixture
def fresh_parser(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """No shared parser yet, the module not yet tried, and a private cache home under tmp_path."""
    saved = celparser.CELParser.CEL_PARSER
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(cel_grammar, "_tried", False)
    celparser.CELParser.CEL_PARSER = None
    yield tmp_path / "cache" / "pyop" / "cel-grammar.lark"
    celparser.CELParser.CEL_PARSER = saved


def _parses() -> list[str]:
    parser = celparser.CELParser()
    results = [parser.parse(text).pretty() for text in EXPRESSIONS]
    for text in BROKEN:
        with pytest.raises(celparser.CELParseError) as caught:
            parser.parse(text)
        results.append(str(caught.value))
    return results


def test_cached_parser_parses_like_celpys_own(fresh_parser: Path) -> None:
    own = _parses()  # celpy builds its parser as usual

    celparser.CELParser.CEL_PARSER = None
    cel_grammar.load_cel_parser()  # a miss: builds and writes the cache
    assert fresh_parser.is_file()
    assert celparser.CELParser.CEL_PARSER is not None
    assert _parses() == own

    celparser.CELParser.CEL_PARSER = None
    cel_grammar._tried = False
    cel_grammar.load_cel_parser()  # a hit: a new process would load the file
    assert _parses() == own


def test_a_damaged_cache_file_is_rebuilt(fresh_parser: Path) -> None:
    fresh_parser.parent.mkdir(parents=True, mode=0o700)
    fresh_parser.write_bytes(b"not a cache\n")
    cel_grammar.load_cel_parser()
    assert celparser.CELParser.CEL_PARSER is not None
    assert fresh_parser.read_bytes() != b"not a cache\n"
    assert celparser.CELParser().parse(EXPRESSIONS[0]) is not None


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="ownership checks are POSIX")
def test_a_cache_directory_others_can_write_is_not_used(fresh_parser: Path) -> None:
    fresh_parser.parent.mkdir(parents=True)
    fresh_parser.parent.chmod(0o777)
    cel_grammar.load_cel_parser()
    assert celparser.CELParser.CEL_PARSER is None  # left for celpy to build as usual
    assert not fresh_parser.exists()
