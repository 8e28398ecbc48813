"""The kubeconfig that points a client at a running test API server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

CONTEXT = "pyop-test"


def kubeconfig_dict(url: str, token: str, namespace: str = "default", ca_data: str | None = None) -> dict[str, Any]:
    """One cluster, one user (bearer token), one context named ``pyop-test``, selected as current; ``ca_data``
    (base64 PEM) is the CA an https server's certificate is verified with."""
    cluster: dict[str, Any] = {"server": url}
    if ca_data:
        cluster["certificate-authority-data"] = ca_data
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": CONTEXT, "cluster": cluster}],
        "users": [{"name": CONTEXT, "user": {"token": token}}],
        "contexts": [{"name": CONTEXT, "context": {"cluster": CONTEXT, "user": CONTEXT, "namespace": namespace}}],
        "current-context": CONTEXT,
        "preferences": {},
    }


def write_kubeconfig(path: Path, config: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    path.chmod(0o600)
    return path
