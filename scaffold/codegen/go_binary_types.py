"""The struct types a Go binary carries for reflection, with their fields' Go types and struct tags.

Since Kubernetes 1.33, k8s.io/api's generated.pb.go files no longer register gogo FileDescriptorProtos, so a
client-go 1.33+ binary (Helm 4's, for one) embeds no descriptors. Its protobuf encoding is still fully stated by
the Go types: every API field keeps its `protobuf:"bytes,3,opt,name=replicas"` tag, and the linker keeps the
reflect metadata of every type the API scheme registers (and of every type those reach through their fields).
This module reads that metadata out of an ELF executable (linux, 64-bit, Go 1.21+ `internal/abi` layouts),
without running it: `read_go_binary` returns the named struct types of the packages asked for, each field with
its name, tag, embedded flag and Go type (pointer, slice, map, array, named or basic kind), and the module
versions of the binary's build info (`dep k8s.io/api v0.35.1`).
"""

from __future__ import annotations

import json
import re
import struct
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

# internal/abi.Kind
BOOL, INT, INT8, INT16, INT32, INT64 = 1, 2, 3, 4, 5, 6
UINT, UINT8, UINT16, UINT32, UINT64, UINTPTR = 7, 8, 9, 10, 11, 12
FLOAT32, FLOAT64, COMPLEX64, COMPLEX128 = 13, 14, 15, 16
ARRAY, CHAN, FUNC, INTERFACE, MAP, POINTER, SLICE, STRING, STRUCT, UNSAFE_POINTER = range(17, 27)
_KIND_MASK: Final = 0x1F
# internal/abi.TFlag
_TFLAG_UNCOMMON, _TFLAG_EXTRA_STAR, _TFLAG_NAMED = 1, 2, 4
# internal/abi.Name flags
_NAME_EXPORTED, _NAME_TAG, _NAME_PKGPATH, _NAME_EMBEDDED = 1, 2, 4, 8
_TYPE_SIZE: Final = 48  # abi.Type on 64-bit
# Bytes of the kind-specific part that follows abi.Type, before the UncommonType (when TFlagUncommon).
_EXTRA: Final = {STRUCT: 32, SLICE: 8}
_BUILDINFO_MAGIC: Final = b"\xff Go buildinf:"


class GoBinaryError(RuntimeError):
    """Not a 64-bit little-endian ELF Go executable, or one whose type metadata cannot be read."""


@dataclass(frozen=True, slots=True)
class GoType:
    """A Go type as far as a protobuf mapping asks: its kind, its name and package (named types), and the types
    it is made of (a pointer's, slice's or array's element; a map's key and element)."""

    kind: int
    name: str  # "PodSpec" for a named type, "" otherwise
    package: str  # "k8s.io/api/core/v1" for a named type, "" otherwise
    elem: GoType | None = None
    key: GoType | None = None

    @property
    def full_name(self) -> str:
        return f"{self.package}.{self.name}" if self.name else ""


@dataclass(frozen=True, slots=True)
class GoField:
    name: str
    tag: str
    embedded: bool
    type: GoType

    def tag_value(self, key: str) -> str | None:
        """reflect.StructTag.Lookup: the value of `key:"..."` in the tag, None when absent."""
        match = re.search(rf'(?:^|\s){re.escape(key)}:"((?:[^"\\]|\\.)*)"', self.tag)
        return match.group(1) if match else None


@dataclass(slots=True)
class GoStruct:
    package: str
    name: str
    fields: list[GoField] = field(default_factory=list)


@dataclass(slots=True)
class GoBinary:
    go_version: str
    modules: dict[str, str]  # module path -> version, from the build info's `dep` lines
    structs: dict[str, GoStruct]  # "k8s.io/api/core/v1.PodSpec" -> struct
    named_slices: dict[str, GoType]  # named slice types of the same packages ("...meta/v1.Verbs")


