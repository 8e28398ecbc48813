"""MutatingWebhookConfiguration and ValidatingWebhookConfiguration: defaults, validation, and the compiled form
the dispatcher matches requests against.

Stored objects get the defaults kube-apiserver gives ``admissionregistration.k8s.io/v1`` webhooks (failurePolicy
Fail, matchPolicy Equivalent, empty selectors, timeoutSeconds 10, reinvocationPolicy Never, rule scope ``*``,
service port 443), and what the API server refuses is refused with 422 ``Invalid``, so a manifest that the test
server accepts is one a cluster accepts too (for the fields checked here).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pyop.api.selectors import Requirement
from pyop.api.status import StatusCause, invalid

GROUP = "admissionregistration.k8s.io"
MUTATING_PLURAL = "mutatingwebhookconfigurations"
VALIDATING_PLURAL = "validatingwebhookconfigurations"
MUTATING_KEY = f"{MUTATING_PLURAL}.{GROUP}"
VALIDATING_KEY = f"{VALIDATING_PLURAL}.{GROUP}"
CONFIGURATION_KEYS = (MUTATING_KEY, VALIDATING_KEY)
# Never sent to webhooks, so that a bad webhook cannot lock itself in (rules.IsExemptAdmissionConfigurationResource).
EXEMPT_KEYS = frozenset(
    {
        MUTATING_KEY,
        VALIDATING_KEY,
        f"validatingadmissionpolicies.{GROUP}",
        f"validatingadmissionpolicybindings.{GROUP}",
    }
)

OPERATIONS = ("*", "CREATE", "UPDATE", "DELETE", "CONNECT")
SCOPES = ("*", "Cluster", "Namespaced")
_EXPRESSION_OPERATORS = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!exists"}


def is_configuration(storage_key: str) -> bool:
    return storage_key in CONFIGURATION_KEYS


# --- defaults and validation (the registry strategy of the two kinds) ---------------------------------


def _unsupported(value: Any, allowed: Iterable[str]) -> str:
    return f'Unsupported value: "{value}": supported values: ' + ", ".join(f'"{item}"' for item in allowed)


def prepare(obj: dict[str, Any], *, mutating: bool) -> None:
    """Apply the API's defaults to a configuration in place, then refuse what the API server refuses."""
    webhooks = obj.get("webhooks")
    if webhooks is None:
        webhooks = obj["webhooks"] = []
    causes: list[StatusCause] = []
    if not isinstance(webhooks, list):
        causes.append(StatusCause("FieldValueInvalid", "Invalid value: must be a list", "webhooks"))
        webhooks = []
    seen: set[str] = set()
    for index, hook in enumerate(webhooks):
        path = f"webhooks[{index}]"
        if not isinstance(hook, dict):
            causes.append(StatusCause("FieldValueInvalid", "Invalid value: must be an object", path))
            continue
        _default_webhook(hook, mutating=mutating)
        causes.extend(_validate_webhook(hook, path, seen, mutating=mutating))
    if causes:
        kind = "MutatingWebhookConfiguration" if mutating else "ValidatingWebhookConfiguration"
        raise invalid(kind, GROUP, (obj.get("metadata") or {}).get("name", ""), causes)


def _default_webhook(hook: dict[str, Any], *, mutating: bool) -> None:
    hook.setdefault("failurePolicy", "Fail")
    hook.setdefault("matchPolicy", "Equivalent")
    hook.setdefault("namespaceSelector", {})
    hook.setdefault("objectSelector", {})
    hook.setdefault("timeoutSeconds", 10)
    if mutating:
        hook.setdefault("reinvocationPolicy", "Never")
    for rule in hook.get("rules") or []:
        if isinstance(rule, dict):
            rule.setdefault("scope", "*")
    service = (hook.get("clientConfig") or {}).get("service")
    if isinstance(service, dict):
        service.setdefault("port", 443)


