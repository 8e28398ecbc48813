"""Everything a manager can be told, with controller-runtime's defaults.

The generated `main.py` fills these from Kubebuilder's command-line flags; tests build them directly (with
`config=` pointing at `pyop.testing`'s server, bind addresses `"0"` or `"127.0.0.1:0"`, and short leader-election
durations).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pyop.client.config import ClientConfig
from pyop.log import LogFormat

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

__all__ = ["ManagerOptions"]


@dataclass
class ManagerOptions:
    """Settings of a `pyop.manager.Manager`. Durations are seconds."""

    # Where the API server is: `config` as is, else kubeconfig/context (controller-runtime's lookup order:
    # argument, KUBECONFIG, in-cluster service account, ~/.kube/config).
    kubeconfig: str | os.PathLike[str] | None = None
    context: str | None = None
    config: ClientConfig | None = None

    # Cache: `namespaces` restricts every informer of namespaced kinds (a namespaced operator; WATCH_NAMESPACE).
    namespaces: Sequence[str] | None = None
    resync_period: float | None = None
    informer_options: Mapping[str, Any] = field(default_factory=dict)

    # Metrics: "0" switches the endpoint off; ":8443" HTTPS (secure) or ":8080" HTTP.
    metrics_bind_address: str = "0"
    metrics_secure: bool = True
    metrics_cert_path: str = ""
    metrics_cert_name: str = "tls.crt"
    metrics_key_name: str = "tls.key"
    metrics_cert_watch_interval: float = 10.0  # seconds between checks of a metrics_cert_path pair for renewal
    enable_http2: bool = False
    metrics_registry: CollectorRegistry | None = None

    # Webhooks (served only when some are registered, on every replica): HTTPS on webhook_host:webhook_port with
    # the pair in webhook_cert_path (controller-runtime's /tmp/k8s-webhook-server/serving-certs when empty).
    webhook_port: int = 9443
    webhook_host: str = ""
    webhook_cert_path: str = ""
    webhook_cert_name: str = "tls.crt"
    webhook_key_name: str = "tls.key"
    webhook_cert_watch_interval: float = 10.0  # seconds between checks of the webhook pair for renewal

    # Probes: "0" switches /healthz and /readyz off; Kubebuilder's flag default is ":8081".
    health_probe_bind_address: str = "0"

    # Every server above (metrics, webhooks, probes) closes a connection whose request head is not complete
    # after http_header_timeout seconds, and a kept-alive one idle for http_idle_timeout (controller-runtime's
    # ReadHeaderTimeout 32 s and IdleTimeout 90 s).
    http_header_timeout: float = 32.0
    http_idle_timeout: float = 90.0

    # Leader election on a coordination.k8s.io/v1 Lease named leader_election_id.
    leader_election: bool = False
    leader_election_id: str = ""
    leader_election_namespace: str | None = None
    leader_election_release_on_cancel: bool = False
    leader_election_identity: str | None = None
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0

    # Lifecycle.
    graceful_shutdown_timeout: float = 30.0
    cache_sync_timeout: float = 120.0
    handle_signals: bool = True
    max_concurrent_reconciles: int = 1
    # Seconds after which a running reconcile is cancelled and retried with backoff (None: never, as
    # controller-runtime's default); a controller's `with_options(reconciliation_timeout=...)` overrides it.
    reconciliation_timeout: float | None = None

    # Logging: None leaves logging as the program set it up (tests); "console" or "json" configures it.
    log_format: LogFormat | None = None
    log_level: str = "info"
