"""Options of an aggregated API server: k8s.io/apiserver's RecommendedOptions, with its flag names and defaults.

Options are plain data (filled from flags by `pyop.apiserver.server.flags`, or by hand in tests); `validate` names
every bad value in one line each; `pyop.apiserver.server.config.build_config` turns valid options into a `Config`.
Durations are seconds (flags take Go durations: ``10s``, ``1m30s``).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from pyop.apiserver.storage.factory import BACKENDS as STORAGE_BACKENDS

DEFAULT_ALWAYS_ALLOW_PATHS = ("/healthz", "/readyz", "/livez")
DEFAULT_ALWAYS_ALLOW_GROUPS = ("system:masters",)
ADMISSION_PLUGINS = ("NamespaceLifecycle",)  # what --disable-admission-plugins may name


@dataclass
class SecureServingOptions:
    """--bind-address, --secure-port, --cert-dir, --tls-cert-file, --tls-private-key-file."""

    bind_address: str = "0.0.0.0"  # noqa: S104 - kube's default: every interface (a pod's)
    secure_port: int = 443  # 0: any free port (kube: no serving); tests use it
    cert_dir: str = "apiserver.local.config/certificates"
    tls_cert_file: str = ""
    tls_private_key_file: str = ""
    reload_interval: float = 10.0  # seconds between checks of the --tls-cert-file pair for a renewal (no flag)
    # pyop's own (--certificates=pyop, no cert-manager): the server makes, rotates and serves its certificate from
    # this Secret and keeps the CA in its APIServices' caBundle (pyop.apiserver.server.serving_certificates).
    serving_cert_secret: str = ""  # --serving-cert-secret
    serving_cert_namespace: str = ""  # --serving-cert-namespace ("": the pod's, from its service account)
    serving_cert_service: str = ""  # --serving-cert-service: the Service kube-aggregator calls (its DNS names)
    rotate_interval: float = 60.0  # seconds between the rotator's rounds (no flag)
    sync_interval: float = 10.0  # seconds between reads of the Secret (no flag)

    def validate(self) -> list[str]:
        errors = self._validate_self_managed()
        try:
            ipaddress.ip_address(self.bind_address)
        except ValueError:
            errors.append(f'--bind-address "{self.bind_address}": not an IP address (for example 0.0.0.0 or ::)')
        if not 0 <= self.secure_port <= 65535:
            errors.append(f"--secure-port {self.secure_port} must be between 0 and 65535, inclusive")
        if bool(self.tls_cert_file) != bool(self.tls_private_key_file):
            given = "--tls-cert-file" if self.tls_cert_file else "--tls-private-key-file"
            errors.append(f"{given} is set without its pair: give both --tls-cert-file and --tls-private-key-file")
        for flag, path in (
            ("--tls-cert-file", self.tls_cert_file),
            ("--tls-private-key-file", self.tls_private_key_file),
        ):
            if path and not Path(path).is_file():
                errors.append(f'{flag} "{path}": no such file')
        return errors

    def _validate_self_managed(self) -> list[str]:
        from pyop.api.validation import dns1123_label_problems, dns1123_subdomain_problems

        errors = []
        for flag, value, problems in (
            ("--serving-cert-secret", self.serving_cert_secret, dns1123_subdomain_problems),
            ("--serving-cert-namespace", self.serving_cert_namespace, dns1123_label_problems),
            ("--serving-cert-service", self.serving_cert_service, dns1123_label_problems),
        ):
            if value and problems(value):
                errors.append(f'{flag} "{value}": {problems(value)[0]}')
        if not self.serving_cert_secret:
            for flag, value in (
                ("--serving-cert-namespace", self.serving_cert_namespace),
                ("--serving-cert-service", self.serving_cert_service),
            ):
                if value:
                    errors.append(
                        f"{flag} is set without --serving-cert-secret (the Secret the certificate is kept in)"
                    )
            return errors
        if self.tls_cert_file:
            errors.append(
                "--serving-cert-secret and --tls-cert-file exclude each other: the server makes its certificate, "
                "or serves the one given"
            )
        if not self.serving_cert_service:
            errors.append(
                "--serving-cert-secret needs --serving-cert-service (the Service the APIServices name: the "
                "certificate is made for its DNS names)"
            )
        return errors


@dataclass
class DelegatingAuthenticationOptions:
    """Request-header client certificates, client certificates, and bearer tokens reviewed by the cluster."""

    remote_kubeconfig_file: str = ""  # --authentication-kubeconfig ("": in-cluster)
    skip_in_cluster_lookup: bool = False  # --authentication-skip-lookup
    tolerate_in_cluster_lookup_failure: bool = False  # --authentication-tolerate-lookup-failure
    cache_ttl: float = 10.0  # --authentication-token-webhook-cache-ttl
    client_ca_file: str = ""  # --client-ca-file
    requestheader_client_ca_file: str = ""
    requestheader_allowed_names: list[str] = field(default_factory=list)
    requestheader_username_headers: list[str] = field(default_factory=lambda: ["X-Remote-User"])
    requestheader_group_headers: list[str] = field(default_factory=lambda: ["X-Remote-Group"])
    requestheader_extra_headers_prefix: list[str] = field(default_factory=lambda: ["X-Remote-Extra-"])
    requestheader_uid_headers: list[str] = field(default_factory=list)
    anonymous: bool = True  # --anonymous-auth: requests without credentials are system:anonymous (then authorized)
    ca_reload_interval: float = 10.0  # seconds between reads of the CA files and the ConfigMap (no flag)

    def validate(self) -> list[str]:
        errors = []
        if self.cache_ttl < 0:
            errors.append(f"--authentication-token-webhook-cache-ttl {self.cache_ttl}s must not be negative")
        for flag, path in (
            ("--client-ca-file", self.client_ca_file),
            ("--requestheader-client-ca-file", self.requestheader_client_ca_file),
            ("--authentication-kubeconfig", self.remote_kubeconfig_file),
        ):
            if path and not Path(path).is_file():
                errors.append(f'{flag} "{path}": no such file')
        for flag, names in (
            ("--requestheader-username-headers", self.requestheader_username_headers),
            ("--requestheader-group-headers", self.requestheader_group_headers),
            ("--requestheader-extra-headers-prefix", self.requestheader_extra_headers_prefix),
            ("--requestheader-uid-headers", self.requestheader_uid_headers),
        ):
            for name in names:
                if not name or any(c in name for c in " :\r\n\t"):
                    errors.append(f'{flag} "{name}": not an HTTP header name')
        return errors


@dataclass
class DelegatingAuthorizationOptions:
    """SubjectAccessReviews to the cluster, with an allowed and a denied cache; paths and groups always allowed."""

    remote_kubeconfig_file: str = ""  # --authorization-kubeconfig ("": in-cluster)
    allow_cache_ttl: float = 10.0  # --authorization-webhook-cache-authorized-ttl
    deny_cache_ttl: float = 10.0  # --authorization-webhook-cache-unauthorized-ttl
    always_allow_paths: list[str] = field(default_factory=lambda: list(DEFAULT_ALWAYS_ALLOW_PATHS))
    always_allow_groups: list[str] = field(default_factory=lambda: list(DEFAULT_ALWAYS_ALLOW_GROUPS))

    def validate(self) -> list[str]:
        errors = []
        for flag, ttl in (
            ("--authorization-webhook-cache-authorized-ttl", self.allow_cache_ttl),
            ("--authorization-webhook-cache-unauthorized-ttl", self.deny_cache_ttl),
        ):
            if ttl < 0:
                errors.append(f"{flag} {ttl}s must not be negative")
        if self.remote_kubeconfig_file and not Path(self.remote_kubeconfig_file).is_file():
            errors.append(f'--authorization-kubeconfig "{self.remote_kubeconfig_file}": no such file')
        for path in self.always_allow_paths:
            if not path.startswith("/"):
                errors.append(f'--authorization-always-allow-paths "{path}": paths must begin with /')
            elif "*" in path[:-1]:
                errors.append(f'--authorization-always-allow-paths "{path}": only a trailing * is allowed')
        return errors


@dataclass
class StorageOptions:
    """--storage-backend (memory, file, etcd3), --storage-path, --etcd-servers, --etcd-prefix, etcd's TLS files."""

    backend: str = "memory"
    path: str = ""  # --storage-path: the file backend's log file (or a folder: objects.jsonl in it)
    etcd_servers: list[str] = field(default_factory=list)
    etcd_prefix: str = "/registry"
    etcd_cafile: str = ""
    etcd_certfile: str = ""
    etcd_keyfile: str = ""

    def validate(self) -> list[str]:
        errors = []
        if self.backend not in STORAGE_BACKENDS:
            errors.append(f'--storage-backend "{self.backend}": not one of {", ".join(STORAGE_BACKENDS)}')
        if self.backend == "file" and not self.path:
            errors.append("--storage-backend file needs --storage-path (the log file to keep the objects in)")
        if self.backend == "etcd3" and not self.etcd_servers:
            errors.append("--storage-backend etcd3 needs --etcd-servers (for example http://127.0.0.1:2379)")
        for server in self.etcd_servers:
            parts = urlsplit(server)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                errors.append(f'--etcd-servers "{server}": not an http:// or https:// URL')
        if not self.etcd_prefix.startswith("/"):
            errors.append(f'--etcd-prefix "{self.etcd_prefix}": must begin with /')
        for flag, path in (
            ("--etcd-cafile", self.etcd_cafile),
            ("--etcd-certfile", self.etcd_certfile),
            ("--etcd-keyfile", self.etcd_keyfile),
        ):
            if path and not Path(path).is_file():
                errors.append(f'{flag} "{path}": no such file')
        if bool(self.etcd_certfile) != bool(self.etcd_keyfile):
            errors.append("--etcd-certfile and --etcd-keyfile go together: give both or neither")
        return errors


