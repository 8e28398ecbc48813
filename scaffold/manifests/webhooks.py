"""Admission webhook configurations from `+kubebuilder:webhook` markers, as controller-gen's webhook generator.

controller-gen reads the markers package by package (import path order), sorts each package's webhooks by name
(stably) and appends them to one MutatingWebhookConfiguration and one ValidatingWebhookConfiguration, named
`mutating-webhook-configuration` / `validating-webhook-configuration` unless `+kubebuilder:webhookconfiguration`
renames them. pyop does the same with Python packages (the folder of the module, relative to the project).

Where controller-gen passes a bad value through for the API server to reject at deploy time (a verb `creat`,
`failurePolicy=fial`), pyop stops here with the marker's file and line and the allowed values. Two markers that
produce the same webhook (same name, same content) are written once; the same name with different content is an
error, since the API server rejects a configuration with duplicate webhook names.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyop_scaffold.manifests.crd.docs import read_docs
from pyop_scaffold.manifests.errors import ManifestError, SourceLocation
from pyop_scaffold.manifests.markers.parser import ParsedMarker

WEBHOOK_MARKER = "kubebuilder:webhook"
CONFIGURATION_MARKER = "kubebuilder:webhookconfiguration"
API_VERSION = "admissionregistration.k8s.io/v1"
DEFAULT_NAMES = {True: "mutating-webhook-configuration", False: "validating-webhook-configuration"}
KINDS = {True: "MutatingWebhookConfiguration", False: "ValidatingWebhookConfiguration"}
DEFAULT_SERVICE = ("webhook-service", "system")

# controller-gen's case-insensitive spellings -> the API's values. Keys are lower case.
FAILURE_POLICIES = {"fail": "Fail", "ignore": "Ignore"}
MATCH_POLICIES = {"exact": "Exact", "equivalent": "Equivalent"}
# admissionregistration/v1 refuses Some and Unknown (controller-gen: "should not be set to `Some` or `Unknown`").
SIDE_EFFECTS = {"none": "None", "noneondryrun": "NoneOnDryRun"}
V1_SIDE_EFFECTS = tuple(SIDE_EFFECTS.values())
REINVOCATION_POLICIES = {"never": "Never", "ifneeded": "IfNeeded"}
OPERATIONS = {"create": "CREATE", "update": "UPDATE", "delete": "DELETE", "connect": "CONNECT", "*": "*"}
WEBHOOK_VERSIONS = ("v1",)  # controller-tools dropped v1beta1

# A webhook name is a fully qualified name: a DNS subdomain with at least three segments (the API server's rule).
_DNS_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN = re.compile(rf"^{_DNS_LABEL}(\.{_DNS_LABEL})*$")


@dataclass(frozen=True)
class WebhookMarkers:
    """The webhook markers of a project, each list in controller-gen's reading order (package, file, line)."""

    webhooks: list[tuple[str, ParsedMarker]]  # (package folder, marker)
    configurations: list[ParsedMarker]

    def __bool__(self) -> bool:
        return bool(self.webhooks)


def collect_webhook_markers(root: Path, package: str) -> WebhookMarkers:
    """Every webhook marker in the project's package. Packages come in path order as Go import paths do, files
    in name order within a package, markers in line order within a file."""
    files = sorted((root / package).rglob("*.py"), key=lambda p: (p.parent.relative_to(root).as_posix(), p.name))
    webhooks: list[tuple[str, ParsedMarker]] = []
    configurations: list[ParsedMarker] = []
    for path in files:
        folder = path.parent.relative_to(root).as_posix()
        for marker in read_docs(path).all_markers:
            if marker.name == WEBHOOK_MARKER:
                webhooks.append((folder, marker))
            elif marker.name == CONFIGURATION_MARKER:
                configurations.append(marker)
    return WebhookMarkers(webhooks, configurations)


