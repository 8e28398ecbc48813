"""A generated clientset and its informers driving the test API server; the built-in clientset too; the fakes."""

from __future__ import annotations

import asyncio
import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from clients_helpers import PACKAGE, pyop, tagged_project

from pyop.api import ObjectMeta
from pyop.client import Client, ConflictError, NotFoundError, Transport
from pyop.client.dynamic import EventType
from pyop.informers import SharedInformerFactory
from pyop.testing import TestAPIServer


@pytest.fixture
def project(tmp_path: Path) -> Iterator[tuple[Path, ModuleType, ModuleType]]:
    """The tagged project with its CRDs and clientset generated, importable; (root, generated, types)."""
    root = tagged_project(tmp_path)
    assert pyop("make", "manifests", cwd=root).exit_code == 0
    assert pyop("make", "clients", cwd=root).exit_code == 0
    sys.path.insert(0, str(root))
    try:
        yield (
            root,
            importlib.import_module(f"{PACKAGE}.generated"),
            importlib.import_module(f"{PACKAGE}.api.v1.harbor_types"),
        )
    finally:
        sys.path.remove(str(root))
        for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
            del sys.modules[name]


async def test_generated_clientset_and_informers_against_the_test_server(
    project: tuple[Path, ModuleType, ModuleType], test_api_server: TestAPIServer
) -> None:
    root, generated, types = project
    test_api_server.load_crds(root / "config" / "crd" / "bases")
    async with Client(Transport(test_api_server.client_config())) as client:
        harbor = generated.Clientset(client).harbor_v1()
        ships = harbor.ships("default")
        created = await ships.create(types.Ship(metadata=ObjectMeta(name="pearl"), spec=types.ShipSpec(crew=3)))
        assert isinstance(created, types.Ship) and created.metadata.resource_version
        got = await ships.get("pearl")
        assert got.spec.crew == 3
        got.status = types.ShipStatus(phase="Sailing")
        assert (await ships.update_status(got)).status.phase == "Sailing"
        patched = await ships.patch("pearl", {"spec": {"crew": 5}})
        assert patched.spec.crew == 5 and patched.status.phase == "Sailing"
        with pytest.raises(ConflictError):
            await ships.update(got)  # got's resourceVersion is stale
        applied = await ships.apply(
            types.Ship(metadata=ObjectMeta(name="pearl"), spec=types.ShipSpec(crew=7)), field_manager="e2e", force=True
        )
        assert applied.spec.crew == 7
        page = await ships.list()
        assert [item.metadata.name for item in page.items] == ["pearl"] and page.resource_version

        # cluster-scoped kind: no namespace anywhere
        main = await harbor.harbors().create(types.Harbor(metadata=ObjectMeta(name="main")))
        assert main.metadata.namespace is None
        assert [h.metadata.name for h in (await harbor.harbors().list()).items] == ["main"]

        # informers and listers over the shared factory
        factory = SharedInformerFactory(client)
        informers = generated.InformerFactory(factory)
        seen: list[str] = []
        informers.harbor_v1().ships().informer().add_event_handler(
            on_add=lambda obj: seen.append(obj["metadata"]["name"])
        )
        ship_lister = informers.harbor_v1().ships().lister()
        harbor_lister = informers.harbor_v1().harbors().lister()
        factory.start()
        try:
            assert all((await factory.wait_for_cache_sync(timeout=10)).values())
            cached = ship_lister.ships("default").get("pearl")
            assert isinstance(cached, types.Ship) and cached.spec.crew == 7
            assert harbor_lister.get("main") is not None
            await ships.create(types.Ship(metadata=ObjectMeta(name="dutchman")))
            for _ in range(100):
                if ship_lister.ships("default").get("dutchman") is not None:
                    break
                await asyncio.sleep(0.05)
            assert [s.metadata.name for s in ship_lister.list()] == ["dutchman", "pearl"]
            assert seen[:1] == ["pearl"] and "dutchman" in seen
        finally:
            await factory.shutdown()

        # watch, then delete
        events: list[Any] = []

        async def watch() -> None:
            async for event in ships.watch(resource_version=page.resource_version, timeout_seconds=5):
                events.append(event)
                if event.type is EventType.DELETED:
                    return

        watcher = asyncio.create_task(watch())
        await asyncio.sleep(0.2)
        deleted = await ships.delete("pearl")
        assert deleted is None or deleted.metadata.name == "pearl"
        await asyncio.wait_for(watcher, 10)
        assert events[-1].type is EventType.DELETED and events[-1].object.metadata.name == "pearl"
        with pytest.raises(NotFoundError):
            await ships.get("pearl")
        await harbor.ships("").delete_collection()
        assert (await harbor.ships("").list()).items == []

        # extras: a subresource read and write through +genclient:method
        fleets = harbor.fleets("default")
        await client.create(types.Fleet(metadata=ObjectMeta(name="armada", namespace="default")))
        fleet = await fleets.get("armada")
        assert fleet.metadata.name == "armada"
        scale = await client.get_scale(types.Fleet, "armada", "default")
        assert scale.spec.replicas == 1
        from pyop.api.k8s.autoscaling.v1 import Scale

        wanted = Scale.model_validate(scale.model_dump())
        wanted.spec.replicas = 4
        updated = await fleets.update_scale(wanted)
        assert updated.spec.replicas == 4
        patched_scale = await fleets.patch_scale("armada", {"spec": {"replicas": 2}})
        assert patched_scale.spec.replicas == 2
        assert (await fleets.get("armada")).spec.crew == 2


async def test_builtin_clientset_against_the_test_server(test_api_server: TestAPIServer) -> None:
    from pyop.api.k8s.apps.v1 import Deployment
    from pyop.api.k8s.batch.v1 import CronJob
    from pyop.api.k8s.core.v1 import ConfigMap
    from pyop.clientset import Clientset, InformerFactory

    deployment = Deployment.model_validate(
        {
            "metadata": {"name": "web"},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "web", "image": "nginx"}]},
                },
            },
        }
    )
    async with Client(Transport(test_api_server.client_config())) as client:
        clientset = Clientset(client)
        deployments = clientset.apps_v1().deployments("default")
        created = await deployments.create(deployment)
        assert created.spec is not None and created.spec.replicas == 2
        scale = await deployments.get_scale("web")
        assert scale.spec is not None and scale.spec.replicas == 2
        scale.spec.replicas = 5
        assert (await deployments.update_scale(scale)).spec.replicas == 5  # type: ignore[union-attr]
        config_maps = clientset.core_v1().config_maps("default")
        await config_maps.create(ConfigMap.model_validate({"metadata": {"name": "settings"}, "data": {"a": "1"}}))
        assert (await config_maps.get("settings")).data == {"a": "1"}
        namespaces = [n.metadata.name for n in (await clientset.core_v1().namespaces().list()).items if n.metadata]
        assert "default" in namespaces
        cron = CronJob.model_validate(
            {
                "metadata": {"name": "nightly"},
                "spec": {
                    "schedule": "0 3 * * *",
                    "jobTemplate": {
                        "spec": {
                            "template": {
                                "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}
                            }
                        }
                    },
                },
            }
        )
        await clientset.batch_v1().cron_jobs("default").create(cron)
        factory = SharedInformerFactory(client)
        informers = InformerFactory(factory)
        cron_lister = informers.batch_v1().cron_jobs().lister()
        factory.start()
        try:
            assert all((await factory.wait_for_cache_sync(timeout=10)).values())
            cached = cron_lister.cron_jobs("default").get("nightly")
            assert cached is not None and cached.spec is not None and cached.spec.schedule == "0 3 * * *"
        finally:
            await factory.shutdown()


async def test_fake_clientset_records_actions_and_keeps_the_rules(project: tuple[Path, ModuleType, ModuleType]) -> None:
    _, generated, types = project
    pearl = types.Ship(metadata=ObjectMeta(name="pearl", namespace="docks", labels={"fleet": "black"}))
    fake = generated.FakeClientset(pearl, types.Harbor(metadata=ObjectMeta(name="main")))
    ships = fake.harbor_v1().ships("docks")
    got = await ships.get("pearl")
    assert isinstance(got, types.Ship) and got.metadata.resource_version == "1"
    got.status = types.ShipStatus(phase="Docked")
    got.spec.crew = 99
    after = await ships.update_status(got)
    assert after.status.phase == "Docked" and after.spec.crew == 1  # a status write changes only the status
    with pytest.raises(ConflictError):
        await ships.update(got)  # stale resourceVersion
    await ships.create(types.Ship(metadata=ObjectMeta(name="dutchman")))
    assert [s.metadata.name for s in (await ships.list(label_selector={"fleet": "black"})).items] == ["pearl"]
    assert (await fake.harbor_v1().harbors().get("main")).metadata.namespace is None
    await ships.delete("dutchman")
    with pytest.raises(NotFoundError):
        await ships.get("dutchman")
    assert [(a.verb, a.resource, a.namespace, a.name, a.subresource) for a in fake.actions] == [
        ("get", "ships", "docks", "pearl", None),
        ("update", "ships", "docks", "pearl", "status"),
        ("update", "ships", "docks", "pearl", None),
        ("create", "ships", "docks", "dutchman", None),
        ("list", "ships", "docks", None, None),
        ("get", "harbors", None, "main", None),
        ("delete", "ships", "docks", "dutchman", None),
        ("get", "ships", "docks", "dutchman", None),
    ]
