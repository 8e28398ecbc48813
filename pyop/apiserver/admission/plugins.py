"""Compiled-in admission plugins: the server's own mutating and validating admission, before any webhook.

kube-apiserver runs its admission plugins in a fixed order on every write, the in-tree ones (ServiceAccount,
DefaultTolerationSeconds, Priority ...) before MutatingAdmissionWebhook. A plugin here is plain synchronous
code that changes the decoded object in place or refuses it with an `ApiError`; the registry calls each plugin
that `handles` the request, in order, right after decoding, wherever the write comes from (HTTP, the Python
API, the server's controllers), as kube's chain sees every request. Webhooks stay the admission chain's
(`chain.AdmissionChain`), which runs after these.

Most plugins look at one or two kinds, yet every write would ask each of them: a plugin also says, from the
operation, resource and subresource alone, whether it may handle such a request at all (`may_handle`), and the
registry keeps, per operation, resource and subresource, only the plugins that may (`PluginChoice`): a write of
a kind no plugin looks at builds no `Attributes` and asks nobody.

A validating plugin that checks a request only against objects of one resource in the request's namespace
(ResourceQuota: its quotas) names that resource's storage key as ``consults``; while the namespace holds none, the
plugin would return at once, so a choice of only such plugins (`PluginChoice.consults`) is skipped for it without
building its `Attributes` (every write of a namespace without quotas used to ask ResourceQuota).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from pyop.apiserver.authentication.user import UserInfo
from pyop.apiserver.registry.resources import ResourceType
from pyop.apiserver.storage.store import Store

CREATE = "CREATE"
UPDATE = "UPDATE"


@dataclass(frozen=True, slots=True)
class Attributes:
    """What a plugin is told about the request (k8s.io/apiserver's admission.Attributes, the parts used)."""

    operation: str  # CREATE or UPDATE
    resource_type: ResourceType
    subresource: str
    namespace: str
    name: str  # empty on a create that generates its name
    old: dict[str, Any] | None
    user: UserInfo | None
    dry_run: bool
    warnings: list[str] = field(default_factory=list)  # the request's Warning headers (plugins append)


class MutatingPlugin(Protocol):
    """One compiled-in plugin; ``admit`` may change ``obj`` in place or raise an ApiError to refuse it.
    ``may_handle``: False when ``handles`` is False for every request of that operation on that resource and
    subresource (asked once per combination; ``handles`` is still asked of every request it lets through)."""

    name: str

    def may_handle(self, operation: str, resource_type: ResourceType, subresource: str) -> bool: ...

    def handles(self, attributes: Attributes) -> bool: ...

    def admit(self, attributes: Attributes, obj: dict[str, Any], store: Store) -> None: ...


class ValidatingPlugin(Protocol):
    """One compiled-in validating plugin; ``validate`` may only refuse (raise an ApiError) or add warnings.
    ``last``: runs after the validating webhooks, as kube-apiserver orders ResourceQuota. ``may_handle``: as
    `MutatingPlugin.may_handle`. Optional ``consults`` (a storage key, see the module docstring): ``validate``
    does nothing for a request whose namespace holds no object of that resource."""

    name: str
    last: bool

    def may_handle(self, operation: str, resource_type: ResourceType, subresource: str) -> bool: ...

    def handles(self, attributes: Attributes) -> bool: ...

    def validate(self, attributes: Attributes, obj: dict[str, Any], store: Store) -> None: ...


def run_mutating(
    plugins: tuple[MutatingPlugin, ...], attributes: Attributes, obj: dict[str, Any], store: Store
) -> None:
    """Every plugin that handles the request, in order."""
    for plugin in plugins:
        if plugin.handles(attributes):
            plugin.admit(attributes, obj, store)


def run_validating(
    plugins: tuple[ValidatingPlugin, ...],
    attributes: Attributes,
    obj: dict[str, Any],
    store: Store,
    *,
    last: bool,
) -> None:
    """Every plugin of that phase (before the validating webhooks, or ``last``) that handles the request."""
    for plugin in plugins:
        if plugin.last is last and plugin.handles(attributes):
            plugin.validate(attributes, obj, store)


@dataclass(frozen=True, slots=True)
class PluginChoice:
    """The plugins that may handle one operation on one resource and subresource, in their order: mutating,
    validating before the webhooks, validating after them (``last``)."""

    mutating: tuple[MutatingPlugin, ...]
    validating: tuple[ValidatingPlugin, ...]
    validating_last: tuple[ValidatingPlugin, ...]
    # The storage keys the validating plugins consult (each plugin's ``consults``): a request whose namespace holds
    # none of them is one no validating plugin checks. None: some plugin consults nothing named (or none is chosen).
    consults: tuple[str, ...] | None = None


def choose(
    mutating: tuple[MutatingPlugin, ...],
    validating: tuple[ValidatingPlugin, ...],
    operation: str,
    resource_type: ResourceType,
    subresource: str,
) -> PluginChoice:
    """The plugins of ``mutating`` and ``validating`` whose `may_handle` admits such requests."""
    validating = tuple(plugin for plugin in validating if plugin.may_handle(operation, resource_type, subresource))
    consulted = [getattr(plugin, "consults", None) for plugin in validating]
    keys = [key for key in consulted if isinstance(key, str)]
    return PluginChoice(
        tuple(plugin for plugin in mutating if plugin.may_handle(operation, resource_type, subresource)),
        tuple(plugin for plugin in validating if not plugin.last),
        tuple(plugin for plugin in validating if plugin.last),
        tuple(dict.fromkeys(keys)) if keys and len(keys) == len(consulted) else None,
    )
