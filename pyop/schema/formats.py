"""String formats the API server validates for custom resources.

kube-apiserver keeps only the formats listed in ``pkg/apiserver/validation/formats.go`` and
silently strips every other one, so an unknown format must be *ignored* here, never rejected.
Checks follow kube-openapi's ``strfmt`` registry; the regexes are written for this module.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import re
from collections.abc import Callable
from datetime import date, datetime
from typing import Final

_UUID: Final = re.compile(r"(?i)^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_UUID3: Final = re.compile(r"(?i)^[0-9a-f]{8}-[0-9a-f]{4}-3[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$")
_UUID4: Final = re.compile(r"(?i)^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
_UUID5: Final = re.compile(r"(?i)^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
_HOST_LABEL: Final = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$")
_EMAIL: Final = re.compile(r"^[^\s@<>()\[\],;:\"]+@[^\s@<>()\[\],;:\"]+$")
_BSON_OBJECT_ID: Final = re.compile(r"^[0-9a-fA-F]{24}$")
_HEX_COLOR: Final = re.compile(r"^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$")
_RGB_COLOR: Final = re.compile(
    r"^rgb\(\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,"
    r"\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)$"
)
_SSN: Final = re.compile(r"^\d{3}[- ]?\d{2}[- ]?\d{4}$")
_ISBN10: Final = re.compile(r"^(?:[0-9]{9}X|[0-9]{10})$")
_ISBN13: Final = re.compile(r"^(?:[0-9]{13})$")
_CREDIT_CARD: Final = re.compile(
    r"^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}"
    r"|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11})$"
)
_MAC: Final = re.compile(
    r"(?i)^(?:[0-9a-f]{2}(?:[:-][0-9a-f]{2}){5}|[0-9a-f]{2}(?:[:-][0-9a-f]{2}){7}"
    r"|[0-9a-f]{2}(?:[:-][0-9a-f]{2}){19}|[0-9a-f]{4}(?:\.[0-9a-f]{4}){2}"
    r"|[0-9a-f]{4}(?:\.[0-9a-f]{4}){3}|[0-9a-f]{4}(?:\.[0-9a-f]{4}){9})$"
)
_DATE_TIME: Final = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?([Zz]|[+-]\d{2}:?\d{2})?$"
)
_DATE: Final = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_GO_DURATION: Final = re.compile(r"^[-+]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$|^[-+]?0$")
_HUMAN_DURATION: Final = re.compile(r"^(\d+)\s*([A-Za-zµμ]+)$")
_HUMAN_DURATION_UNITS: Final = frozenset(
    {"ns", "nanosecond", "nanoseconds", "us", "µs", "μs", "microsecond", "microseconds", "ms"}
    | {"millisecond", "milliseconds", "s", "sec", "secs", "second", "seconds", "m", "min", "mins"}
    | {"minute", "minutes", "h", "hr", "hrs", "hour", "hours", "d", "day", "days", "w", "wk", "wks"}
    | {"week", "weeks"}
)
_DNS1123_LABEL: Final = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_SUBDOMAIN: Final = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_URI_SCHEME: Final = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def _is_hostname(value: str) -> bool:
    if not value or len(value) > 255:
        return False
    return all(_HOST_LABEL.match(label) for label in value.rstrip(".").split("."))


def _is_ipv4(value: str) -> bool:
    try:
        ipaddress.IPv4Address(value)
    except ValueError:
        return False
    return True


def _is_ipv6(value: str) -> bool:
    # Go's net.ParseIP accepts IPv4 text for "ipv6" too; kube-openapi checks for a colon.
    if ":" not in value:
        return False
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


def _is_cidr(value: str) -> bool:
    if "/" not in value:
        return False
    try:
        ipaddress.ip_network(value, strict=False)
    except ValueError:
        return False
    return True


def _is_uri(value: str) -> bool:
    # Go's url.ParseRequestURI: an absolute URI or an absolute path, no whitespace.
    if not value or any(c.isspace() for c in value):
        return False
    return value.startswith("/") or bool(_URI_SCHEME.match(value))


def _is_byte(value: str) -> bool:
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _is_date(value: str) -> bool:
    match = _DATE.match(value)
    if not match:
        return False
    try:
        date(int(match[1]), int(match[2]), int(match[3]))
    except ValueError:
        return False
    return True


def _is_date_time(value: str) -> bool:
    match = _DATE_TIME.match(value)
    if not match:
        return False
    try:
        datetime(int(match[1]), int(match[2]), int(match[3]), int(match[4]), int(match[5]), int(match[6] or 0))
    except ValueError:
        return False
    return True


def _is_duration(value: str) -> bool:
    if _GO_DURATION.match(value):
        return True
    match = _HUMAN_DURATION.match(value)
    return match is not None and match[2] in _HUMAN_DURATION_UNITS


def _is_isbn(value: str) -> bool:
    return bool(_ISBN10.match(value) or _ISBN13.match(value))


STRING_FORMATS: Final[dict[str, Callable[[str], bool]]] = {
    "bsonobjectid": lambda v: bool(_BSON_OBJECT_ID.match(v)),
    "uri": _is_uri,
    "email": lambda v: bool(_EMAIL.match(v)),
    "hostname": _is_hostname,
    "ipv4": _is_ipv4,
    "ipv6": _is_ipv6,
    "cidr": _is_cidr,
    "mac": lambda v: bool(_MAC.match(v)),
    "uuid": lambda v: bool(_UUID.match(v)),
    "uuid3": lambda v: bool(_UUID3.match(v)),
    "uuid4": lambda v: bool(_UUID4.match(v)),
    "uuid5": lambda v: bool(_UUID5.match(v)),
    "isbn": _is_isbn,
    "isbn10": lambda v: bool(_ISBN10.match(v)),
    "isbn13": lambda v: bool(_ISBN13.match(v)),
    "creditcard": lambda v: bool(_CREDIT_CARD.match(v)),
    "ssn": lambda v: bool(_SSN.match(v)),
    "hexcolor": lambda v: bool(_HEX_COLOR.match(v)),
    "rgbcolor": lambda v: bool(_RGB_COLOR.match(v)),
    "byte": _is_byte,
    "password": lambda v: True,
    "date": _is_date,
    "duration": _is_duration,
    "datetime": _is_date_time,
    "k8sshortname": lambda v: len(v) <= 63 and bool(_DNS1123_LABEL.match(v)),
    "k8slongname": lambda v: len(v) <= 253 and bool(_DNS1123_SUBDOMAIN.match(v)),
}

INTEGER_RANGES: Final[dict[str, tuple[int, int]]] = {
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
}


def normalize(name: str) -> str:
    """The API server looks formats up with hyphens removed: ``date-time`` == ``datetime``."""
    return name.replace("-", "").replace("_", "").lower()


def string_checker(name: str) -> Callable[[str], bool] | None:
    """The checker for a string format, or None when the API server would strip the format."""
    return STRING_FORMATS.get(normalize(name))


def is_recognized(format_name: str, schema_type: str | None) -> bool:
    """Whether the API server keeps (rather than strips with a warning) this format."""
    normalized = normalize(format_name)
    if schema_type in (None, "", "string"):
        return normalized in STRING_FORMATS
    if schema_type == "integer":
        return normalized in INTEGER_RANGES
    if schema_type == "number":
        return normalized in ("float", "double")
    return False
