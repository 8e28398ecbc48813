"""Calling one admission webhook: POST an AdmissionReview over HTTPS and check the answer as kube-apiserver does.

A call either returns the review's ``response`` or raises ``CallFailed`` (connection refused, timeout, TLS
failure, an HTTP error, an answer that is not a valid AdmissionReview for the request): the failures that a
webhook's ``failurePolicy`` decides about. The certificate is verified against the webhook's ``caBundle`` (the
system roots when there is none), as the API server verifies it.
"""

from __future__ import annotations

import asyncio
import json
import ssl
from typing import Any

import aiohttp

from pyop.apiserver.endpoints.wire import dumps
from pyop.apiserver.registry.calls import CallFailed as CallFailed  # its home: the generic registry catches it
from pyop.testing.webhooks.config import Webhook

REVIEW_API_VERSION = "admission.k8s.io/v1"


class WebhookCaller:
    """Owns the HTTP client and the TLS contexts (one per CA bundle); closed with the server."""

    def __init__(self) -> None:
        self._session: aiohttp.ClientSession | None = None
        self._contexts: dict[bytes | None, ssl.SSLContext] = {}

    def _context(self, bundle: bytes | None) -> ssl.SSLContext:
        context = self._contexts.get(bundle)
        if context is None:
            # With a bundle only its CAs are trusted; without one, the system's roots (as the API server does).
            context = ssl.create_default_context(cadata=bundle.decode() if bundle else None)
            self._contexts[bundle] = context
        return context

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            # force_close: a fresh connection per call, so a webhook server that was stopped and started again
            # (or closed an idle connection) never meets a stale pooled connection mid-test.
            self._session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True))
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def post(self, url: str, review: dict[str, Any], *, ca_bundle: bytes | None, timeout: float) -> Any:
        """POST a review to ``url`` (its ``?timeout=``, as the API server's webhook client adds it) and decode the
        JSON answer; raises CallFailed with the Go client's wording (``Post "<url>": ...``), which admission and
        conversion prefix with their own words."""
        separator = "&" if "?" in url else "?"
        url = f"{url}{separator}timeout={timeout:g}s"
        try:
            async with asyncio.timeout(timeout):
                async with self._client().post(
                    url,
                    data=dumps(review),
                    headers={"Content-Type": "application/json", "Accept": "application/json"},
                    ssl=self._context(ca_bundle),
                ) as response:
                    body = await response.read()
                    status = response.status
        except TimeoutError:
            raise CallFailed(f'Post "{url}": context deadline exceeded') from None
        except (aiohttp.ClientError, OSError, ssl.SSLError) as error:
            raise CallFailed(f'Post "{url}": {error}') from None
        if not 200 <= status < 300:
            raise CallFailed(
                f"an error on the server ({body[:200].decode(errors='replace')!r}) "
                f"has prevented the request from succeeding (status {status})"
            )
        try:
            return json.loads(body)
        except ValueError as error:
            raise CallFailed(f"the response is not JSON: {error}") from None

    async def call(self, webhook: Webhook, review: dict[str, Any]) -> dict[str, Any]:
        """The ``response`` of the webhook's answer to ``review``, verified; raises CallFailed."""
        if not webhook.url:
            raise CallFailed(
                f'failed to call webhook: service "{webhook.service}" cannot be reached from the test API server '
                "(install the configuration with install_webhooks(..., url=...) to point it at a local server)"
            )
        if "v1" not in webhook.review_versions:
            raise CallFailed("could not create admission objects: webhook does not accept AdmissionReview v1")
        try:
            answer = await self.post(webhook.url, review, ca_bundle=webhook.ca_bundle, timeout=webhook.timeout)
        except CallFailed as error:
            raise CallFailed(f"failed to call webhook: {error}") from None
        return verified_response(answer, review["request"]["uid"], mutating=webhook.mutating)


def verified_response(answer: Any, uid: str, *, mutating: bool) -> dict[str, Any]:
    """webhookrequest.VerifyAdmissionResponse for AdmissionReview v1."""

    def invalid(reason: str) -> CallFailed:
        return CallFailed(f"received invalid webhook response: {reason}")

    if not isinstance(answer, dict) or not isinstance(answer.get("response"), dict):
        raise invalid("webhook response was absent")
    response: dict[str, Any] = answer["response"]
    if response.get("uid") != uid:
        raise invalid(f'expected response.uid="{uid}", got "{response.get("uid", "")}"')
    if answer.get("apiVersion") != REVIEW_API_VERSION or answer.get("kind") != "AdmissionReview":
        raise invalid(
            f"expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, "
            f"got {answer.get('apiVersion')}, Kind={answer.get('kind')}"
        )
    patch, patch_type = response.get("patch"), response.get("patchType")
    if mutating:
        if patch and patch_type is None:
            raise invalid("webhook returned response.patch but not response.patchType")
        if not patch and patch_type is not None:
            raise invalid("webhook returned response.patchType but not response.patch")
    else:
        if patch:
            raise invalid("validating webhook may not return response.patch")
        if patch_type is not None:
            raise invalid("validating webhook may not return response.patchType")
    return response
