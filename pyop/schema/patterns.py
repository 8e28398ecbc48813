"""Compiled-pattern cache.

The test API server validates every write, so compiling the same ``pattern`` on each call
would dominate the cost; patterns are compiled once per distinct string.
"""

from __future__ import annotations

import re
from functools import lru_cache


@lru_cache(maxsize=4096)
def compiled(pattern: str) -> re.Pattern[str] | None:
    """The compiled pattern, or None when Python's ``re`` cannot compile it.

    Kubernetes uses Go's RE2; the common subset (classes, anchors, quantifiers, groups) behaves
    the same in ``re``. A pattern ``re`` rejects is skipped rather than failing every write.
    """
    try:
        return re.compile(pattern)
    except re.error:
        return None


def matches(pattern: str, value: str) -> bool:
    """Unanchored search, as Go's ``MatchString`` in kube-openapi."""
    regex = compiled(pattern)
    return True if regex is None else regex.search(value) is not None