def _validate_webhook(hook: dict[str, Any], path: str, seen: set[str], *, mutating: bool) -> list[StatusCause]:
    causes: list[StatusCause] = []

    def refuse(reason: str, message: str, field: str) -> None:
        causes.append(StatusCause(reason, message, f"{path}.{field}"))

    name = hook.get("name")
    if not name:
        refuse("FieldValueRequired", "Required value", "name")
    elif name in seen:
        refuse("FieldValueDuplicate", f'Duplicate value: "{name}"', "name")
    else:
        seen.add(name)
    client = hook.get("clientConfig") or {}
    url, service = client.get("url"), client.get("service")
    if bool(url) == bool(service):
        refuse("FieldValueRequired", "Required value: exactly one of url or service is required", "clientConfig")
    elif url and not str(url).startswith("https://"):
        message = f"Invalid value: \"{url}\": 'https' is the only allowed URL scheme"
        refuse("FieldValueInvalid", message, "clientConfig.url")
    if client.get("caBundle"):
        try:
            base64.b64decode(client["caBundle"], validate=True)
        except (binascii.Error, ValueError, TypeError):
            refuse("FieldValueInvalid", "Invalid value: must be base64-encoded PEM", "clientConfig.caBundle")
    side_effects = hook.get("sideEffects")
    if side_effects is None:
        refuse("FieldValueRequired", _unsupported("", ("None", "NoneOnDryRun")), "sideEffects")
    elif side_effects not in ("None", "NoneOnDryRun"):
        refuse("FieldValueNotSupported", _unsupported(side_effects, ("None", "NoneOnDryRun")), "sideEffects")
    versions = hook.get("admissionReviewVersions") or []
    if not any(version in ("v1", "v1beta1") for version in versions):
        refuse("FieldValueRequired", "Required value: must specify one of v1, v1beta1", "admissionReviewVersions")
    for field, value, allowed in (
        ("failurePolicy", hook["failurePolicy"], ("Fail", "Ignore")),
        ("matchPolicy", hook["matchPolicy"], ("Equivalent", "Exact")),
        ("reinvocationPolicy", hook.get("reinvocationPolicy", "Never"), ("IfNeeded", "Never")),
    ):
        if value not in allowed:
            refuse("FieldValueNotSupported", _unsupported(value, allowed), field)
    timeout = hook["timeoutSeconds"]
    if not isinstance(timeout, int) or isinstance(timeout, bool) or not 1 <= timeout <= 30:
        refuse(
            "FieldValueInvalid",
            f"Invalid value: {timeout}: the timeout value must be between 1 and 30 seconds",
            "timeoutSeconds",
        )
    for index, rule in enumerate(hook.get("rules") or []):
        rule_path = f"rules[{index}]"
        if not isinstance(rule, dict):
            refuse("FieldValueInvalid", "Invalid value: must be an object", rule_path)
            continue
        for operation in rule.get("operations") or []:
            if operation not in OPERATIONS:
                refuse("FieldValueNotSupported", _unsupported(operation, OPERATIONS), f"{rule_path}.operations")
        if rule["scope"] not in SCOPES:
            refuse("FieldValueNotSupported", _unsupported(rule["scope"], SCOPES), f"{rule_path}.scope")
        for listed in ("apiGroups", "apiVersions", "resources", "operations"):
            if not rule.get(listed):
                refuse("FieldValueRequired", "Required value", f"{rule_path}.{listed}")
    for field in ("namespaceSelector", "objectSelector"):
        try:
            selector_requirements(hook[field])
        except ValueError as error:
            refuse("FieldValueInvalid", f"Invalid value: {error}", field)
    return causes


# --- the compiled form ---------------------------------------------------------------------------------


def selector_requirements(selector: Mapping[str, Any] | None) -> tuple[Requirement, ...]:
    """A ``metav1.LabelSelector`` as requirements (empty: matches everything); ValueError when malformed."""
    if not selector:
        return ()
    if not isinstance(selector, Mapping):
        raise ValueError("a label selector must be an object")
    match_labels = selector.get("matchLabels") or {}
    requirements = [Requirement(str(key), "=", (str(value),)) for key, value in match_labels.items()]
    for expression in selector.get("matchExpressions") or []:
        operator = _EXPRESSION_OPERATORS.get(expression.get("operator", ""))
        if operator is None:
            raise ValueError(f'"{expression.get("operator")}" is not a valid label selector operator')
        values = tuple(str(value) for value in expression.get("values") or [])
        if operator in ("in", "notin") and not values:
            raise ValueError("for 'in', 'notin' operators, values set can't be empty")
        requirements.append(Requirement(str(expression.get("key", "")), operator, values))
    return tuple(requirements)


