"""Conversion of custom resources between their versions: the generic registry's (`pyop.apiserver.registry.conversion`,
where apiextensions-apiserver's converter and the ConversionWebhook live), named here for the test server's modules
and its tests."""

from pyop.apiserver.registry.conversion import (
    REVIEW_GROUP,
    REVIEW_VERSIONS,
    STRATEGIES,
    ConversionWebhook,
    Converter,
    conversion_causes,
    converted,
    converted_async,
    served_as,
    storage_api_version,
    stored_as,
    webhook_conversion,
)

__all__ = [
    "REVIEW_GROUP",
    "REVIEW_VERSIONS",
    "STRATEGIES",
    "ConversionWebhook",
    "Converter",
    "conversion_causes",
    "converted",
    "converted_async",
    "served_as",
    "storage_api_version",
    "stored_as",
    "webhook_conversion",
]
