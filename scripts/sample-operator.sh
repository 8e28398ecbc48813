#!/usr/bin/env bash
# The main job: scaffold a sample operator with two APIs in two groups (one with defaulting and validating
# webhooks) and generate its manifests.
# Usage: bash scripts/sample-operator.sh [folder]   (default: ./sample-operator)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/venv.sh

out="${1:-sample-operator}"
if [ -e "$out" ]; then
  if [ -f "$out/PROJECT" ]; then
    rm -rf "$out"   # a previous run of this script
  else
    echo "Error: $out exists and is not a pyop project; pass another folder" >&2
    exit 2
  fi
fi
mkdir -p "$out"
cd "$out"

pyop init --domain example.com --multigroup --owner "The Fleet Authors"
pyop create api --group crew --version v1 --kind Captain
pyop create api --group ship --version v1beta1 --kind Frigate --cluster-scoped
pyop create webhook --group crew --version v1 --kind Captain --defaulting --programmatic-validation
pyop make manifests --check

if command -v kubectl >/dev/null 2>&1; then
  kubectl kustomize config/default > /tmp/pyop-sample-install.yaml
  echo "kubectl kustomize config/default: $(grep -c '^kind:' /tmp/pyop-sample-install.yaml) objects"
  grep '^kind:' /tmp/pyop-sample-install.yaml | sort | uniq -c
fi
echo "Sample operator in $(pwd)"
