"""A command either completes or leaves the project exactly as it was: killed (SIGKILL, as by OOM or a power cut)
or interrupted (Ctrl-C) at any file-system step, or run beside another command.

Each command runs in a child process (see crash_harness) with PYOP_CRASH_AT=N, for N = 1, 2, ... until the
command completes untouched, so every step of its writes is hit once.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from pyop_scaffold.render import journal
from pyop_scaffold.render.lock import project_lock
from tests.scaffolding import crash_harness as harness
from tests.scaffolding.crash_harness import copy_project, describe_difference, snapshot

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forkserver, flock and SIGKILL")

API = ["create", "api", "--group", "crew", "--version", "v1", "--kind", "Captain"]
API_B = ["create", "api", "--group", "crew", "--version", "v1", "--kind", "Mate"]
WEBHOOK = ["create", "webhook", "--group", "crew", "--version", "v1", "--kind", "Captain", "--defaulting"]
WEBHOOK += ["--programmatic-validation"]
TYPES_FILE = "op/api/v1/captain_types.py"
MAX_STEPS = 600


@dataclass(frozen=True)
class Scenario:
    base: str  # the prepared project the command starts from
    args: list[str]
    every: int = 1  # kill at every n-th step (and at the edges); every step with PYOP_CRASH_TESTS=full


SCENARIOS = {
    "init": Scenario("empty", ["init", "--domain", "example.com"], every=3),  # 88 steps, 35 of each kind
    "create api": Scenario("initialised", API),
    "create webhook": Scenario("with api", WEBHOOK, every=3),
    "edit --namespaced": Scenario("with api", ["edit", "--namespaced"]),
    "make manifests --check": Scenario("with api", ["make", "manifests", "--check"]),
    "make manifests (update)": Scenario("model changed", ["make", "manifests"]),
}
# Every kill's state after recovery is compared byte for byte. The next command is run through the CLI after the
# kills at the edges (the first step, both sides of the commit point, the plan's removal, the last step), or after
# every kill with PYOP_CRASH_TESTS=full (several minutes), which also kills init and create webhook at every step.
FULL = os.environ.get("PYOP_CRASH_TESTS") == "full"
EDGE_LABELS = ("commit", "close the journal")


@pytest.fixture(scope="module")
def bases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The projects the commands start from, each in a folder named `op` (init names the project after it)."""
    root = tmp_path_factory.mktemp("bases")
    empty = root / "empty" / "op"
    empty.mkdir(parents=True)
    initialised = copy_project(empty, root / "initialised" / "op")
    _ok(harness.run(["init", "--domain", "example.com"], initialised))
    with_api = copy_project(initialised, root / "with api" / "op")
    _ok(harness.run(API, with_api))
    changed = copy_project(with_api, root / "model changed" / "op")
    _ok(harness.run(["make", "manifests"], changed))
    types = changed / TYPES_FILE
    text = types.read_text()
    types.write_text(text.replace("    foo: str | None = None\n", "    foo: str | None = None\n    bar: int = 0\n"))
    return {"empty": empty, "initialised": initialised, "with api": with_api, "model changed": changed}


def _ok(result: harness.Run) -> None:
    assert result.exit_code == 0, result.stderr


_labels: dict[tuple[str, ...], list[str]] = {}


def _step_labels(scenario: Scenario, bases: dict[str, Path], tmp_path: Path) -> list[str]:
    """The command's file-system steps, in order (counted in-process through the hook the kills count with)."""
    key = tuple(scenario.args) + (scenario.base,)
    if key not in _labels:
        work = copy_project(bases[scenario.base], tmp_path / "counting" / "op")
        labels: list[str] = []
        real = journal.step
        journal.step = labels.append  # type: ignore[assignment]
        try:
            from typer.testing import CliRunner

            from pyop_scaffold.cli.app import app

            result = CliRunner().invoke(app, [*scenario.args, "--project-dir", str(work)])
            assert result.exit_code == 0, result.output
        finally:
            journal.step = real  # type: ignore[assignment]
        _labels[key] = labels
    return _labels[key]


