"""The edits `create webhook` makes to files the user owns: Python sources, kustomize replacements, change sets."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from pyop_scaffold.edit.insertion import ensure_marker_above
from pyop_scaffold.edit.python_source import (
    add_class_base,
    add_comment_above_class,
    add_import,
    append_to_class,
    class_defines,
    ensure_marker_in_call,
)
from pyop_scaffold.edit.yaml_edit import append_unique, merge_replacements
from pyop_scaffold.errors import ProjectError
from pyop_scaffold.render.changeset import Action, ChangeSet

TYPES = '''"""Models."""

from __future__ import annotations

from pydantic import Field

from pyop.api import Resource

from .groupversion_info import GROUP_VERSION


# +kubebuilder:object:root=true
class Captain(
    Resource,
    group_version=GROUP_VERSION,
):
    """A captain."""

    spec: dict = Field(default_factory=dict)
'''


def test_imports_join_their_isort_group() -> None:
    text = add_import(TYPES, "from typing import Self", source="t.py", first_party="op")
    assert "from __future__ import annotations\n\nfrom typing import Self\n\nfrom pydantic import Field\n" in text
    text = add_import(text, "from pyop.webhook import Hub", source="t.py", first_party="op")
    assert "from pyop.api import Resource\nfrom pyop.webhook import Hub\n\nfrom .groupversion_info" in text
    text = add_import(
        text, "from op.api.v1.captain_types import Captain as HubCaptain", source="t.py", first_party="op"
    )
    assert "from pyop.webhook import Hub\n\nfrom op.api.v1.captain_types import Captain as HubCaptain\n\nfrom ." in text
    assert add_import(text, "from typing import Self", source="t.py") == text
    compile(text, "t.py", "exec")


def test_import_into_a_module_without_imports() -> None:
    assert add_import('"""Doc."""\nX = 1\n', "import os", source="m.py") == '"""Doc."""\n\nimport os\nX = 1\n'


def test_class_base_added_on_its_own_line_or_inline() -> None:
    text = add_class_base(TYPES, "Captain", "Hub", source="t.py")
    assert "class Captain(\n    Resource,\n    Hub,\n    group_version=GROUP_VERSION,\n):" in text
    assert add_class_base(text, "Captain", "Hub", source="t.py") == text
    inline = "class Captain(Resource, group_version=GV):\n    pass\n"
    assert add_class_base(inline, "Captain", "Hub", source="t.py").startswith(
        "class Captain(Resource, Hub, group_version=GV):"
    )


def test_methods_appended_to_the_class_body() -> None:
    text = append_to_class(TYPES, "Captain", "\n    def convert_to(self) -> None:\n        pass\n", source="t.py")
    assert text.endswith(
        "    spec: dict = Field(default_factory=dict)\n\n    def convert_to(self) -> None:\n        pass\n"
    )
    assert class_defines(text, "Captain", "convert_to", source="t.py")
    assert class_defines(text, "Captain", "spec", source="t.py")
    assert not class_defines(TYPES, "Captain", "convert_to", source="t.py")


def test_marker_comment_goes_below_the_other_markers_once() -> None:
    text = add_comment_above_class(TYPES, "Captain", "# +kubebuilder:storageversion", source="t.py")
    assert "# +kubebuilder:object:root=true\n# +kubebuilder:storageversion\nclass Captain(" in text
    assert add_comment_above_class(text, "Captain", "# +kubebuilder:storageversion", source="t.py") == text


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("class Captain(:\n", "cannot edit t.py: not valid Python (line 1"),
        ("class Admiral(Resource):\n    pass\n", "cannot edit t.py: it has no top-level class Captain"),
    ],
)
def test_python_edits_fail_with_one_line(text: str, message: str) -> None:
    with pytest.raises(ProjectError, match=r"^" + message.replace("(", r"\(")):
        add_class_base(text, "Captain", "Hub", source="t.py")


def test_insertion_points_added_to_older_files() -> None:
    main = "def build(args):\n    options = ManagerOptions(\n        port=1,\n        host=args.host,\n    )\n"
    text = ensure_marker_in_call(main, "ManagerOptions", "# +kubebuilder:scaffold:manageroptions", source="main.py")
    assert "        host=args.host,\n        # +kubebuilder:scaffold:manageroptions\n    )\n" in text
    assert ensure_marker_in_call(text, "ManagerOptions", "# +kubebuilder:scaffold:manageroptions", source="m") == text
    with pytest.raises(ProjectError, match="one a line"):
        ensure_marker_in_call("o = ManagerOptions(port=1)\n", "ManagerOptions", "# +x", source="main.py")
    parse = "def parse(argv):\n    return parser.parse_args(argv)\n"
    assert ensure_marker_above(parse, "flags", "return parser.parse_args(argv)", source="main.py") == (
        "def parse(argv):\n    # +kubebuilder:scaffold:flags\n    return parser.parse_args(argv)\n"
    )
    with pytest.raises(ProjectError, match="neither the insertion point"):
        ensure_marker_above("pass\n", "flags", "return parser.parse_args(argv)", source="main.py")


def test_replacements_gain_targets_without_duplicates() -> None:
    source = {"kind": "Certificate", "name": "serving-cert", "fieldPath": ".metadata.name"}
    mutating = {"select": {"kind": "MutatingWebhookConfiguration"}, "fieldPaths": ["x"]}
    validating = {"select": {"kind": "ValidatingWebhookConfiguration"}, "fieldPaths": ["x"]}
    start = "resources:\n- ../rbac  # mine\n"
    once = merge_replacements(start, [{"source": source, "targets": [mutating]}], source="k", comment="Certs.")
    twice = merge_replacements(
        once, [{"source": source, "targets": [mutating, validating]}], source="k", comment="Certs."
    )
    assert merge_replacements(twice, [{"source": source, "targets": [validating]}], source="k", comment="C") == twice
    assert twice.startswith("resources:\n- ../rbac  # mine\n\n# Certs.\nreplacements:\n")
    assert yaml.safe_load(twice)["replacements"] == [{"source": source, "targets": [mutating, validating]}]
    assert "&" not in twice and "*" not in twice


def test_append_unique_compares_mappings_and_comments_new_items() -> None:
    patch = {"path": "manager_webhook_patch.yaml", "target": {"kind": "Deployment"}}
    text = append_unique("patches:\n- path: a.yaml\n", "patches", [patch], source="k", comment="Webhooks.")
    assert text == (
        "patches:\n- path: a.yaml\n# Webhooks.\n- path: manager_webhook_patch.yaml\n  target:\n    kind: Deployment\n"
    )
    assert append_unique(text, "patches", [patch], source="k", comment="Webhooks.") == text


def test_an_edit_of_a_file_planned_as_new_is_still_created(tmp_path: Path) -> None:
    changes = ChangeSet(tmp_path)
    changes.add_file("config/webhook/kustomization.yaml", "resources:\n- service.yaml\n")
    changes.update_file("config/webhook/kustomization.yaml", "resources:\n- service.yaml\n")
    assert [(p.path, p.action) for p in changes.writes()] == [("config/webhook/kustomization.yaml", Action.CREATE)]
    changes.apply()
    assert (tmp_path / "config/webhook/kustomization.yaml").read_text() == "resources:\n- service.yaml\n"
