"""Kubernetes' string validation (k8s.io/apimachinery/pkg/util/validation), with its exact messages.

Each check returns the list of problems apimachinery reports (empty when the value is valid), worded as it words
them, because clients and tests match on those words: the test API server answers with them, and the scaffolder
and client can check a name before sending it.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Final

__all__ = [
    "DNS1123_LABEL_MAX_LENGTH",
    "DNS1123_SUBDOMAIN_MAX_LENGTH",
    "LABEL_VALUE_MAX_LENGTH",
    "dns1123_label_problems",
    "dns1123_subdomain_problems",
    "ip_problems",
    "label_value_problems",
    "non_special_ip_problems",
    "parse_ip",
    "qualified_name_problems",
]

_QNAME_FMT: Final = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QNAME_MSG: Final = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
)
_QNAME_MAX: Final = 63
_LABEL_VALUE_FMT: Final = f"({_QNAME_FMT})?"
_LABEL_VALUE_MSG: Final = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start "
    "and end with an alphanumeric character"
)
LABEL_VALUE_MAX_LENGTH: Final = 63
_LABEL_FMT: Final = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_LABEL_MSG: Final = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end "
    "with an alphanumeric character"
)
DNS1123_LABEL_MAX_LENGTH: Final = 63
_SUBDOMAIN_FMT: Final = _LABEL_FMT + r"(\." + _LABEL_FMT + ")*"
_SUBDOMAIN_MSG: Final = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start "
    "and end with an alphanumeric character"
)
DNS1123_SUBDOMAIN_MAX_LENGTH: Final = 253

_QNAME = re.compile(f"^{_QNAME_FMT}$")
_LABEL_VALUE = re.compile(f"^{_LABEL_VALUE_FMT}$")
_LABEL = re.compile(f"^{_LABEL_FMT}$")
_SUBDOMAIN = re.compile(f"^{_SUBDOMAIN_FMT}$")


def regex_error(message: str, pattern: str, *examples: str) -> str:
    """apimachinery's RegexError: the message, its examples (each `'x', `, joined by ` or `) and the pattern."""
    if not examples:
        return f"{message} (regex used for validation is '{pattern}')"
    shown = " or ".join(f"'{example}', " for example in examples)
    return f"{message} (e.g. {shown}regex used for validation is '{pattern}')"


def max_length_error(length: int) -> str:
    return f"must be no more than {length} characters"


def qualified_name_problems(value: str) -> list[str]:
    """IsQualifiedName: a label or annotation key, `[prefix/]name`."""
    problems: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            problems.append("prefix part must be non-empty")
        else:
            problems.extend(f"prefix part {problem}" for problem in dns1123_subdomain_problems(prefix))
    else:
        return [
            "a qualified name "
            + regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        problems.append("name part must be non-empty")
    elif len(name) > _QNAME_MAX:
        problems.append("name part " + max_length_error(_QNAME_MAX))
    if not _QNAME.fullmatch(name):
        problems.append("name part " + regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc"))
    return problems


def label_value_problems(value: str) -> list[str]:
    """IsValidLabelValue."""
    problems: list[str] = []
    if len(value) > LABEL_VALUE_MAX_LENGTH:
        problems.append(max_length_error(LABEL_VALUE_MAX_LENGTH))
    if not _LABEL_VALUE.fullmatch(value):
        problems.append(regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return problems


def dns1123_label_problems(value: str) -> list[str]:
    """IsDNS1123Label (namespace names, container and port names)."""
    problems: list[str] = []
    if len(value) > DNS1123_LABEL_MAX_LENGTH:
        problems.append(max_length_error(DNS1123_LABEL_MAX_LENGTH))
    if not _LABEL.fullmatch(value):
        problems.append(regex_error(_LABEL_MSG, _LABEL_FMT, "my-name", "123-abc"))
    return problems


_DNS1035_FMT: Final = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_MSG: Final = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
    "character, and end with an alphanumeric character"
)
_DNS1035 = re.compile(f"^{_DNS1035_FMT}$")


def dns1035_label_problems(value: str) -> list[str]:
    """IsDNS1035Label (Service names, an APIService's version)."""
    problems: list[str] = []
    if len(value) > DNS1123_LABEL_MAX_LENGTH:
        problems.append(max_length_error(DNS1123_LABEL_MAX_LENGTH))
    if not _DNS1035.fullmatch(value):
        problems.append(regex_error(_DNS1035_MSG, _DNS1035_FMT, "my-name", "abc-123"))
    return problems


def dns1123_subdomain_problems(value: str) -> list[str]:
    """IsDNS1123Subdomain (most object names, label key prefixes)."""
    problems: list[str] = []
    if len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        problems.append(max_length_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _SUBDOMAIN.fullmatch(value):
        problems.append(regex_error(_SUBDOMAIN_MSG, _SUBDOMAIN_FMT, "example.com"))
    return problems


IP_ADDRESS_MESSAGE: Final = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
_LINK_LOCAL_MULTICAST_V4: Final = ipaddress.ip_network("224.0.0.0/24")


def parse_ip(value: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """``value`` as Go's net.ParseIP reads it (an IPv4-mapped IPv6 address is its IPv4 address), else None."""
    try:
        ip = ipaddress.ip_address(value)
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def ip_problems(value: str) -> list[str]:
    """IsValidIP: whether ``value`` is an IPv4 or IPv6 address."""
    return [] if parse_ip(value) is not None else [IP_ADDRESS_MESSAGE]


def non_special_ip_problems(value: str) -> list[str]:
    """ValidateNonSpecialIP (Endpoints, EndpointSlices, external IPs, the advertised address): unspecified,
    loopback and link-local addresses are refused, since they mean nothing off the host or belong to the node."""
    ip = parse_ip(value)
    if ip is None:
        return ["must be a valid IP address"]
    problems = []
    if ip.is_unspecified:
        problems.append(f"may not be unspecified ({value})")
    if ip.is_loopback:
        problems.append("may not be in the loopback range (127.0.0.0/8, ::1/128)")
    if ip.is_link_local:
        problems.append("may not be in the link-local range (169.254.0.0/16, fe80::/10)")
    link_local_multicast = (
        ip in _LINK_LOCAL_MULTICAST_V4
        if isinstance(ip, ipaddress.IPv4Address)
        else ip.packed[0] == 0xFF and ip.packed[1] & 0x0F == 0x02
    )
    if link_local_multicast:
        problems.append("may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)")
    return problems
