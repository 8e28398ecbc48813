"""Object-level CRD rules (validation.go): metadata, group, names, scope, versions,
printer columns, subresources, selectable fields, conversion, API approval."""

from __future__ import annotations

import unicodedata
from typing import Any, Final
from urllib.parse import urlsplit

from pyop.schema import fieldpath
from pyop.schema.errors import (
    FieldError,
    child,
    duplicate,
    forbidden,
    index,
    invalid,
    key,
    not_supported,
    required,
    too_many,
)
from pyop_scaffold.manifests.acceptance import names
from pyop_scaffold.manifests.acceptance.paths import PathStyle, VersionPaths, webhook_paths

COLUMN_TYPES: Final = "boolean,date,integer,number,string"
COLUMN_FORMATS: Final = "byte,date,date-time,double,float,int32,int64,password"
_APPROVAL_ANNOTATION: Final = "api-approved.kubernetes.io"
MAX_SELECTABLE_FIELDS: Final = 8


def metadata_errors(crd: dict[str, Any]) -> list[FieldError]:
    metadata = crd.get("metadata") or {}
    spec = crd.get("spec") or {}
    name = metadata.get("name") or ""
    path = "metadata.name"
    if not name:
        if metadata.get("generateName"):
            return [invalid(path, name, 'must be spec.names.plural+"."+spec.group')]
        return [required(path, "name or generateName is required")]
    errors = [invalid(path, name, message) for message in names.dns1123_subdomain(name)]
    expected = f"{(spec.get('names') or {}).get('plural', '')}.{spec.get('group', '')}"
    if name != expected:
        errors.append(invalid(path, name, 'must be spec.names.plural+"."+spec.group'))
    return errors


def group_and_scope_errors(spec: dict[str, Any]) -> list[FieldError]:
    errors: list[FieldError] = []
    group = spec.get("group") or ""
    if not group:
        errors.append(required("spec.group"))
    else:
        problems = names.dns1123_subdomain(group)
        if problems:
            errors.append(invalid("spec.group", group, ",".join(problems)))
        elif "." not in group:
            errors.append(invalid("spec.group", group, "should be a domain with at least one dot"))
    scope = spec.get("scope") or ""
    if not scope:
        errors.append(required("spec.scope"))
    elif scope not in ("Cluster", "Namespaced"):
        errors.append(not_supported("spec.scope", scope, ["Cluster", "Namespaced"]))
    return errors


def names_errors(names_spec: dict[str, Any]) -> list[FieldError]:
    """Names after v1 defaulting (singular = lower(kind), listKind = kind + "List")."""
    errors: list[FieldError] = []
    kind = names_spec.get("kind") or ""
    plural = names_spec.get("plural") or ""
    singular = names_spec.get("singular") or kind.lower()
    list_kind = names_spec.get("listKind") or (kind + "List" if kind else "")
    for field_name, value in (("plural", plural), ("singular", singular), ("kind", kind), ("listKind", list_kind)):
        if not value:
            errors.append(required(child("spec.names", field_name)))
    if plural and (problems := names.dns1035_label(plural)):
        errors.append(invalid("spec.names.plural", plural, ",".join(problems)))
    if singular and (problems := names.dns1035_label(singular)):
        errors.append(invalid("spec.names.singular", singular, ",".join(problems)))
    for field_name, value in (("kind", kind), ("listKind", list_kind)):
        if value and (problems := names.dns1035_label(value.lower())):
            detail = "may have mixed case, but should otherwise match: " + ",".join(problems)
            errors.append(invalid(child("spec.names", field_name), value, detail))
    for position, short_name in enumerate(names_spec.get("shortNames") or ()):
        if problems := names.dns1035_label(short_name):
            errors.append(invalid(index("spec.names.shortNames", position), short_name, ",".join(problems)))
    if kind and kind == list_kind:
        errors.append(invalid("spec.names.listKind", list_kind, "kind and listKind may not be the same"))
    for position, category in enumerate(names_spec.get("categories") or ()):
        if problems := names.dns1035_label(category):
            errors.append(invalid(index("spec.names.categories", position), category, ",".join(problems)))
    return errors


