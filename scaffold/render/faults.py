"""Fault injection for the crash tests: every file-system step of a project write passes through `step`.

The journal (`pyop_scaffold.render.journal`) calls `step` right before each change it makes on disk (a file
written, linked, renamed or removed, a folder made or removed). With `PYOP_CRASH_AT=N` in the environment, the
N-th step of the process sends the process a signal instead of going on: `PYOP_CRASH_SIGNAL=KILL` (the default)
stands for a power cut, an OOM kill or `kill -9`; `INT` is a Ctrl-C arriving at that very moment. The crash tests
and bench/crash_consistency.py count a command's steps by raising N until the command completes untouched.
`PYOP_CRASH_AT=<label>` signals at the first step of that label (`rename PROJECT into place`), and `<label>+K` at
the K-th step after it, so a test can aim at one phase without counting the steps before it.

Unset (as in normal use), a step costs one environment look-up.
"""

from __future__ import annotations

import os
import signal

CRASH_AT_ENV = "PYOP_CRASH_AT"
CRASH_SIGNAL_ENV = "PYOP_CRASH_SIGNAL"

_SIGNALS = {"KILL": signal.SIGKILL, "INT": signal.SIGINT, "TERM": signal.SIGTERM}
_count = 0
_label_seen_at: int | None = None


def step(label: str) -> None:
    """Count one file-system step; at the step named by PYOP_CRASH_AT, signal this process (see the module doc)."""
    target = os.environ.get(CRASH_AT_ENV)
    if not target:
        return
    global _count, _label_seen_at
    _count += 1
    if target.isdigit():
        hit = _count == int(target)
    else:
        name, plus, offset = target.rpartition("+")
        if not plus or not offset.isdigit():
            name, offset = target, "0"
        if _label_seen_at is None and label == name:
            _label_seen_at = _count
        hit = _label_seen_at is not None and _count == _label_seen_at + int(offset)
    if not hit:
        return
    signal_name = os.environ.get(CRASH_SIGNAL_ENV, "KILL").upper()
    os.write(2, f"pyop: {CRASH_AT_ENV}={target}: SIG{signal_name} before {label}\n".encode())
    os.kill(os.getpid(), _SIGNALS[signal_name])


def reset() -> None:
    """Start counting from zero again (a test runs several commands in one forked process)."""
    global _count, _label_seen_at
    _count = 0
    _label_seen_at = None
