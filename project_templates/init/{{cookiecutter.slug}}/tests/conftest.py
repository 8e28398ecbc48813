{{ cookiecutter.license_header }}"""Shared fixtures: the project root, and pyop's test API server (`test_api_server`) through its pytest plugin."""

from __future__ import annotations

from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def project_root() -> Path:
    return PROJECT_ROOT