def _aimed_steps(scenario: Scenario, bases: dict[str, Path], tmp_path: Path, every: int) -> list[int]:
    """1-based step numbers to stop the command at: the first and last, both sides of the commit point, the plan's
    removal, every `every`-th step (every one with PYOP_CRASH_TESTS=full), and one past the end (it completes)."""
    labels = _step_labels(scenario, bases, tmp_path)
    steps = len(labels)
    every = 1 if FULL else every
    aimed = {1, steps, steps + 1} | {n for n in range(1, steps + 1) if n % every == 0}
    aimed |= {n for n, label in enumerate(labels, 1) if label in EDGE_LABELS}
    aimed |= {n + 1 for n, label in enumerate(labels, 1) if label == "commit"}
    return sorted(aimed)


def _completed(bases: dict[str, Path], scenario: Scenario, work: Path) -> dict[str, str]:
    done = copy_project(bases[scenario.base], work / "completed" / "op")
    _ok(harness.run(scenario.args, done))
    return snapshot(done)


@pytest.mark.parametrize("name", SCENARIOS)
def test_a_kill_at_any_step_leaves_the_project_before_or_after(
    name: str, bases: dict[str, Path], tmp_path: Path
) -> None:
    scenario = SCENARIOS[name]
    before = snapshot(bases[scenario.base])
    after = _completed(bases, scenario, tmp_path)
    assert after != before
    outcomes: dict[str, int] = {"before": 0, "after": 0}
    crashed: list[tuple[int, Path, str]] = []  # (step, killed project, where) to re-run the command in
    steps = len(_step_labels(scenario, bases, tmp_path))
    for step in _aimed_steps(scenario, bases, tmp_path, scenario.every):
        work = copy_project(bases[scenario.base], tmp_path / f"kill-{step}" / "op")
        result = harness.run(scenario.args, work, {"PYOP_CRASH_AT": str(step)})
        if not result.killed:  # past the last step: the command ran to the end
            assert result.exit_code == 0, result.stderr
            assert snapshot(work) == after
            break
        # What any next command sees once it holds the lock: the state before, or the state after.
        inspected = copy_project(work, tmp_path / f"kill-{step}" / "inspected" / "op")
        with project_lock(inspected):
            state = snapshot(inspected)
        where = result.stderr.strip()
        assert state in (before, after), f"{name}: {where}: " + describe_difference(state, before=before, after=after)
        side = "before" if state == before else "after"
        outcomes[side] += 1
        edge = step == 1 or (side == "after" and outcomes["after"] == 1) or where.endswith(EDGE_LABELS)
        if FULL or edge:
            crashed.append((step, work, where))
    else:
        pytest.fail(f"{name} did not complete within {MAX_STEPS} steps")
    assert outcomes["before"] > 0 and outcomes["after"] > 0, outcomes  # both sides of the commit point were hit
    assert step == steps + 1
    if crashed[-1][0] != steps:
        crashed.append((steps, tmp_path / f"kill-{steps}" / "op", "the last step"))
    for _, work, where in crashed:
        # The next run (no waiting: the dead process's lock is gone) completes it, or finds it complete.
        rerun = harness.run(scenario.args, work, {"PYOP_LOCK_TIMEOUT": "0"})
        assert rerun.exit_code in (0, 2), rerun.stderr
        assert "another pyop command" not in rerun.stderr
        assert snapshot(work) == after, f"{name}: re-run after {where}: {rerun.stderr}"
    assert len(crashed) >= 5


@pytest.mark.parametrize("name", ["create api", "make manifests (update)"])
def test_ctrl_c_at_any_step_leaves_the_project_before_or_after(
    name: str, bases: dict[str, Path], tmp_path: Path
) -> None:
    """No recovery needed: an interrupted command cleans up itself (before the commit point it undoes, after it
    finishes), then stops as an interrupted command does (exit 130, no traceback)."""
    scenario = SCENARIOS[name]
    before = snapshot(bases[scenario.base])
    after = _completed(bases, scenario, tmp_path)
    seen = set()
    for step in _aimed_steps(scenario, bases, tmp_path, 2):
        work = copy_project(bases[scenario.base], tmp_path / f"int-{step}" / "op")
        result = harness.run(scenario.args, work, {"PYOP_CRASH_AT": str(step), "PYOP_CRASH_SIGNAL": "INT"})
        state = snapshot(work)
        if "SIGINT" not in result.stderr:
            assert result.exit_code == 0, result.stderr
            assert state == after
            break
        assert result.exit_code == 130, result.stderr
        assert "Traceback" not in result.stderr, result.stderr
        assert not [p for p in work.iterdir() if p.name.startswith(journal.JOURNAL_PREFIX)]
        assert state in (before, after), f"{name}: SIGINT at step {step}: " + describe_difference(
            state, before=before, after=after
        )
        seen.add("before" if state == before else "after")
    else:
        pytest.fail(f"{name} did not complete after its last step")
    assert seen == {"before", "after"}


