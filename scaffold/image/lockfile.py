"""The text of requirements.lock: pins of every platform merged, sorted, and sealed with a digest.

The file is a pip requirements file (`pip install --require-hashes --no-deps -r requirements.lock`), one entry per
distribution with every file hash the image's platforms use. A distribution that resolves differently on some
platform gets one entry per variant, each with a `platform_machine` marker. The header's digest covers the
entries, so a hand-edited lock is recognised and kept (the command wants --force to replace it).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pyop_scaffold.image.resolve import MACHINES, Pin

DIGEST_PREFIX = "# pyop-lock-sha256: "


@dataclass(frozen=True)
class LockedEntry:
    """One requirement of an existing lock: `name==version` or a path, and the machines it is limited to."""

    requirement: str
    name: str | None  # None for a path entry
    machines: frozenset[str] | None  # None: every platform


def render_lock(pins: Mapping[str, Sequence[Pin]], *, header_lines: Sequence[str]) -> str:
    """The lock for `pins` (per Docker platform); byte-identical for the same pins."""
    platforms = sorted(pins)
    names = sorted({pin.name for platform_pins in pins.values() for pin in platform_pins})
    by_platform = {platform: {pin.name: pin for pin in pins[platform]} for platform in platforms}
    entries: list[str] = []
    for name in names:
        variants: dict[tuple[str, str | None], list[str]] = {}
        for platform in platforms:
            pin = by_platform[platform].get(name)
            if pin is not None:
                variants.setdefault((pin.version, pin.path), []).append(platform)
        for (version, path), where in sorted(variants.items(), key=lambda item: (item[0][0], item[0][1] or "")):
            hashes = sorted({by_platform[p][name].sha256 for p in where})
            requirement = path if path is not None else f"{name}=={version}"
            if len(where) != len(platforms):
                requirement += " ; " + " or ".join(f'platform_machine == "{MACHINES[p]}"' for p in where)
            entries.append(" \\\n".join([requirement, *(f"    --hash=sha256:{h}" for h in hashes)]) + "\n")
    body = "".join(entries)
    header = "".join(f"# {line}\n" if line else "#\n" for line in header_lines)
    return f"{header}{DIGEST_PREFIX}{digest(body)}\n{body}"


def digest(body: str) -> str:
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def is_hand_edited(text: str) -> bool:
    """True when the entries no longer match the digest the command wrote (or there is no digest at all)."""
    lines = text.splitlines(keepends=True)
    for index, line in enumerate(lines):
        if line.startswith(DIGEST_PREFIX):
            return line.removeprefix(DIGEST_PREFIX).strip() != digest("".join(lines[index + 1 :]))
    return True


def locked_entries(text: str) -> list[LockedEntry]:
    """The requirements of a lock's entries (hashes and comments dropped), for resolving again with its pins."""
    joined = re.sub(r"\\\n", " ", text)
    entries = []
    for line in joined.splitlines():
        line = line.split(" --hash", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        requirement, _, marker = (part.strip() for part in line.partition(";"))
        machines = frozenset(re.findall(r'platform_machine == "([^"]+)"', marker)) if marker else None
        match = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)", requirement)
        entries.append(LockedEntry(requirement, match.group(1) if match else None, machines))
    return entries


def constraints_for(entries: Sequence[LockedEntry], platform: str, *, leave_out: set[str]) -> list[str]:
    """The `name==version` pins of a lock that apply on `platform`, as pip constraints (no markers: pip would
    evaluate them against the machine running it, not the image's)."""
    machine = MACHINES[platform]
    return [
        entry.requirement
        for entry in entries
        if entry.name is not None
        and entry.name not in leave_out
        and (entry.machines is None or machine in entry.machines)
    ]
