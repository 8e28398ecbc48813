"""Generate `pyop/testing/builtins/_go_json_zero.py`: the fields Go's encoding/json writes even when they are zero.

    python -m pyop_scaffold.codegen.go_json_zero [--check] [--binary PATH ...] pyop/testing/builtins/_go_json_zero.py

kube-apiserver decodes a built-in object into its Go struct and encodes the struct again, so what a client reads
back carries every field the encoder writes whatever its value: a container reads back `resources: {}`, a Service
`status: {loadBalancer: {}}`, a core/v1 Event `reportingComponent: ""` and `eventTime: null`, a Role without
rules `rules: null`, a downward-API `resourceFieldRef` `divisor: "0"`. A test server that leaves them out lets an
operator's "desired == stored" comparison converge in a test and loop for ever on a cluster. The OpenAPI
definitions cannot say which fields these are (`+optional` fields without `omitempty` are not `required`); the Go
struct tags can, and every Go binary linking client-go keeps them (go_binary_types reads them). The committed
table is read from kubectl v1.37 (client-go 1.37, the newest Kubernetes the server serves; $PYOP_KUBECTL_TYPES,
from scripts/get-kubectl-types.sh) and Helm 4.1 (client-go 1.35, for the types k8s.io/api has removed since;
$PYOP_HELM): each definition's row comes from the newest binary that has its struct. Compared, the two agree on
every struct both have except the fields 1.37 added.

encoding/json's rules, as this generator applies them to each struct of k8s.io/api, apimachinery and
apiextensions that has an OpenAPI definition:
- `omitzero` omits a zero value of any type; `omitempty` omits "", 0, false and nil or empty pointers, slices
  and maps, but never a struct, which is written as its own zero (recursively: `{}` plus its written fields);
- a field without either is always written: "", 0, false, or `null` for a nil pointer, slice or map;
- the structs that marshal themselves have their own zero: metav1.Time and MicroTime `null`, resource.Quantity
  `"0"`, intstr.IntOrString `0`, metav1.Duration `"0s"`, runtime.RawExtension and apiextensions' JSON `null`;
  a field of any other struct whose encoding the tags do not describe (no json tags) is left out of the table;
- an embedded struct without a JSON name (`json:",inline"`) contributes its fields to its parent's.
Every such struct is listed, with no fields when none are written when zero, so the decoder can tell "nothing is
always written" from "a type the binary does not know" (newer than its client-go: the decoder falls back to the
definition's `required`). Same binaries: the same bytes, in whichever order they are named.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

from pyop.api.definitions import available_kubernetes_versions, load_definitions
from pyop_scaffold.codegen import go_binary_types as go
from pyop_scaffold.codegen.module_output import write_or_check
from pyop_scaffold.codegen.protobuf_struct_tags import wanted

_META: Final = "k8s.io/apimachinery/pkg/apis/meta/v1."
_EXTENSIONS: Final = "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/"
# The zero JSON of the structs that marshal themselves.
SELF_MARSHALLED: Final[dict[str, Any]] = {
    _META + "Time": None,
    _META + "MicroTime": None,
    _META + "Duration": "0s",
    "k8s.io/apimachinery/pkg/api/resource.Quantity": "0",
    "k8s.io/apimachinery/pkg/util/intstr.IntOrString": 0,
    "k8s.io/apimachinery/pkg/runtime.RawExtension": None,
    _EXTENSIONS + "v1.JSON": None,
    _EXTENSIONS + "v1beta1.JSON": None,
}
_NIL_ZERO: Final = frozenset({go.POINTER, go.SLICE, go.MAP, go.INTERFACE})
_NUMBERS: Final = frozenset(range(go.INT, go.INT64 + 1)) | frozenset(range(go.UINT, go.UINT64 + 1))
_FLOATS: Final = frozenset({13, 14})  # reflect.Float32, Float64


class _Unknown(Exception):
    """A struct whose JSON encoding the binary's tags do not describe."""


def definition_name(go_full_name: str) -> str:
    """`k8s.io/api/core/v1.Event` -> `io.k8s.api.core.v1.Event` (the OpenAPI definitions' naming)."""
    package, _, name = go_full_name.rpartition(".")
    return "io.k8s." + package.removeprefix("k8s.io/").replace("/", ".") + "." + name


class ZeroFields:
    """The always-written fields of the binary's structs, computed once per struct."""

    def __init__(self, binary: go.GoBinary) -> None:
        self._structs = binary.structs
        self._fields: dict[str, tuple[tuple[str, Any], ...]] = {}

    def fields(self, full_name: str) -> tuple[tuple[str, Any], ...]:
        """(JSON name, zero JSON) of each field written when zero, in the struct's order (inline ones flattened)."""
        cached = self._fields.get(full_name)
        if cached is None:
            struct = self._structs.get(full_name)
            if struct is None or not struct.fields:
                raise _Unknown(full_name)
            found: list[tuple[str, Any]] = []
            for item in struct.fields:
                tag = item.tag_value("json")
                if tag is None and not item.embedded:
                    raise _Unknown(full_name)  # untagged: not an API struct (time.Time inside metav1.Time)
                name, *options = (tag or "").split(",")
                if name == "-":
                    continue
                if item.embedded and not name:
                    if item.type.kind == go.STRUCT and item.type.full_name not in SELF_MARSHALLED:
                        found.extend(self.fields(item.type.full_name))
                    continue
                zero = self._zero(item.type, omitempty="omitempty" in options, omitzero="omitzero" in options)
                if zero is not _OMITTED:
                    found.append((name or item.name, zero))
            cached = self._fields[full_name] = tuple(found)
        return cached

    def _zero(self, go_type: go.GoType, *, omitempty: bool, omitzero: bool) -> Any:
        kind = go_type.kind
        if omitzero:
            return _OMITTED
        if kind == go.STRUCT:
            if go_type.full_name in SELF_MARSHALLED:
                return SELF_MARSHALLED[go_type.full_name]
            try:
                return dict(self.fields(go_type.full_name))
            except _Unknown:
                return _OMITTED
        if omitempty:
            return _OMITTED
        if kind in _NIL_ZERO:
            return None
        if kind == go.STRING:
            return ""
        if kind == go.BOOL:
            return False
        if kind in _NUMBERS or kind in _FLOATS:
            return 0
        return _OMITTED  # arrays, channels: no API type has one