def test_a_kill_during_recovery_is_recovered_by_the_next_command(bases: dict[str, Path], tmp_path: Path) -> None:
    """Killed halfway through its renames, then the recovering command killed at each of its own steps."""
    scenario = SCENARIOS["create api"]
    after = _completed(bases, scenario, tmp_path)
    messages = set()
    for step in range(1, MAX_STEPS):
        work = copy_project(bases[scenario.base], tmp_path / f"twice-{step}" / "op")
        assert harness.run(scenario.args, work, {"PYOP_CRASH_AT": "rename op/main.py into place"}).killed
        second = harness.run(scenario.args, work, {"PYOP_CRASH_AT": str(step)})
        with project_lock(work):
            assert snapshot(work) == after, f"the recovery killed at its step {step}: {second.stderr}"
        if not second.killed:
            messages.add(second.stderr.splitlines()[0])
            break
    else:
        pytest.fail("the recovery did not end")
    assert step > 3
    assert messages == {"pyop: finished the writes of an interrupted pyop command (15 file(s))"}


def test_a_failed_rename_after_the_commit_point_undoes_the_command(bases: dict[str, Path], tmp_path: Path) -> None:
    """A disk error on the rename of main.py (after the controller, models and kustomizations are in place): those
    get their old versions back, and a kill at any step of that undo is finished by the next command."""
    scenario = SCENARIOS["create api"]
    before, after = snapshot(bases[scenario.base]), _completed(bases, scenario, tmp_path)
    failing = "op/main.py"
    work = copy_project(bases[scenario.base], tmp_path / "undo" / "op")
    result = harness.run(scenario.args, work, fail_rename=failing)
    assert result.exit_code == 2 and "cannot write op/main.py: Input/output error" in result.stderr, result.stderr
    assert snapshot(work) == before
    killed_in: list[Path] = []
    for offset in range(MAX_STEPS):
        work = copy_project(bases[scenario.base], tmp_path / f"undo-{offset}" / "op")
        crash = {"PYOP_CRASH_AT": f"turn the plan into an undo+{offset}"}
        killed = harness.run(scenario.args, work, crash, fail_rename=failing)
        if not killed.killed:
            assert killed.exit_code == 2 and snapshot(work) == before
            break
        inspected = copy_project(work, tmp_path / f"undo-{offset}" / "inspected" / "op")
        killed_in.append(work)
        # Killed before the plan became an undo, recovery finishes the command (the failed rename was this
        # process's trouble); once the undo has begun, recovery finishes the undo.
        with project_lock(inspected):
            assert snapshot(inspected) == (after if offset == 0 else before), f"undo step {offset}: {killed.stderr}"
    else:
        pytest.fail("the undo did not end")
    assert offset > 10  # a dozen renames and removals were each hit
    # The next command completes the project from there (every kill with PYOP_CRASH_TESTS=full).
    for index, work in enumerate(killed_in):
        if FULL or index in (0, 1, len(killed_in) // 2, len(killed_in) - 1):
            rerun = harness.run(scenario.args, work)
            assert rerun.exit_code == (2 if index == 0 else 0), rerun.stderr  # 2: "already exists": complete
            assert snapshot(work) == after


def test_recovery_keeps_a_file_the_user_changed_after_the_crash(bases: dict[str, Path], tmp_path: Path) -> None:
    scenario = SCENARIOS["create api"]
    work = copy_project(bases[scenario.base], tmp_path / "edited" / "op")
    assert harness.run(scenario.args, work, {"PYOP_CRASH_AT": "rename op/main.py into place"}).killed
    main = work / "op/main.py"
    main.write_text(main.read_text() + "# mine\n")
    messages = journal.recover(work)
    assert len(messages) == 1 and "kept your own version of op/main.py" in messages[0]
    assert main.read_text().endswith("# mine\n")
    assert "Captain" in (work / "PROJECT").read_text()  # the rest was finished
    assert not [p for p in work.iterdir() if p.name.startswith(journal.JOURNAL_PREFIX)]


# Two commands at once.

PAIRS = {
    "two create api": (API, API_B, "initialised"),
    "create api and make manifests": (API_B, ["make", "manifests"], "with api"),
    "edit and create api": (["edit", "--namespaced"], API_B, "with api"),
    "make manifests --check and create webhook": (["make", "manifests", "--check"], WEBHOOK, "with api"),
    "two init": (["init", "--domain", "example.com"], ["init", "--domain", "other.org"], "empty"),
}


@pytest.mark.parametrize("name", PAIRS)
def test_two_commands_at_once_end_as_one_after_the_other(name: str, bases: dict[str, Path], tmp_path: Path) -> None:
    first, second, base = PAIRS[name]
    serial = {}
    for order, (a, b) in {"first, second": (first, second), "second, first": (second, first)}.items():
        work = copy_project(bases[base], tmp_path / order / "op")
        codes = (harness.run(a, work).exit_code, harness.run(b, work).exit_code)
        serial[order] = (codes if order == "first, second" else codes[::-1], snapshot(work))
    orders_seen = set()
    for attempt in range(2):  # once racing from the start, once both waiting on a held lock
        work = copy_project(bases[base], tmp_path / f"together-{attempt}" / "op")
        # The second attempt starts the two while the test holds the lock: both wait, then race for it.
        with project_lock(work) if attempt % 2 else contextlib.nullcontext():
            children = [harness.start(args, work, {"PYOP_LOCK_TIMEOUT": "60"}) for args in (first, second)]
            if attempt % 2:
                time.sleep(0.3)
        runs = [child.wait() for child in children]
        codes = (runs[0].exit_code, runs[1].exit_code)
        state = snapshot(work)
        matches = [order for order, (c, s) in serial.items() if s == state and c == codes]
        assert matches, f"{name}: exit codes {codes}, " + describe_difference(
            state, **{order: s for order, (_, s) in serial.items()}
        )
        assert all("Traceback" not in r.stderr for r in runs), [r.stderr for r in runs]
        orders_seen.update(matches)
    assert orders_seen


def test_a_second_command_waits_then_refuses_in_one_line(bases: dict[str, Path], tmp_path: Path) -> None:
    work = copy_project(bases["initialised"], tmp_path / "held" / "op")
    before = snapshot(work)
    with project_lock(work):
        refused = harness.run(API, work, {"PYOP_LOCK_TIMEOUT": "0.3"})
    assert refused.exit_code == 2
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and "another pyop command is working on the project in" in lines[0], refused.stderr
    assert "waited 0.3 s" in lines[0]
    assert snapshot(work) == before
    _ok(harness.run(API, work, {"PYOP_LOCK_TIMEOUT": "0"}))  # released with the block


def test_a_waiting_command_goes_on_when_the_first_finishes(bases: dict[str, Path], tmp_path: Path) -> None:
    work = copy_project(bases["initialised"], tmp_path / "wait" / "op")
    with project_lock(work):
        child = harness.start(API, work, {"PYOP_LOCK_TIMEOUT": "30"})
        time.sleep(0.3)
        assert child.process.is_alive()
        assert not (work / "op/api/v1").exists()
    _ok(child.wait())
    assert "Captain" in (work / "PROJECT").read_text()


def test_the_lock_of_a_killed_command_is_taken_over_at_once(bases: dict[str, Path], tmp_path: Path) -> None:
    work = copy_project(bases["initialised"], tmp_path / "stale" / "op")
    assert harness.run(API, work, {"PYOP_CRASH_AT": "3"}).killed  # died holding the lock, mid-staging
    result = harness.run(API, work, {"PYOP_LOCK_TIMEOUT": "0"})
    _ok(result)
    assert "the project itself needed no change" in result.stderr


def test_a_bad_lock_timeout_is_a_one_line_error(bases: dict[str, Path], tmp_path: Path) -> None:
    work = copy_project(bases["initialised"], tmp_path / "bad" / "op")
    result = harness.run(API, work, {"PYOP_LOCK_TIMEOUT": "soon"})
    assert result.exit_code == 2
    assert result.stderr.strip() == "Error: invalid PYOP_LOCK_TIMEOUT 'soon': must be a number of seconds, 0 or more"


def test_threads_of_one_process_take_turns(tmp_path: Path) -> None:
    """Re-entrant within a thread, exclusive between threads (the test API server runs commands in threads)."""
    order: list[str] = []
    inside = threading.Event()

    def hold() -> None:
        with project_lock(tmp_path), project_lock(tmp_path):  # re-entrant
            inside.set()
            time.sleep(0.3)
            order.append("first done")

    thread = threading.Thread(target=hold)
    thread.start()
    inside.wait()
    with project_lock(tmp_path):
        order.append("second in")
    thread.join()
    assert order == ["first done", "second in"]


def test_writes_are_durable_before_the_commit_and_the_commit_before_the_targets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The power-loss order: each new file fsync'd before the commit rename; the journal and project folders
    fsync'd after it and before the first target changes; the targets' folders fsync'd before the plan goes."""
    (tmp_path / "old.txt").write_text("old")
    events: list[tuple[str, str]] = []
    real_fsync, real_replace, real_unlink = os.fsync, os.replace, os.unlink

    def fsync(descriptor: int) -> None:
        events.append(("fsync", os.readlink(f"/proc/self/fd/{descriptor}")))
        real_fsync(descriptor)

    def replace(source: str | os.PathLike[str], target: str | os.PathLike[str]) -> None:
        events.append(("rename", f"{source} -> {target}"))
        real_replace(source, target)

    def unlink(path: str | os.PathLike[str]) -> None:
        events.append(("unlink", str(path)))
        real_unlink(path)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    monkeypatch.setattr(os, "unlink", unlink)
    journal.write_all(
        tmp_path,
        [journal.Write("new/a.txt", b"a"), journal.Write("old.txt", b"new"), journal.Write("PROJECT", b"p")],
    )
    commit = next(i for i, (kind, what) in enumerate(events) if kind == "rename" and what.endswith("plan.json"))
    folder = Path(events[commit][1].split(" -> ")[1]).parent
    staged = {str(folder / n) for n in ("n0", "n1", "n2", "plan.tmp")}
    assert staged <= {what for kind, what in events[:commit] if kind == "fsync"}
    first_target = next(i for i, (kind, what) in enumerate(events) if kind == "rename" and i > commit)
    synced_between = {what for kind, what in events[commit:first_target] if kind == "fsync"}
    assert {str(folder), str(tmp_path)} <= synced_between
    close = next(i for i, (kind, what) in enumerate(events) if kind == "unlink" and what.endswith("plan.json"))
    last_target = max(i for i, (kind, what) in enumerate(events) if kind == "rename")
    renamed = [what.split(" -> ")[1] for kind, what in events[first_target : last_target + 1] if kind == "rename"]
    assert renamed == [str(tmp_path / "new/a.txt"), str(tmp_path / "old.txt"), str(tmp_path / "PROJECT")]
    synced_after = {what for kind, what in events[last_target:close] if kind == "fsync"}
    assert {str(tmp_path), str(tmp_path / "new")} <= synced_after
    assert (tmp_path / "old.txt").read_text() == "new" and not folder.exists()


def test_the_journal_refuses_paths_outside_the_project(tmp_path: Path) -> None:
    from pyop_scaffold.errors import ProjectError

    for bad in ("../evil.py", "/etc/passwd", "a//b", "./a", ".pyop-journal-1/n0", ""):
        with pytest.raises(ProjectError, match="not a path inside the project"):
            journal.write_all(tmp_path, [journal.Write(bad, b"x")])
    assert list(tmp_path.iterdir()) == []


def test_a_tampered_journal_is_a_one_line_error(tmp_path: Path) -> None:
    from pyop_scaffold.errors import ProjectError

    folder = tmp_path / f"{journal.JOURNAL_PREFIX}1-ab"
    folder.mkdir()
    (folder / "plan.json").write_text(
        '{"format": 1, "entries": [{"path": "../x", "new": "n0", "old": null, "dirs": []}]}'
    )
    with pytest.raises(ProjectError, match="cannot read .*plan.json, left by an interrupted pyop command"):
        journal.recover(tmp_path)
