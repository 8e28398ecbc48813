"""The edits behind `pyop edit --namespaced`, on inputs the CLI tests do not reach: shapes the user may give files."""

from __future__ import annotations

import pytest
import yaml

from pyop_scaffold.edit.namespace_scope import (
    ScopeEditError,
    replace_function,
    set_binding_scope,
    set_namespace_required,
    set_role_scope,
    set_watch_namespace_env,
)
from pyop_scaffold.edit.yaml_edit import dump_documents, load_documents

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: controller-manager
spec:
  template:
    spec:
      containers:
      - name: sidecar
        image: busybox
      - name: manager  # ours
        image: controller:latest
"""

WATCH = """\
def watch_namespaces() -> list[str] | None:
    value = os.environ.get("WATCH_NAMESPACE", "").strip()
    return [value] if value else None
"""


def _manager_env(text: str) -> list[dict[str, object]]:
    containers = yaml.safe_load(text)["spec"]["template"]["spec"]["containers"]
    manager = next(c for c in containers if c["name"] == "manager")
    return list(manager.get("env", []))


def test_env_list_is_created_for_the_manager_container_only_and_removed_when_emptied() -> None:
    namespaced = set_watch_namespace_env(DEPLOYMENT, True, source="m.yaml")
    assert _manager_env(namespaced) == [
        {"name": "WATCH_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}
    ]
    assert "- name: manager  # ours\n" in namespaced
    assert "env" not in yaml.safe_load(namespaced)["spec"]["template"]["spec"]["containers"][0]
    assert set_watch_namespace_env(namespaced, True, source="m.yaml") == namespaced
    assert set_watch_namespace_env(namespaced, False, source="m.yaml") == DEPLOYMENT


def test_own_watch_namespace_is_kept_when_turning_scope_on() -> None:
    own = DEPLOYMENT + "        env:\n        - name: WATCH_NAMESPACE\n          value: a,b\n"
    assert set_watch_namespace_env(own, True, source="m.yaml") == own
    with pytest.raises(ScopeEditError, match="WATCH_NAMESPACE to a value of your own"):
        set_watch_namespace_env(own, False, source="m.yaml")


def test_deployment_without_manager_container_is_a_scope_edit_error() -> None:
    with pytest.raises(ScopeEditError, match="no container 'manager' in Deployment controller-manager"):
        set_watch_namespace_env(DEPLOYMENT.replace("name: manager", "name: operator"), True, source="m.yaml")


def test_binding_switch_keeps_other_documents_and_fields() -> None:
    text = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n---\n"
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: manager-rolebinding\n"
        "  annotations:\n    team: deck\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n"
        "  name: manager-role\n"
    )
    namespaced = set_binding_scope(text, True, source="rb.yaml")
    docs = list(yaml.safe_load_all(namespaced))
    assert docs[0] == {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "extra"}}
    assert list(docs[1]["metadata"]) == ["name", "namespace", "annotations"]
    assert (docs[1]["kind"], docs[1]["roleRef"]["kind"]) == ("RoleBinding", "Role")
    assert set_binding_scope(namespaced, False, source="rb.yaml") == text


def test_roles_placed_in_a_namespace_by_markers_stay_roles() -> None:
    text = (
        "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: manager-role\nrules: []\n"
        "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: manager-role\n"
        "  namespace: infra\nrules: []\n"
    )
    namespaced = set_role_scope(text, True, source="role.yaml")
    assert [d["kind"] for d in yaml.safe_load_all(namespaced)] == ["Role", "Role"]
    assert namespaced.startswith("---\n")
    back = set_role_scope(namespaced, False, source="role.yaml")
    assert back == text


def test_guard_follows_the_anchor_with_its_indentation_and_is_removed_exactly() -> None:
    module = "import os\n\n\n" + WATCH.replace("\n    ", "\n        ")  # a body indented by eight
    guarded = set_namespace_required(module, True, source="main.py")
    assert (
        '        value = os.environ.get("WATCH_NAMESPACE", "").strip()\n'
        "        if not value:\n"
        '            raise SystemExit("WATCH_NAMESPACE must be set: this operator is namespace-scoped")\n'
    ) in guarded
    assert set_namespace_required(guarded, True, source="main.py") == guarded
    assert set_namespace_required(guarded, False, source="main.py") == module


def test_function_without_anchor_is_an_error_and_force_replaces_only_that_function() -> None:
    module = "import os\n\n\n@cache\ndef watch_namespaces():\n    return None\n\n\ndef keep():\n    pass\n"
    with pytest.raises(ScopeEditError, match="has no line"):
        set_namespace_required(module, True, source="main.py")
    replaced = replace_function(module, "import os\n\n\n" + WATCH, "watch_namespaces", source="main.py")
    assert replaced == "import os\n\n\n" + WATCH + "\n\ndef keep():\n    pass\n"


def test_documents_round_trip_byte_for_byte() -> None:
    text = "# head\napiVersion: v1\nkind: A  # note\n---\napiVersion: v1\nkind: B\nitems:\n- 'x'\n"
    assert dump_documents(load_documents(text, source="x.yaml"), original=text) == text
