"""Validation of the names a user types, with the API server's rules, so bad input fails before anything is written.

A name also becomes Python: a project name is the package, a group a module (`api/<group>/`, with --multigroup) and
an import alias in main.py, a kind a class the scaffolds import beside pyop's own names. So the Kubernetes rules
come with Python's: identifiers, no keywords, no package that shadows a module the generated code imports.

Every pattern is matched with `fullmatch`: `$` also matches before a trailing newline, which would let `'crew\n'`
through into file names and YAML.
"""

from __future__ import annotations

import keyword
import re
import sys

from pyop.api.validation import dns1035_label_problems, dns1123_subdomain_problems
from pyop_scaffold.errors import UsageError

_VERSION = re.compile(r"v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?")
_KIND = re.compile(r"[A-Z][A-Za-z0-9]*")
_PROJECT_NAME = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# Top-level modules a generated project imports besides the standard library (its templates' imports and its
# dependencies): a project package of the same name would be imported in their place.
THIRD_PARTY_MODULES = frozenset(
    {"pyop", "pyop_scaffold", "pydantic", "pydantic_core", "pytest", "pytest_asyncio", "yaml", "typing_extensions"}
)

# Names the scaffolds of a kind import or define at module level (project_templates/api and webhook: the types,
# controller, webhook and their tests; `Hub` and `Self`, which create webhook --conversion imports into types
# files). A kind of the same name would be shadowed by them, or shadow them.
RESERVED_KINDS = frozenset(
    {
        "Any",
        "Condition",
        "Field",
        "GroupVersion",
        "Hub",
        "KubeModel",
        "Manager",
        "ManagerOptions",
        "Path",
        "Request",
        "Resource",
        "ResourceList",
        "Result",
        "Self",
        "TestAPIServer",
        "Warnings",
    }
)


def validate_dns1123_subdomain(value: str, what: str) -> str:
    """A DNS-1123 subdomain: lower-case labels joined by dots, at most 253 characters."""
    if dns1123_subdomain_problems(value):  # the API server's rule (pyop.api.validation)
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
    """The short group name (`crew`), which pyop joins with the domain; a DNS-1123 subdomain itself.

    It also names Python: the package `api/<group>/` with --multigroup (which `pyop edit --multigroup` can turn on
    later) and main.py's import aliases, so with '-' and '.' read as '_' it must be an identifier and no keyword.
    """
    validate_dns1123_subdomain(group, "group")
    module = group.replace("-", "_").replace(".", "_")
    if not group[0].isalpha() or keyword.iskeyword(module):
        raise UsageError(
            f"invalid group {group!r}: must start with a letter and not be a Python keyword "
            "(it names the Python package api/<group>/)"
        )
    return group


def validate_version(version: str) -> str:
    if not _VERSION.fullmatch(version):
        raise UsageError(
            f"invalid version {version!r}: must look like v1, v1alpha1 or v2beta3 "
            "('v', a number from 1, optionally 'alpha' or 'beta' and a number)"
        )
    return version


def validate_kind_name(kind: str) -> str:
    """The Kubernetes rules of a kind: UpperCamelCase and, lower-cased, a DNS-1035 label (the singular name)."""
    if not _KIND.fullmatch(kind):
        raise UsageError(
            f"invalid kind {kind!r}: must be UpperCamelCase, starting with an upper-case letter, "
            "letters and digits only"
        )
    if dns1035_label_problems(kind.lower()):
        raise UsageError(f"invalid kind {kind!r}: lower-cased it must be a DNS-1035 label of at most 63 characters")
    return kind


def validate_kind(kind: str) -> str:
    """A new kind: the Kubernetes rules, and a class name the scaffolds can import beside pyop's own."""
    validate_kind_name(kind)
    if keyword.iskeyword(kind):
        raise UsageError(f"invalid kind {kind!r}: is a Python keyword")
    if kind.endswith("List"):
        raise UsageError(f"invalid kind {kind!r}: must not end in 'List' (pyop generates the list kind itself)")
    if kind in RESERVED_KINDS:
        raise UsageError(
            f"invalid kind {kind!r}: the generated code imports pyop's own {kind} beside it; "
            f"choose another name (reserved: {', '.join(sorted(RESERVED_KINDS))})"
        )
    return kind


