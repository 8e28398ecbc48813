"""Whether output goes to a terminal that shows styles: one test for the full CLI and its no-op shortcut."""

from __future__ import annotations

import os
from typing import TextIO


def styled_output(stream: TextIO) -> bool:
    """Whether rich would style text written to `stream`: its terminal test (TTY_COMPATIBLE, then FORCE_COLOR,
    then isatty)."""
    tty_compatible = os.environ.get("TTY_COMPATIBLE", "")
    if tty_compatible in ("0", "1"):
        return tty_compatible == "1"
    force_color = os.environ.get("FORCE_COLOR")
    if force_color is not None:
        return force_color != ""
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False
