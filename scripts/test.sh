#!/usr/bin/env bash
# The whole test suite, then lint and type checks. Usage: bash scripts/test.sh [pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/venv.sh
python -m pytest -q "$@"
python -m ruff check .
python -m mypy
