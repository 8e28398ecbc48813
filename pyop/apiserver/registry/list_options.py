"""Which state a list is served from: kube-apiserver's resourceVersion semantics for list requests.

A list names the state it wants with `resourceVersion` and `resourceVersionMatch` (the table in the API
concepts page, "Semantics for get and list"), and kube-apiserver answers each combination from a different
place, which a client can see:

- unset: the most recent state (a consistent read); `limit` pages it.
- `"0"` (any `resourceVersionMatch` but Exact): any state, served from the watch cache, which **ignores
  `limit`**: the whole collection in one response without a continue token (client-go's reflector lists with
  `resourceVersion=0` and relies on this).
- `N` with `resourceVersionMatch=NotOlderThan`, or `N` without a match and without `limit`: a state not older
  than N: here always the current one; 504 `ResourceVersionTooLarge` when N is newer than the newest state.
- `N` with `resourceVersionMatch=Exact`, or `N` without a match but with `limit` (the legacy exact match):
  the state at exactly N, 410 once N is compacted away.

The options are checked first as `ValidateListOptions` does (422 `ListOptions.meta.k8s.io`), and a continue
token may not be combined with a resourceVersion other than `"0"` (400), as etcd3's store refuses it.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyop.api.status import ApiError, StatusCause, bad_request, invalid

EXACT = "Exact"
NOT_OLDER_THAN = "NotOlderThan"
_MATCHES = (EXACT, NOT_OLDER_THAN, "")


@dataclass(frozen=True, slots=True)
class ListRead:
    """What a list request reads: the state at `exact_version` (None: the newest) and at most `limit` items."""

    limit: int
    exact_version: int | None = None
    minimum_version: int = 0


def list_read(resource_version: str, match: str, limit: int, continue_token: str) -> ListRead:
    """Resolve a list request's options, or raise the error kube-apiserver answers them with."""
    _validate(resource_version, match, continue_token)
    if continue_token:
        if resource_version not in ("", "0"):
            raise bad_request("specifying resource version is not allowed when using continue")
        return ListRead(limit)
    if resource_version == "":
        return ListRead(limit)
    if resource_version == "0":
        return ListRead(0)  # the watch cache serves the whole list and ignores the limit
    version = _parse(resource_version)
    if match == EXACT or (match == "" and limit > 0):
        return ListRead(limit, exact_version=version)
    return ListRead(limit, minimum_version=version)


def too_large(requested: int, current: int) -> ApiError:
    """504 for a resourceVersion newer than anything the server has (`storage.NewTooLargeResourceVersionError`)."""
    return ApiError(
        504,
        f"Timeout: Too large resource version: {requested}, current: {current}",
        causes=[StatusCause("ResourceVersionTooLarge", "Too large resource version")],
        retry_after=1,
    )


def _validate(resource_version: str, match: str, continue_token: str) -> None:
    if not match:
        return
    causes: list[StatusCause] = []
    if not resource_version:
        causes.append(_forbidden("resourceVersionMatch is forbidden unless resourceVersion is provided"))
    if continue_token:
        causes.append(_forbidden("resourceVersionMatch is forbidden when continue is provided"))
    if match not in _MATCHES:
        supported = ", ".join(f'"{value}"' for value in _MATCHES)
        causes.append(
            StatusCause(
                "FieldValueNotSupported",
                f'Unsupported value: "{match}": supported values: {supported}',
                "resourceVersionMatch",
            )
        )
    if match == EXACT and resource_version == "0":
        causes.append(_forbidden('resourceVersionMatch "exact" is forbidden for resourceVersion "0"'))
    if causes:
        raise invalid("ListOptions", "meta.k8s.io", "", causes)


def _forbidden(message: str) -> StatusCause:
    return StatusCause("FieldValueForbidden", f"Forbidden: {message}", "resourceVersionMatch")


def _parse(resource_version: str) -> int:
    """A resourceVersion as etcd3's versioner parses it (an unsigned integer), or 400 as the store answers."""
    if resource_version.isascii() and resource_version.isdigit():
        return int(resource_version)
    raise bad_request(
        f'resourceVersion: Invalid value: "{resource_version}": '
        f'strconv.ParseUint: parsing "{resource_version}": invalid syntax'
    )


__all__ = ["EXACT", "NOT_OLDER_THAN", "ListRead", "list_read", "too_large"]
