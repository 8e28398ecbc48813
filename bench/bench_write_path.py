"""Normal-path cost of crash-safe writes: `pyop create api` (and `make manifests`) with this checkout's pyop_scaffold
against another one (--baseline: a folder holding a `pyop_scaffold` link to an older scaffold/), interleaved run by
run, as real subprocesses (interpreter start-up included, as a user runs them).

    git archive <old commit> scaffold project_templates | tar -x -C /tmp/old
    mkdir /tmp/oldpath && ln -s /tmp/old/scaffold /tmp/oldpath/pyop_scaffold
    python bench/bench_write_path.py --baseline /tmp/oldpath [--runs 15]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PYOP = [sys.executable, "-m", "pyop_scaffold"]
API = ["create", "api", "--group", "crew", "--version", "v1", "--kind", "Captain"]


def timed(args: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([*PYOP, *args], cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=15)
    options = parser.parse_args()
    envs = {
        "this checkout": dict(os.environ),
        "baseline": dict(
            os.environ, PYTHONPATH=os.pathsep.join([str(options.baseline.resolve()), os.environ.get("PYTHONPATH", "")])
        ),
    }
    work = Path(tempfile.mkdtemp(prefix="pyop-write-path-"))
    samples: dict[tuple[str, str], list[float]] = {}
    try:
        base = work / "base" / "op"
        base.mkdir(parents=True)
        subprocess.run([*PYOP, "init", "--domain", "example.com"], cwd=base, check=True, stdout=subprocess.DEVNULL)
        for run in range(options.runs):
            order = list(envs.items()) if run % 2 == 0 else list(reversed(envs.items()))
            for name, env in order:
                project = work / f"{name}-{run}" / "op"
                shutil.copytree(base, project)
                samples.setdefault(("create api", name), []).append(timed(API, project, env))
                samples.setdefault(("make manifests", name), []).append(timed(["make", "manifests"], project, env))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"median wall time over {options.runs} interleaved runs (subprocess, Python {sys.version.split()[0]})")
    for command in ("create api", "make manifests"):
        new = statistics.median(samples[(command, "this checkout")])
        old = statistics.median(samples[(command, "baseline")])
        print(f"  {command:<16} this checkout {new:.3f} s   baseline {old:.3f} s   ratio {new / old:.3f}")


if __name__ == "__main__":
    main()