@dataclass
class RecommendedOptions:
    """Everything an aggregated API server is started with (k8s.io/apiserver's RecommendedOptions)."""

    secure_serving: SecureServingOptions = field(default_factory=SecureServingOptions)
    authentication: DelegatingAuthenticationOptions = field(default_factory=DelegatingAuthenticationOptions)
    authorization: DelegatingAuthorizationOptions = field(default_factory=DelegatingAuthorizationOptions)
    storage: StorageOptions = field(default_factory=StorageOptions)
    kubeconfig: str = ""  # --kubeconfig: the cluster's core API (namespaces); "": as --authentication-kubeconfig
    disable_admission_plugins: list[str] = field(default_factory=list)  # --disable-admission-plugins
    shutdown_delay: float = 0.0  # --shutdown-delay-duration: /readyz fails this long before the listener closes
    bookmark_interval: float = 60.0  # seconds between watch bookmarks (kube-apiserver: about a minute)

    def validate(self) -> list[str]:
        errors = [
            *self.secure_serving.validate(),
            *self.authentication.validate(),
            *self.authorization.validate(),
            *self.storage.validate(),
        ]
        if self.kubeconfig and not Path(self.kubeconfig).is_file():
            errors.append(f'--kubeconfig "{self.kubeconfig}": no such file')
        for plugin in self.disable_admission_plugins:
            if plugin not in ADMISSION_PLUGINS:
                errors.append(
                    f'--disable-admission-plugins "{plugin}": not an admission plugin of this server '
                    f"({', '.join(ADMISSION_PLUGINS)})"
                )
        if self.shutdown_delay < 0:
            errors.append(f"--shutdown-delay-duration {self.shutdown_delay}s must not be negative")
        return errors


class OptionsError(ValueError):
    """Invalid options: one line per problem (the CLI prints them and exits 2)."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


def check(options: RecommendedOptions) -> RecommendedOptions:
    """The options, or `OptionsError` naming each bad value."""
    problems = options.validate()
    if problems:
        raise OptionsError(problems)
    return options


__all__ = [
    "DelegatingAuthenticationOptions",
    "DelegatingAuthorizationOptions",
    "OptionsError",
    "RecommendedOptions",
    "SecureServingOptions",
    "StorageOptions",
    "check",
]
