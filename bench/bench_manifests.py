"""Benchmark `pyop make manifests` on generated projects: 100 and 200 kinds of 30 fields each.

Each kind has nested models, lists of models, maps, enums, validation markers and pydantic constraints; every
tenth kind embeds a PodTemplateSpec. Every model of a kind carries a bound or default of its own (a Kind's port
name may be longer than the previous kind's, say), so no two kinds have the same schema apart from their docs and
names, as in a real project: what repeats from kind to kind is only what real kinds share (built-in types such as
Condition or PodTemplateSpec, and simple fields). Each run is `pyop make manifests` in a fresh interpreter (what `make
manifests` costs a user, start-up included) on a project whose config/ was removed first, so every CRD is
generated, checked and written. By default Python caches compiled modules (.pyc) as it does out of the box, and
pyop keeps the markers it read from each module beside them (the same rules); `--no-bytecode-cache` compiles every
module from source and reads every module's markers on every run. In both modes what the CEL checks read from
parsing each rule (and celpy's analysed grammar) stays in the user's cache directory (~/.cache/pyop), so after the
warm-up run no run imports cel-python.

Then the run with nothing to do (what `make test` and `make run` pay every time): on a project scaffolded with
`pyop init` and three `pyop create api`, `pyop make manifests` after a full run, interleaved with `kubectl
kustomize config/default` on the same project (target: under 1.5x kustomize), and on the 200-kind project; and a
run after one kind's module changed (only that kind's CRD is rebuilt), interleaved with full runs.

    python bench/bench_manifests.py [--runs 5] [--kinds 200] [--no-bytecode-cache] [--profile]

Prints the median wall time (and CPU time, which other load on the machine disturbs less) per size and the
ratio 200 kinds / 100 kinds (targets: < 3 s, < 2.2), then the no-op medians and ratios.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
PACKAGE = "bench_op"

KIND_TEMPLATE = '''"""Kind {kind}: generated for the manifests benchmark."""

from __future__ import annotations

import enum
from typing import Literal

from pydantic import Field

from pyop.api import Condition, Int32, Int64, KubeModel, Resource, ResourceList
from pyop.api.builtin_types import IntOrString, PodTemplateSpec, Quantity

from .groupversion_info import GROUP_VERSION


class {kind}Mode(enum.StrEnum):
    """{kind}Mode says how the {kind} runs."""

    FAST = "Fast"
    SAFE = "Safe"


class {kind}Port(KubeModel):
    """{kind}Port is one exposed port."""

    # name of the port.
    name: str = Field(max_length={name_length})
    # +kubebuilder:validation:Minimum=1
    # +kubebuilder:validation:Maximum={max_port}
    port: Int32
    protocol: Literal["TCP", "UDP"] = "TCP"
    target: IntOrString | None = None
    labels: dict[str, str] = {{}}


class {kind}Storage(KubeModel):
    """{kind}Storage is where the {kind} keeps its data."""

    # size of the volume.
    size: Quantity = "{size}Gi"
    class_name: str | None = None
    # +kubebuilder:validation:MinItems=1
    modes: list[Literal["ReadWriteOnce", "ReadOnlyMany"]] = ["ReadWriteOnce"]
    retain: bool = True
    backup_hours: list[Int32] = []


# +kubebuilder:validation:XValidation:rule="self.minReplicas <= self.replicas",message="minReplicas too high"
class {kind}Spec(KubeModel):
    """{kind}Spec is the desired state of a {kind}."""

    # replicas is how many instances run.
    replicas: Int32 = Field(1, ge=0, le={max_replicas})
    # +kubebuilder:validation:Minimum=0
    min_replicas: Int32 = 0
    # image to run.
    # +kubebuilder:validation:MinLength=1
    image: str
    mode: {kind}Mode = {kind}Mode.SAFE
    # +listType=map
    # +listMapKey=name
    ports: list[{kind}Port] = []
    storage: {kind}Storage = Field(default_factory={kind}Storage)
    caches: dict[str, {kind}Storage] = {{}}
    # +listType=set
    tags: list[str] = []
    env: dict[str, str] = {{}}
    args: list[str] = []
    paused: bool = False
    # +kubebuilder:validation:Pattern=`^[a-z0-9-]+$`
    service_name: str | None = None
    timeout_seconds: Int64 | None = Field(None, ge=1)
    priority: Literal["low", "normal", "high"] = "normal"
    weight: float = Field(1.0, gt=0)
    owner: str | None = None
    team: str | None = None
    # +kubebuilder:validation:MaxLength=253
    description: str | None = None
    max_unavailable: IntOrString = "25%"
    schedule: str | None = None
    suspend: bool | None = None
    history_limit: Int32 = 3
    # +kubebuilder:validation:items:MaxLength=63
    finalizers: list[str] = []
    annotations: dict[str, str] = {{}}
    secondary_ports: list[{kind}Port] | None = None
    archive: {kind}Storage | None = None
    region: str = "eu-west"
    zone: str | None = None
    {extra_field}


class {kind}Status(KubeModel):
    conditions: list[Condition] = []
    ready_replicas: Int32 = Field(0, ge=0, le={max_replicas})
    phase: Literal["Pending", "Running", "Failed"] | None = None


# +kubebuilder:object:root=true
# +kubebuilder:subresource:status
# +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.spec.replicas`
class {kind}(Resource, group_version=GROUP_VERSION):
    """{kind} is a benchmark kind."""

    spec: {kind}Spec
    status: {kind}Status | None = None


# +kubebuilder:object:root=true
class {kind}List(ResourceList[{kind}]):
    """A list of {kind} objects."""
'''


def make_project(root: Path, kinds: int) -> None:
    """A pyop project with `kinds` kinds of 30 spec fields each in one API version."""
    root.mkdir(parents=True)
    (root / "PROJECT").write_text(
        yaml.safe_dump(
            {
                "domain": "example.com",
                "layout": ["python.pyop.io/v1"],
                "package": PACKAGE,
                "projectName": "bench-op",
                "version": "3",
            }
        )
    )
    version = root / PACKAGE / "api" / "v1"
    version.mkdir(parents=True)
    (root / PACKAGE / "__init__.py").write_text("")
    (root / PACKAGE / "api" / "__init__.py").write_text('"""APIs."""\n')
    (version / "__init__.py").write_text('"""v1."""\n')
    (version / "groupversion_info.py").write_text(
        '"""Group.\n\n+groupName=bench.example.com\n"""\n\nfrom pyop.api import GroupVersion\n\n'
        'GROUP_VERSION = GroupVersion(group="bench.example.com", version="v1")\n'
    )
    for index in range(kinds):
        kind = f"Kind{index:03d}"
        extra = "template: PodTemplateSpec | None = None" if index % 10 == 0 else "notes: str | None = None"
        own = {"name_length": 15 + index, "max_port": 65535 - index, "size": 1 + index, "max_replicas": 100 + index}
        (version / f"kind{index:03d}_types.py").write_text(KIND_TEMPLATE.format(kind=kind, extra_field=extra, **own))


def run_once(root: Path, bytecode_cache: bool, *, full: bool = True) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one `pyop make manifests` in a fresh interpreter (`full`: config/ removed
    first, so every file is generated; else as the project is, a no-op after a run)."""
    if full:
        shutil.rmtree(root / "config", ignore_errors=True)
    command = [sys.executable, "-m", "pyop_scaffold", "make", "manifests", "-C", str(root)]
    env = dict(os.environ)
    if bytecode_cache:
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # Python's default: modules compile once, then load from .pyc
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, cwd=REPO, check=False, env=env)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        raise SystemExit(f"pyop make manifests failed:\n{result.stderr}")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def timed(command: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, cwd=cwd, check=False)
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{result.stderr}")
    return elapsed


