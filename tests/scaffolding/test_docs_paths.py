"""The docs cite only what ships: no path of one machine (a checkout, a home folder), and every relative link
resolves to a file of the repository."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]
DOCS = sorted([REPOSITORY / "README.md", *(REPOSITORY / "docs").rglob("*.md")])

# Absolute paths that belong to a running operator or cluster, which the docs describe on purpose.
RUNTIME_PATHS = ("/tmp/k8s-webhook-server/", "/var/run/secrets/")
# Where one machine's files live (a checkout, a home folder); an image's paths (/opt/app, /usr/...) are fine.
MACHINE_ROOTS = {"work", "root", "home", "Users"}
_ABSOLUTE = re.compile(r"(?<![\w.:/~-])/(?:[\w.-]+/)+[\w.-]*")
_LINK = re.compile(r"\]\(([^)\s#]+)(?:#[^)]*)?\)")


def _ids(paths: list[Path]) -> list[str]:
    return [path.relative_to(REPOSITORY).as_posix() for path in paths]


@pytest.mark.parametrize("doc", DOCS, ids=_ids(DOCS))
def test_no_machine_paths(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    found = [m.group(0) for m in _ABSOLUTE.finditer(text) if not m.group(0).startswith(RUNTIME_PATHS)]
    machine = [p for p in found if p.split("/")[1] in MACHINE_ROOTS]
    assert machine == []


@pytest.mark.parametrize("doc", DOCS, ids=_ids(DOCS))
def test_relative_links_resolve(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    targets = [
        m.group(1) for m in _LINK.finditer(text) if "://" not in m.group(1) and not m.group(1).startswith("mailto:")
    ]
    missing = [t for t in targets if not (doc.parent / t).exists()]
    assert missing == []
