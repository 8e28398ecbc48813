"""What `pyop edit --plugins=helm` costs, and how much of it is `kubectl kustomize`: the command (first run and
an unchanged re-run, as subprocesses with interpreter start-up) interleaved with bare `kubectl kustomize
config/default` runs (twice: the command renders config/default and the ServiceMonitor variant), on the sample
operator of scripts/sample-operator.sh.

    python bench/bench_chart.py [--runs 7]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PYOP = [sys.executable, "-m", "pyop_scaffold"]


def _run(command: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def _sample(root: Path) -> None:
    root.mkdir()
    for args in (
        ["init", "--domain", "example.com", "--multigroup"],
        ["create", "api", "--group", "crew", "--version", "v1", "--kind", "Captain"],
        ["create", "api", "--group", "ship", "--version", "v1beta1", "--kind", "Frigate", "--cluster-scoped"],
        ["create", "webhook", "--group", "crew", "--version", "v1", "--kind", "Captain", "--defaulting"],
        ["make", "manifests"],
    ):
        _run([*PYOP, *args], root)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        raise SystemExit("kubectl is needed")
    with tempfile.TemporaryDirectory() as scratch:
        sample = Path(scratch) / "sample"
        _sample(sample)
        first, again, kustomize = [], [], []
        for index in range(runs):
            copy = Path(scratch) / f"run{index}"
            shutil.copytree(sample, copy)
            kustomize.append(_run([kubectl, "kustomize", "config/default"], copy) * 2)
            first.append(_run([*PYOP, "edit", "--plugins=helm"], copy))
            again.append(_run([*PYOP, "edit", "--plugins=helm"], copy))
            files = sum(1 for p in (copy / "dist/chart").rglob("*") if p.is_file())
    print(f"sample operator, {runs} interleaved runs, median (min) seconds; the chart has {files} files")
    for name, values in (
        ("pyop edit --plugins=helm (first)", first),
        ("pyop edit --plugins=helm (unchanged)", again),
        ("2 x kubectl kustomize config/default", kustomize),
    ):
        print(f"  {name:40} {statistics.median(values):6.3f} ({min(values):.3f})")


if __name__ == "__main__":
    main()