def scaffolded_project(root: Path) -> list[str]:
    """A project made the way a user makes one (init, three APIs, manifests); the pyop command that made it."""
    pyop = [sys.executable, "-m", "pyop_scaffold"]
    root.mkdir()
    timed([*pyop, "init", "--domain", "example.com"], root)
    for kind in ("Memcached", "Redis", "Backup"):
        timed([*pyop, "create", "api", "--group", "cache", "--version", "v1", "--kind", kind], root)
    timed([*pyop, "make", "manifests"], root)
    return pyop


def noop_runs(tmp: Path, big: Path, runs: int, bytecode_cache: bool) -> None:
    """No-op `make manifests` against `kubectl kustomize config/default`, interleaved, on a scaffolded project;
    and the no-op against the full run on the big one."""
    project = tmp / "scaffolded"
    pyop = scaffolded_project(project)
    noop, kustomize = [], []
    for _ in range(runs * 2):
        noop.append(timed([*pyop, "make", "manifests"], project))
        kustomize.append(timed(["kubectl", "kustomize", "config/default"], project))
    noop_median, kustomize_median = statistics.median(noop), statistics.median(kustomize)
    print(
        f"no-op make manifests (3 kinds, scaffolded): median {noop_median:.3f} s; kubectl kustomize config/default "
        f"{kustomize_median:.3f} s; ratio {noop_median / kustomize_median:.2f} (target < 1.5), "
        f"{len(noop)} interleaved runs each"
    )
    run_once(big, bytecode_cache)
    full, idle, one_kind = [], [], []
    edited = big / PACKAGE / "api" / "v1" / "kind007_types.py"
    original = edited.read_text()
    for number in range(runs):
        full.append(run_once(big, bytecode_cache)[0])
        idle.append(run_once(big, bytecode_cache, full=False)[0])
        # One kind's module changed (its own bound): the run rebuilds that kind's CRD only.
        edited.write_text(original.replace("max_length=", f"max_length={number + 1}", 1))
        one_kind.append(run_once(big, bytecode_cache, full=False)[0])
    edited.write_text(original)
    print(
        f"{big.name[1:]} kinds: no-op median {statistics.median(idle):.3f} s against a full run's "
        f"{statistics.median(full):.2f} s (ratio {statistics.median(idle) / statistics.median(full):.3f}), interleaved"
    )
    print(
        f"{big.name[1:]} kinds: one kind changed median {statistics.median(one_kind):.2f} s against a full run's "
        f"{statistics.median(full):.2f} s (ratio {statistics.median(one_kind) / statistics.median(full):.2f}), "
        "interleaved"
    )


