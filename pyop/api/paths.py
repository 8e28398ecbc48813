"""Path segments of Kubernetes REST URLs: what a name, namespace or subresource may be before it joins a path.

An object name goes into a request path as one segment (`/api/v1/namespaces/<ns>/configmaps/<name>`). A name
taken from a user's object (an owner's `spec.secretRef.name`) that is `..` or holds a `/` would step out of its
segment and address another namespace or resource; a `?` or `#` would end the path and start a query or
fragment (`x?dryRun=All`); a `%` would be decoded by the server into any of these. apimachinery's
`path.IsValidPathSegmentName` refuses `.`, `..`, `/` and `%`, and client-go's request builder refuses such
names before sending anything; pyop refuses those, `?` and `#` (which client-go escapes instead: no valid
Kubernetes name contains them), and ASCII control characters and spaces (which would break the request line).

One implementation, used by the client's path building and by the test API server's routing.
"""

from __future__ import annotations

import re

__all__ = ["InvalidPathSegment", "check_path_segment", "path_segment_problems"]

_FORBIDDEN = re.compile(r"[/%?#\x00-\x20\x7f]")
_DESCRIBED = {"/": "'/'", "%": "'%'", "?": "'?'", "#": "'#'", " ": "a space"}


class InvalidPathSegment(ValueError):
    """A name, namespace or subresource that cannot be one segment of a request path."""


def path_segment_problems(value: str) -> list[str]:
    """What is wrong with `value` as one path segment (apimachinery's `IsValidPathSegmentName` messages);
    [] when nothing is."""
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    problems = []
    for character in dict.fromkeys(_FORBIDDEN.findall(value)):
        shown = _DESCRIBED.get(character, f"the control character {character!r}")
        problems.append(f"may not contain {shown}")
    return problems


def check_path_segment(value: str, what: str) -> str:
    """Return `value` when it is a valid path segment; raise `InvalidPathSegment` naming `what` otherwise.

    `what` names the role ("name", "namespace", "subresource") in the message:
    `invalid name "../x": may not contain '/'`.
    """
    if not value:
        raise InvalidPathSegment(f"invalid {what} {value!r}: may not be empty")
    if _FORBIDDEN.search(value) is None and value not in (".", ".."):
        return value
    raise InvalidPathSegment(f"invalid {what} {value!r}: {'; '.join(path_segment_problems(value))}")