class _Image:
    """The loadable segments of the ELF file, addressed by virtual address."""

    def __init__(self, data: bytes) -> None:
        if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
            raise GoBinaryError("not a 64-bit little-endian ELF executable")
        self.data = data
        phoff, shoff = struct.unpack_from("<QQ", data, 0x20)
        phentsize, phnum, shentsize, shnum, shstrndx = struct.unpack_from("<HHHHH", data, 0x36)
        self.segments: list[tuple[int, int, int]] = []  # (vaddr, offset, filesz)
        for index in range(phnum):
            p_type, _flags, p_offset, p_vaddr, _paddr, p_filesz = struct.unpack_from(
                "<IIQQQQ", data, phoff + index * phentsize
            )
            if p_type == 1:  # PT_LOAD
                self.segments.append((p_vaddr, p_offset, p_filesz))
        self.sections: dict[str, tuple[int, int, int]] = {}  # name -> (vaddr, offset, size)
        if shoff and shnum:
            headers = [struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize) for i in range(shnum)]
            names_offset = headers[shstrndx][4]
            for name_index, _type, _flags, addr, offset, size in headers:
                end = data.index(b"\0", names_offset + name_index)
                self.sections[data[names_offset + name_index : end].decode()] = (addr, offset, size)

    def offset(self, address: int) -> int:
        for vaddr, offset, size in self.segments:
            if vaddr <= address < vaddr + size:
                return offset + address - vaddr
        raise GoBinaryError(f"address {address:#x} is in no loaded segment")

    def u64(self, address: int) -> int:
        return int(struct.unpack_from("<Q", self.data, self.offset(address))[0])

    def section(self, name: str) -> tuple[int, int, int]:
        found = self.sections.get(name)
        if found is None:
            raise GoBinaryError(f"no {name} section (not a Go executable, or stripped of its sections)")
        return found


