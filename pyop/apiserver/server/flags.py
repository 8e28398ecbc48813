"""Command-line flags of an aggregated API server, named as k8s.io/apiserver names them, bound to `RecommendedOptions`.

pflag's conventions: ``--flag=value`` or ``--flag value``; list flags take comma-separated values and may repeat
(``--requestheader-allowed-names=a,b``); booleans accept ``--flag``, ``--flag=true|false``; durations are Go
durations (``10s``, ``1m30s``, ``500ms``). A bad flag or value is one line naming it (`FlagError`; exit code 2).
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pyop.apiserver.server.options import STORAGE_BACKENDS, RecommendedOptions

_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


class FlagError(Exception):
    """A flag that does not exist or a value it cannot take (one line). Not a ValueError: argparse would swallow
    that into its own wording."""


def parse_duration(text: str) -> float:
    """Seconds of a Go duration (time.ParseDuration): ``1h2m3.5s``, ``250ms``, ``0``."""
    raw = text.strip()
    sign = -1.0 if raw.startswith("-") else 1.0
    body = raw.lstrip("+-")
    if body == "0":
        return 0.0
    total, position = 0.0, 0
    for match in _DURATION_PART.finditer(body):
        if match.start() != position:
            break
        total += float(match[1]) * _UNIT_SECONDS[match[2]]
        position = match.end()
    if not body or position != len(body):
        raise ValueError(f'time: invalid duration "{text}"')
    return sign * total


def _boolean(text: str) -> bool:
    lowered = text.lower()
    if lowered in ("1", "t", "true"):
        return True
    if lowered in ("0", "f", "false"):
        return False
    raise ValueError(f'strconv.ParseBool: parsing "{text}": invalid syntax')


def _port(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError(f'strconv.ParseInt: parsing "{text}": invalid syntax') from None


def _string_list(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


@dataclass(frozen=True)
class _Flag:
    name: str
    target: str  # dotted attribute path in RecommendedOptions
    kind: str  # str, int, bool, duration, list
    help: str


_FLAGS = (
    _Flag("bind-address", "secure_serving.bind_address", "str", "the IP address to listen on"),
    _Flag("secure-port", "secure_serving.secure_port", "int", "the HTTPS port (0: any free port)"),
    _Flag("cert-dir", "secure_serving.cert_dir", "str", "where a self-signed serving certificate is kept"),
    _Flag("tls-cert-file", "secure_serving.tls_cert_file", "str", "the serving certificate (PEM)"),
    _Flag("tls-private-key-file", "secure_serving.tls_private_key_file", "str", "its private key (PEM)"),
    _Flag(
        "serving-cert-secret",
        "secure_serving.serving_cert_secret",
        "str",
        "pyop's own: make, rotate and serve the certificate from this Secret, its CA injected into the APIServices",
    ),
    _Flag(
        "serving-cert-namespace",
        "secure_serving.serving_cert_namespace",
        "str",
        "the namespace of that Secret and of the Service (default: the pod's)",
    ),
    _Flag(
        "serving-cert-service",
        "secure_serving.serving_cert_service",
        "str",
        "the Service the APIServices name (the certificate's DNS names: <service>.<namespace>.svc)",
    ),
    _Flag(
        "authentication-kubeconfig",
        "authentication.remote_kubeconfig_file",
        "str",
        "kubeconfig of the cluster that answers TokenReviews (default: in-cluster; off a cluster $KUBECONFIG)",
    ),
    _Flag(
        "authentication-skip-lookup",
        "authentication.skip_in_cluster_lookup",
        "bool",
        "do not read the request-header settings from kube-system/extension-apiserver-authentication",
    ),
    _Flag(
        "authentication-tolerate-lookup-failure",
        "authentication.tolerate_in_cluster_lookup_failure",
        "bool",
        "start even if that ConfigMap cannot be read",
    ),
    _Flag(
        "authentication-token-webhook-cache-ttl",
        "authentication.cache_ttl",
        "duration",
        "how long TokenReview answers are cached",
    ),
    _Flag(
        "client-ca-file",
        "authentication.client_ca_file",
        "str",
        "CA bundle for client certificates (user: CN, groups: O)",
    ),
    _Flag(
        "requestheader-client-ca-file",
        "authentication.requestheader_client_ca_file",
        "str",
        "CA bundle of the front proxy's client certificate; the identity headers are trusted only from it",
    ),
    _Flag(
        "requestheader-allowed-names",
        "authentication.requestheader_allowed_names",
        "list",
        "common names the front proxy's certificate may have (empty: any signed by the CA)",
    ),
    _Flag(
        "requestheader-username-headers",
        "authentication.requestheader_username_headers",
        "list",
        "headers holding the user name (the first one set wins)",
    ),
    _Flag(
        "requestheader-group-headers",
        "authentication.requestheader_group_headers",
        "list",
        "headers holding the groups",
    ),
    _Flag(
        "requestheader-extra-headers-prefix",
        "authentication.requestheader_extra_headers_prefix",
        "list",
        "header prefixes of the user's extra attributes",
    ),
    _Flag(
        "requestheader-uid-headers",
        "authentication.requestheader_uid_headers",
        "list",
        "headers holding the user's UID",
    ),
    _Flag(
        "anonymous-auth",
        "authentication.anonymous",
        "bool",
        "requests without credentials are system:anonymous (authorized like any user)",
    ),
    _Flag(
        "authorization-kubeconfig",
        "authorization.remote_kubeconfig_file",
        "str",
        "kubeconfig of the cluster that answers SubjectAccessReviews (default: in-cluster; off a cluster $KUBECONFIG)",
    ),
    _Flag(
        "authorization-webhook-cache-authorized-ttl",
        "authorization.allow_cache_ttl",
        "duration",
        "how long an allowed answer is cached",
    ),
    _Flag(
        "authorization-webhook-cache-unauthorized-ttl",
        "authorization.deny_cache_ttl",
        "duration",
        "how long a denied answer is cached",
    ),
    _Flag(
        "authorization-always-allow-paths",
        "authorization.always_allow_paths",
        "list",
        "paths authorized without asking the cluster (a trailing * matches a prefix)",
    ),
    _Flag("storage-backend", "storage.backend", "str", f"where objects are kept: {', '.join(STORAGE_BACKENDS)}"),
    _Flag("storage-path", "storage.path", "str", "the file backend's log file (or a folder to keep objects.jsonl in)"),
    _Flag("etcd-servers", "storage.etcd_servers", "list", "etcd client URLs"),
    _Flag("etcd-prefix", "storage.etcd_prefix", "str", "the key prefix of this server's objects in etcd"),
    _Flag("etcd-cafile", "storage.etcd_cafile", "str", "CA bundle etcd's certificate is verified with"),
    _Flag("etcd-certfile", "storage.etcd_certfile", "str", "client certificate for etcd"),
    _Flag("etcd-keyfile", "storage.etcd_keyfile", "str", "its private key"),
    _Flag("kubeconfig", "kubeconfig", "str", "kubeconfig of the cluster's core API (default: as authentication)"),
    _Flag(
        "disable-admission-plugins",
        "disable_admission_plugins",
        "list",
        "admission plugins to turn off (NamespaceLifecycle: creates in namespaces the cluster lacks are refused)",
    ),
    _Flag(
        "shutdown-delay-duration",
        "shutdown_delay",
        "duration",
        "on SIGTERM, report not ready this long before closing the listener",
    ),
)

_CONVERT: dict[str, Callable[[str], Any]] = {
    "str": str,
    "int": _port,
    "bool": _boolean,
    "duration": parse_duration,
    "list": _string_list,
}
_KIND_NAME = {"str": "string", "int": "int", "bool": "bool", "duration": "duration", "list": "strings"}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse's own errors (an unknown flag, a missing value)
        raise FlagError(message)


def _typed(flag: _Flag) -> Callable[[str], Any]:
    convert = _CONVERT[flag.kind]

    def parse(text: str) -> Any:
        try:
            return convert(text)
        except ValueError as error:
            # pflag's wording, which kube's servers print.
            raise FlagError(f'invalid argument "{text}" for "--{flag.name}" flag: {error}') from None

    return parse


def parser(prog: str = "apiserver") -> argparse.ArgumentParser:
    """The flag parser (``--help`` lists every flag with its default)."""
    defaults = RecommendedOptions()
    result = _Parser(prog=prog, description="An aggregated Kubernetes API server (pyop.apiserver).", allow_abbrev=False)
    for flag in _FLAGS:
        default = _get(defaults, flag.target)
        shown = ",".join(default) if isinstance(default, list) else default
        help_text = f"{flag.help} (default {shown!r})"
        if flag.kind == "bool":
            result.add_argument(
                f"--{flag.name}",
                dest=flag.target,
                nargs="?",
                const="true",
                type=_typed(flag),
                default=argparse.SUPPRESS,
                metavar=_KIND_NAME[flag.kind],
                help=help_text,
            )
        elif flag.kind == "list":
            result.add_argument(
                f"--{flag.name}",
                dest=flag.target,
                action="append",
                type=_typed(flag),
                default=argparse.SUPPRESS,
                metavar=_KIND_NAME[flag.kind],
                help=help_text,
            )
        else:
            result.add_argument(
                f"--{flag.name}",
                dest=flag.target,
                type=_typed(flag),
                default=argparse.SUPPRESS,
                metavar=_KIND_NAME[flag.kind],
                help=help_text,
            )
    return result


def parse_flags(
    argv: Sequence[str], options: RecommendedOptions | None = None, prog: str = "apiserver"
) -> RecommendedOptions:
    """Options from ``argv`` over ``options`` (default: the recommended ones). Raises `FlagError` (one line)."""
    options = options or RecommendedOptions()
    try:
        namespace = parser(prog).parse_args(list(argv))
    except argparse.ArgumentError as error:
        raise FlagError(str(error)) from None
    for target, value in vars(namespace).items():
        if isinstance(value, list) and value and isinstance(value[0], list):
            value = [item for chunk in value for item in chunk]  # a repeated list flag: its values in order
        _set(options, target, value)
    return options


def _get(obj: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


def _set(obj: Any, dotted: str, value: Any) -> None:
    *parents, last = dotted.split(".")
    for part in parents:
        obj = getattr(obj, part)
    setattr(obj, last, value)


FLAG_NAMES = tuple(f"--{flag.name}" for flag in _FLAGS)

__all__ = ["FLAG_NAMES", "FlagError", "parse_duration", "parse_flags", "parser"]