def profile(root: Path) -> None:
    sys.path.insert(0, str(REPO))
    from pyop_scaffold.commands.make_manifests import ManifestOptions, make_manifests

    shutil.rmtree(root / "config", ignore_errors=True)
    profiler = cProfile.Profile()
    profiler.enable()
    make_manifests(root, ManifestOptions())
    profiler.disable()
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(35)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--kinds", type=int, default=200)
    parser.add_argument("--profile", action="store_true", help="profile one in-process run of the big project")
    parser.add_argument(
        "--no-bytecode-cache",
        dest="bytecode_cache",
        action="store_false",
        help="compile every module and read its markers from source on every run (PYTHONDONTWRITEBYTECODE=1)",
    )
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        sizes = (options.kinds // 2, options.kinds)
        roots = {}
        for size in sizes:
            roots[size] = Path(tmp) / f"p{size}"
            make_project(roots[size], size)
        if options.profile:
            profile(roots[options.kinds])
            return
        medians = {}
        cache = "with" if options.bytecode_cache else "without"
        print(f"pyop make manifests in a fresh interpreter, {cache} the .pyc cache; load average {_load()}")
        for size in sizes:
            run_once(roots[size], options.bytecode_cache)  # warm the file system cache (and .pyc files)
            runs = [run_once(roots[size], options.bytecode_cache) for _ in range(options.runs)]
            walls = [wall for wall, _ in runs]
            medians[size] = statistics.median(walls)
            crds = len(list((roots[size] / "config/crd/bases").glob("*.yaml")))
            print(
                f"{size} kinds x 30 fields ({crds} CRDs, {size // 10} with a PodTemplateSpec): median wall "
                f"{medians[size]:.2f} s over {options.runs} runs (min {min(walls):.2f}, max {max(walls):.2f}); "
                f"median CPU {statistics.median(cpu for _, cpu in runs):.2f} s"
            )
        print(f"ratio {sizes[1]} kinds / {sizes[0]} kinds (median wall): {medians[sizes[1]] / medians[sizes[0]]:.2f}")
        if shutil.which("kubectl"):
            noop_runs(Path(tmp), roots[options.kinds], options.runs, options.bytecode_cache)
        else:
            print("no-op runs skipped: kubectl is not installed (the comparison is against kubectl kustomize)")


def _load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


if __name__ == "__main__":
    main()
