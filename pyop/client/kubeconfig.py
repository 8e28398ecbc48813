"""Load a `ClientConfig` from kubeconfig files or the in-cluster service account.

Library choice: `kubernetes_asyncio`'s config loader (PyPI `kubernetes-asyncio`). Compared (Nov 2026, measured
in scratch virtualenvs on this machine):

- `kubernetes` (official, 126 MB installed) drags requests/urllib3/pydantic models; its async config is a port
  of
  kubernetes_asyncio's.
- `lightkube` 1.0 (~10 MB with httpx2, msgspec) parses kubeconfig but runs exec plugins only inside its httpx
  auth
  flow, treats `KUBECONFIG` as a single path and prefers in-cluster over `KUBECONFIG`.
- `kr8s` 0.20 (~50 MB with httpx, anyio, cryptography): good neutral `KubeAuth`, but a second HTTP stack and
  no
  exec-credential expiry.
- `kubernetes_asyncio` 36 (48 MB, mostly generated models we never call): merges colon-separated `KUBECONFIG`
  lists like kubectl, supports contexts, client certificates (file or data), tokens and token files, exec
  plugins (`KUBERNETES_EXEC_INFO`, `expirationTimestamp`), OIDC and in-cluster service accounts with token
  re-reading; its dependencies (aiohttp, yarl, certifi, urllib3, dateutil, pyyaml) are ours already, only
  `six` is added. Importing `kubernetes_asyncio.config` the ordinary way costs ~0.4 s and ~40 MB RSS on top of
  aiohttp (the package imports its generated client), so only the loader's own modules are imported
  (`pyop.client.config_library`, ~0.03 s), and only when a kubeconfig or service account is actually loaded.

Only this module and `pyop.client.config_library` (which imports it) touch the library, so moving to
`kubernetes.aio` (where this loader is being ported) stays a small change. The HTTP layer stays ours
(`pyop.client.transport`).

Resolution order follows controller-runtime's `GetConfig`: explicit kubeconfig argument, `KUBECONFIG`,
in-cluster service account, `~/.kube/config`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pyop.client.config import ClientConfig
from pyop.client.config_library import config_library
from pyop.client.errors import ClientError

SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
DEFAULT_KUBECONFIG = Path("~/.kube/config")


class ConfigError(ClientError):
    """No usable configuration: missing file, unknown context, broken exec plugin."""


@dataclass
class _KubeconfigAuth:
    """Bearer token from a kubeconfig user: static, token file, OIDC or exec plugin; refreshed when expired.

    The library's loader re-runs the exec plugin once `expirationTimestamp` passes; after a 401 the whole
    kubeconfig is loaded again, which runs the plugin afresh (credentials revoked before their expiry).
    """

    source: str | dict[str, Any]
    context: str | None
    loader: Any
    configuration: Any

    async def authorization(self) -> str | None:
        if self._uses_exec() and self._exec_credential_expired():
            await self.loader.load_from_exec_plugin()
            token = getattr(self.loader, "token", None)
            if token:
                self.configuration.api_key["BearerToken"] = token
        value = await self.configuration.get_api_key_with_prefix("BearerToken")
        return str(value) if value else None

    async def refresh(self) -> bool:
        if not (self._uses_exec() or self.loader.provider):
            return False
        fresh = await _load_kubeconfig(self.source, self.context)
        if isinstance(fresh.auth, _KubeconfigAuth):
            self.loader, self.configuration = fresh.auth.loader, fresh.auth.configuration
        return True

    def _exec_credential_expired(self) -> bool:
        """Whether the plugin's credential carried an expiry that has passed (no expiry: valid until a 401)."""
        expiry = getattr(self.loader, "exec_plugin_expiry", None)
        if not isinstance(expiry, datetime):
            return False
        if expiry.tzinfo is None:
            expiry = expiry.replace(tzinfo=UTC)
        return expiry <= datetime.now(UTC)

    def _uses_exec(self) -> bool:
        user = getattr(self.loader, "_user", None)
        return user is not None and "exec" in user


