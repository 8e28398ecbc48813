{{ cookiecutter.license_header }}"""Entry point of the {{ cookiecutter.project_name }} manager: parses flags, builds the manager, runs controllers."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence

from pyop.manager import LeaderElectionLost, Manager, ManagerOptions, ping, run
from pyop.webhook.local import local_webhooks_from_environment

LEADER_ELECTION_ID = "{{ cookiecutter.leader_election_id }}"


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Flags as a Kubebuilder manager has them, so deployment manifests carry over unchanged."""
    parser = argparse.ArgumentParser(description="{{ cookiecutter.project_name }} manager")
    parser.add_argument(
        "--metrics-bind-address",
        default="0",
        help="Address the metrics endpoint binds to: ':8443' for HTTPS, ':8080' for HTTP, '0' to disable.",
    )
    parser.add_argument(
        "--health-probe-bind-address", default=":8081", help="Address the health probe endpoint binds to."
    )
    parser.add_argument(
        "--leader-elect",
        action="store_true",
        help="Enable leader election, ensuring only one active manager.",
    )
    parser.add_argument(
        "--leader-elect-release-on-cancel",
        action="store_true",
        help="Release the leader Lease on shutdown so the next replica takes over at once (only if the process "
        "exits right after the manager stops, as this one does).",
    )
    parser.add_argument(
        "--metrics-secure",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="Serve metrics over HTTPS, authenticated and authorised by the API server.",
    )
    parser.add_argument(
        "--metrics-cert-path", default="", help="Folder holding the metrics server certificate (tls.crt, tls.key)."
    )
    parser.add_argument(
        "--enable-http2",
        action="store_true",
        help="Enable HTTP/2 for the metrics server (off by default: HTTP/2 Rapid Reset CVEs).",
    )
    parser.add_argument(
        "--log-format", choices=("console", "json"), default="console", help="Log format: console or json."
    )
    parser.add_argument("--log-level", default="info", help="Log level: debug, info, warning, error.")
    parser.add_argument("--kubeconfig", default=None, help="Path to a kubeconfig; in-cluster config otherwise.")
    parser.add_argument("--context", default=None, help="The kubeconfig context to use.")
    # +kubebuilder:scaffold:flags
    return parser.parse_args(argv)


def watch_namespaces() -> list[str] | None:
    """Namespaces to watch, from WATCH_NAMESPACE (comma-separated); None watches the whole cluster."""
    value = os.environ.get("WATCH_NAMESPACE", "").strip()
    {%- if cookiecutter.namespaced %}
    if not value:
        raise SystemExit("WATCH_NAMESPACE must be set: this operator is namespace-scoped")
    {%- endif %}
    return [ns.strip() for ns in value.split(",") if ns.strip()] or None


def setup_controllers(manager: Manager) -> None:
    """Register every controller with the manager."""
    # +kubebuilder:scaffold:builder


def setup_webhooks(manager: Manager) -> None:
    """Register every admission and conversion webhook; ENABLE_WEBHOOKS=false leaves them out (`make run`)."""
    # +kubebuilder:scaffold:webhooks
    # `make run ENABLE_WEBHOOKS=true`: served from this machine to the API server (pyop.webhook.local).
    local_webhooks_from_environment(manager)


def build_manager(args: argparse.Namespace) -> Manager:
    options = ManagerOptions(
        metrics_bind_address=args.metrics_bind_address,
        metrics_secure=args.metrics_secure,
        metrics_cert_path=args.metrics_cert_path,
        enable_http2=args.enable_http2,
        health_probe_bind_address=args.health_probe_bind_address,
        leader_election=args.leader_elect,
        leader_election_id=LEADER_ELECTION_ID,
        leader_election_release_on_cancel=args.leader_elect_release_on_cancel,
        namespaces=watch_namespaces(),
        kubeconfig=args.kubeconfig,
        context=args.context,
        log_format=args.log_format,
        log_level=args.log_level,
        # +kubebuilder:scaffold:manageroptions
    )
    manager = Manager(options)
    manager.add_healthz_check("healthz", ping)
    manager.add_readyz_check("readyz", ping)
    setup_controllers(manager)
    setup_webhooks(manager)
    return manager


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    try:
        run(build_manager(args).run())  # asyncio.run, on uvloop when it is installed
    except LeaderElectionLost:
        # Another replica leads now; exit so that Kubernetes restarts this one as a candidate.
        raise SystemExit(1) from None


if __name__ == "__main__":
    main()
