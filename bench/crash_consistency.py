"""Crash consistency: `kill -9` pyop commands at random moments (and before each file-system step) and count the
projects left consistent, inconsistent or unrecoverable.

Each run copies a prepared project, starts the command as a real subprocess (`python -m pyop_scaffold ...`), and
SIGKILLs it. Then:
- consistent: once the next command holds the project lock (and has run its recovery), the project is byte for
  byte as it was before the command or as a completed run leaves it (Python's __pycache__ left out);
- inconsistent: neither (for instance PROJECT new and main.py old);
- unrecoverable: running the command again does not bring the project to the completed state.
It also says where the kills landed: before any write, while a journal was on disk, or after the command ended.

Random kills land uniformly between half the command's median duration (the first half is interpreter start-up
and imports, which write nothing) and 5% past it. Step kills use PYOP_CRASH_AT=1..n (the hook of
pyop_scaffold.render.faults). With --pyop-path, the children import pyop_scaffold from another checkout (a folder
holding a `pyop_scaffold` link to its scaffold/): the same random kills measured against older code (it has no
step hook, so use --step-kills 0).

With --pairs N, it also starts two commands at once in one project N times (create api of two new kinds; create api
and make manifests; edit --namespaced and create api) and counts the ends that equal one of the two serial orders
(same files, same exit codes), those refused by the lock, and the rest.

    python bench/crash_consistency.py [--runs 100] [--step-kills 1] [--pairs 15] [--seed 1] [--pyop-path DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

PYOP = [sys.executable, "-m", "pyop_scaffold"]
API = ["create", "api", "--group", "crew", "--version", "v1", "--kind", "Captain"]
MANIFESTS = ["make", "manifests"]
JOURNAL_PREFIX = ".pyop-journal-"


def snapshot(root: Path) -> dict[str, str]:
    result = {}
    for path in sorted(root.rglob("*")):
        if "__pycache__" in path.parts:
            continue
        relative = path.relative_to(root).as_posix()
        result[relative] = (
            "<dir>" if path.is_dir() else f"{hashlib.sha256(path.read_bytes()).hexdigest()} {path.stat().st_mode:o}"
        )
    return result


def pyop(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*PYOP, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def recovered_state(work: Path, scratch: Path, env: dict[str, str]) -> dict[str, str]:
    """The project as the next command sees it once it holds the lock (a copy, so `work` stays as the kill left
    it for the re-run). Older code has no lock or recovery: there the copy is looked at as it is."""
    copy = scratch / "inspected" / work.name
    shutil.rmtree(copy.parent, ignore_errors=True)
    shutil.copytree(work, copy, symlinks=True)
    code = (
        "import sys\nfrom pathlib import Path\n"
        "try:\n    from pyop_scaffold.render.lock import project_lock\nexcept ImportError:\n    sys.exit(0)\n"
        "with project_lock(Path(sys.argv[1])):\n    pass\n"
    )
    subprocess.run([sys.executable, "-c", code, str(copy)], env=env, check=True, capture_output=True)
    return snapshot(copy)


def prepare(base: Path, env: dict[str, str]) -> dict[str, Path]:
    """The project each command starts from: `create api` in a fresh project, `make manifests` regenerating a
    CRD after a model change."""
    initialised = base / "initialised" / "op"
    initialised.mkdir(parents=True)
    _check(pyop(["init", "--domain", "example.com"], initialised, env))
    changed = base / "model changed" / "op"
    shutil.copytree(initialised, changed)
    _check(pyop(API, changed, env))
    _check(pyop(MANIFESTS, changed, env))
    types = changed / "op/api/v1/captain_types.py"
    types.write_text(
        types.read_text().replace("    foo: str | None = None\n", "    foo: str | None = None\n    bar: int = 0\n")
    )
    return {"create api": initialised, "make manifests": changed}


def _check(result: subprocess.CompletedProcess[str]) -> None:
    if result.returncode != 0:
        raise SystemExit(f"preparing the projects failed: {result.stderr}")


class Tally:
    def __init__(self) -> None:
        self.outcomes: Counter[str] = Counter()
        self.landed: Counter[str] = Counter()
        self.examples: list[str] = []

    def line(self, name: str) -> str:
        total = sum(self.outcomes.values())
        counts = ", ".join(f"{key} {self.outcomes[key]}" for key in ("consistent", "inconsistent", "unrecoverable"))
        landed = ", ".join(f"{key} {value}" for key, value in sorted(self.landed.items()))
        return f"  {name:<34} {total:4d} kills: {counts}   (landed: {landed})"


def one_kill(
    args: list[str],
    base: Path,
    scratch: Path,
    env: dict[str, str],
    before: dict[str, str],
    after: dict[str, str],
    delay: float | None,
    step: int | None,
    tally: Tally,
) -> bool:
    """One killed run; False when the command ended before it was killed (a step number past the last step)."""
    shutil.rmtree(scratch, ignore_errors=True)
    work = scratch / "work" / "op"
    shutil.copytree(base, work, symlinks=True)
    child_env = dict(env, PYOP_CRASH_AT=str(step)) if step is not None else env
    process = subprocess.Popen(
        [*PYOP, *args], cwd=work, env=child_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    if delay is not None:
        try:
            process.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGKILL)
    code = process.wait()
    if step is not None and code != -signal.SIGKILL:
        return False
    raw = snapshot(work)
    journal_left = any(name.startswith(JOURNAL_PREFIX) or ".pyop-" in name for name in raw)
    if code != -signal.SIGKILL:
        tally.landed["after the end"] += 1
    elif raw == before:
        tally.landed["before any write"] += 1
    elif journal_left:
        tally.landed["during the writes"] += 1
    else:
        tally.landed["after the writes, still running" if raw == after else "other"] += 1
    state = recovered_state(work, scratch, env)
    consistent = state in (before, after)
    rerun = pyop(args, work, env)
    completed = snapshot(work) == after and rerun.returncode in (0, 2)
    if not completed:
        tally.outcomes["unrecoverable"] += 1
    if consistent:
        tally.outcomes["consistent"] += 1
    else:
        tally.outcomes["inconsistent"] += 1
        differ = sorted(p for p in set(state) | set(after) if state.get(p) not in (before.get(p), after.get(p)))
        if len(tally.examples) < 3:
            tally.examples.append(f"mixed after a kill at {delay or step}: {differ[:6]}")
    return True


API_B = ["create", "api", "--group", "crew", "--version", "v1", "--kind", "Mate"]
API_C = ["create", "api", "--group", "crew", "--version", "v1", "--kind", "Pilot"]
PAIRS = [(API_B, API_C), (API_B, MANIFESTS), (["edit", "--namespaced"], API_B)]


def run_pairs(count: int, base: Path, scratch: Path, env: dict[str, str]) -> Counter[str]:
    """Start two commands at once `count` times (the PAIRS in turn) in copies of `base` (a project with one kind)."""
    serial: dict[int, list[tuple[tuple[int, int], dict[str, str]]]] = {}
    for index, (first, second) in enumerate(PAIRS):
        for a, b, flip in ((first, second, False), (second, first, True)):
            shutil.rmtree(scratch, ignore_errors=True)
            work = scratch / "serial" / "op"
            shutil.copytree(base, work)
            codes = (pyop(a, work, env).returncode, pyop(b, work, env).returncode)
            serial.setdefault(index, []).append((codes[::-1] if flip else codes, snapshot(work)))
    outcomes: Counter[str] = Counter()
    for attempt in range(count):
        index = attempt % len(PAIRS)
        shutil.rmtree(scratch, ignore_errors=True)
        work = scratch / "together" / "op"
        shutil.copytree(base, work)
        children = [
            subprocess.Popen([*PYOP, *args], cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            for args in PAIRS[index]
        ]
        results = [(child.wait(), child.stderr.read().decode() if child.stderr else "") for child in children]
        codes = (results[0][0], results[1][0])
        state = snapshot(work)
        if any("another pyop command is working" in err for _, err in results):
            outcomes["one refused by the lock"] += 1
        elif any(c == codes and s == state for c, s in serial[index]):
            outcomes["as one after the other"] += 1
        else:
            outcomes["in no serial order"] += 1
    return outcomes


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=100, help="random-moment kills per command")
    parser.add_argument("--step-kills", type=int, default=1, help="rounds of one kill before each step (0: none)")
    parser.add_argument("--pairs", type=int, default=15, help="pairs of commands started at once (0: none)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pyop-path", type=Path, default=None, help="import pyop_scaffold from this folder")
    options = parser.parse_args()
    rng = random.Random(options.seed)
    env = dict(os.environ)
    env.pop("PYOP_CRASH_AT", None)
    if options.pyop_path is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(options.pyop_path.resolve()), env.get("PYTHONPATH", "")])
    work = Path(tempfile.mkdtemp(prefix="pyop-crash-"))
    try:
        bases = prepare(work / "bases", env)
        commands = {"create api": API, "make manifests": MANIFESTS}
        tallies: dict[str, Tally] = {}
        for name, args in commands.items():
            base = bases[name]
            done = work / "done" / name / "op"
            shutil.copytree(base, done)
            durations = []
            for _ in range(5):
                shutil.rmtree(done.parent, ignore_errors=True)
                shutil.copytree(base, done)
                start = time.perf_counter()
                _check(pyop(args, done, env))
                durations.append(time.perf_counter() - start)
            before, after = snapshot(base), snapshot(done)
            median = statistics.median(durations)
            random_tally = tallies[f"{name}, random moments"] = Tally()
            for _ in range(options.runs):
                delay = rng.uniform(0.5 * median, 1.05 * median)
                one_kill(args, base, work / "scratch", env, before, after, delay, None, random_tally)
            if options.step_kills:
                step_tally = tallies[f"{name}, before each step"] = Tally()
                for _ in range(options.step_kills):
                    step = 1
                    while one_kill(args, base, work / "scratch", env, before, after, None, step, step_tally):
                        step += 1
            print(f"{name}: median run {median:.3f} s", flush=True)
        pairs = run_pairs(options.pairs, bases["make manifests"], work / "scratch", env) if options.pairs else None
    finally:
        shutil.rmtree(work, ignore_errors=True)

    print("kill -9 of pyop commands (consistent: before or after, byte for byte, once the next command holds the lock)")
    total = Tally()
    for name, tally in tallies.items():
        print(tally.line(name))
        total.outcomes.update(tally.outcomes)
        total.landed.update(tally.landed)
        total.examples.extend(tally.examples)
    print(total.line("all"))
    for example in total.examples[:5]:
        print(f"  e.g. {example}")
    if pairs is not None:
        print(
            f"two commands at once, {options.pairs} pairs: " + ", ".join(f"{k} {v}" for k, v in sorted(pairs.items()))
        )


if __name__ == "__main__":
    main()