class _Problems:
    """Collects one-line problems (each `file:line: ...`) so that one run reports them all."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def add(self, location: SourceLocation, message: str) -> None:
        self.lines.append(f"{location}: {message}")

    def raise_any(self) -> None:
        if self.lines:
            raise ManifestError(self.lines)


def build_webhook_configurations(markers: WebhookMarkers) -> list[dict[str, Any]]:
    """The Mutating- then ValidatingWebhookConfiguration (each only when it has webhooks), or ManifestError."""
    problems = _Problems()
    names = _configuration_names(markers.configurations, problems)
    ordered = _controller_gen_order(markers.webhooks)
    webhooks: dict[bool, list[dict[str, Any]]] = {True: [], False: []}
    seen: dict[tuple[bool, str], tuple[dict[str, Any], SourceLocation]] = {}
    for marker in ordered:
        webhook = _webhook(marker, problems)
        if webhook is None:
            continue
        mutating = bool(marker.value["mutating"])
        key = (mutating, webhook["name"])
        if key in seen:
            first, where = seen[key]
            if first != webhook:
                kind = "mutating" if mutating else "validating"
                problems.add(
                    marker.location,
                    f"{kind} webhook name={webhook['name']!r} is already used at {where} with different settings "
                    "(webhook names must be unique within a configuration)",
                )
            continue
        seen[key] = (webhook, marker.location)
        webhooks[mutating].append(webhook)
    problems.raise_any()
    return [
        {
            "apiVersion": API_VERSION,
            "kind": KINDS[mutating],
            "metadata": {"name": names.get(mutating) or DEFAULT_NAMES[mutating]},
            "webhooks": webhooks[mutating],
        }
        for mutating in (True, False)
        if webhooks[mutating]
    ]


def _controller_gen_order(webhooks: list[tuple[str, ParsedMarker]]) -> list[ParsedMarker]:
    """Package by package (already in path order), each package's markers stably sorted by name."""
    result: list[ParsedMarker] = []
    start = 0
    while start < len(webhooks):
        folder = webhooks[start][0]
        end = start
        while end < len(webhooks) and webhooks[end][0] == folder:
            end += 1
        group = [marker for _, marker in webhooks[start:end]]
        result.extend(sorted(group, key=lambda m: _go_bytes(m.value["name"])))
        start = end
    return result


def _go_bytes(text: str) -> bytes:
    """Go compares strings byte-wise (UTF-8), not by code point after surrogates; the same for what we write."""
    return text.encode("utf-8", "surrogatepass")


def _configuration_names(markers: list[ParsedMarker], problems: _Problems) -> dict[bool, str]:
    """`+kubebuilder:webhookconfiguration` renames: one name per kind; the same marker repeated is fine."""
    names: dict[bool, tuple[str, SourceLocation]] = {}
    for marker in markers:
        mutating = bool(marker.value["mutating"])
        name = marker.value.get("name") or ""
        if not name:
            continue
        if not _is_subdomain(name):
            problems.add(
                marker.location,
                f"+{CONFIGURATION_MARKER} name={name!r} is not a valid object name "
                "(lower-case letters, digits, '-' and '.', at most 253 characters)",
            )
            continue
        if mutating in names and names[mutating][0] != name:
            kind = "mutating" if mutating else "validating"
            first, where = names[mutating]
            problems.add(
                marker.location,
                f"duplicate {kind} +{CONFIGURATION_MARKER}: name={name!r} here, name={first!r} at {where} "
                f"(one {KINDS[mutating]} per project)",
            )
            continue
        names.setdefault(mutating, (name, marker.location))
    return {mutating: name for mutating, (name, _) in names.items()}


def _is_subdomain(name: str) -> bool:
    return len(name) <= 253 and _SUBDOMAIN.match(name) is not None


# ---------------------------------------------------------------------------------------------------------------------
# One webhook entry.


class _Invalid(Exception):
    """A marker argument with a value the webhook cannot have; the message names it and what is allowed."""


def _webhook(marker: ParsedMarker, problems: _Problems) -> dict[str, Any] | None:
    try:
        entry = _omit_empty(_entry(marker.value))  # e.g. `resources=` empty: no `resources:` key, as Go writes it
        patch = marker.value.get("patch")
        if patch:
            entry = apply_patch(entry, patch, mutating=bool(marker.value["mutating"]))
        _check_v1(entry)
    except _Invalid as exc:
        problems.add(marker.location, f"+{WEBHOOK_MARKER} {exc}")
        return None
    return entry


