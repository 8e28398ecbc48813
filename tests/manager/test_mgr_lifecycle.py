"""Manager lifecycle: start-up order, graceful shutdown on SIGTERM/SIGINT with a drain deadline, failures,
runnables, kubeconfig loading, and namespaced mode (WATCH_NAMESPACE)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import textwrap
from pathlib import Path

import pytest
from mgr_helpers import Counting, Widget, eventually, manager_for, widget

from pyop.client import ConfigError
from pyop.controller import ControllerNotSynced, Request, Result
from pyop.manager import Manager, ManagerOptions, run
from pyop.testing import TestAPIServer

OPERATOR = textwrap.dedent(
    """
    import asyncio, logging, sys
    sys.path.insert(0, {helpers!r})
    from mgr_helpers import Widget
    from pyop.controller import Request, Result
    from pyop.manager import Manager, ManagerOptions, run

    log = logging.getLogger("slow")

    async def reconcile(request: Request) -> Result:
        log.info("start")
        await asyncio.sleep({work})
        log.info("done")
        return Result()

    manager = Manager(ManagerOptions(kubeconfig=sys.argv[1], graceful_shutdown_timeout={deadline},
                                     log_format="json", log_level="info"))
    manager.controller_for(Widget).with_options(max_concurrent_reconciles=2).complete(reconcile)
    run(manager.run())  # uvloop when installed: signal handling must work there too
    """
)


async def run_operator(
    server: TestAPIServer, tmp_path: Path, *, work: float, deadline: float, signum: int
) -> tuple[int, list[dict]]:  # type: ignore[type-arg]
    script = tmp_path / "slow_operator.py"  # not operator.py: that name shadows the stdlib module
    script.write_text(OPERATOR.format(helpers=str(Path(__file__).parent), work=work, deadline=deadline))
    process = await asyncio.create_subprocess_exec(
        sys.executable, str(script), str(server.kubeconfig_path), stderr=asyncio.subprocess.PIPE
    )
    assert process.stderr is not None
    lines: list[dict] = []  # type: ignore[type-arg]
    async with asyncio.timeout(60):
        while not any(line.get("msg") == "start" for line in lines):  # a reconcile is in progress
            raw = await process.stderr.readline()
            assert raw, "the operator exited early"
            lines.append(json.loads(raw))
        process.send_signal(signum)
        _, rest = await process.communicate()
    lines.extend(json.loads(line) for line in rest.decode().splitlines() if line.strip())
    return process.returncode or 0, lines


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
async def test_a_signal_drains_the_queue_before_exiting(server: TestAPIServer, tmp_path: Path, signum: int) -> None:
    for index in range(6):
        await server_client_create(server, f"w{index}")
    code, lines = await run_operator(server, tmp_path, work=0.2, deadline=30, signum=signum)
    messages = [line["msg"] for line in lines]
    assert code == 0
    assert messages.count("start") == messages.count("done") == 6  # queued work finished, none cut short
    assert f"received {signal.Signals(signum).name}, shutting down gracefully" in messages
    assert messages.index("Shutdown signal received, waiting for all workers to finish") < len(messages) - 1
    assert messages[-1] == "manager stopped"
    reconciles = [line for line in lines if line["msg"] in ("start", "done")]
    assert all(line["controller"] == "widget" and line["reconcileID"] for line in reconciles)


async def test_the_drain_stops_at_the_deadline(server: TestAPIServer, tmp_path: Path) -> None:
    await server_client_create(server, "slow")
    code, lines = await run_operator(server, tmp_path, work=600, deadline=0.2, signum=signal.SIGTERM)
    messages = [line["msg"] for line in lines]
    assert code == 0
    assert messages.count("start") == 1 and "done" not in messages  # cut short at the deadline
    assert any(message.startswith("Work queue not drained within 0.2s") for message in messages)
    assert messages[-1] == "manager stopped"


async def server_client_create(server: TestAPIServer, name: str) -> None:
    manager = manager_for(server)
    try:
        await manager.client.create(widget(name))
    finally:
        await manager.client.close()


async def test_stop_lets_running_reconciles_finish(server: TestAPIServer) -> None:
    finished: list[str] = []
    started = asyncio.Event()

    async def reconcile(request: Request) -> Result:
        started.set()
        await asyncio.sleep(0.1)
        finished.append(request.name)
        return Result()

    manager = manager_for(server)
    manager.controller_for(Widget).complete(reconcile)
    async with manager:
        await manager.client.create(widget("w"))
        await asyncio.wait_for(started.wait(), 10)
    assert finished == ["w"]


async def test_controllers_that_cannot_sync_stop_the_manager_with_an_error(server: TestAPIServer) -> None:
    server.faults.respond(500, method="GET", path_regex="/widgets", times=None)
    manager = manager_for(server, cache_sync_timeout=0.3)
    manager.controller_for(Widget).complete(Counting())
    with pytest.raises(ControllerNotSynced, match="timed out after 0.3s waiting for caches to sync"):
        await asyncio.wait_for(manager.run(), 20)


async def test_runnables_run_while_leading_and_their_failure_stops_the_manager(server: TestAPIServer) -> None:
    everywhere = asyncio.Event()

    async def on_every_replica() -> None:
        everywhere.set()
        await asyncio.Event().wait()

    async def leader_only() -> None:
        assert manager.elected.is_set()
        raise RuntimeError("leader task broke")

    manager = manager_for(server)
    manager.add_runnable(on_every_replica, needs_leader_election=False)
    manager.add_runnable(leader_only)
    with pytest.raises(RuntimeError, match="leader task broke"):
        await asyncio.wait_for(manager.run(), 20)
    assert everywhere.is_set()
    with pytest.raises(RuntimeError, match="already running"):
        await manager.run()


async def test_kubeconfig_is_loaded_at_start_and_the_client_can_be_kept_from_setup(server: TestAPIServer) -> None:
    manager = Manager(ManagerOptions(kubeconfig=server.kubeconfig_path, handle_signals=False))
    client = manager.client  # what a reconciler keeps in __init__, before anything runs
    seen = Counting()
    manager.controller_for(Widget).complete(seen)
    async with manager:
        await client.create(widget("from-kubeconfig"))
        await eventually(lambda: "from-kubeconfig" in seen.names())
    broken = Manager(
        ManagerOptions(kubeconfig=str(Path(server.kubeconfig_path).parent / "missing"), handle_signals=False)
    )
    with pytest.raises(ConfigError):
        await broken.run()


async def test_namespaced_mode_watches_only_its_namespaces(server: TestAPIServer) -> None:
    for namespace in ("team-a", "team-b", "team-c"):
        await server_client_create_namespace(server, namespace)
    seen = Counting()
    manager = manager_for(server, namespaces=["team-a", "team-b"])
    manager.controller_for(Widget).complete(seen)
    server.reset_requests()
    async with manager:
        for namespace in ("team-a", "team-b", "team-c"):
            await manager.client.create(widget(f"in-{namespace}", namespace))
        await eventually(lambda: {"in-team-a", "in-team-b"} <= seen.names())
        assert [reflector.namespace for reflector in manager.informer(Widget).reflectors] == ["team-a", "team-b"]
        reads = [r for r in server.requests if r.resource == "widgets" and r.verb in ("list", "watch")]
    assert reads and {r.namespace for r in reads} == {"team-a", "team-b"}  # never a cluster-wide list or watch
    assert "in-team-c" not in seen.names()


async def server_client_create_namespace(server: TestAPIServer, name: str) -> None:
    manager = manager_for(server)
    try:
        namespaces = await manager.client.dynamic.resource("v1", "Namespace")
        await manager.client.dynamic.create(namespaces, {"metadata": {"name": name}})
    finally:
        await manager.client.close()


def test_run_uses_uvloop_when_installed() -> None:
    uvloop = pytest.importorskip("uvloop")

    async def loop_type() -> type:
        return type(asyncio.get_running_loop())

    assert run(loop_type()) is uvloop.Loop
    assert not issubclass(run(loop_type(), use_uvloop=False), uvloop.Loop)


def test_generated_main_reads_watch_namespace(monkeypatch: pytest.MonkeyPatch) -> None:
    """The scaffolded entry point turns WATCH_NAMESPACE (comma-separated) into ManagerOptions.namespaces."""
    from pyop_scaffold.render.templates import render_template

    main = render_template("init", {"package": "demo", "namespaced": True})["demo/main.py"].decode()
    scope: dict[str, object] = {"__name__": "generated_main"}
    exec(compile(main, "demo/main.py", "exec"), scope)  # noqa: S102 - the template's own code, not user input
    monkeypatch.setenv("WATCH_NAMESPACE", "team-a, team-b,")
    args = scope["parse_args"](["--leader-elect", "--metrics-bind-address=:8443"])  # type: ignore[operator]
    manager = scope["build_manager"](args)  # type: ignore[operator]
    options = manager.options
    assert options.namespaces == ["team-a", "team-b"]
    assert options.leader_election and options.metrics_secure and not options.enable_http2
    assert options.metrics_bind_address == ":8443" and options.health_probe_bind_address == ":8081"
    monkeypatch.delenv("WATCH_NAMESPACE")
    with pytest.raises(SystemExit, match="WATCH_NAMESPACE must be set"):
        scope["build_manager"](args)  # type: ignore[operator]
    assert os.environ.get("WATCH_NAMESPACE") is None


async def test_the_reconciliation_timeout_comes_from_the_manager_unless_a_controller_sets_its_own(
    server: TestAPIServer,
) -> None:
    manager = manager_for(server, reconciliation_timeout=90.0)
    default = manager.controller_for(Widget).complete(Counting())
    own = manager.controller_for(Widget).named("quick").with_options(reconciliation_timeout=5).complete(Counting())
    assert (default.reconciliation_timeout, own.reconciliation_timeout) == (90.0, 5)
    assert manager_for(server).controller_for(Widget).complete(Counting()).reconciliation_timeout is None