def versions_list_errors(versions: list[dict[str, Any]]) -> list[FieldError]:
    errors: list[FieldError] = []
    seen: set[str] = set()
    unique = True
    for position, version in enumerate(versions):
        name = version.get("name") or ""
        if name in seen:
            unique = False
        seen.add(name)
        if problems := names.dns1035_label(name):
            errors.append(invalid(child(index("spec.versions", position), "name"), name, ",".join(problems)))
    if not unique:
        errors.append(invalid("spec.versions", versions, "must contain unique version names"))
    if sum(1 for v in versions if v.get("storage")) != 1:
        errors.append(invalid("spec.versions", versions, "must have exactly one version marked as storage version"))
    return errors


def deprecation_errors(version: dict[str, Any], path: str) -> list[FieldError]:
    if "deprecationWarning" not in version or version["deprecationWarning"] is None:
        return []
    warning = version["deprecationWarning"]
    warning_path = child(path, "deprecationWarning")
    if not version.get("deprecated"):
        return [invalid(warning_path, warning, "can only be set for deprecated versions")]
    messages = []
    if len(warning.encode()) > 256:
        messages.append("must be <= 256 characters long")
    if not warning:
        messages.append("must not be an empty string")
    byte_offset = 0
    for char in warning:
        category = unicodedata.category(char)
        if category == "Cc":
            messages.append(
                f"must only contain printable UTF-8 characters; control character found at index {byte_offset}"
            )
            break
        if category in ("Cf", "Cs", "Co", "Cn", "Zl", "Zp") or (category == "Zs" and char != " "):
            messages.append(
                f"must only contain printable UTF-8 characters; non-printable character found at index {byte_offset}"
            )
            break
        byte_offset += len(char.encode())
    return [invalid(warning_path, warning, message) for message in messages]


def _simple_json_path(value: str, path: str) -> list[FieldError]:
    if not value.startswith("."):
        return [invalid(path, value, "must be a simple json path starting with .")]
    return []


def column_errors(column: dict[str, Any], path: str, json_path_key: str) -> list[FieldError]:
    errors: list[FieldError] = []
    if not column.get("name"):
        errors.append(required(child(path, "name")))
    column_type = column.get("type") or ""
    if not column_type:
        errors.append(required(child(path, "type"), f"must be one of {COLUMN_TYPES}"))
    elif column_type not in COLUMN_TYPES.split(","):
        errors.append(invalid(child(path, "type"), column_type, f"must be one of {COLUMN_TYPES}"))
    column_format = column.get("format") or ""
    if column_format and column_format not in COLUMN_FORMATS.split(","):
        errors.append(invalid(child(path, "format"), column_format, f"must be one of {COLUMN_FORMATS}"))
    json_path = column.get("jsonPath") or ""
    if not json_path:
        errors.append(required(child(path, json_path_key)))
    else:
        errors.extend(_simple_json_path(json_path, child(path, json_path_key)))
    return errors


def subresource_errors(subresources: dict[str, Any] | None, path: str) -> list[FieldError]:
    scale = (subresources or {}).get("scale")
    if scale is None:
        return []
    errors: list[FieldError] = []
    for field_name, prefix, where in (
        ("specReplicasPath", ".spec.", "under .spec"),
        ("statusReplicasPath", ".status.", "under .status"),
    ):
        field_path = child(path, f"scale.{field_name}")
        value = scale.get(field_name) or ""
        if not value:
            errors.append(required(field_path))
        elif problems := _simple_json_path(value, field_path):
            errors.extend(problems)
        elif not value.startswith(prefix):
            errors.append(invalid(field_path, value, f"should be a json path {where}"))
    selector = scale.get("labelSelectorPath") or ""
    if selector:
        field_path = child(path, "scale.labelSelectorPath")
        if problems := _simple_json_path(selector, field_path):
            errors.extend(problems)
        elif not selector.startswith((".spec.", ".status.")):
            errors.append(invalid(field_path, selector, "should be a json path under either .spec or .status"))
    return errors


