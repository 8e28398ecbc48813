"""`pyop make manifests` writes config/webhook/manifests.yaml from webhook markers, as controller-gen does.

fixtures/webhooks is a project whose markers use every argument of `+kubebuilder:webhook` and
`+kubebuilder:webhookconfiguration`; expected/manifests.yaml was written by hand from controller-gen's rules
(package order, then name order within a package; canonical enum spellings; `core` -> ""; service defaults
webhook-service/system; url instead of a service; the patch merged in; keys sorted; go-yaml's quoting).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from manifests_helpers import KUBERNETES_VERSION, PACKAGE, fails, kustomize, project, pyop, snapshot

from pyop_scaffold.manifests.webhooks import _Invalid, apply_patch

FIXTURE = Path(__file__).parent / "fixtures" / "webhooks"
OUTPUT = Path("config/webhook/manifests.yaml")
MODULE = f"{PACKAGE}/webhook/v1/ship_webhook.py"


def _copy_fixture(target: Path) -> Path:
    shutil.copytree(FIXTURE, target, ignore=shutil.ignore_patterns("expected", "__pycache__"))
    return target


def _generate(root: Path, *args: str) -> str:
    result = pyop("make", "manifests", *args, cwd=root)
    assert result.exit_code == 0, result.stderr
    return (root / OUTPUT).read_text()


def test_the_fixture_gives_the_expected_file_byte_for_byte(tmp_path: Path) -> None:
    root = _copy_fixture(tmp_path / "harbor-op")
    text = _generate(root, "--check")
    assert text == (FIXTURE / "expected" / "manifests.yaml").read_text()
    documents = list(yaml.safe_load_all(text))
    assert [d["kind"] for d in documents] == ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"]
    for document in documents:
        kubernetes_validate.validate(document, KUBERNETES_VERSION, strict=True)


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_the_webhook_kustomization_builds(tmp_path: Path) -> None:
    root = _copy_fixture(tmp_path / "harbor-op")
    _generate(root)
    built = {(d["kind"], d["metadata"]["name"]) for d in kustomize(root / "config" / "webhook")}
    assert built == {
        ("MutatingWebhookConfiguration", "mutating-webhook-configuration"),
        ("ValidatingWebhookConfiguration", "harbor-validating-webhook-configuration"),
        ("Service", "webhook-service"),
    }


def test_output_is_deterministic_and_a_second_run_writes_nothing(tmp_path: Path) -> None:
    first = _copy_fixture(tmp_path / "one")
    text = _generate(first)
    before = snapshot(first)
    again = pyop("make", "manifests", cwd=first)
    assert again.exit_code == 0 and str(OUTPUT) not in again.stdout, again.stdout
    assert snapshot(first) == before
    # Another checkout, its files created in the opposite order: the same bytes.
    second = tmp_path / "two"
    for path in sorted(FIXTURE.rglob("*"), reverse=True):
        relative = path.relative_to(FIXTURE)
        if path.is_file() and relative.parts[0] != "expected" and "__pycache__" not in relative.parts:
            (second / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, second / relative)
    assert _generate(second) == text


def test_marker_order_within_a_package_does_not_matter(tmp_path: Path) -> None:
    root = _copy_fixture(tmp_path / "harbor-op")
    expected = _generate(root)
    module = root / "harbor_op" / "webhook" / "v1" / "ship_webhook.py"
    lines = module.read_text().splitlines()
    markers = [i for i, line in enumerate(lines) if line.startswith("# +kubebuilder:webhook:")]
    lines[markers[0]], lines[markers[1]] = lines[markers[1]], lines[markers[0]]
    module.write_text("\n".join(lines) + "\n")
    # The pod webhooks move to a file that sorts after ship_webhook.py: still sorted by name in the package.
    (root / "harbor_op" / "webhook" / "v1" / "pod_webhook.py").rename(root / "harbor_op/webhook/v1/z_webhook.py")
    assert _generate(root) == expected


def test_no_webhook_markers_no_file(tmp_path: Path) -> None:
    root = project(tmp_path / "plain", {})
    _generate_without_webhooks(root)
    assert not (root / OUTPUT).exists()


def test_no_webhook_markers_leave_an_existing_file_alone(tmp_path: Path) -> None:
    root = project(tmp_path / "plain", {})
    (root / OUTPUT).parent.mkdir(parents=True)
    (root / OUTPUT).write_text("# written by hand\n")
    _generate_without_webhooks(root)
    assert (root / OUTPUT).read_text() == "# written by hand\n"


def _generate_without_webhooks(root: Path) -> None:
    result = pyop("make", "manifests", cwd=root)
    assert result.exit_code == 0, result.stderr
    assert "webhook" not in result.stdout


# ---------------------------------------------------------------------------------------------------------------------
# Errors: one line, `file:line: ...`, naming the value and what is allowed; exit 2, nothing written.

BASE = {
    "path": "/mutate-fleet-example-com-v1-ship",
    "mutating": "true",
    "failurePolicy": "fail",
    "sideEffects": "None",
    "groups": "fleet.example.com",
    "resources": "ships",
    "verbs": "create;update",
    "versions": "v1",
    "name": "mship-v1.kb.io",
    "admissionReviewVersions": "v1",
}


def _marker(**changes: str | None) -> str:
    args = {**BASE, **changes}
    return "# +kubebuilder:webhook:" + ",".join(f"{key}={value}" for key, value in args.items() if value is not None)


def _webhook_project(root: Path, *modules: str) -> Path:
    project(root, {})
    folder = root / PACKAGE / "webhook" / "v1"
    folder.mkdir(parents=True)
    for parent in (folder.parent, folder):
        (parent / "__init__.py").write_text('"""Webhooks."""\n')
    names = ["ship_webhook.py", "yacht_webhook.py"]
    for name, source in zip(names, modules, strict=False):
        (folder / name).write_text('"""Webhooks of a kind."""\n\n' + source + "\n")
    return root


def _one_error(stderr: str) -> tuple[str, str]:
    """(`file:line`, message) of the one error line."""
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    text = lines[0].removeprefix("Error: ")
    file, line, message = text.split(":", 2)
    return f"{file}:{line}", message.strip()


ERROR_CASES = [
    ({"admissionReviewVersions": None}, "missing argument(s) admissionReviewVersions"),
    ({"url": '"https://hooks.example.com/m"'}, "needs exactly one of path or url, got both path and url"),
    ({"path": None}, "needs exactly one of path or url, got neither path nor url"),
    ({"failurePolicy": "fial"}, "failurePolicy='fial' is not allowed (allowed: Fail, Ignore)"),
    ({"sideEffects": None}, "sideEffects is missing (allowed for v1 webhooks: None, NoneOnDryRun)"),
    ({"sideEffects": "Some"}, "sideEffects='Some' is not allowed (allowed: None, NoneOnDryRun)"),
    ({"matchPolicy": "Loose"}, "matchPolicy='Loose' is not allowed (allowed: Exact, Equivalent)"),
    ({"reinvocationPolicy": "Always"}, "reinvocationPolicy='Always' is not allowed (allowed: Never, IfNeeded)"),
    ({"verbs": "create;get"}, "verbs: 'get' is not allowed (allowed: create, update, delete, connect, *)"),
    ({"timeoutSeconds": "31"}, "timeoutSeconds=31 is out of range (allowed: 1-30)"),
    ({"webhookVersions": "v1beta1"}, "webhookVersions='v1beta1': only v1 is supported"),
    ({"servicePort": "70000"}, "servicePort=70000 is not a port number (allowed: 1-65535)"),
    ({"path": "mutate-ship"}, "path='mutate-ship' must start with '/'"),
    ({"path": None, "url": '"http://hooks.example.com/m"'}, "must start with https://"),
    ({"path": None, "url": '"https://h.example.com/m"', "serviceName": "hooks"}, "so serviceName cannot apply"),
    ({"name": "mship.kb"}, "name='mship.kb' must be a fully qualified name"),
    ({"name": "MShip-v1.kb.io"}, "name='MShip-v1.kb.io' must be a fully qualified name"),
    ({"namespaceSelector": "matchLabels~a=b"}, "unknown argument 'namespaceSelector'"),
    ({"patch": "`{invalid`"}, "patch is not valid JSON"),
    ({"patch": "`[1]`"}, "patch must be a JSON object, not list"),
    (
        {"patch": '`{"namespaceSelecter":{}}`'},
        "patch: unknown field 'namespaceSelecter' (known: admissionReviewVersions",
    ),
    ({"patch": '`{"clientConfig":{"service":{"prot":1}}}`'}, "patch.clientConfig.service: unknown field 'prot'"),
    ({"patch": '`{"timeoutSeconds":"10"}`'}, 'patch.timeoutSeconds must be an integer, not "10"'),
    ({"patch": '`{"failurePolicy":"fail"}`'}, "failurePolicy='fail' is not allowed (allowed: Fail, Ignore)"),
    ({"patch": '`{"sideEffects":null}`'}, "sideEffects is missing"),
    ({"patch": '`{"admissionReviewVersions":[]}`'}, "admissionReviewVersions must name at least one"),
    ({"patch": '`{"rules":[{"operations":["GET"]}]}`'}, "operation 'GET' is not allowed"),
    ({"mutating": "false", "patch": '`{"reinvocationPolicy":"Never"}`'}, "unknown field 'reinvocationPolicy'"),
]


@pytest.mark.parametrize(("changes", "message"), ERROR_CASES, ids=[m for _, m in ERROR_CASES])
def test_bad_marker_values_are_one_line_errors(tmp_path: Path, changes: dict[str, Any], message: str) -> None:
    root = _webhook_project(tmp_path / "p", "# a comment\n" + _marker(**changes))
    where, text = _one_error(fails(root))
    assert where == f"{MODULE}:4"
    assert message in text, text


def test_a_webhook_name_used_twice_with_different_settings(tmp_path: Path) -> None:
    root = _webhook_project(tmp_path / "p", _marker(), _marker(verbs="create"))
    where, text = _one_error(fails(root))
    assert where == f"{PACKAGE}/webhook/v1/yacht_webhook.py:3"
    assert f"mutating webhook name='mship-v1.kb.io' is already used at {MODULE}:3 with different settings" in text


def test_the_same_name_in_both_configurations_is_fine(tmp_path: Path) -> None:
    root = _webhook_project(tmp_path / "p", _marker() + "\n" + _marker(mutating="false"))
    documents = list(yaml.safe_load_all(_generate(root)))
    assert [[w["name"] for w in d["webhooks"]] for d in documents] == [["mship-v1.kb.io"], ["mship-v1.kb.io"]]


def test_two_names_for_one_configuration(tmp_path: Path) -> None:
    source = (
        _marker()
        + "\n# +kubebuilder:webhookconfiguration:mutating=true,name=first"
        + "\n# +kubebuilder:webhookconfiguration:mutating=true,name=second"
        + "\n# +kubebuilder:webhookconfiguration:mutating=true,name=first"
    )
    root = _webhook_project(tmp_path / "p", source)
    where, text = _one_error(fails(root))
    assert where == f"{MODULE}:5"
    assert (
        f"duplicate mutating +kubebuilder:webhookconfiguration: name='second' here, name='first' at {MODULE}:4" in text
    )


def test_a_bad_configuration_name(tmp_path: Path) -> None:
    root = _webhook_project(
        tmp_path / "p", _marker() + "\n# +kubebuilder:webhookconfiguration:mutating=true,name=Hooks"
    )
    where, text = _one_error(fails(root))
    assert where == f"{MODULE}:4" and "name='Hooks' is not a valid object name" in text


def test_every_problem_is_reported_in_one_run(tmp_path: Path) -> None:
    root = _webhook_project(tmp_path / "p", _marker(failurePolicy="x") + "\n" + _marker(name="v.kb.io.", verbs="get"))
    lines = fails(root).strip().removeprefix("Error: ").splitlines()
    assert [line.split(": ", 1)[0] for line in lines] == [f"{MODULE}:3", f"{MODULE}:4"]


def test_webhook_configurations_name_only_their_kind(tmp_path: Path) -> None:
    """A rename for the validating configuration leaves the mutating one's default name, and a rename of a kind
    with no webhooks adds no object."""
    source = _marker() + "\n# +kubebuilder:webhookconfiguration:mutating=false,name=hooks"
    root = _webhook_project(tmp_path / "p", source)
    documents = list(yaml.safe_load_all(_generate(root)))
    assert [(d["kind"], d["metadata"]["name"]) for d in documents] == [
        ("MutatingWebhookConfiguration", "mutating-webhook-configuration")
    ]


# ---------------------------------------------------------------------------------------------------------------------
# The patch: a strategic merge patch of the generated entry.

ENTRY: dict[str, Any] = {
    "name": "mship-v1.kb.io",
    "admissionReviewVersions": ["v1"],
    "clientConfig": {"service": {"name": "webhook-service", "namespace": "system", "path": "/m"}},
    "failurePolicy": "Fail",
    "rules": [{"apiGroups": ["a"], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["ships"]}],
    "sideEffects": "None",
    "timeoutSeconds": 10,
    "matchConditions": [{"name": "one", "expression": "true"}, {"name": "two", "expression": "false"}],
    "objectSelector": {"matchLabels": {"a": "1", "b": "2"}},
}


def test_patch_null_removes_and_lists_are_replaced() -> None:
    patched = apply_patch(ENTRY, '{"timeoutSeconds": null, "rules": [{"apiGroups": ["b"]}]}', mutating=True)
    assert "timeoutSeconds" not in patched
    assert patched["rules"] == [{"apiGroups": ["b"]}]
    assert ENTRY["timeoutSeconds"] == 10, "the input entry is not changed"


def test_patch_merges_maps_and_match_conditions_by_name() -> None:
    patch = (
        '{"objectSelector": {"matchLabels": {"a": null, "c": "3"}},'
        ' "matchConditions": [{"name": "two", "expression": "1 == 1"}, {"name": "three", "expression": "x"},'
        ' {"name": "one", "$patch": "delete"}],'
        ' "clientConfig": {"service": {"port": 8443}}}'
    )
    patched = apply_patch(ENTRY, patch, mutating=True)
    assert patched["objectSelector"] == {"matchLabels": {"b": "2", "c": "3"}}
    assert patched["matchConditions"] == [{"name": "two", "expression": "1 == 1"}, {"name": "three", "expression": "x"}]
    assert patched["clientConfig"]["service"] == {
        "name": "webhook-service",
        "namespace": "system",
        "path": "/m",
        "port": 8443,
    }


def test_patch_replace_directive_and_empty_values_left_out() -> None:
    patch = (
        '{"objectSelector": {"$patch": "replace", "matchExpressions": [{"key": "k", "operator": "Exists"}]},'
        ' "namespaceSelector": {"matchLabels": {}}}'
    )
    patched = apply_patch(ENTRY, patch, mutating=True)
    assert patched["objectSelector"] == {"matchExpressions": [{"key": "k", "operator": "Exists"}]}
    assert patched["namespaceSelector"] == {}, "an empty map is left out, the selector object stays (Go's omitempty)"


def test_patch_rejects_a_bad_directive() -> None:
    with pytest.raises(_Invalid, match=r"\$patch='merge-all' is not allowed"):
        apply_patch(ENTRY, '{"objectSelector": {"$patch": "merge-all"}}', mutating=True)