def _entry(args: dict[str, Any]) -> dict[str, Any]:
    """The webhook as controller-gen's ToMutatingWebhook/ToValidatingWebhook builds it, before any patch."""
    mutating = bool(args["mutating"])
    for version in args.get("webhookVersions") or []:
        if version not in WEBHOOK_VERSIONS:
            raise _Invalid(f"webhookVersions={version!r}: only {', '.join(WEBHOOK_VERSIONS)} is supported")
    entry: dict[str, Any] = {
        "name": args["name"],
        "admissionReviewVersions": list(args["admissionReviewVersions"]),
        "clientConfig": _client_config(args),
        "failurePolicy": _choice(args, "failurePolicy", FAILURE_POLICIES),
        "rules": [_rule(args)],
    }
    if args.get("matchPolicy"):
        entry["matchPolicy"] = _choice(args, "matchPolicy", MATCH_POLICIES)
    if args.get("sideEffects"):
        entry["sideEffects"] = _choice(args, "sideEffects", SIDE_EFFECTS)
    timeout = args.get("timeoutSeconds")
    if timeout:  # controller-gen's int: 0 means "not set"
        entry["timeoutSeconds"] = timeout
    if mutating and args.get("reinvocationPolicy"):  # validating webhooks have no such field (controller-gen drops it)
        entry["reinvocationPolicy"] = _choice(args, "reinvocationPolicy", REINVOCATION_POLICIES)
    return entry


def _choice(args: dict[str, Any], name: str, allowed: dict[str, str]) -> str:
    value = args[name]
    canonical = allowed.get(str(value).lower())
    if canonical is None:
        raise _Invalid(f"{name}={value!r} is not allowed (allowed: {', '.join(allowed.values())})")
    return canonical


def _client_config(args: dict[str, Any]) -> dict[str, Any]:
    path, url = args.get("path") or "", args.get("url") or ""
    if bool(path) == bool(url):
        given = "both path and url" if path else "neither path nor url"
        raise _Invalid(f"needs exactly one of path or url, got {given}")
    if url:
        service_args = [n for n in ("serviceName", "serviceNamespace", "servicePort") if args.get(n) is not None]
        if service_args:
            raise _Invalid(f"url={url!r} calls a URL, so {', '.join(service_args)} cannot apply (use path)")
        if not url.startswith("https://"):
            raise _Invalid(f"url={url!r} must start with https:// (the API server calls webhooks over TLS)")
        return {"url": url}
    if not path.startswith("/"):
        raise _Invalid(f"path={path!r} must start with '/'")
    service: dict[str, Any] = {
        "name": args.get("serviceName") or DEFAULT_SERVICE[0],
        "namespace": args.get("serviceNamespace") or DEFAULT_SERVICE[1],
        "path": path,
    }
    port = args.get("servicePort")
    if port is not None:
        if not 1 <= port <= 65535:
            raise _Invalid(f"servicePort={port} is not a port number (allowed: 1-65535)")
        service["port"] = port
    return {"service": service}


def _rule(args: dict[str, Any]) -> dict[str, Any]:
    operations = []
    for verb in args["verbs"]:
        operation = OPERATIONS.get(verb.lower())
        if operation is None:
            raise _Invalid(f"verbs: {verb!r} is not allowed (allowed: create, update, delete, connect, *)")
        operations.append(operation)
    groups = ["" if group == "core" else group for group in args["groups"]]
    return {
        "apiGroups": groups,
        "apiVersions": list(args["versions"]),
        "operations": operations,
        "resources": list(args["resources"]),
    }