def selectable_field_errors(fields: list[dict[str, Any]], schema: dict[str, Any] | None, path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    seen: set[str] = set()
    for position, selectable in enumerate(fields):
        json_path_path = child(index(path, position), "jsonPath")
        json_path = selectable.get("jsonPath") or ""
        if not json_path:
            errors.append(required(json_path_path))
            continue
        if isinstance(schema, dict):
            try:
                segments = fieldpath.parse(json_path)
                target = fieldpath.resolve(segments, schema, allow_array=False)
            except fieldpath.FieldPathError as error:
                errors.append(invalid(json_path_path, json_path, f"is an invalid path: {error}"))
                continue
            if target.get("type") not in ("string", "integer", "boolean"):
                errors.append(
                    invalid(
                        json_path_path,
                        json_path,
                        "must point to a field of type string, boolean or "
                        "integer. Enum string fields and strings with formats are allowed.",
                    )
                )
            if segments and segments[0].name == "metadata":
                errors.append(invalid(json_path_path, json_path, "must not point to fields in metadata"))
        if json_path in seen:
            errors.append(duplicate(json_path_path, json_path))
        seen.add(json_path)
    if len(fields) > MAX_SELECTABLE_FIELDS:
        errors.append(too_many(path, len(fields), MAX_SELECTABLE_FIELDS))
    return errors


def conversion_errors(spec: dict[str, Any], style: PathStyle) -> list[FieldError]:
    conversion = spec.get("conversion")
    if conversion is None:
        return []  # v1 defaulting: strategy None
    errors: list[FieldError] = []
    strategy = conversion.get("strategy") or ""
    client_config_path, review_versions_path = webhook_paths(style)
    webhook = conversion.get("webhook") or {}
    client_config = webhook.get("clientConfig")
    review_versions = webhook.get("conversionReviewVersions") or []
    if not strategy:
        errors.append(required("spec.conversion.strategy"))
    elif strategy not in ("None", "Webhook"):
        errors.append(not_supported("spec.conversion.strategy", strategy, ["None", "Webhook"]))
    if strategy == "Webhook":
        if client_config is None:
            errors.append(required(client_config_path, "required when strategy is set to Webhook"))
        else:
            errors.extend(_client_config_errors(client_config, client_config_path))
        errors.extend(_review_versions_errors(review_versions, review_versions_path))
    else:
        if client_config is not None:
            errors.append(forbidden(client_config_path, "should not be set when strategy is not set to Webhook"))
        if review_versions:
            errors.append(forbidden(review_versions_path, "should not be set when strategy is not set to Webhook"))
    if strategy == "Webhook" and spec.get("preserveUnknownFields"):
        errors.append(
            invalid("spec.conversion.strategy", strategy, "must be None if spec.preserveUnknownFields is true")
        )
    return errors


def _client_config_errors(config: dict[str, Any], path: str) -> list[FieldError]:
    url = config.get("url")
    service = config.get("service")
    if (url is None) == (service is None):
        return [required(path, "exactly one of url or service is required")]
    if url is not None:
        return _webhook_url_errors(url, child(path, "url"))
    return _webhook_service_errors(service or {}, child(path, "service"))


def _webhook_url_errors(url: str, path: str) -> list[FieldError]:
    form = "; desired format: https://host[/path]"
    try:
        parts = urlsplit(url)
    except ValueError as error:
        return [required(path, f"url must be a valid URL: {error}{form}")]
    errors = []
    if parts.scheme != "https":
        errors.append(invalid(path, parts.scheme, "'https' is the only allowed URL scheme" + form))
    if not parts.netloc or not (parts.hostname or ""):
        errors.append(invalid(path, parts.hostname or "", "host must be specified" + form))
    if "@" in parts.netloc:
        errors.append(invalid(path, parts.netloc.rsplit("@", 1)[0], "user information is not permitted in the URL"))
    if parts.fragment:
        errors.append(invalid(path, parts.fragment, "fragments are not permitted in the URL"))
    if parts.query:
        errors.append(invalid(path, parts.query, "query parameters are not permitted in the URL"))
    return errors


def _webhook_service_errors(service: dict[str, Any], path: str) -> list[FieldError]:
    errors = []
    if not service.get("name"):
        errors.append(required(child(path, "name"), "service name is required"))
    if not service.get("namespace"):
        errors.append(required(child(path, "namespace"), "service namespace is required"))
    port = service.get("port", 443)
    if not isinstance(port, int) or not 1 <= port <= 65535:
        errors.append(invalid(child(path, "port"), port, "port is not valid: must be between 1 and 65535, inclusive"))
    url_path = service.get("path")
    if url_path in (None, "", "/"):
        return errors
    path_path = child(path, "path")
    if url_path == "//":
        errors.append(invalid(path_path, url_path, "segment[0] may not be empty"))
    if not url_path.startswith("/"):
        errors.append(invalid(path_path, url_path, "must start with a '/'"))
    to_check = url_path[1:]
    if to_check.endswith("/"):
        to_check = to_check[:-1]
    for position, step in enumerate(to_check.split("/")):
        if not step:
            errors.append(invalid(path_path, url_path, f"segment[{position}] may not be empty"))
            continue
        for failure in names.dns1123_subdomain(step):
            errors.append(invalid(path_path, url_path, f"segment[{position}]: {failure}"))
    return errors


def _review_versions_errors(versions: list[str], path: str) -> list[FieldError]:
    if not versions:
        return [required(path)]
    errors: list[FieldError] = []
    seen: set[str] = set()
    for position, version in enumerate(versions):
        if version in seen:
            errors.append(invalid(index(path, position), version, "duplicate version"))
            continue
        seen.add(version)
        errors.extend(invalid(index(path, position), version, problem) for problem in names.dns1035_label(version))
    if not seen & {"v1", "v1beta1"}:
        errors.append(invalid(path, versions, "must include at least one of v1, v1beta1"))
    return errors


def preserve_unknown_fields_errors(spec: dict[str, Any]) -> list[FieldError]:
    if spec.get("preserveUnknownFields"):
        return [
            invalid(
                "spec.preserveUnknownFields",
                True,
                "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema "
                "instead",
            )
        ]
    return []


def api_approval_errors(crd: dict[str, Any]) -> list[FieldError]:
    group = (crd.get("spec") or {}).get("group") or ""
    protected = group in ("k8s.io", "kubernetes.io") or group.endswith((".k8s.io", ".kubernetes.io"))
    if not protected:
        return []
    annotations = (crd.get("metadata") or {}).get("annotations") or {}
    path = key("metadata.annotations", _APPROVAL_ANNOTATION)
    value = annotations.get(_APPROVAL_ANNOTATION)
    if value is None:
        return [
            required(
                path,
                f'protected groups must have approval annotation "{_APPROVAL_ANNOTATION}", see '
                "https://github.com/kubernetes/enhancements/pull/1111",
            )
        ]
    if value.startswith("unapproved"):
        return []
    parts = urlsplit(value)
    if parts.scheme and parts.netloc:
        return []
    return [
        invalid(
            path,
            value,
            f'protected groups must have approval annotation "{_APPROVAL_ANNOTATION}" with either a URL or a '
            'reason starting with "unapproved", see https://github.com/kubernetes/enhancements/pull/1111',
        )
    ]


def schema_required_errors(versions: list[dict[str, Any]], paths: list[VersionPaths]) -> list[FieldError]:
    del paths  # the missing-schema error always names the version, hoisted or not
    return [
        required(child(child(index("spec.versions", position), "schema"), "openAPIV3Schema"))
        for position, version in enumerate(versions)
        if (version.get("schema") or {}).get("openAPIV3Schema") is None
    ]
