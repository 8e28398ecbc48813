"""Validation of the names a user types, with the API server's rules, so bad input fails before anything is written."""

from __future__ import annotations

import keyword
import re

from pyop_scaffold.errors import UsageError

_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_VERSION = re.compile(r"^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$")
_KIND = re.compile(r"^[A-Z][A-Za-z0-9]*$")
_PROJECT_NAME = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")


def validate_dns1123_subdomain(value: str, what: str) -> str:
    """A DNS-1123 subdomain: lower-case labels joined by dots, at most 253 characters."""
    if not value or len(value) > 253 or not all(_DNS1123_LABEL.match(label) for label in value.split(".")):
        raise UsageError(
            f"invalid {what} {value!r}: must be a DNS-1123 subdomain "
            "(lower-case letters, digits, '-' and '.', starting and ending with a letter or digit)"
        )
    if any(len(label) > 63 for label in value.split(".")):
        raise UsageError(f"invalid {what} {value!r}: each dot-separated label must be at most 63 characters")
    return value


def validate_domain(domain: str) -> str:
    return validate_dns1123_subdomain(domain, "domain")


def validate_group(group: str) -> str:
    """The short group name (`crew`), which pyop joins with the domain; a DNS-1123 subdomain itself."""
    return validate_dns1123_subdomain(group, "group")


def validate_version(version: str) -> str:
    if not _VERSION.match(version):
        raise UsageError(
            f"invalid version {version!r}: must look like v1, v1alpha1 or v2beta3 "
            "('v', a number from 1, optionally 'alpha' or 'beta' and a number)"
        )
    return version


def validate_kind(kind: str) -> str:
    """A kind is UpperCamelCase and, lower-cased, a DNS-1035 label (it becomes the singular resource name)."""
    if not _KIND.match(kind):
        raise UsageError(
            f"invalid kind {kind!r}: must be UpperCamelCase, starting with an upper-case letter, "
            "letters and digits only"
        )
    if len(kind) > 63 or not _DNS1035_LABEL.match(kind.lower()):
        raise UsageError(f"invalid kind {kind!r}: lower-cased it must be a DNS-1035 label of at most 63 characters")
    if keyword.iskeyword(kind):
        raise UsageError(f"invalid kind {kind!r}: is a Python keyword")
    if kind.endswith("List"):
        raise UsageError(f"invalid kind {kind!r}: must not end in 'List' (pyop generates the list kind itself)")
    return kind


def validate_plural(plural: str) -> str:
    if not _DNS1035_LABEL.match(plural) or len(plural) > 63:
        raise UsageError(
            f"invalid plural {plural!r}: must be a lower-case DNS-1035 label "
            "(letters, digits and '-', starting with a letter)"
        )
    return plural


def validate_project_name(name: str) -> str:
    if not _PROJECT_NAME.match(name) or len(name) > 63:
        raise UsageError(
            f"invalid project name {name!r}: must be a DNS-1123 label starting with a letter "
            "(lower-case letters, digits and '-'); pass --project-name"
        )
    return name


def python_package_name(project_name: str) -> str:
    """The importable package of a project: `memcached-operator` -> `memcached_operator`."""
    return project_name.replace("-", "_")


def snake_case(name: str) -> str:
    """`FirstMate` -> `first_mate`; used for module names of kinds."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


_WEBHOOK_PATH = re.compile(r"^(/[A-Za-z0-9._~-]+)+$")


def validate_webhook_path(path: str, flag: str) -> str:
    """A custom webhook path: the URL path the API server posts AdmissionReviews to on the webhook Service."""
    if not _WEBHOOK_PATH.match(path) or path == "/convert":
        raise UsageError(
            f"invalid {flag} {path!r}: must be a URL path starting with '/' (letters, digits, '-', '_', '.', '~' "
            "between slashes), other than /convert"
        )
    return path
