"""/metrics in Prometheus' text format: the request metrics kube-apiserver exposes, under the same names and labels.

``apiserver_request_total`` (verb, dry_run, group, version, resource, subresource, scope, component, code),
``apiserver_request_duration_seconds`` (the same but code), ``apiserver_current_inflight_requests``
(request_kind: readOnly / mutating), and the delegation counters ``apiserver_delegated_authn_request_total`` and
``apiserver_delegated_authz_request_total`` (code), so a dashboard built for a Go aggregated server reads this
one. Verbs are kube's: GET, LIST, WATCH, POST, PUT, PATCH, DELETE, DELETECOLLECTION (non-resource requests: the
HTTP method). The registry is the server's own (two servers in one process do not share counters).
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

_VERBS = {
    "get": "GET",
    "list": "LIST",
    "watch": "WATCH",
    "create": "POST",
    "update": "PUT",
    "patch": "PATCH",
    "delete": "DELETE",
    "deletecollection": "DELETECOLLECTION",
}
_BUCKETS = (0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60)
_LABELS = ("verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component")


class ServerMetrics:
    """The server's metrics and their registry."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter(
            "apiserver_request_total",
            "Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, "
            "scope, component, and HTTP response code.",
            (*_LABELS, "code"),
            registry=self.registry,
        )
        self.latency = Histogram(
            "apiserver_request_duration_seconds",
            "Response latency distribution in seconds for each verb, dry run value, group, version, resource, "
            "subresource, scope and component.",
            _LABELS,
            buckets=_BUCKETS,
            registry=self.registry,
        )
        self.inflight = Gauge(
            "apiserver_current_inflight_requests",
            "Maximal number of currently used inflight request limit of this apiserver per request kind in last "
            "second.",
            ("request_kind",),
            registry=self.registry,
        )
        self.delegated_authn = Counter(
            "apiserver_delegated_authn_request_total",
            "Number of HTTP requests partitioned by status code.",
            ("code",),
            registry=self.registry,
        )
        self.delegated_authz = Counter(
            "apiserver_delegated_authz_request_total",
            "Number of HTTP requests partitioned by status code.",
            ("code",),
            registry=self.registry,
        )

    def observe(
        self,
        *,
        verb: str,
        method: str,
        dry_run: bool,
        group: str,
        version: str,
        resource: str,
        subresource: str,
        scope: str,
        code: int,
        seconds: float,
    ) -> None:
        labels = (
            _VERBS.get(verb, method.upper()),
            "All" if dry_run else "",
            group,
            version,
            resource,
            subresource,
            scope,
            "apiserver",
        )
        self.requests.labels(*labels, str(code)).inc()
        if verb != "watch":  # a watch lasts as long as the client wants: kube leaves it out of the latencies too
            self.latency.labels(*labels).observe(seconds)

    def observe_review(self, what: str, code: str) -> None:
        """A TokenReview ("authn") or SubjectAccessReview ("authz") answered with ``code``."""
        (self.delegated_authn if what == "authn" else self.delegated_authz).labels(code).inc()

    def exposition(self) -> tuple[bytes, str]:
        return generate_latest(self.registry), CONTENT_TYPE_LATEST


__all__ = ["ServerMetrics"]