_OMITTED: Final = object()


def table(binary: go.GoBinary, known: Iterable[str]) -> dict[str, tuple[tuple[str, Any], ...]]:
    """Definition name -> always-written fields, for every struct of the binary with a definition in `known`."""
    zeros = ZeroFields(binary)
    known_names = set(known)
    found: dict[str, tuple[tuple[str, Any], ...]] = {}
    for full_name in sorted(binary.structs):
        name = definition_name(full_name)
        if name not in known_names or full_name in SELF_MARSHALLED:
            continue
        try:
            found[name] = zeros.fields(full_name)
        except _Unknown:
            continue
    return found


def read_sources(paths: Iterable[Path]) -> list[tuple[str, str, go.GoBinary]]:
    """(name, Kubernetes version, binary) of each Go binary, newest client-go first (ties: the order given)."""
    sources = []
    for path in paths:
        binary = go.read_go_binary(path, wanted)
        sources.append((path.name, go.kubernetes_version(path, binary), binary))
    return sorted(sources, key=lambda source: tuple(-part for part in go.version_key(source[1])))


def merged_table(
    sources: list[tuple[str, str, go.GoBinary]], known: Iterable[str]
) -> dict[str, tuple[tuple[str, Any], ...]]:
    """Each definition's row from the newest binary whose client-go has its struct (an older one keeps the types
    that newer k8s.io/api releases removed, autoscaling/v2beta2 say, for the Kubernetes versions that serve them)."""
    known_names = set(known)
    rows: dict[str, tuple[tuple[str, Any], ...]] = {}
    for _name, _version, binary in sources:
        for definition, fields in table(binary, known_names).items():
            rows.setdefault(definition, fields)
    return dict(sorted(rows.items()))


def render(paths: Iterable[Path]) -> str:
    sources = read_sources(paths)
    known: set[str] = set()
    for kubernetes_version in available_kubernetes_versions():
        known.update(load_definitions(kubernetes_version))
    rows = merged_table(sources, known)
    named = ", ".join(f"{name} (client-go {version})" for name, version, _binary in sources)
    lines = [
        f"# Generated by pyop_scaffold.codegen.go_json_zero from the Go struct tags of {named}",
        "# (python -m pyop_scaffold.codegen.go_json_zero --binary PATH ... pyop/testing/builtins/_go_json_zero.py).",
        "# Do not edit.",
        "# ruff: noqa: E501",
        "",
        '"""Definition name -> the (JSON name, zero JSON) of every field Go\'s encoding/json writes when it is zero,',
        "in struct order (pyop.testing.builtins.decoding adds the absent ones, as kube-apiserver's re-encoding does).",
        "Each row comes from the newest binary that has the struct. SOURCES: (binary, Kubernetes version of its",
        'client-go), newest first."""',
        "",
        "from typing import Any, Final",
        "",
        "SOURCES: Final = " + repr(tuple((name, version) for name, version, _binary in sources)).replace("'", '"'),
        "ZERO_FIELDS: Final[dict[str, tuple[tuple[str, Any], ...]]] = {",
    ]
    for name, fields in rows.items():  # names and zeros hold no quotes: repr's quotes can be made ruff's
        lines.append(f"    {name!r}: {fields!r},".replace("'", '"'))
    lines.append("}")
    return "\n".join(lines) + "\n"


def default_binaries() -> list[Path]:
    """kubectl 1.37 ($PYOP_KUBECTL_TYPES: scripts/get-kubectl-types.sh) and helm ($PYOP_HELM or PATH: client-go
    1.35, for the types 1.37 no longer has): the binaries the committed table is read from."""
    found = []
    for variable, fallback, script in (
        ("PYOP_KUBECTL_TYPES", None, "scripts/get-kubectl-types.sh"),
        ("PYOP_HELM", "helm", "scripts/get-helm.sh"),
    ):
        configured = os.environ.get(variable) or (shutil.which(fallback) if fallback else None)
        if not configured:
            raise SystemExit(f"error: ${variable} is unset ({script} prints a path for it); or pass --binary PATH ...")
        found.append(Path(configured))
    return found


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pyop_scaffold.codegen.go_json_zero", description=__doc__)
    parser.add_argument("target", type=Path, help="the module to (re)write: pyop/testing/builtins/_go_json_zero.py")
    parser.add_argument(
        "--binary", type=Path, action="append", default=None, help="a Go binary linking client-go (repeatable)"
    )
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when the module is stale")
    args = parser.parse_args(list(argv) if argv is not None else None)
    try:
        text = render(args.binary or default_binaries())
    except go.GoBinaryError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return write_or_check(args.target, text, check=args.check)


if __name__ == "__main__":
    raise SystemExit(main())
