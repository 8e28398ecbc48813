"""The wardle server's entry point, as a scaffolded project's ``<package>/apiserver/__main__.py`` writes it."""

from __future__ import annotations

from apiserver.helpers import wardle_group
from pyop.apiserver import run

if __name__ == "__main__":
    run([wardle_group()])
