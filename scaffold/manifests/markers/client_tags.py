"""The values of client-gen's and deepcopy-gen's tags (`+genclient:onlyVerbs=create,delete`, `+genclient:method=...`).

client-gen writes its arguments in its own grammar, not controller-tools': a verb list is comma-separated
(`onlyVerbs=create,delete`) and `+genclient:method=GetScale,verb=get,subresource=scale,result=...` puts the method's
name first and its options after it. The registry's rows for these tags name the functions below as their value
parsers, so parsing, errors (with the file and line the parser adds) and the reference docs stay in the one table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from pyop_scaffold.manifests.markers.values import ValueSyntaxError, shown

# client-gen's verbs (Go spelling) and the Python method each becomes, in client-gen's order.
VERBS: Final[dict[str, str]] = {
    "create": "create",
    "update": "update",
    "updateStatus": "update_status",
    "delete": "delete",
    "deleteCollection": "delete_collection",
    "get": "get",
    "list": "list",
    "watch": "watch",
    "patch": "patch",
    "apply": "apply",
    "applyStatus": "apply_status",
}
STATUS_VERBS: Final = frozenset({"update_status", "apply_status"})
READONLY_VERBS: Final = frozenset({"get", "list", "watch"})
# The verbs a `+genclient:method=` extra may use (client-gen's extended verbs).
METHOD_VERBS: Final = ("get", "list", "create", "update", "patch", "apply", "delete")

_GO_NAME: Final = re.compile(r"[A-Z][A-Za-z0-9]*")
_SUBRESOURCE: Final = re.compile(r"[a-z][a-z0-9]*")
_TYPE_PATH: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_./-]*")


def python_verb(name: str) -> str:
    """A verb as written in a tag (client-gen's `updateStatus`, or the Python `update_status`) -> Python name."""
    if name in VERBS:
        return VERBS[name]
    if name in VERBS.values():
        return name
    raise ValueSyntaxError(f"unknown verb {shown(name)} (allowed: {', '.join(VERBS)})")


def parse_verbs(text: str) -> tuple[str, ...]:
    """`create,delete` (client-gen), `create;delete` or `{create,delete}`: Python verb names, in the given order."""
    body = text.strip()
    if body.startswith("{") and body.endswith("}"):
        body = body[1:-1]
    names = [part.strip() for part in re.split(r"[,;]", body)]
    if not body or any(not name for name in names):
        raise ValueSyntaxError(f"expected a list of verbs such as create,delete, found {shown(text)}")
    verbs = tuple(python_verb(name) for name in names)
    repeated = sorted({verb for verb in verbs if verbs.count(verb) > 1})
    if repeated:
        raise ValueSyntaxError(f"verb(s) {', '.join(repeated)} given twice")
    return verbs


@dataclass(frozen=True)
class ExtraMethod:
    """One `+genclient:method=Name,verb=...,subresource=...,input=...,result=...` extra method.

    `input` and `result` name types as client-gen does (`k8s.io/api/autoscaling/v1.Scale`) or as Python does
    (`pyop.api.k8s.autoscaling.v1.Scale`, or a class of the kind's own module); None means the kind itself.
    """

    name: str  # the Go name as written, GetScale
    verb: str
    subresource: str | None = None
    input: str | None = None
    result: str | None = None

    @property
    def python_name(self) -> str:
        """GetScale -> get_scale (the generated method's name)."""
        return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", self.name).lower()


_METHOD_OPTIONS: Final = ("verb", "subresource", "input", "result")


def parse_method(text: str) -> ExtraMethod:
    """`GetScale,verb=get,subresource=scale,result=k8s.io/api/autoscaling/v1.Scale` -> ExtraMethod."""
    name, *options = (part.strip() for part in text.split(","))
    if not _GO_NAME.fullmatch(name):
        raise ValueSyntaxError(
            f"method name {shown(name)} must be a Go-style exported name such as GetScale (the method's name first)"
        )
    values: dict[str, str] = {}
    for option in options:
        key, equals, value = option.partition("=")
        key, value = key.strip(), value.strip()
        if key not in _METHOD_OPTIONS or not equals:
            raise ValueSyntaxError(f"unknown method option {shown(option)} (allowed: {', '.join(_METHOD_OPTIONS)})")
        if key in values:
            raise ValueSyntaxError(f"method option {key} is given twice; keep one")
        if not value:
            raise ValueSyntaxError(f"method option {key} has no value")
        values[key] = value
    verb = values.get("verb")
    if verb is None:
        raise ValueSyntaxError(f"method {name} needs verb=<{'|'.join(METHOD_VERBS)}>")
    if verb not in METHOD_VERBS:
        raise ValueSyntaxError(f"method {name}: unknown verb {shown(verb)} (allowed: {', '.join(METHOD_VERBS)})")
    subresource = values.get("subresource")
    if subresource is not None and not _SUBRESOURCE.fullmatch(subresource):
        raise ValueSyntaxError(f"method {name}: subresource {shown(subresource)} is not a lowercase path segment")
    for key in ("input", "result"):
        if key in values and not _TYPE_PATH.fullmatch(values[key]):
            raise ValueSyntaxError(f"method {name}: {key} {shown(values[key])} is not a type path")
    return ExtraMethod(name, verb, subresource, values.get("input"), values.get("result"))


DEEPCOPY_VALUES: Final = ("package", "true", "false")


def parse_deepcopy(text: str) -> str:
    """`+k8s:deepcopy-gen=package` (doc.go), `=true` or `=false` (a type)."""
    value = text.strip()
    if value not in DEEPCOPY_VALUES:
        raise ValueSyntaxError(f"expected one of {', '.join(DEEPCOPY_VALUES)}, found {shown(value)}")
    return value