def _check_v1(entry: dict[str, Any]) -> None:
    """What admissionregistration/v1 requires of an entry (after the patch, as controller-gen checks it)."""
    name = entry.get("name") or ""
    if not (_is_subdomain(name) and name.count(".") >= 2):
        raise _Invalid(
            f"name={name!r} must be a fully qualified name: lower-case DNS labels, at least three separated by dots "
            "(e.g. mship-v1.kb.io)"
        )
    side_effects = entry.get("sideEffects")
    if side_effects not in V1_SIDE_EFFECTS:
        got = "is missing" if side_effects is None else f"={side_effects!r} is not allowed"
        raise _Invalid(f"sideEffects {got} (allowed for v1 webhooks: {', '.join(V1_SIDE_EFFECTS)})")
    if not entry.get("admissionReviewVersions"):
        raise _Invalid("admissionReviewVersions must name at least one AdmissionReview version (e.g. v1)")
    timeout = entry.get("timeoutSeconds")
    if timeout is not None and not 1 <= timeout <= 30:
        raise _Invalid(f"timeoutSeconds={timeout} is out of range (allowed: 1-30)")
    # A patch writes API values as they are (case matters there); the marker's spellings are canonical already.
    for name, allowed in (
        ("failurePolicy", FAILURE_POLICIES),
        ("matchPolicy", MATCH_POLICIES),
        ("reinvocationPolicy", REINVOCATION_POLICIES),
    ):
        if name in entry and entry[name] not in allowed.values():
            raise _Invalid(f"{name}={entry[name]!r} is not allowed (allowed: {', '.join(allowed.values())})")
    for rule in entry.get("rules") or []:
        for operation in rule.get("operations") or []:
            if operation not in OPERATIONS.values():
                raise _Invalid(f"operation {operation!r} is not allowed (allowed: {', '.join(OPERATIONS.values())})")


# ---------------------------------------------------------------------------------------------------------------------
# `patch=`: a strategic merge patch of the entry, as controller-gen applies it (unknown fields are errors, `null`
# removes a field, lists are replaced except matchConditions, which merge by name).

_STR, _INT, _STRS, _LABELS = "a string", "an integer", "a list of strings", "a map of strings"
_SELECTOR: dict[str, Any] = {
    "matchLabels": _LABELS,
    "matchExpressions": [{"key": _STR, "operator": _STR, "values": _STRS}],
}
_WEBHOOK_FIELDS: dict[str, Any] = {
    "admissionReviewVersions": _STRS,
    "clientConfig": {
        "caBundle": _STR,
        "service": {"name": _STR, "namespace": _STR, "path": _STR, "port": _INT},
        "url": _STR,
    },
    "failurePolicy": _STR,
    "matchConditions": [{"name": _STR, "expression": _STR}],
    "matchPolicy": _STR,
    "name": _STR,
    "namespaceSelector": _SELECTOR,
    "objectSelector": _SELECTOR,
    "rules": [{"apiGroups": _STRS, "apiVersions": _STRS, "operations": _STRS, "resources": _STRS, "scope": _STR}],
    "sideEffects": _STR,
    "timeoutSeconds": _INT,
}
_MUTATING_FIELDS = {**_WEBHOOK_FIELDS, "reinvocationPolicy": _STR}
_VALIDATING_FIELDS = _WEBHOOK_FIELDS
_MERGE_KEYS = {"matchConditions": "name"}  # the one patchStrategy=merge list of a webhook entry
# Fields written even when empty (no omitempty in the Go types); everything else empty is left out.
_ALWAYS = {"name", "clientConfig", "admissionReviewVersions", "namespace", "key", "operator", "expression"}


def apply_patch(entry: dict[str, Any], patch_text: str, *, mutating: bool) -> dict[str, Any]:
    """The entry with the patch applied; _Invalid names what is wrong with the patch."""
    try:
        patch = json.loads(patch_text)
    except json.JSONDecodeError as exc:
        raise _Invalid(f"patch is not valid JSON: {exc.msg} at character {exc.pos + 1}") from None
    if not isinstance(patch, dict):
        raise _Invalid(f"patch must be a JSON object, not {type(patch).__name__}")
    fields = _MUTATING_FIELDS if mutating else _VALIDATING_FIELDS
    _check_patch(patch, fields, "patch")
    merged = _merge_map(copy.deepcopy(entry), patch, fields)
    if merged is None:
        raise _Invalid("patch deletes the whole webhook ($patch: delete)")
    return _omit_empty(merged)


