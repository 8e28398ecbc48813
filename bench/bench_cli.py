"""CLI speed: median wall time of `pyop --help`, `init`, `create api`, `create webhook`, and `make manifests` on
50 kinds.

Each command runs as a real subprocess (interpreter start-up included), as a user would run it.
Targets on the 2-core reference machine: --help < 0.15 s, init and create api < 0.5 s, manifests (50 kinds) < 1.5 s
(create webhook: held to create api's target).

    python bench/bench_cli.py [--runs N]
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

PYOP = [sys.executable, "-m", "scaffold"]


def timed(args: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(args, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def kinds(count: int) -> list[str]:
    return [f"Kind{chr(65 + i // 26)}{chr(65 + i % 26)}" for i in range(count)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    work = Path(tempfile.mkdtemp(prefix="pyop-bench-"))
    results: dict[str, list[float]] = {
        "pyop --help": [],
        "pyop init": [],
        "pyop create api": [],
        "pyop create webhook": [],
        "pyop make manifests (50 kinds)": [],
    }
    try:
        for run in range(runs):
            results["pyop --help"].append(timed([*PYOP, "--help"], work))
            project = work / f"op-{run}"
            project.mkdir()
            results["pyop init"].append(timed([*PYOP, "init", "--domain", "example.com"], project))
            results["pyop create api"].append(
                timed([*PYOP, "create", "api", "--group", "crew", "--version", "v1", "--kind", "Captain"], project)
            )
            webhook = ["create", "webhook", "--group", "crew", "--version", "v1", "--kind", "Captain"]
            results["pyop create webhook"].append(
                timed([*PYOP, *webhook, "--defaulting", "--programmatic-validation"], project)
            )

        big = work / "fifty"
        big.mkdir()
        subprocess.run([*PYOP, "init", "--domain", "example.com"], cwd=big, check=True, stdout=subprocess.DEVNULL)
        from pyop_scaffold.commands.create_api import CreateAPIOptions, create_api

        for kind in kinds(50):
            create_api(big, CreateAPIOptions(group="crew", version="v1", kind=kind))
        for _ in range(runs):
            shutil.rmtree(big / "config/crd/bases", ignore_errors=True)
            results["pyop make manifests (50 kinds)"].append(timed([*PYOP, "make", "manifests"], big))
        crds = len(list((big / "config/crd/bases").glob("*.yaml")))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    print(f"median wall time over {runs} runs (subprocess, Python {sys.version.split()[0]})")
    for name, samples in results.items():
        print(f"  {name:<32} {statistics.median(samples):7.3f} s   (min {min(samples):.3f}, max {max(samples):.3f})")
    print(f"  CRDs written by the 50-kind run: {crds}")


if __name__ == "__main__":
    main()
