"""Kubernetes' order of API versions: GA before beta before alpha, higher numbers first (v2, v1, v1beta2, ...)."""

from __future__ import annotations

import re

_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")
_STABILITY = {None: 3, "beta": 2, "alpha": 1}


def sort_versions(names: list[str]) -> list[str]:
    """Versions in the API server's priority order; names that do not look like Kubernetes versions go last."""

    def key(name: str) -> tuple[int, int, int, int, str]:
        match = _VERSION.match(name)
        if not match:
            return (1, 0, 0, 0, name)
        major, stability, minor = match.groups()
        return (0, -_STABILITY[stability], -int(major), -int(minor or 0), "")

    return sorted(names, key=key)