def _check_patch(value: Any, schema: Any, where: str) -> None:
    """Field names and value types against the webhook's Go type: a misspelled field is an error, not a no-op."""
    if value is None:
        return
    if isinstance(schema, dict):
        if not isinstance(value, dict):
            raise _Invalid(f"{where} must be an object, not {json.dumps(value)}")
        for key, item in value.items():
            if key == "$patch":
                if item not in ("replace", "delete", "merge"):
                    raise _Invalid(f"{where}.$patch={item!r} is not allowed (allowed: replace, delete, merge)")
                continue
            if key not in schema:
                raise _Invalid(f"{where}: unknown field {key!r} (known: {', '.join(sorted(schema))})")
            _check_patch(item, schema[key], f"{where}.{key}")
        return
    if isinstance(schema, list):
        if not isinstance(value, list):
            raise _Invalid(f"{where} must be a list, not {json.dumps(value)}")
        for index, item in enumerate(value):
            _check_patch(item, schema[0], f"{where}[{index}]")
        return
    checks: dict[str, Callable[[Any], bool]] = {
        _STR: lambda v: isinstance(v, str),
        _INT: lambda v: isinstance(v, int) and not isinstance(v, bool),
        _STRS: lambda v: isinstance(v, list) and all(isinstance(i, str) for i in v),
        _LABELS: lambda v: isinstance(v, dict) and all(isinstance(i, str) or i is None for i in v.values()),
    }
    if not checks[schema](value):
        raise _Invalid(f"{where} must be {schema}, not {json.dumps(value)}")


def _merge_map(original: dict[str, Any], patch: dict[str, Any], schema: Any) -> dict[str, Any] | None:
    directive = patch.get("$patch")
    if directive == "delete":
        return None
    if directive == "replace":
        return {key: value for key, value in patch.items() if key != "$patch" and value is not None}
    result = dict(original)
    for key, value in patch.items():
        if key == "$patch":
            continue
        if value is None:
            result.pop(key, None)
            continue
        sub = schema.get(key) if isinstance(schema, dict) else None
        current = result.get(key)
        if isinstance(value, dict) and isinstance(current, dict):
            merged = _merge_map(current, value, sub)
            if merged is None:
                result.pop(key, None)
            else:
                result[key] = merged
        elif key in _MERGE_KEYS and isinstance(current, list) and isinstance(sub, list):
            result[key] = _merge_list(current, value, _MERGE_KEYS[key], sub[0])
        else:
            result[key] = _without_directives(value)
    return result


def _merge_list(current: list[Any], patch: list[Any], merge_key: str, schema: Any) -> list[Any]:
    result = [dict(item) for item in current]
    for item in patch:
        index = next((i for i, old in enumerate(result) if old.get(merge_key) == item.get(merge_key)), None)
        if item.get("$patch") == "delete":
            if index is not None:
                del result[index]
        elif index is None:
            result.append(_without_directives(item))
        else:
            merged = _merge_map(result[index], item, schema)
            if merged is not None:
                result[index] = merged
    return result


def _without_directives(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_directives(v) for k, v in value.items() if k != "$patch" and v is not None}
    if isinstance(value, list):
        return [_without_directives(item) for item in value]
    return value


def _omit_empty(value: Any) -> Any:
    """Go's `omitempty` after the patched JSON is decoded into the typed webhook: empty strings, zeros, empty
    lists and maps are left out; objects (pointers in Go) stay even when empty."""
    if isinstance(value, dict):
        result = {}
        for key, item in value.items():
            item = _omit_empty(item)
            empty = item in ("", 0, [], None) and not isinstance(item, bool) or (item == {} and key == "matchLabels")
            if empty and key not in _ALWAYS:
                continue
            result[key] = item
        return result
    if isinstance(value, list):
        return [_omit_empty(item) for item in value]
    return value
