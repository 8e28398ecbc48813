"""Is a ``pattern`` a valid Go RE2 regular expression?

The API server compiles every ``pattern`` with Go's ``regexp``; RE2 has no lookaround and no
backreferences, which Python's ``re`` accepts. ``google-re2`` (installed with cel-python) is
RE2 itself, so it answers the question directly; without it, ``re`` plus a scan for the
constructs RE2 lacks is the fallback.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Final

_re2: Any = None
try:
    import re2

    _re2 = re2
except ImportError:  # pragma: no cover - google-re2 ships with cel-python
    pass

_NOT_IN_RE2: Final = re.compile(r"\(\?<?[=!]|\\[1-9]|\(\?P=|\(\?[>#]")


@lru_cache(maxsize=1024)
def go_regexp_error(pattern: str) -> str | None:
    """None if Go would compile ``pattern``, else a short reason."""
    if _re2 is not None:
        options = _re2.Options()
        options.log_errors = False  # re2 would otherwise print every failure to stderr
        try:
            _re2.compile(pattern, options)
        except Exception as error:  # noqa: BLE001 - re2 raises its own error type
            reason = error.args[0] if error.args else error
            text = reason.decode(errors="replace") if isinstance(reason, bytes) else str(reason)
            return f"error parsing regexp: {text}"
        return None
    if _NOT_IN_RE2.search(pattern):
        return "error parsing regexp: invalid or unsupported Perl syntax"
    try:
        re.compile(pattern)
    except re.error as error:
        return f"error parsing regexp: {error}"
    return None
