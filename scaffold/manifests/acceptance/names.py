"""DNS name checks with apimachinery's exact messages (``util/validation/validation.go``).

Users search the web for these texts, so they are reproduced word for word, including the
double space the Go ``RegexError`` helper produces between examples.
"""

from __future__ import annotations

import re
from typing import Final

DNS1035_LABEL_FORMAT: Final = "[a-z]([-a-z0-9]*[a-z0-9])?"
DNS1123_LABEL_FORMAT: Final = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_SUBDOMAIN_FORMAT: Final = DNS1123_LABEL_FORMAT + r"(\." + DNS1123_LABEL_FORMAT + ")*"

_DNS1035_LABEL: Final = re.compile(f"^{DNS1035_LABEL_FORMAT}$")
_DNS1123_LABEL: Final = re.compile(f"^{DNS1123_LABEL_FORMAT}$")
_DNS1123_SUBDOMAIN: Final = re.compile(f"^{DNS1123_SUBDOMAIN_FORMAT}$")


def regex_error(message: str, pattern: str, *examples: str) -> str:
    if not examples:
        return f"{message} (regex used for validation is '{pattern}')"
    text = message + " (e.g. "
    for position, example in enumerate(examples):
        if position:
            text += " or "
        text += f"'{example}', "
    return text + f"regex used for validation is '{pattern}')"


def _max_length(limit: int) -> str:
    return f"must be no more than {limit} characters"


def dns1035_label(value: str) -> list[str]:
    errors = []
    if len(value) > 63:
        errors.append(_max_length(63))
    if not _DNS1035_LABEL.match(value):
        errors.append(
            regex_error(
                "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
                "alphabetic character, and end with an alphanumeric character",
                DNS1035_LABEL_FORMAT,
                "my-name",
                "abc-123",
            )
        )
    return errors


def dns1123_label(value: str) -> list[str]:
    errors = []
    if len(value) > 63:
        errors.append(_max_length(63))
    if not _DNS1123_LABEL.match(value):
        errors.append(
            regex_error(
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
                "start and end with an alphanumeric character",
                DNS1123_LABEL_FORMAT,
                "my-name",
                "123-abc",
            )
        )
    return errors


def dns1123_subdomain(value: str) -> list[str]:
    errors = []
    if len(value) > 253:
        errors.append(_max_length(253))
    if not _DNS1123_SUBDOMAIN.match(value):
        errors.append(
            regex_error(
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                "and must start and end with an alphanumeric character",
                DNS1123_SUBDOMAIN_FORMAT,
                "example.com",
            )
        )
    return errors
