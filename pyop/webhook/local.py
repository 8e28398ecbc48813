"""Local webhook development: `make run ENABLE_WEBHOOKS=true` serves the webhooks from the developer's machine.

Kubebuilder's `make run` switches webhooks off, because the API server calls them through the in-cluster Service
with cert-manager's certificate. Here, with ``ENABLE_WEBHOOKS=true`` outside a pod (or ``LOCAL_WEBHOOKS=<host>``,
the address the API server reaches this machine at: ``127.0.0.1``, the default, for ``pyop test-server``, the
Docker gateway or ``host.docker.internal`` for kind), the
manager makes a certificate for that host on the fly, and once its webhook server listens it installs the
project's webhook configurations (config/webhook/manifests.yaml) and the conversion webhooks of its converting
CRDs (named by config/crd/patches/webhook_in_*.yaml) into the API server, pointed at
``https://<host>:<port><path>`` with that certificate as the CA, as envtest points them at a test's server. On
shutdown it deletes the configurations it installed and puts the CRDs' conversion sections back, so that no
webhook outlives the process (a ``failurePolicy: Fail`` webhook nobody serves would block every write).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import copy
import logging
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pyop.client.errors import NotFoundError

if TYPE_CHECKING:
    from pyop.manager import Manager

__all__ = ["LocalWebhooks", "local_host", "local_webhooks_from_environment", "pointed_at"]

log = logging.getLogger("pyop.webhook.local")

HOST_VARIABLE = "LOCAL_WEBHOOKS"
CONFIGURATION_KINDS = ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")
ADMISSION_API = "admissionregistration.k8s.io/v1"
CRD_API = "apiextensions.k8s.io/v1"


def pointed_at(configuration: Mapping[str, Any], url: str, ca_pem: bytes | None) -> dict[str, Any]:
    """A copy of a webhook configuration whose webhooks call ``url`` + their service path, trusting ``ca_pem``."""
    result = copy.deepcopy(dict(configuration))
    base = url.rstrip("/")
    for hook in result.get("webhooks") or []:
        client = hook.setdefault("clientConfig", {})
        service = client.pop("service", None)
        path = (service or {}).get("path") or (urlsplit(client["url"]).path if client.get("url") else "")
        client["url"] = base + (path or "")
        if ca_pem is not None:
            client["caBundle"] = base64.b64encode(ca_pem).decode()
    return result


def _documents(path: Path) -> list[dict[str, Any]]:
    import yaml  # a development path: the manager in a cluster never reads YAML

    if not path.is_file():
        return []
    return [document for document in yaml.safe_load_all(path.read_text()) if isinstance(document, dict)]


def converting_crds(patches: Path) -> list[str]:
    """The CRDs `create webhook --conversion` turned conversion on for (config/crd/patches/webhook_in_*.yaml)."""
    names = []
    for path in sorted(patches.glob("webhook_in_*.yaml")):
        for document in _documents(path):
            if document.get("kind") == "CustomResourceDefinition":
                names.append(str((document.get("metadata") or {}).get("name", "")))
    return [name for name in names if name]


class LocalWebhooks:
    """The certificate made on the fly, and what was installed into the API server (to take back at the end)."""

    def __init__(self, manager: Manager, host: str, manifests: Path, crds: list[str]) -> None:
        from pyop.manager.certificates import write_self_signed_certificate

        self.manager = manager
        self.host = host
        self.manifests = manifests
        self.crds = crds
        self.folder = Path(tempfile.mkdtemp(prefix="pyop-local-webhooks-"))
        certificate, key = write_self_signed_certificate(
            self.folder, list(dict.fromkeys([host, "127.0.0.1", "localhost"]))
        )
        self.ca_pem = certificate.read_bytes()
        server = manager.get_webhook_server()
        server.certificate, server.key = certificate, key
        self.installed: list[tuple[str, str]] = []  # (kind, name)
        self.conversions: dict[str, Any] = {}  # CRD name -> its conversion section before
        self.ready = asyncio.Event()

    @property
    def url(self) -> str:
        http = self.manager.get_webhook_server().http
        assert http is not None and http.bound is not None
        return f"https://{self.host}:{http.bound[1]}"

    async def run(self) -> None:
        """Install once the webhook server listens, then hold until cancelled (the manager stops) and uninstall."""
        server = self.manager.get_webhook_server()
        try:
            while not server.started:
                await asyncio.sleep(0.05)
            await self.install()
            self.ready.set()
            await asyncio.Event().wait()
        finally:
            with contextlib.suppress(Exception):
                await asyncio.shield(self.uninstall())
            shutil.rmtree(self.folder, ignore_errors=True)

    async def install(self) -> None:
        client = self.manager.client.dynamic
        url = self.url
        for document in _documents(self.manifests):
            kind = document.get("kind", "")
            if kind not in CONFIGURATION_KINDS:
                continue
            resource = await client.resource(ADMISSION_API, kind)
            configuration = pointed_at(document, url, self.ca_pem)
            configuration["apiVersion"] = ADMISSION_API
            name = configuration["metadata"]["name"]
            try:
                current = await client.get(resource, name)
            except NotFoundError:
                await client.create(resource, configuration)
            else:
                configuration["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
                await client.update(resource, configuration)
            self.installed.append((kind, name))
        if self.crds:
            resource = await client.resource(CRD_API, "CustomResourceDefinition")
            for name in self.crds:
                try:
                    crd = await client.get(resource, name)
                except NotFoundError:
                    log.warning("converting CRD not installed; run `make install` first", extra={"crd": name})
                    continue
                self.conversions[name] = copy.deepcopy(crd["spec"].get("conversion"))
                crd["spec"]["conversion"] = {
                    "strategy": "Webhook",
                    "webhook": {
                        "clientConfig": {"url": f"{url}/convert", "caBundle": base64.b64encode(self.ca_pem).decode()},
                        "conversionReviewVersions": ["v1"],
                    },
                }
                await client.update(resource, crd)
        log.info("serving webhooks locally", extra={"url": url, "configurations": [n for _, n in self.installed]})

    async def uninstall(self) -> None:
        client = self.manager.client.dynamic
        for kind, name in self.installed:
            resource = await client.resource(ADMISSION_API, kind)
            with contextlib.suppress(NotFoundError):
                await client.delete(resource, name)
        self.installed.clear()
        if self.conversions:
            resource = await client.resource(CRD_API, "CustomResourceDefinition")
            for name, conversion in self.conversions.items():
                with contextlib.suppress(NotFoundError):
                    crd = await client.get(resource, name)
                    if conversion is None:
                        crd["spec"].pop("conversion", None)
                    else:
                        crd["spec"]["conversion"] = conversion
                    await client.update(resource, crd)
            self.conversions.clear()


def local_host(env: Mapping[str, str]) -> str | None:
    """The host to serve at: ``LOCAL_WEBHOOKS`` (``false`` turns it off), else ``127.0.0.1`` when webhooks are
    enabled explicitly (``ENABLE_WEBHOOKS=true``, what ``make run ENABLE_WEBHOOKS=true`` sets) outside a pod; a
    manager in a cluster (``KUBERNETES_SERVICE_HOST`` set) is served through its Service and never local."""
    given = env.get(HOST_VARIABLE, "").strip()
    if given.lower() in ("false", "off", "0"):
        return None
    if given:
        return given
    if env.get("ENABLE_WEBHOOKS") == "true" and not env.get("KUBERNETES_SERVICE_HOST"):
        return "127.0.0.1"
    return None


def local_webhooks_from_environment(
    manager: Manager, environ: Mapping[str, str] | None = None, *, root: Path | None = None
) -> LocalWebhooks | None:
    """Serve the registered webhooks locally when ``LOCAL_WEBHOOKS`` names the host (call after registering them);
    None, and nothing changed, when it is unset or no webhook is registered."""
    env = os.environ if environ is None else environ
    host = local_host(env)
    if host is None or manager.webhook_server is None:
        return None
    project = root or Path.cwd()
    local = LocalWebhooks(
        manager,
        host,
        project / "config" / "webhook" / "manifests.yaml",
        converting_crds(project / "config" / "crd" / "patches"),
    )
    manager.add_runnable(local.run, needs_leader_election=False)
    return local
