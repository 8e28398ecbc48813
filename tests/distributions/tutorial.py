"""A Markdown tutorial as a shell script: its commands are the test's commands, never copies of them.

Every fenced `sh` block runs, in order, in one bash session (so `cd` and `. .venv/bin/activate` carry on), each
preceded by an echo naming the block's line, and the script stops at the first failing command. An HTML comment
right above a block says what else to do with it:

- `<!-- tutorial: skip (reason) -->`: do not run it (it needs something CI lacks: say what).
- `<!-- tutorial: write PATH -->`: the block is the whole content of PATH.
- `<!-- tutorial: append PATH -->`: the block goes at the end of PATH (a long file shown part by part).
- `<!-- tutorial: replace class NAME in PATH -->`: the block replaces class NAME (its `class` line to its last
  line; comments above it stay) in the Python file PATH.
- `<!-- tutorial: replace line "PREFIX" in PATH -->`: the block replaces the one line of PATH starting with PREFIX.

Blocks of other languages without a directive are prose examples and are not run.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
DIRECTIVE = re.compile(r"<!--\s*tutorial:\s*(.*?)\s*-->\s*\Z", re.DOTALL)
REPLACE = re.compile(r"replace class (\w+) in (\S+)\Z")
REPLACE_LINE = re.compile(r'replace line "([^"]+)" in (\S+)\Z')
WRITE = re.compile(r"write (\S+)\Z")
APPEND = re.compile(r"append (\S+)\Z")

# Run by the script's python3 with arguments FILE CLASS BLOCK-FILE: swaps a class for the block's text.
REPLACE_CLASS_PROGRAM = """
import ast, sys
path, name, block = sys.argv[1:4]
source = open(path, encoding="utf-8").read()
lines = source.splitlines(keepends=True)
(node,) = [n for n in ast.parse(source).body if isinstance(n, ast.ClassDef) and n.name == name]
start = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
replacement = open(block, encoding="utf-8").read()
open(path, "w", encoding="utf-8").write("".join(lines[:start]) + replacement + "".join(lines[node.end_lineno:]))
"""

# Arguments FILE PREFIX BLOCK-FILE: swaps the one line starting with PREFIX for the block's text.
REPLACE_LINE_PROGRAM = """
import sys
path, prefix, block = sys.argv[1:4]
lines = open(path, encoding="utf-8").read().splitlines(keepends=True)
(index,) = [i for i, line in enumerate(lines) if line.startswith(prefix)]
lines[index] = open(block, encoding="utf-8").read()
open(path, "w", encoding="utf-8").write("".join(lines))
"""


@dataclass(frozen=True)
class Block:
    line: int  # where the block's fence opens, 1-based
    language: str
    text: str
    directive: str | None


def blocks(markdown: str) -> list[Block]:
    found = []
    for match in FENCE.finditer(markdown):
        before = markdown[: match.start()].rstrip("\n")
        comment = DIRECTIVE.search(before[before.rfind("\n") + 1 :]) if before else None
        line = markdown.count("\n", 0, match.start()) + 1
        found.append(Block(line, match.group(1), match.group(2), comment.group(1) if comment else None))
    return found


def script(markdown: str, name: str) -> str:
    """The bash script that runs tutorial `markdown` (named `name` in its progress lines)."""
    parts = [
        "set -euo pipefail",
        f"PYOP_REPLACE_CLASS={shlex.quote(REPLACE_CLASS_PROGRAM)}",
        f"PYOP_REPLACE_LINE={shlex.quote(REPLACE_LINE_PROGRAM)}",
    ]
    for block in blocks(markdown):
        where = f"{name}:{block.line}"
        directive = block.directive or ""
        if directive.startswith("skip"):
            continue
        if replace := REPLACE.match(directive):
            cls, path = replace.groups()
            parts += _edit(f"{where}: replace class {cls} in {path}", "PYOP_REPLACE_CLASS", path, cls, block.text)
        elif replace_line := REPLACE_LINE.match(directive):
            prefix, path = replace_line.groups()
            label = f"{where}: replace the line starting {prefix!r} in {path}"
            parts += _edit(label, "PYOP_REPLACE_LINE", path, prefix, block.text)
        elif write := WRITE.match(directive):
            (path,) = write.groups()
            parts += [
                f"echo {shlex.quote(f'== {where}: write {path}')}",
                f"cat > {shlex.quote(path)} <<'PYOP_TUTORIAL_EOF'\n{block.text}PYOP_TUTORIAL_EOF",
            ]
        elif append := APPEND.match(directive):
            (path,) = append.groups()
            parts += [
                f"echo {shlex.quote(f'== {where}: append to {path}')}",
                f"cat >> {shlex.quote(path)} <<'PYOP_TUTORIAL_EOF'\n\n\n{block.text}PYOP_TUTORIAL_EOF",
            ]
        elif directive:
            raise ValueError(f"{where}: unknown tutorial directive {directive!r}")
        elif block.language == "sh":
            parts += [f"echo {shlex.quote(f'== {where}')}", block.text.rstrip("\n")]
    return "\n".join(parts) + "\n"


def _edit(label: str, program: str, path: str, what: str, text: str) -> list[str]:
    """Shell lines that run edit `program` (a variable holding one of the programs above) on `path`."""
    return [
        f"echo {shlex.quote(f'== {label}')}",
        "pyop_block=$(mktemp)",
        f"cat > \"$pyop_block\" <<'PYOP_TUTORIAL_EOF'\n{text}PYOP_TUTORIAL_EOF",
        f'python3 -c "${program}" {shlex.quote(path)} {shlex.quote(what)} "$pyop_block"',
        'rm -f "$pyop_block"',
    ]


def script_for(path: Path) -> str:
    return script(path.read_text(encoding="utf-8"), path.name)
