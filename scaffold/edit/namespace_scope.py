"""The edits that switch a project between cluster scope and namespace scope (`pyop edit --namespaced[=false]`).

`pyop init --namespaced` differs from a cluster-scoped project in four places: the manager Deployment sets
WATCH_NAMESPACE, main.py refuses to start without it, and the manager's role and binding are a Role/RoleBinding.
Each edit here changes only the fields that differ, through ruamel.yaml round trips or a line anchored in the
Python function, so whatever else the user changed in those files stays. When a file no longer has the shape an
edit needs (the user renamed the container, rewrote the function), `ScopeEditError` says why; the command then
refuses, or with --force replaces the file (or function) with the template's version.
"""

from __future__ import annotations

import ast
from typing import Any

from pyop_scaffold.edit.yaml_edit import dump_documents, load_documents

MANAGER_DEPLOYMENT = "controller-manager"
MANAGER_CONTAINER = "manager"
MANAGER_BINDING = "manager-rolebinding"
WATCH_NAMESPACE = "WATCH_NAMESPACE"
WATCH_FUNCTION = "watch_namespaces"
# What `pyop init --namespaced` puts in the Deployment: the manager watches the namespace it runs in.
_OWN_NAMESPACE = {"valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}
_GUARD = ("if not value:", 'raise SystemExit("WATCH_NAMESPACE must be set: this operator is namespace-scoped")')
_ANCHOR = 'os.environ.get("WATCH_NAMESPACE"'


class ScopeEditError(Exception):
    """A file lacks what a scope edit needs; the message says what, for a one-line error."""


def set_watch_namespace_env(text: str, namespaced: bool, *, source: str) -> str:
    """manager.yaml with WATCH_NAMESPACE (from the pod's namespace) in the manager container's env, or without it.

    A WATCH_NAMESPACE the user set to something else is theirs when turning scope on; turning scope off cannot
    keep it (the manager would still watch only those namespaces), so that is an error.
    """
    documents = load_documents(text, source=source)
    container = _manager_container(documents)
    env = container.get("env")
    entries = [e for e in env or [] if isinstance(e, dict) and e.get("name") == WATCH_NAMESPACE]
    if namespaced:
        if entries:
            return text
        if env is None:
            from ruamel.yaml.comments import CommentedSeq

            env = CommentedSeq()
            container["env"] = env
        env.append({"name": WATCH_NAMESPACE, **_OWN_NAMESPACE})
        return dump_documents(documents, original=text)
    if not entries:
        return text
    for entry in entries:
        if {k: v for k, v in entry.items() if k != "name"} != _OWN_NAMESPACE:
            raise ScopeEditError(f"the manager container sets {WATCH_NAMESPACE} to a value of your own")
    for entry in entries:
        env.remove(entry)
    if not env:
        del container["env"]
    return dump_documents(documents, original=text)


def _manager_container(documents: list[Any]) -> Any:
    deployment = next(
        (
            d
            for d in documents
            if isinstance(d, dict)
            and d.get("kind") == "Deployment"
            and (d.get("metadata") or {}).get("name") == MANAGER_DEPLOYMENT
        ),
        None,
    )
    if deployment is None:
        raise ScopeEditError(f"no Deployment {MANAGER_DEPLOYMENT}")
    containers = (((deployment.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers") or []
    container = next((c for c in containers if isinstance(c, dict) and c.get("name") == MANAGER_CONTAINER), None)
    if container is None:
        raise ScopeEditError(f"no container {MANAGER_CONTAINER!r} in Deployment {MANAGER_DEPLOYMENT}")
    env = container.get("env")
    if env is not None and not isinstance(env, list):
        raise ScopeEditError(f"the env of container {MANAGER_CONTAINER!r} is not a list")
    return container


def set_binding_scope(text: str, namespaced: bool, *, source: str) -> str:
    """role_binding.yaml binding the manager with a RoleBinding in its namespace, or a ClusterRoleBinding."""
    documents = load_documents(text, source=source)
    binding = next(
        (
            d
            for d in documents
            if isinstance(d, dict)
            and d.get("kind") in ("RoleBinding", "ClusterRoleBinding")
            and (d.get("metadata") or {}).get("name") == MANAGER_BINDING
        ),
        None,
    )
    if binding is None or not isinstance(binding.get("roleRef"), dict):
        raise ScopeEditError(f"no RoleBinding or ClusterRoleBinding {MANAGER_BINDING} with a roleRef")
    kind, role_kind = ("RoleBinding", "Role") if namespaced else ("ClusterRoleBinding", "ClusterRole")
    metadata = binding["metadata"]
    has_namespace = "namespace" in metadata
    if binding["kind"] == kind and binding["roleRef"].get("kind") == role_kind and has_namespace == namespaced:
        return text
    binding["kind"] = kind
    binding["roleRef"]["kind"] = role_kind
    if namespaced and not has_namespace:
        # Where init puts it: right after the name; kustomize's namespace transformer sets the real namespace.
        metadata.insert(list(metadata).index("name") + 1, "namespace", "system")
    elif not namespaced and has_namespace:
        del metadata["namespace"]
    return dump_documents(documents, original=text)


def set_role_scope(text: str, namespaced: bool, *, source: str) -> str:
    """role.yaml (written by `make manifests`) with the manager's roles as Roles or ClusterRoles.

    Roles a marker places in a namespace are Roles either way; only the ones without a namespace switch, as
    `make manifests` would switch them, so the project builds before it is next run.
    """
    documents = load_documents(text, source=source)
    roles = [
        d
        for d in documents
        if isinstance(d, dict)
        and d.get("kind") in ("Role", "ClusterRole")
        and "namespace" not in (d.get("metadata") or {})
    ]
    if not roles:
        raise ScopeEditError("no Role or ClusterRole without a namespace")
    kind = "Role" if namespaced else "ClusterRole"
    if all(role["kind"] == kind for role in roles):
        return text
    for role in roles:
        role["kind"] = kind
    return dump_documents(documents, original=text)


def set_namespace_required(text: str, namespaced: bool, *, source: str) -> str:
    """main.py whose `watch_namespaces()` refuses to start without WATCH_NAMESPACE, or accepts its absence.

    The two guard lines go right after the line reading the variable, with that line's indentation.
    """
    lines = text.splitlines(keepends=True)
    start, end = _function_lines(text, WATCH_FUNCTION, source)
    body = lines[start:end]
    stripped = [line.strip() for line in body]
    guard_at = next(
        (i for i in range(len(stripped) - 1) if (stripped[i], stripped[i + 1]) == _GUARD),
        None,
    )
    if namespaced:
        if guard_at is not None:
            return text
        anchor = next((i for i, line in enumerate(body) if _ANCHOR in line and "value =" in line), None)
        if anchor is None:
            raise ScopeEditError(f'{WATCH_FUNCTION}() has no line `value = os.environ.get("{WATCH_NAMESPACE}", ...)`')
        indent = body[anchor][: len(body[anchor]) - len(body[anchor].lstrip())]
        guard = [f"{indent}{_GUARD[0]}\n", f"{indent}    {_GUARD[1]}\n"]
        insert_at = start + anchor + 1
        return "".join(lines[:insert_at] + guard + lines[insert_at:])
    if guard_at is not None:
        remove_at = start + guard_at
        return "".join(lines[:remove_at] + lines[remove_at + 2 :])
    if any("WATCH_NAMESPACE must be set" in line for line in body):
        raise ScopeEditError(f"{WATCH_FUNCTION}() requires {WATCH_NAMESPACE} in a way of your own")
    return text


def replace_function(text: str, replacement_module: str, name: str, *, source: str) -> str:
    """`text` with top-level function `name` swapped for the one in `replacement_module` (--force's fallback)."""
    lines = text.splitlines(keepends=True)
    new_lines = replacement_module.splitlines(keepends=True)
    new_start, new_end = _function_lines(replacement_module, name, "the template")
    start, end = _function_lines(text, name, source)
    return "".join(lines[:start] + new_lines[new_start:new_end] + lines[end:])


def _function_lines(text: str, name: str, source: str) -> tuple[int, int]:
    """0-based [start, end) line range of a top-level function, decorators included."""
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        raise ScopeEditError(f"not valid Python (line {exc.lineno}: {exc.msg})") from exc
    node = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name), None)
    if node is None or node.end_lineno is None:
        raise ScopeEditError(f"no top-level function {name}()")
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    return first - 1, node.end_lineno
