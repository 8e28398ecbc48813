"""Admission webhooks as kube-apiserver's MutatingAdmissionWebhook and ValidatingAdmissionWebhook plugins call them.

The dispatcher drives a write (suspended at its ``AdmissionPoint``s in a greenlet, see ``admission.py``) across
the webhook calls: at a mutating point every matching mutating webhook is called in order (configurations by name, then
the order of their webhooks) and its JSON patch applied, with one reinvocation round for ``reinvocationPolicy:
IfNeeded`` webhooks when a later webhook changed the object; at a validating point the matching validating
webhooks are called together and all must allow. Errors are the API server's: a denial is the webhook's Status
with ``admission webhook "<name>" denied the request: <message>``; a failed call is a 500 under ``failurePolicy:
Fail`` and skipped under ``Ignore``; a dry run reaching a webhook with side effects is a 400.

Matching follows the plugins' predicates: rules (operations, apiGroups, apiVersions, resources with ``*`` and
``resource/subresource``, scope), ``matchPolicy: Equivalent`` (another served version of the same resource
matches, and the webhook gets the object in that version: the test server's versions share one schema, so the
conversion is the apiVersion), namespaceSelector (the namespace's labels; a Namespace's own labels when it is
the object) and objectSelector (the new or the old object's labels).
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import jsonpatch
from greenlet import GreenletExit

from pyop.api.selectors import Requirement
from pyop.api.status import ApiError, conflict, not_found
from pyop.api.versions import version_priority
from pyop.apiserver.admission.points import MUTATING, AdmissionPoint, AdmittedWrite, Stale
from pyop.apiserver.registry.bridge import Awaited
from pyop.apiserver.registry.patch import clone_json
from pyop.apiserver.storage.store import Store
from pyop.testing.crds.conversion import converted_async
from pyop.testing.webhooks.client import REVIEW_API_VERSION, CallFailed, WebhookCaller
from pyop.testing.webhooks.config import MUTATING_KEY, VALIDATING_KEY, Webhook, compile_webhooks

log = logging.getLogger(__name__)

T = TypeVar("T")

# Writes that found their object changed while webhooks answered are started again this many times.
MAX_ATTEMPTS = 5


@dataclass(frozen=True, slots=True)
class Invocation:
    """A matching webhook and the version it sees the request in (Equivalent match policy)."""

    webhook: Webhook
    version: str
    kind: tuple[str, str, str]


def _labels(obj: dict[str, Any] | None) -> dict[str, str]:
    return ((obj or {}).get("metadata") or {}).get("labels") or {}


def _selects(requirements: tuple[Requirement, ...], labels: dict[str, str]) -> bool:
    return all(requirement.matches(labels) for requirement in requirements)


def internal_error(message: str) -> ApiError:
    """apierrors.NewInternalError."""
    return ApiError(
        500,
        f"Internal error occurred: {message}",
        reason="InternalError",
        raw_details={"causes": [{"message": message}]},
    )


def denial(webhook: Webhook, status: Any) -> ApiError:
    """webhookerrors.ToStatusErr: the webhook's Status, its message prefixed with who denied."""
    result = status if isinstance(status, dict) else {}
    denied_by = f'admission webhook "{webhook.name}" denied the request'
    if result.get("message"):
        message = f"{denied_by}: {result['message']}"
    elif result.get("reason"):
        message = f"{denied_by}: {result['reason']}"
    else:
        message = f"{denied_by} without explanation"
    given = result.get("code")
    code = given if isinstance(given, int) and given >= 400 else 400  # never a success code with a rejection
    details = result.get("details") if isinstance(result.get("details"), dict) else None
    return ApiError(code, message, reason=str(result.get("reason") or ""), raw_details=details)


