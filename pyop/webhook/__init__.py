"""Admission (defaulting, validation) and conversion webhooks, served by the manager over HTTPS.

    class MemcachedDefaulter:
        async def default(self, obj: Memcached) -> None: ...

    class MemcachedValidator:
        async def validate_create(self, obj: Memcached) -> Warnings: ...
        async def validate_update(self, old: Memcached, new: Memcached) -> Warnings: ...
        async def validate_delete(self, obj: Memcached) -> Warnings: ...   # raise AdmissionDenied("...") to refuse

    manager.webhook_for(Memcached).with_defaulter(MemcachedDefaulter()).with_validator(MemcachedValidator()).complete()

See docs/runtime/webhooks.md. Importing this package does not import aiohttp (the manager's start does).
"""

from pyop.webhook.admission import AdmissionRequest, AdmissionResponse, admission_request
from pyop.webhook.builder import WebhookBuilder, defaulting_path, validation_path
from pyop.webhook.conversion import ConversionWebhook
from pyop.webhook.interfaces import AdmissionDenied, Convertible, Defaulter, Hub, Validator, Warnings
from pyop.webhook.server import DEFAULT_CERT_DIR, WebhookServer

__all__ = [
    "DEFAULT_CERT_DIR",
    "AdmissionDenied",
    "AdmissionRequest",
    "AdmissionResponse",
    "ConversionWebhook",
    "Convertible",
    "Defaulter",
    "Hub",
    "Validator",
    "Warnings",
    "WebhookBuilder",
    "WebhookServer",
    "admission_request",
    "defaulting_path",
    "validation_path",
]
