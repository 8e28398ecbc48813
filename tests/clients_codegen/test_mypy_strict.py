"""mypy --strict over the generated code, and over code using it: a verb a tag removed is a type error."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from clients_helpers import PACKAGE, pyop, tagged_project

ALLOWED = f"""
from __future__ import annotations

from pyop.api.k8s.apps.v1 import Deployment
from pyop.api.k8s.autoscaling.v1 import Scale
from pyop.api.k8s.batch.v1 import CronJob
from pyop.client import Client
from pyop.clientset import Clientset as BuiltinClientset
from pyop.informers import SharedInformerFactory

from {PACKAGE}.api.v1.harbor_types import Fleet, Sailor, Ship
from {PACKAGE}.generated import Clientset, FakeClientset, InformerFactory


async def use(client: Client, ship: Ship, sailor: Sailor, scale: Scale) -> None:
    clientset = Clientset(client)
    harbor = clientset.harbor_v1()
    got: Ship = await harbor.ships("docks").get("black-pearl")
    await harbor.ships("docks").update_status(got)
    await harbor.ships("docks").apply(ship, field_manager="me")
    await harbor.harbors().delete_collection(label_selector={{"a": "b"}})
    await harbor.sailors("docks").create(sailor)
    await harbor.sailors("docks").delete("jack")
    scaled: Scale = await harbor.beacons("docks").get_scale("b")
    await harbor.fleets("docks").update_scale(scaled)
    fleet: Fleet = await harbor.fleets("docks").get("f")
    del fleet
    async for event in harbor.charts("docks").watch(timeout_seconds=1):
        print(event.type)
    print([s.spec.crew for s in (await harbor.cargos("docks").list()).items])
    builtin = BuiltinClientset(client)
    cron: CronJob = await builtin.batch_v1().cron_jobs("ns").get("nightly")
    deployment: Deployment = await builtin.apps_v1().deployments("ns").get("web")
    await builtin.apps_v1().deployments("ns").update_scale(await builtin.apps_v1().deployments("ns").get_scale("web"))
    del cron, deployment
    informers = InformerFactory(SharedInformerFactory(client))
    cached: Ship | None = informers.harbor_v1().ships().lister().ships("docks").get("black-pearl")
    harbor_cached = informers.harbor_v1().harbors().lister().get("main")
    del cached, harbor_cached
    fake = FakeClientset(ship)
    await fake.harbor_v1().ships("docks").get("black-pearl")
    print(fake.actions)
"""

# Each line calls a verb that a tag removed (or passes a wrong type); mypy must flag exactly these lines.
REMOVED = f"""
from __future__ import annotations

from pyop.client import Client
from pyop.clientset import Clientset as BuiltinClientset

from {PACKAGE}.api.v1.harbor_types import Logbook, Sailor
from {PACKAGE}.generated import Clientset


async def misuse(client: Client, logbook: Logbook, sailor: Sailor) -> None:
    harbor = Clientset(client).harbor_v1()
    await harbor.sailors("docks").get("jack")  # onlyVerbs=create,delete
    await harbor.charts("docks").create(sailor)  # readonly
    await harbor.logbooks("docks").update_status(logbook)  # noStatus
    await harbor.beacons("docks").list()  # noVerbs
    await harbor.cargos("docks").apply(sailor, field_manager="me")  # skipVerbs=...,apply
    harbor.harbors("docks")  # nonNamespaced: no namespace argument
    await harbor.ships("docks").create(sailor)  # a Sailor is not a Ship
    await BuiltinClientset(client).core_v1().bindings("ns").get("b")  # Binding: onlyVerbs=create
"""


def test_generated_code_and_its_users_pass_mypy_strict_and_removed_verbs_do_not(tmp_path: Path) -> None:
    root = tagged_project(tmp_path)
    assert pyop("make", "clients", cwd=root).exit_code == 0
    (root / "allowed.py").write_text(ALLOWED)
    (root / "removed.py").write_text(REMOVED)
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir=/dev/null",
         "-p", f"{PACKAGE}.generated", "-m", "allowed", "-m", "removed"],
        cwd=root, capture_output=True, text=True, check=False,
    )  # fmt: skip
    errors = [line for line in run.stdout.splitlines() if ": error:" in line]
    flagged = sorted({int(m.group(1)) for line in errors if (m := re.match(r"removed\.py:(\d+):", line))})
    expected = [n for n, text in enumerate(REMOVED.splitlines(), start=1) if "  # " in text]
    assert [line for line in errors if not line.startswith("removed.py")] == [], run.stdout
    assert flagged == expected, run.stdout
    assert 'has no attribute "get"' in run.stdout
    assert "Too many arguments" in run.stdout