class WebhookDispatcher:
    """The webhook configurations in force, and the admission of writes through them."""

    def __init__(self, store: Store, operations: Any) -> None:
        self.store = store
        self.operations = operations  # pyop.apiserver.registry.operations.Operations (its admission_active flag)
        self.caller = WebhookCaller()
        self.mutating: list[Webhook] = []
        self.validating: list[Webhook] = []

    @property
    def active(self) -> bool:
        return bool(self.mutating or self.validating)

    def reload(self) -> None:
        """Recompile after a configuration was stored or deleted (called from the commit hook)."""
        self.mutating = compile_webhooks(self.store.objects(MUTATING_KEY), mutating=True)
        self.validating = compile_webhooks(self.store.objects(VALIDATING_KEY), mutating=False)
        self.operations.admission_active = self.active

    async def close(self) -> None:
        await self.caller.close()

    # --- driving a write --------------------------------------------------------------------------------

    async def drive(self, write: Callable[[Any], T], body: Any, warnings: list[str]) -> T:
        """Run ``write(body)`` through the webhooks; their warnings are collected into ``warnings``.

        Every attempt gets its own copy of the request body (writes take theirs over); an attempt that finds its
        object changed meanwhile starts again, as GuaranteedUpdate retries."""
        for _ in range(MAX_ATTEMPTS):
            child = AdmittedWrite(write)
            try:
                value = child.switch(clone_json(body))
                while not child.dead:
                    if isinstance(value, Awaited):  # a conversion webhook call (bridge.wait_for)
                        value = child.switch(await value.settle(self.caller))
                        continue
                    answer = await self.admit(value, warnings)
                    value = child.switch(answer)
                return value  # type: ignore[no-any-return]
            except Stale:
                continue
            finally:
                if not child.dead:  # refused at an admission point: unwind the suspended write
                    child.throw(GreenletExit)
        name = ((body or {}).get("metadata") or {}).get("name", "") if isinstance(body, dict) else ""
        raise conflict("objects", "", name, "the object kept changing while admission webhooks were called")

    async def admit(self, point: AdmissionPoint, warnings: list[str]) -> dict[str, Any] | None:
        """The object to carry on with (mutating) or None (validating); raises the API server's errors."""
        if point.phase == MUTATING:
            return await self._mutate(point, warnings)
        await self._validate(point, warnings)
        return point.obj

    # --- matching -----------------------------------------------------------------------------------------

    def _attribute_namespace(self, point: AdmissionPoint) -> str:
        """The request's namespace; for a Namespace itself, its name (as admission.Attributes reports it)."""
        resource_type = point.resource_type
        if resource_type.storage_key == "namespaces":
            return point.name
        return point.namespace

    def _invocation(self, webhook: Webhook, point: AdmissionPoint, obj: dict[str, Any] | None) -> Invocation | None:
        resource_type = point.resource_type
        namespace = self._attribute_namespace(point)
        group, plural, subresource = resource_type.group, resource_type.plural, point.subresource

        def matches(version: str) -> bool:
            return any(
                rule.matches(point.operation, group, version, plural, subresource, namespace) for rule in webhook.rules
            )

        version = resource_type.version
        if not matches(version):
            if webhook.match_policy != "Equivalent":
                return None
            others = sorted(
                (rt.version for rt in self.operations.resources.versions_of(resource_type.storage_key)),
                key=version_priority,
            )
            version = next((other for other in others if other != resource_type.version and matches(other)), "")
            if not version:
                return None
        if webhook.namespace_selector and not self._namespace_selected(webhook, point, namespace):
            return None
        if webhook.object_selector and not (
            (obj is not None and _selects(webhook.object_selector, _labels(obj)))
            or (point.old is not None and _selects(webhook.object_selector, _labels(point.old)))
        ):
            return None
        kind = point.kind or (group, version, resource_type.kind)
        return Invocation(webhook, version, kind)

    def _namespace_selected(self, webhook: Webhook, point: AdmissionPoint, namespace: str) -> bool:
        is_namespace = point.resource_type.storage_key == "namespaces"
        if not namespace and not is_namespace:
            return True  # cluster-scoped objects are never exempted by a namespaceSelector
        if is_namespace and not point.subresource and point.operation in ("CREATE", "UPDATE"):
            labels = _labels(point.obj)
        else:
            stored = self.store.get("namespaces", "", namespace)
            if stored is None:
                raise not_found("namespaces", "", namespace)
            labels = _labels(stored)
        return _selects(webhook.namespace_selector, labels)

    # --- calls --------------------------------------------------------------------------------------------

    async def _view(
        self, invocation: Invocation, point: AdmissionPoint, obj: dict[str, Any] | None
    ) -> dict[str, Any] | None:
        """``obj`` in the version the webhook matched (matchPolicy Equivalent): converted by the CRD's conversion
        webhook when it has one (as kube-apiserver converts for the webhook), else as it is (``_review`` relabels)."""
        resource_type = point.resource_type
        conversion = resource_type.conversion
        if obj is None or conversion is None or point.kind is not None or invocation.version == resource_type.version:
            return obj
        return await converted_async(obj, f"{resource_type.group}/{invocation.version}", conversion, self.caller)

    def _review(
        self,
        invocation: Invocation,
        point: AdmissionPoint,
        obj: dict[str, Any] | None,
        old: dict[str, Any] | None,
    ) -> dict[str, Any]:
        resource_type = point.resource_type
        group, version, kind = invocation.kind
        request_kind = point.kind or (resource_type.group, resource_type.version, resource_type.kind)
        converted = invocation.version != resource_type.version and point.kind is None
        api_version = f"{resource_type.group}/{invocation.version}" if resource_type.group else invocation.version

        def as_seen(value: dict[str, Any] | None) -> dict[str, Any] | None:
            return {**value, "apiVersion": api_version} if value is not None and converted else value

        request: dict[str, Any] = {
            "uid": str(uuid.uuid4()),
            "kind": {"group": group, "version": version, "kind": kind},
            "resource": {"group": resource_type.group, "version": invocation.version, "resource": resource_type.plural},
            "requestKind": {"group": request_kind[0], "version": request_kind[1], "kind": request_kind[2]},
            "requestResource": {
                "group": resource_type.group,
                "version": resource_type.version,
                "resource": resource_type.plural,
            },
        }
        if point.subresource:
            request["subResource"] = request["requestSubResource"] = point.subresource
        name = ((obj or point.old or {}).get("metadata") or {}).get("name", "") or point.name
        if name:
            request["name"] = name
        namespace = self._attribute_namespace(point)
        if namespace:
            request["namespace"] = namespace
        user = point.user
        user_info: dict[str, Any] = {"username": user.username if user else "system:apiserver"}
        if user and user.uid:
            user_info["uid"] = user.uid
        user_info["groups"] = list(user.groups) if user else ["system:masters"]
        request.update(
            operation=point.operation,
            userInfo=user_info,
            object=as_seen(obj),
            oldObject=as_seen(old),
            dryRun=point.dry_run,
            options=point.options,
        )
        return {"apiVersion": REVIEW_API_VERSION, "kind": "AdmissionReview", "request": request}

    async def _call(
        self,
        invocation: Invocation,
        point: AdmissionPoint,
        obj: dict[str, Any] | None,
        warnings: list[str],
        view: dict[str, Any] | None = None,
    ) -> dict[str, Any] | None:
        """The webhook's verified response, or None when the call failed and the failure policy ignores it;
        ``view``: ``obj`` already in the webhook's version."""
        webhook = invocation.webhook
        if point.dry_run and webhook.side_effects not in ("None", "NoneOnDryRun"):
            raise ApiError(400, f'admission webhook "{webhook.name}" does not support dry run')
        seen = view if view is not None else await self._view(invocation, point, obj)
        review = self._review(invocation, point, seen, await self._view(invocation, point, point.old))
        try:
            response = await self.caller.call(webhook, review)
        except CallFailed as failure:
            if webhook.failure_policy == "Ignore":
                log.warning("Failed calling webhook, failing open %s: %s", webhook.name, failure)
                return None
            raise internal_error(f'failed calling webhook "{webhook.name}": {failure}') from None
        warnings.extend(str(text) for text in response.get("warnings") or [])
        if not response.get("allowed"):
            raise denial(webhook, response.get("status"))
        return response

    async def _mutate(self, point: AdmissionPoint, warnings: list[str]) -> dict[str, Any] | None:
        obj = point.obj
        previously_invoked: set[str] = set()
        reinvoke: set[str] = set()
        changed_in_first_round = False
        for reinvocation in (False, True):
            if reinvocation and not changed_in_first_round:
                break
            for webhook in self.mutating:
                if reinvocation and webhook.key not in reinvoke:
                    continue  # reinvocation only calls IfNeeded webhooks that ran before a later change
                invocation = self._invocation(webhook, point, obj)
                if invocation is None:
                    continue
                view = await self._view(invocation, point, obj)
                response = await self._call(invocation, point, obj, warnings, view=view)
                changed = False
                if response is not None and response.get("patch"):
                    patched = self._patched(webhook, invocation, point, view, response)
                    if view is not obj:  # patched in the webhook's version: back to the request's
                        conversion = point.resource_type.conversion
                        assert conversion is not None and patched is not None and obj is not None
                        if patched is view:
                            patched = obj
                        else:
                            patched = await converted_async(
                                patched, point.resource_type.api_version, conversion, self.caller
                            )
                    changed = patched != obj
                    obj = patched
                if changed:
                    reinvoke |= previously_invoked
                    previously_invoked = set()
                    changed_in_first_round = changed_in_first_round or not reinvocation
                if webhook.reinvoke:
                    previously_invoked.add(webhook.key)
        return obj

    def _patched(
        self,
        webhook: Webhook,
        invocation: Invocation,
        point: AdmissionPoint,
        obj: dict[str, Any] | None,
        response: dict[str, Any],
    ) -> dict[str, Any] | None:
        if response.get("patchType") != "JSONPatch":
            raise internal_error(
                f'failed calling webhook "{webhook.name}": unsupported patch type "{response.get("patchType")}"'
            )
        try:
            operations = json.loads(base64.b64decode(response["patch"]))
        except (ValueError, TypeError) as error:
            raise internal_error(
                f'failed calling webhook "{webhook.name}": received undecodable patch in webhook response: {error}'
            ) from None
        if not operations:
            return obj
        if obj is None:
            raise internal_error(
                f'admission webhook "{webhook.name}" attempted to modify the object, '
                "which is not supported for this operation"
            )
        try:
            patched = jsonpatch.JsonPatch(operations).apply(clone_json(obj))
        except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, KeyError, TypeError) as error:
            raise internal_error(str(error)) from None
        if not isinstance(patched, dict):
            raise internal_error(f'admission webhook "{webhook.name}" patched the object into a non-object')
        if invocation.version != point.resource_type.version and point.kind is None:
            patched["apiVersion"] = obj.get("apiVersion", point.resource_type.api_version)
        return patched

    async def _validate(self, point: AdmissionPoint, warnings: list[str]) -> None:
        invocations = [
            invocation
            for webhook in self.validating
            if (invocation := self._invocation(webhook, point, point.obj)) is not None
        ]
        if not invocations:
            return
        # Called together, as the plugin does; the first failure in configuration order is the answer.
        outcomes = await asyncio.gather(
            *(self._call(invocation, point, point.obj, warnings) for invocation in invocations),
            return_exceptions=True,
        )
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome
