"""One answer to "can this namespace take new objects" (pyop.apiserver.registry.namespaces.namespace_state), asked
by the registry's NamespaceLifecycle check and by the two controllers that fill namespaces: in a namespace whose
deletion is held by a finalizer, a create is refused with NamespaceTerminating and neither the default
ServiceAccount nor kube-root-ca.crt is put back once deleted; in a live one both come back."""

from __future__ import annotations

from pyop.apiserver.registry.namespaces import namespace_state
from pyop.testing import TestAPIServer
from testing_server.helpers import Api, api_for, configmap

MERGE = "application/merge-patch+json"
NAMESPACES = "/api/v1/namespaces"


async def _hold_and_delete(api: Api, namespace: str) -> None:
    """``namespace`` made, then deleted while a finalizer on one of its ConfigMaps keeps it Terminating."""
    await api.create_ok(NAMESPACES, {"metadata": {"name": namespace}})
    held = configmap("held")
    held["metadata"]["finalizers"] = ["example.com/hold"]
    await api.create_ok(f"{NAMESPACES}/{namespace}/configmaps", held)
    status, answer = await api.delete(f"{NAMESPACES}/{namespace}")
    assert status == 200 and answer["status"]["phase"] == "Terminating"


async def test_the_three_states() -> None:
    async with TestAPIServer(root_ca_config_maps=False) as server, api_for(server) as api:
        assert namespace_state(server.store, "default") == "live"
        assert namespace_state(server.store, "nowhere") == "missing"
        await _hold_and_delete(api, "doomed")
        assert namespace_state(server.store, "doomed") == "terminating"

        status, error = await api.post(f"{NAMESPACES}/nowhere/configmaps", configmap("lost"))
        assert status == 404 and error["message"] == 'namespaces "nowhere" not found'
        status, error = await api.post(f"{NAMESPACES}/doomed/configmaps", configmap("late"))
        assert status == 403 and error["details"]["causes"][0]["reason"] == "NamespaceTerminating"
        await api.patch(f"{NAMESPACES}/doomed/configmaps/held", {"metadata": {"finalizers": None}}, MERGE)


async def test_the_controllers_fill_live_namespaces_only() -> None:
    async with TestAPIServer() as server, api_for(server) as api:
        await api.create_ok(NAMESPACES, {"metadata": {"name": "alive"}})
        await _hold_and_delete(api, "doomed")
        for path in ("serviceaccounts/default", "configmaps/kube-root-ca.crt"):
            for namespace in ("alive", "doomed"):
                status, _ = await api.delete(f"{NAMESPACES}/{namespace}/{path}")
                assert status in (200, 404), (namespace, path, status)  # the namespace's deletion may have won
            status, _ = await api.get(f"{NAMESPACES}/alive/{path}")
            assert status == 200, path  # put back at once
            status, _ = await api.get(f"{NAMESPACES}/doomed/{path}")
            assert status == 404, path  # not in a namespace being terminated
        await api.patch(f"{NAMESPACES}/doomed/configmaps/held", {"metadata": {"finalizers": None}}, MERGE)
