"""Where the API server reports errors for each part of a v1 CRD.

kube-apiserver converts a v1 CRD to its internal form before validating it: when every
version has the same schema (always true for a single version), the schema is *hoisted* to
``spec.validation.openAPIV3Schema``; likewise printer columns, subresources and selectable
fields. Errors then name the internal paths. ``PathStyle.APISERVER`` reproduces that;
``PathStyle.V1`` names the place in the v1 document instead (handy when pointing a user at
the generated YAML).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from pyop.schema.errors import child, index


class PathStyle(enum.Enum):
    APISERVER = "apiserver"
    V1 = "v1"


def _all_same(values: list[Any]) -> bool:
    return all(value == values[0] for value in values[1:])


@dataclass(frozen=True)
class VersionPaths:
    """Bases for one version's errors; ``None`` means "reported once, at the hoisted path"."""

    schema: str
    subresources: str
    columns: str
    selectable_fields: str
    column_json_path_key: str
    schema_hoisted: bool
    subresources_hoisted: bool
    columns_hoisted: bool
    selectable_fields_hoisted: bool


def version_paths(versions: list[dict[str, Any]], style: PathStyle) -> list[VersionPaths]:
    """Error path bases per version, honouring hoisting in APISERVER style."""
    hoist = style is PathStyle.APISERVER and bool(versions)

    def hoisted(getter: Any) -> bool:
        return hoist and _all_same([getter(v) for v in versions])

    schema_hoisted = hoisted(lambda v: (v.get("schema") or {}).get("openAPIV3Schema")) and any(
        (v.get("schema") or {}).get("openAPIV3Schema") is not None for v in versions
    )
    subresources_hoisted = hoisted(lambda v: v.get("subresources"))
    columns_hoisted = hoisted(lambda v: v.get("additionalPrinterColumns") or [])
    selectable_hoisted = hoisted(lambda v: v.get("selectableFields") or [])
    json_path_key = "JSONPath" if style is PathStyle.APISERVER else "jsonPath"
    result = []
    for position, _version in enumerate(versions):
        base = index("spec.versions", position)
        result.append(
            VersionPaths(
                schema="spec.validation.openAPIV3Schema"
                if schema_hoisted
                else child(child(base, "schema"), "openAPIV3Schema"),
                subresources="spec.subresources" if subresources_hoisted else child(base, "subresources"),
                columns="spec.additionalPrinterColumns" if columns_hoisted else child(base, "additionalPrinterColumns"),
                selectable_fields="spec.selectableFields" if selectable_hoisted else child(base, "selectableFields"),
                column_json_path_key=json_path_key,
                schema_hoisted=schema_hoisted,
                subresources_hoisted=subresources_hoisted,
                columns_hoisted=columns_hoisted,
                selectable_fields_hoisted=selectable_hoisted,
            )
        )
    return result


def webhook_paths(style: PathStyle) -> tuple[str, str]:
    """(client config path, conversion review versions path) for conversion webhook errors."""
    if style is PathStyle.APISERVER:
        return "spec.conversion.webhookClientConfig", "spec.conversion.conversionReviewVersions"
    return "spec.conversion.webhook.clientConfig", "spec.conversion.webhook.conversionReviewVersions"