def _varint(data: bytes, offset: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[offset]
        offset += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, offset
        shift += 7


class _Reader:
    def __init__(self, image: _Image) -> None:
        self.image = image
        self.types_base = image.section(".rodata")[0]  # runtime.types: the linker starts .rodata with it
        self._types: dict[int, GoType] = {}

    def name(self, address: int) -> tuple[int, str, str]:
        """(flags, name, tag) of an abi.Name."""
        data = self.image.data
        offset = self.image.offset(address)
        flags = data[offset]
        length, offset = _varint(data, offset + 1)
        text = data[offset : offset + length].decode("utf-8", "replace")
        tag = ""
        if flags & _NAME_TAG:
            tag_length, tag_offset = _varint(data, offset + length)
            tag = data[tag_offset : tag_offset + tag_length].decode("utf-8", "replace")
        return flags, text, tag

    def header(self, address: int) -> tuple[int, int, int]:
        """(kind, tflag, str offset) of the abi.Type at `address`."""
        offset = self.image.offset(address)
        tflag, kind = self.image.data[offset + 20], self.image.data[offset + 23]
        str_off = int(struct.unpack_from("<i", self.image.data, offset + 40)[0])
        return kind & _KIND_MASK, tflag, str_off

    def type_name(self, address: int) -> tuple[str, str]:
        """(name, package path) of a named type; ("", "") for an unnamed one. The package path is read for
        structs and slices only (the types a protobuf message can be), from the UncommonType after the kind's
        part of the type."""
        kind, tflag, str_off = self.header(address)
        if not tflag & _TFLAG_NAMED:
            return "", ""
        _flags, text, _tag = self.name(self.types_base + str_off)
        if tflag & _TFLAG_EXTRA_STAR:
            text = text[1:]
        name = text.rsplit(".", 1)[-1]
        package = ""
        if tflag & _TFLAG_UNCOMMON and kind in _EXTRA:
            uncommon = self.image.offset(address + _TYPE_SIZE + _EXTRA[kind])
            pkg_off = int(struct.unpack_from("<i", self.image.data, uncommon)[0])
            if pkg_off:
                package = self.name(self.types_base + pkg_off)[1]
        return name, package

    def go_type(self, address: int) -> GoType:
        cached = self._types.get(address)
        if cached is not None:
            return cached
        kind, _tflag, _str = self.header(address)
        name, package = self.type_name(address)
        elem = key = None
        if kind in (POINTER, SLICE, ARRAY):
            elem = self.go_type(self.image.u64(address + _TYPE_SIZE))
        elif kind == MAP:  # abi.MapType (old and swiss layouts alike) starts with Key, Elem
            key = self.go_type(self.image.u64(address + _TYPE_SIZE))
            elem = self.go_type(self.image.u64(address + _TYPE_SIZE + 8))
        found = GoType(kind, name, package, elem, key)
        self._types[address] = found
        return found

    def struct_fields(self, address: int) -> list[GoField]:
        fields_ptr, count = self.image.u64(address + _TYPE_SIZE + 8), self.image.u64(address + _TYPE_SIZE + 16)
        fields = []
        for index in range(count):
            entry = fields_ptr + index * 24
            flags, name, tag = self.name(self.image.u64(entry))
            fields.append(GoField(name, tag, bool(flags & _NAME_EMBEDDED), self.go_type(self.image.u64(entry + 8))))
        return fields


def _build_info(image: _Image) -> tuple[str, dict[str, str]]:
    """(Go version, module path -> version) of the `.go.buildinfo` blob (Go 1.18+ inline-string form)."""
    data = image.data
    start = data.find(_BUILDINFO_MAGIC)
    if start < 0 or not data[start + 15] & 2:
        return "", {}
    go_version_length, offset = _varint(data, start + 32)
    go_version = data[offset : offset + go_version_length].decode()
    info_length, offset = _varint(data, offset + go_version_length)
    modules = {}
    for line in data[offset : offset + info_length].decode("utf-8", "replace").splitlines():
        parts = line.split("\t")
        if len(parts) >= 3 and parts[0] in ("dep", "=>"):
            modules[parts[1]] = parts[2]
    return go_version, modules


def read_go_binary(path: Path, wanted: Callable[[str], bool]) -> GoBinary:
    """The named struct and named slice types of the packages `wanted` accepts, from an ELF Go executable.

    Every 8-byte-aligned abi.Type of kind struct in the types region (.rodata up to .typelink) is a candidate; one
    counts when its fields' names and types all resolve (a random match does not survive that check)."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise GoBinaryError(f"cannot read {path}: {error.strerror}") from None
    try:
        image = _Image(data)
        go_version, modules = _build_info(image)
        reader = _Reader(image)
    except (struct.error, IndexError, ValueError) as error:
        raise GoBinaryError(f"{path} is not a readable ELF Go executable ({error})") from None
    rodata_addr, rodata_off, rodata_size = image.section(".rodata")
    structs: dict[str, GoStruct] = {}
    named_slices: dict[str, GoType] = {}
    view = data[rodata_off : rodata_off + rodata_size]
    for position in range(0, rodata_size - 80, 8):
        if not view[position + 20] & _TFLAG_NAMED or view[position + 23] & _KIND_MASK not in (STRUCT, SLICE):
            continue
        address = rodata_addr + position
        try:
            kind, _tflag, str_off = reader.header(address)
            if not 0 < str_off < rodata_size:
                continue
            name, package = reader.type_name(address)
            if not name or not package or not wanted(package) or not name.isidentifier():
                continue
            full_name = f"{package}.{name}"
            if kind == STRUCT:
                if full_name in structs:
                    continue
                count, capacity = image.u64(address + 64), image.u64(address + 72)
                if count != capacity or count > 1000:
                    continue
                fields = reader.struct_fields(address)
                if not all(item.name.isidentifier() or item.name == "_" for item in fields):
                    continue
                structs[full_name] = GoStruct(package, name, fields)
            else:
                named_slices.setdefault(full_name, reader.go_type(address))
        except (GoBinaryError, struct.error, IndexError, UnicodeDecodeError):
            continue
    if not structs:
        raise GoBinaryError(f"{path} holds no Go struct types of the packages asked for")
    return GoBinary(go_version, modules, structs, named_slices)


def kubernetes_version(path: Path, binary: GoBinary | None) -> str:
    """The Kubernetes version of the client-go a binary links, `v1.35.1`: from its build info's `k8s.io/api
    v0.35.1`, else (a binary built inside the Kubernetes tree, whose build info says `(devel)`: kubectl; or one
    whose types could not be read, ``binary`` None) from `version --client -o json`."""
    module = binary.modules.get("k8s.io/api", "") if binary is not None else ""
    if module.startswith("v0."):
        return "v1." + module[len("v0.") :]
    return client_version(path)


def client_version(path: Path) -> str:
    """The client version a binary built inside the Kubernetes tree reports (its build info says `(devel)`)."""
    result = subprocess.run(  # noqa: S603 - the binary the caller named
        [str(path), "version", "--client", "-o", "json"], capture_output=True, text=True, timeout=60, check=False
    )
    try:
        return str(json.loads(result.stdout)["clientVersion"]["gitVersion"])
    except (ValueError, KeyError, TypeError):
        raise GoBinaryError(
            f"{path}: its build info names no k8s.io/api version and `version --client -o json` printed none"
        ) from None


def version_key(version: str) -> tuple[int, ...]:
    """`v1.37.1-dispatcher` -> (1, 37, 1), to order binaries by the Kubernetes version they link."""
    match = re.match(r"v?(\d+)\.(\d+)(?:\.(\d+))?", version)
    return tuple(int(part or 0) for part in match.groups()) if match else ()