def validate_plural(plural: str) -> str:
    if dns1035_label_problems(plural):
        raise UsageError(
            f"invalid plural {plural!r}: must be a lower-case DNS-1035 label "
            "(letters, digits and '-', starting with a letter)"
        )
    return plural


def validate_project_label(name: str) -> str:
    """A project name's Kubernetes rule: a DNS-1123 label starting with a letter (it names the namespace,
    Deployment and image)."""
    if not _PROJECT_NAME.fullmatch(name) or len(name) > 63:
        raise UsageError(
            f"invalid project name {name!r}: must be a DNS-1123 label starting with a letter "
            "(lower-case letters, digits and '-'); pass --project-name"
        )
    return name


def validate_project_name(name: str) -> str:
    """A new project's name: a DNS-1123 label whose package name is importable and shadows nothing."""
    validate_project_label(name)
    package = python_package_name(name)
    if keyword.iskeyword(package):
        raise UsageError(
            f"invalid project name {name!r}: its package {package!r} is a Python keyword; pass --project-name"
        )
    if shadows_module(package):
        shadowed = (
            f"the standard library's module {package!r}"
            if package in sys.stdlib_module_names
            else f"the module {package!r} that the generated project imports"
        )
        raise UsageError(
            f"invalid project name {name!r}: its package {package!r} would shadow {shadowed}; pass --project-name"
        )
    return name


def shadows_module(package: str) -> bool:
    """Whether a top-level package of this name hides a module the generated project imports (stdlib or deps)."""
    return package in sys.stdlib_module_names or package in THIRD_PARTY_MODULES


def validate_package(package: str) -> str:
    """PROJECT's `package`: the folder every scaffold writes into, so one plain identifier inside the project."""
    if not _IDENTIFIER.fullmatch(package) or keyword.iskeyword(package):
        raise UsageError(
            f"invalid package {package!r}: must be a Python identifier (letters, digits and '_'), "
            "a folder inside the project"
        )
    return package


def validate_module_path(path: str, package: str, what: str) -> str:
    """A dotted module path recorded in PROJECT (a resource's `path`): inside the project's package."""
    parts = path.split(".")
    if parts[0] != package or not all(_IDENTIFIER.fullmatch(p) and not keyword.iskeyword(p) for p in parts):
        raise UsageError(f"invalid {what} {path!r}: must be a dotted Python module path inside the package {package!r}")
    return path


def validate_import_path(path: str, what: str) -> str:
    """A dotted Python import path of another distribution's models (`--external-api-path certmanager_models.v1`)."""
    parts = path.split(".")
    if not all(_IDENTIFIER.fullmatch(p) and not keyword.iskeyword(p) for p in parts):
        raise UsageError(
            f"invalid {what} {path!r}: must be a dotted Python import path of a models module, e.g. "
            "certmanager_models.v1"
        )
    return path


def validate_project_path(path: str, what: str) -> str:
    """A file path recorded in PROJECT (manifests.headerFile): relative, and inside the project."""
    parts = path.replace("\\", "/").split("/")
    if not path or not path.isprintable() or path.startswith(("/", "~")) or ".." in parts or ":" in parts[0]:
        raise UsageError(
            f"invalid {what} {path!r}: must be a relative path inside the project (no leading '/', no '..')"
        )
    return path


def validate_owner(owner: str) -> str:
    """The owner goes into a comment line of every file's header: one line of printable text."""
    if not owner.isprintable():
        raise UsageError(f"invalid --owner {owner!r}: must be one line of printable text (no newline or tab)")
    return owner


def python_package_name(project_name: str) -> str:
    """The importable package of a project: `memcached-operator` -> `memcached_operator`."""
    return project_name.replace("-", "_")


def snake_case(name: str) -> str:
    """`FirstMate` -> `first_mate`; used for module names of kinds."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


_WEBHOOK_PATH = re.compile(r"(/[A-Za-z0-9._~-]+)+")


def validate_webhook_path(path: str, flag: str) -> str:
    """A custom webhook path: the URL path the API server posts AdmissionReviews to on the webhook Service."""
    if not _WEBHOOK_PATH.fullmatch(path) or path == "/convert" or {".", ".."} & set(path.split("/")):
        raise UsageError(
            f"invalid {flag} {path!r}: must be a URL path starting with '/' (letters, digits, '-', '_', '.', '~' "
            "between slashes, no '.' or '..' segment), other than /convert"
        )
    return path