@dataclass
class _ServiceAccountAuth:
    """The pod's projected service-account token, re-read periodically by the library (kubelet rotates it)."""

    configuration: Any

    async def authorization(self) -> str | None:
        value = await self.configuration.get_api_key_with_prefix("BearerToken")
        return str(value) if value else None

    async def refresh(self) -> bool:
        hook = self.configuration.refresh_api_key_hook
        if hook is not None:
            hook(self.configuration)
        return True


async def load_config(
    kubeconfig: str | os.PathLike[str] | dict[str, Any] | None = None,
    context: str | None = None,
    *,
    service_account_dir: str | os.PathLike[str] = SERVICE_ACCOUNT_DIR,
) -> ClientConfig:
    """Find and load the configuration an operator should use, in controller-runtime's order.

    `kubeconfig` may be a path, a colon-separated list of paths, or an already parsed dict. `context` selects
    a kubeconfig context (default: the file's current-context); it is an error with in-cluster configuration.
    """
    if kubeconfig is not None:
        return await _load_kubeconfig(kubeconfig if isinstance(kubeconfig, dict) else os.fspath(kubeconfig), context)
    env_paths = os.environ.get("KUBECONFIG")
    if env_paths:
        return await _load_kubeconfig(env_paths, context)
    account_dir = Path(service_account_dir)
    if context is None and os.environ.get("KUBERNETES_SERVICE_HOST") and (account_dir / "token").is_file():
        return load_in_cluster_config(account_dir)
    default = DEFAULT_KUBECONFIG.expanduser()
    if default.is_file():
        return await _load_kubeconfig(str(default), context)
    raise ConfigError("no kubeconfig (argument, KUBECONFIG, ~/.kube/config) and not running in a cluster")


def load_in_cluster_config(service_account_dir: str | os.PathLike[str] = SERVICE_ACCOUNT_DIR) -> ClientConfig:
    """Configuration from the pod's service account: `KUBERNETES_SERVICE_HOST/PORT`, token, CA, namespace."""
    library = config_library()
    account_dir = Path(service_account_dir)
    configuration = library.Configuration()
    try:
        library.incluster_config.InClusterConfigLoader(
            token_filename=str(account_dir / "token"), cert_filename=str(account_dir / "ca.crt")
        ).load_and_set(configuration)
    except library.ConfigException as error:
        raise ConfigError(f"in-cluster configuration: {error}") from error
    namespace_file = account_dir / "namespace"
    namespace = namespace_file.read_text().strip() if namespace_file.is_file() else "default"
    return ClientConfig(
        server=str(configuration.host),
        auth=_ServiceAccountAuth(configuration),
        ca_file=configuration.ssl_ca_cert,
        namespace=namespace or "default",
    )


async def _load_kubeconfig(source: str | dict[str, Any], context: str | None) -> ClientConfig:
    library = config_library()
    kube_config = library.kube_config
    configuration = library.Configuration()
    try:
        if isinstance(source, dict):
            loader = await kube_config.load_kube_config_from_dict(
                source, context=context, client_configuration=configuration
            )
        else:
            loader = await kube_config.load_kube_config(
                config_file=source, context=context, client_configuration=configuration, persist_config=False
            )
    except (library.ConfigException, AssertionError, KeyError, TypeError, AttributeError, OSError) as error:
        raise ConfigError(f"kubeconfig {_describe(source)} context {context or '<current>'}: {error!r}") from error
    current = loader.current_context or {}
    namespace = (current.get("context") or {}).get("namespace") or "default"
    return ClientConfig(
        server=str(configuration.host),
        auth=_KubeconfigAuth(source, context, loader, configuration),
        ca_file=configuration.ssl_ca_cert,
        cert_file=configuration.cert_file,
        key_file=configuration.key_file,
        verify_ssl=bool(configuration.verify_ssl),
        tls_server_name=configuration.tls_server_name,
        proxy=configuration.proxy,
        namespace=namespace,
        context=current.get("name"),
    )


def _describe(source: str | dict[str, Any]) -> str:
    return "<dict>" if isinstance(source, dict) else source
