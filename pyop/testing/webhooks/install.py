"""Installing a project's webhook configurations into the test API server, pointed at a local webhook server.

envtest's ``WebhookInstallOptions`` reads ``config/webhook`` and rewrites every ``clientConfig.service`` to a URL
on the local webhook server, with its own CA as ``caBundle``: the manifests under test are the ones deployed,
only the address changes; envtest points the conversion webhooks of the CRDs it installs at the same server. This
does both for pyop's test server: the CRDs already served with ``conversion.strategy: Webhook`` get
``clientConfig.url`` = the server's URL + their service path (``/convert``) and the CA.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import yaml

from pyop.apiserver.registry.patch import clone_json
from pyop.testing.webhooks.config import GROUP, MUTATING_PLURAL, VALIDATING_PLURAL
from pyop.webhook.local import pointed_at  # one rewrite of clientConfig, for tests and `make run` alike

if TYPE_CHECKING:
    from pyop.apiserver.registry.operations import Operations

_PLURAL_BY_KIND = {
    "MutatingWebhookConfiguration": MUTATING_PLURAL,
    "ValidatingWebhookConfiguration": VALIDATING_PLURAL,
}


def load_documents(source: str | Path | dict[str, Any] | list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The YAML documents of a file, of the ``.yaml``/``.yml`` files under a folder, or the documents given."""
    if isinstance(source, dict):
        return [source]
    if isinstance(source, list):
        return list(source)
    root = Path(source)
    files = sorted(p for p in root.rglob("*") if p.suffix in (".yaml", ".yml")) if root.is_dir() else [root]
    documents: list[dict[str, Any]] = []
    for file in files:
        documents.extend(document for document in yaml.safe_load_all(file.read_text()) if isinstance(document, dict))
    return documents


def pem_bundle(ca_bundle: bytes | str | Path | None) -> bytes | None:
    """PEM bytes from PEM bytes, PEM text, or a file holding PEM."""
    if ca_bundle is None:
        return None
    if isinstance(ca_bundle, bytes):
        return ca_bundle
    if isinstance(ca_bundle, str) and "-----BEGIN" in ca_bundle:
        return ca_bundle.encode()
    return Path(ca_bundle).read_bytes()


def _pointed_conversion(crd: dict[str, Any], url: str, ca_pem: bytes | None) -> dict[str, Any] | None:
    """A copy of a CRD whose conversion webhook calls ``url`` + its path; None when it has no conversion webhook."""
    conversion = (crd.get("spec") or {}).get("conversion") or {}
    if conversion.get("strategy") != "Webhook":
        return None
    result = clone_json(crd)
    client = result["spec"]["conversion"].setdefault("webhook", {}).setdefault("clientConfig", {})
    service = client.pop("service", None)
    path = (service or {}).get("path") or (urlsplit(client["url"]).path if client.get("url") else "")
    client["url"] = url.rstrip("/") + (path or "")
    if ca_pem is not None:
        client["caBundle"] = base64.b64encode(ca_pem).decode()
    return result


def point_conversion_webhooks(operations: Operations, *, url: str, ca_pem: bytes | None) -> list[str]:
    """Point every served CRD's conversion webhook at ``url``; returns the names of the CRDs changed."""
    from pyop.apiserver.registry.operations import WriteOptions
    from pyop.testing.builtins.kinds import CRD_STORAGE_KEY

    crd_type = operations.resources.lookup("apiextensions.k8s.io", "v1", "customresourcedefinitions")
    options = WriteOptions(field_manager="pyop-testing")
    changed = []
    for crd in sorted(operations.store.objects(CRD_STORAGE_KEY, None), key=lambda crd: crd["metadata"]["name"]):
        pointed = _pointed_conversion(crd, url, ca_pem)
        if pointed is None:
            continue
        name = crd["metadata"]["name"]
        if pointed != crd:
            operations.update(crd_type, "", name, pointed, options)
        changed.append(name)
    return changed


def install_webhooks(
    operations: Operations,
    source: str | Path | dict[str, Any] | list[dict[str, Any]],
    *,
    url: str,
    ca_bundle: bytes | str | Path | None = None,
) -> list[str]:
    """Create or replace each Mutating/ValidatingWebhookConfiguration of ``source`` (other documents are skipped)
    and point the conversion webhooks of the served CRDs at ``url``; returns the configurations' names, then the
    CRDs'."""
    from pyop.apiserver.registry.operations import WriteOptions

    if not url.startswith("https://"):
        raise ValueError(f"webhook URL {url!r} must use https (the API server calls webhooks over TLS only)")
    ca_pem = pem_bundle(ca_bundle)
    options = WriteOptions(field_manager="pyop-testing")
    installed = []
    for document in load_documents(source):
        plural = _PLURAL_BY_KIND.get(document.get("kind", ""))
        if plural is None or not str(document.get("apiVersion", "")).startswith(f"{GROUP}/"):
            continue
        configuration = pointed_at(document, url, ca_pem)
        configuration["apiVersion"] = f"{GROUP}/v1"
        resource_type = operations.resources.lookup(GROUP, "v1", plural)
        name = configuration["metadata"]["name"]
        if operations.store.get(resource_type.storage_key, "", name) is None:
            operations.create(resource_type, "", configuration, options)
        else:
            operations.update(resource_type, "", name, configuration, options)
        installed.append(name)
    return installed + point_conversion_webhooks(operations, url=url, ca_pem=ca_pem)
