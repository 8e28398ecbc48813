"""The +genclient tags through the marker registry: what each allows, and every misuse as one file:line error."""

from __future__ import annotations

from pathlib import Path

import pytest
from clients_helpers import PACKAGE, TYPES, pyop, tagged_project

from pyop_scaffold.clients.collect import collect_client_kinds
from pyop_scaffold.manifests.loader import imported_project

TYPES_FILE = f"{PACKAGE}/api/v1/harbor_types.py"


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def test_each_tag_gives_its_verbs(tmp_path: Path) -> None:
    root = tagged_project(tmp_path)
    with imported_project(root, PACKAGE):
        kinds = {kind.kind: kind for kind in collect_client_kinds(root, PACKAGE)}
    every = (
        "create", "update", "update_status", "delete", "delete_collection", "get", "list", "watch", "patch",
        "apply", "apply_status",
    )  # fmt: skip
    no_status = tuple(v for v in every if v not in ("update_status", "apply_status"))
    assert kinds["Ship"].verbs == every
    assert kinds["Harbor"].verbs == every and not kinds["Harbor"].namespaced
    assert kinds["Logbook"].verbs == no_status
    assert kinds["Beacon"].verbs == () and [e.name for e in kinds["Beacon"].extras] == ["get_scale"]
    assert kinds["Chart"].verbs == ("get", "list", "watch")  # and no status field: nothing to remove
    assert kinds["Sailor"].verbs == ("create", "delete")
    assert kinds["Cargo"].verbs == tuple(v for v in every if v not in ("delete_collection", "apply", "apply_status"))
    assert [(e.name, e.verb, e.subresource, e.input.name, e.result.name) for e in kinds["Fleet"].extras] == [
        ("update_scale", "update", "scale", "Scale", "Scale"),
        ("patch_scale", "patch", "scale", "Fleet", "Scale"),
        ("apply_scale", "apply", "scale", "Scale", "Scale"),
        ("create_report", "create", "report", "Report", "Report"),
        ("create_status", "create", None, "Fleet", "Status"),
        ("list_summaries", "list", None, "Fleet", "Report"),
        ("retire", "delete", None, "Fleet", "Fleet"),
    ]
    assert kinds["Fleet"].extras[0].result.module == "pyop.api.k8s.autoscaling.v1"
    assert kinds["Fleet"].extras[4].result.module == "pyop.api.k8s.meta.v1"
    assert "Anchor" not in kinds  # no +genclient
    # +groupName is the group of a kind without group_version=
    assert (kinds["Buoy"].group, kinds["Buoy"].version) == ("beta.harbor.example.com", "v1beta1")


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "# +genclient:onlyVerbs=create,delete",
            "# +genclient:onlyVerb=create,delete",
            "unknown marker +genclient:onlyVerb; did you mean +genclient:onlyVerbs?",
        ),
        ("# +genclient:readonly", "# +genclient:readOnly", "unknown marker +genclient:readOnly; did you mean"),
        ("# +genclient:onlyVerbs=create,delete", "# +genclient:onlyVerbs=create,remove", "unknown verb 'remove'"),
        ("# +genclient:onlyVerbs=create,delete", "# +genclient:onlyVerbs=create,create", "given twice"),
        ("# +genclient:method=Retire,verb=delete", "# +genclient:method=Retire", "method Retire needs verb="),
        ("# +genclient:method=Retire,verb=delete", "# +genclient:method=Retire,verb=evict", "unknown verb 'evict'"),
        ("# +genclient:method=Retire,verb=delete", "# +genclient:method=Get,verb=delete", "the name get is taken"),
        (
            "# +genclient:method=Retire,verb=delete",
            "# +genclient:method=Retire,verb=delete,colour=red",
            "unknown method option 'colour=red'",
        ),
        (
            "# +genclient:method=ListSummaries,verb=list,result=Report",
            "# +genclient:method=ListSummaries,verb=list,result=Missing",
            "no class Missing in module harbor_op.api.v1.harbor_types",
        ),
        (
            "# +genclient:method=ListSummaries,verb=list,result=Report",
            "# +genclient:method=ListSummaries,verb=list,result=k8s.io/client-go/x/v1.Thing",
            "only k8s.io/api/<group>/<version>.<Kind>",
        ),
        ("# +genclient:noStatus", "# +genclient:noStatus\n# +genclient:nonNamespaced", "a namespaced kind"),
        ("# +genclient:readonly", "# +genclient:readonly\n# +genclient:noVerbs", "contradict each other"),
        ("class ShipSpec(KubeModel):", "# +genclient\nclass ShipSpec(KubeModel):", "which is not a kind"),
        ("# +genclient\n# +genclient:noStatus", "# +genclient:noStatus", "needs +genclient"),
        ("# +k8s:deepcopy-gen:interfaces=", "# +k8s:deepcopy-gen=yes\n# +k8s:deepcopy-gen:interfaces=", "found 'yes'"),
    ],
)
def test_misused_tags_are_one_located_error_and_nothing_is_written(
    tmp_path: Path, old: str, new: str, message: str
) -> None:
    assert TYPES.count(old) >= 1
    types = TYPES.replace(old, new, 1)
    root = tagged_project(tmp_path, types)
    before = _snapshot(root)
    result = pyop("make", "clients", cwd=root)
    assert result.exit_code == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    # the erring line: the one of `new`'s lines that names the problem (the second of two, but a deepcopy tag)
    text = types.lstrip("\n")
    offset = 1 if "\n" in new and "deepcopy" not in new and "class" not in new else 0
    line = text[: text.index(new)].count("\n") + 1 + offset
    assert lines[0].startswith(f"Error: {TYPES_FILE}:{line}: "), (lines[0], line)
    assert message in lines[0]
    assert _snapshot(root) == before


def test_deepcopy_tags_are_accepted_and_change_nothing(tmp_path: Path) -> None:
    plain = tagged_project(
        tmp_path / "plain", TYPES.replace("# +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object\n", "")
    )
    tagged = tagged_project(tmp_path / "tagged")
    for root in (plain, tagged):
        assert pyop("make", "clients", cwd=root).exit_code == 0
    files = sorted(p.name for p in (plain / PACKAGE / "generated").glob("*.py"))
    assert files == sorted(p.name for p in (tagged / PACKAGE / "generated").glob("*.py"))
    for name in files:
        assert (plain / PACKAGE / "generated" / name).read_bytes() == (
            tagged / PACKAGE / "generated" / name
        ).read_bytes()