@dataclass(frozen=True, slots=True)
class Rule:
    operations: tuple[str, ...]
    groups: tuple[str, ...]
    versions: tuple[str, ...]
    resources: tuple[tuple[str, str], ...]  # (resource, subresource), either may be "*"
    scope: str

    def matches(
        self, operation: str, group: str, version: str, resource: str, subresource: str, namespace: str
    ) -> bool:
        """rules.Matcher: scope, operation, group, version and resource[/subresource], with ``*`` wildcards."""
        if self.scope == "Namespaced" and (resource == "namespaces" and not group or not namespace):
            return False
        if self.scope == "Cluster" and not (resource == "namespaces" and not group or not namespace):
            return False
        if "*" not in self.operations and operation not in self.operations:
            return False
        if "*" not in self.groups and group not in self.groups:
            return False
        if "*" not in self.versions and version not in self.versions:
            return False
        return any((res in ("*", resource)) and (sub in ("*", subresource)) for res, sub in self.resources)


@dataclass(frozen=True, slots=True)
class Webhook:
    """One webhook of a configuration, ready to match and call."""

    name: str
    configuration: str
    index: int
    mutating: bool
    url: str
    service: str  # "namespace/name" when clientConfig names a Service instead of a URL
    ca_bundle: bytes | None  # PEM
    rules: tuple[Rule, ...]
    failure_policy: str
    match_policy: str
    namespace_selector: tuple[Requirement, ...]
    object_selector: tuple[Requirement, ...]
    side_effects: str
    timeout: int
    review_versions: tuple[str, ...]
    reinvoke: bool

    @property
    def key(self) -> str:
        """Identity across the reinvocation round (two configurations may name webhooks alike)."""
        return f"{self.configuration}/{self.index}"


def _compile_rule(rule: Mapping[str, Any]) -> Rule:
    resources = []
    for item in rule.get("resources") or []:
        resource, _, subresource = str(item).partition("/")
        resources.append((resource, subresource))
    return Rule(
        tuple(rule.get("operations") or ()),
        tuple(rule.get("apiGroups") or ()),
        tuple(rule.get("apiVersions") or ()),
        tuple(resources),
        rule.get("scope", "*"),
    )


def compile_webhooks(configurations: Iterable[Mapping[str, Any]], *, mutating: bool) -> list[Webhook]:
    """The webhooks of stored configurations in the API server's call order: configurations sorted by name,
    webhooks in the order each configuration lists them."""
    compiled = []
    for configuration in sorted(configurations, key=lambda c: c["metadata"]["name"]):
        for index, hook in enumerate(configuration.get("webhooks") or []):
            client = hook.get("clientConfig") or {}
            service = client.get("service") or {}
            url = client.get("url") or ""
            bundle = client.get("caBundle")
            compiled.append(
                Webhook(
                    name=hook["name"],
                    configuration=configuration["metadata"]["name"],
                    index=index,
                    mutating=mutating,
                    url=url,
                    service=f"{service.get('namespace', '')}/{service.get('name', '')}" if service else "",
                    ca_bundle=base64.b64decode(bundle) if bundle else None,
                    rules=tuple(_compile_rule(rule) for rule in hook.get("rules") or []),
                    failure_policy=hook.get("failurePolicy", "Fail"),
                    match_policy=hook.get("matchPolicy", "Equivalent"),
                    namespace_selector=selector_requirements(hook.get("namespaceSelector")),
                    object_selector=selector_requirements(hook.get("objectSelector")),
                    side_effects=hook.get("sideEffects", ""),
                    timeout=int(hook.get("timeoutSeconds", 10)),
                    review_versions=tuple(hook.get("admissionReviewVersions") or ()),
                    reinvoke=hook.get("reinvocationPolicy") == "IfNeeded",
                )
            )
    return compiled
