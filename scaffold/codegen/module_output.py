"""The last step every single-module generator here shares: write the module, or with `--check` compare it.

`--check` writes nothing and exits 1 naming the module when the committed text differs from what the generator
makes now (the tests run it so a stale table fails); otherwise the module is written and named.
"""

from __future__ import annotations

import sys
from pathlib import Path


def write_or_check(target: Path, text: str, *, check: bool) -> int:
    """The command's exit code: 0 written or current, 1 stale under ``check``."""
    if check:
        current = target.read_text(encoding="utf-8") if target.is_file() else None
        if current != text:
            print(f"stale: {target}", file=sys.stderr)
            return 1
        return 0
    target.write_text(text, encoding="utf-8")
    print(f"wrote {target}")
    return 0
