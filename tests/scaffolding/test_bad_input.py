"""Bad input: one clear line on stderr naming the bad value, exit code 2, and the folder exactly as it was."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from pyop_scaffold.commands import project_files

INIT = ("init", "--domain", "example.com")


def _project(root: Path, pyop, *apis: tuple[str, ...]) -> Path:  # type: ignore[no-untyped-def]
    root.mkdir(parents=True, exist_ok=True)
    assert pyop(*INIT, cwd=root).exit_code == 0
    for api in apis:
        assert pyop("create", "api", *api, cwd=root).exit_code == 0
    return root


CAPTAIN = ("--group", "crew", "--version", "v1", "--kind", "Captain")

# (id, setup: "empty" | "project" | "project+captain" | "non-empty", args, expected fragment of the message)
CASES = [
    ("init-bad-domain", "empty", ("init", "--domain", "Example.COM"), "invalid domain 'Example.COM'"),
    ("init-domain-underscore", "empty", ("init", "--domain", "my_domain.io"), "invalid domain 'my_domain.io'"),
    ("init-bad-project-name", "empty", ("init", "--project-name", "My Operator"), "invalid project name 'My Operator'"),
    ("init-bad-license", "empty", ("init", "--license", "mit"), "invalid license 'mit': must be one of apache2, none"),
    (
        "init-bad-kubernetes-version",
        "empty",
        ("init", "--kubernetes-version", "1.99"),
        "invalid Kubernetes version '1.99': pyop bundles the definitions of 1.",
    ),
    (
        "init-kubernetes-version-not-a-version",
        "empty",
        ("init", "--kubernetes-version", "latest"),
        "invalid Kubernetes version 'latest'",
    ),
    ("init-twice", "project", ("init",), "already holds a pyop project"),
    ("init-non-empty", "non-empty", ("init",), "is not empty: pass --force"),
    ("api-outside-project", "empty", ("create", "api", *CAPTAIN), "no PROJECT file"),
    (
        "api-group-upper",
        "project",
        ("create", "api", "--group", "Crew", "--version", "v1", "--kind", "Captain"),
        "invalid group 'Crew'",
    ),
    (
        "api-group-dot-end",
        "project",
        ("create", "api", "--group", "crew.", "--version", "v1", "--kind", "Captain"),
        "invalid group 'crew.'",
    ),
    (
        "api-version-no-v",
        "project",
        ("create", "api", "--group", "crew", "--version", "1", "--kind", "Captain"),
        "invalid version '1'",
    ),
    (
        "api-version-v0",
        "project",
        ("create", "api", "--group", "crew", "--version", "v0", "--kind", "Captain"),
        "invalid version 'v0'",
    ),
    (
        "api-version-gamma",
        "project",
        ("create", "api", "--group", "crew", "--version", "v1gamma1", "--kind", "Captain"),
        "invalid version 'v1gamma1'",
    ),
    (
        "api-kind-lower",
        "project",
        ("create", "api", "--group", "crew", "--version", "v1", "--kind", "captain"),
        "invalid kind 'captain': must be UpperCamelCase",
    ),
    (
        "api-kind-dash",
        "project",
        ("create", "api", "--group", "crew", "--version", "v1", "--kind", "First-Mate"),
        "invalid kind 'First-Mate'",
    ),
    (
        "api-kind-keyword",
        "project",
        ("create", "api", "--group", "crew", "--version", "v1", "--kind", "None"),
        "invalid kind 'None': is a Python keyword",
    ),
    (
        "api-kind-list",
        "project",
        ("create", "api", "--group", "crew", "--version", "v1", "--kind", "CaptainList"),
        "invalid kind 'CaptainList'",
    ),
    ("api-bad-plural", "project", ("create", "api", *CAPTAIN, "--plural", "Captains"), "invalid plural 'Captains'"),
    ("api-duplicate-gvk", "project+captain", ("create", "api", *CAPTAIN), "already exists in PROJECT"),
    ("api-nothing-to-do", "project", ("create", "api", *CAPTAIN, "--no-resource", "--no-controller"), "nothing to do"),
    (
        "api-second-group-not-multigroup",
        "project+captain",
        ("create", "api", "--group", "ship", "--version", "v1", "--kind", "Frigate"),
        "invalid group 'ship'",
    ),
    (
        "api-plural-mismatch-across-versions",
        "project+captain",
        ("create", "api", "--group", "crew", "--version", "v2", "--kind", "Captain", "--plural", "captainz"),
        "invalid plural 'captainz'",
    ),
    (
        "api-scope-mismatch-across-versions",
        "project+captain",
        ("create", "api", "--group", "crew", "--version", "v2", "--kind", "Captain", "--cluster-scoped"),
        "invalid scope for crew/Captain",
    ),
    ("manifests-outside-project", "empty", ("make", "manifests"), "no PROJECT file"),
    ("webhook-outside-project", "empty", ("create", "webhook", *CAPTAIN, "--defaulting"), "no PROJECT file"),
    ("edit-outside-project", "empty", ("edit", "--multigroup"), "no PROJECT file"),
    (
        "edit-nothing",
        "project",
        ("edit",),
        "nothing to edit: pass --multigroup, --namespaced, --license, --owner, --kubernetes-version, --plugins "
        "or --certificates",
    ),
    (
        "edit-bad-plugin",
        "project",
        ("edit", "--plugins=helm,go/v4"),
        "invalid --plugins value 'go/v4': pyop has the plugin helm, helm/v2-alpha",
    ),
    (
        "edit-bad-kubernetes-version",
        "project",
        ("edit", "--kubernetes-version", "v2.0"),
        "invalid Kubernetes version 'v2.0': pyop bundles the definitions of 1.",
    ),
    (
        "edit-bad-multigroup-value",
        "project",
        ("edit", "--multigroup=maybe"),
        "invalid --multigroup value 'maybe': must be true or false",
    ),
    (
        "edit-bad-value-beside-good-flag",
        "project",
        ("edit", "--namespaced", "--multigroup=2"),
        "invalid --multigroup value '2'",
    ),
    ("edit-bad-namespaced-value", "project", ("edit", "--namespaced=yes"), "invalid --namespaced value 'yes'"),
    (
        "edit-bad-license",
        "project",
        ("edit", "--license", "mit"),
        "invalid license 'mit': must be one of apache2, none",
    ),
    (
        "edit-owner-without-header",
        "project",
        ("edit", "--license", "none", "--owner", "Acme"),
        "invalid --owner 'Acme': the licence is none",
    ),
    (
        "webhook-none-chosen",
        "project+captain",
        ("create", "webhook", *CAPTAIN),
        "no webhook chosen: pass at least one of --defaulting, --programmatic-validation, --conversion",
    ),
    (
        "webhook-unknown-kind",
        "project+captain",
        ("create", "webhook", "--group", "crew", "--version", "v1", "--kind", "Admiral", "--defaulting"),
        "unknown kind crew/v1, Kind=Admiral: not an API of this project, a built-in kind (--group core, apps, batch, "
        "...) or an external one (--external-api-path); create it first",
    ),
    (
        "webhook-unknown-version",
        "project+captain",
        ("create", "webhook", "--group", "crew", "--version", "v2", "--kind", "Captain", "--defaulting"),
        "unknown kind crew/v2, Kind=Captain",
    ),
    (
        "webhook-kind-lower",
        "project+captain",
        ("create", "webhook", "--group", "crew", "--version", "v1", "--kind", "captain", "--defaulting"),
        "invalid kind 'captain'",
    ),
    (
        "webhook-spoke-without-conversion",
        "project+captain",
        ("create", "webhook", *CAPTAIN, "--defaulting", "--spoke", "v2"),
        "invalid --spoke 'v2': spokes are only for --conversion",
    ),
    (
        "webhook-conversion-without-spoke",
        "project+captain",
        ("create", "webhook", *CAPTAIN, "--conversion"),
        "invalid --conversion without --spoke",
    ),
    (
        "webhook-conversion-empty-spoke",
        "project+captain",
        ("create", "webhook", *CAPTAIN, "--conversion", "--spoke", ","),
        "invalid --conversion without --spoke",
    ),
    (
        "webhook-spoke-is-hub",
        "project+captain",
        ("create", "webhook", *CAPTAIN, "--conversion", "--spoke", "v1"),
        "invalid --spoke 'v1': it is the hub version",
    ),
    (
        "webhook-bad-spoke",
        "project+captain",
        ("create", "webhook", *CAPTAIN, "--conversion", "--spoke", "v2,2"),
        "invalid --spoke '2': must be a version",
    ),
    (
        "webhook-spoke-without-api",
        "project+captain",
        ("create", "webhook", *CAPTAIN, "--conversion", "--spoke", "v2"),
        "invalid --spoke 'v2': crew/v2, Kind=Captain has no API in PROJECT",
    ),
    (
        "webhook-bad-defaulting-path",
        "project+captain",
        ("create", "webhook", *CAPTAIN, "--defaulting", "--defaulting-path", "mutate-captain"),
        "invalid --defaulting-path 'mutate-captain': must be a URL path starting with '/'",
    ),
    (
        "webhook-validation-path-is-convert",
        "project+captain",
        ("create", "webhook", *CAPTAIN, "--programmatic-validation", "--validation-path", "/convert"),
        "invalid --validation-path '/convert'",
    ),
    (
        "webhook-path-without-its-webhook",
        "project+captain",
        ("create", "webhook", *CAPTAIN, "--programmatic-validation", "--defaulting-path", "/m"),
        "invalid --defaulting-path '/m': only with --defaulting",
    ),
    (
        "webhook-plural-mismatch",
        "project+captain",
        ("create", "webhook", *CAPTAIN, "--defaulting", "--plural", "captainz"),
        "invalid plural 'captainz': crew/Captain was created with 'captains'",
    ),
    (
        "webhook-second-hub",
        "project+captain+conversion",
        (
            "create",
            "webhook",
            "--group",
            "crew",
            "--version",
            "v2",
            "--kind",
            "Captain",
            "--conversion",
            "--spoke",
            "v1",
        ),
        "version v1 is already the hub of crew/Captain",
    ),
    (
        "webhook-exists",
        "project+captain+webhook",
        ("create", "webhook", *CAPTAIN, "--defaulting"),
        "defaulting webhook for crew/v1, Kind=Captain already exists: pass --force",
    ),
    # Values with a trailing newline ('$' in a pattern matches before one; names are matched whole).
    ("init-domain-newline", "empty", ("init", "--domain", "example.com\n"), "invalid domain 'example.com\\n'"),
    ("init-project-name-newline", "empty", ("init", "--project-name", "abc\n"), "invalid project name 'abc\\n'"),
    ("init-owner-newline", "empty", ("init", "--owner", "Acme\nimport os"), "invalid --owner 'Acme\\nimport os'"),
    ("edit-owner-newline", "project", ("edit", "--owner", "Acme\nx"), "invalid --owner 'Acme\\nx'"),
    (
        "api-kind-newline",
        "project",
        ("create", "api", "--group", "crew", "--version", "v1", "--kind", "Other\n"),
        "invalid kind 'Other\\n'",
    ),
    (
        "api-group-newline",
        "project",
        ("create", "api", "--group", "crew\n", "--version", "v1", "--kind", "Other"),
        "invalid group 'crew\\n'",
    ),
    (
        "api-version-newline",
        "project",
        ("create", "api", "--group", "crew", "--version", "v1\n", "--kind", "Other"),
        "invalid version 'v1\\n'",
    ),
    (
        "api-plural-newline",
        "project",
        ("create", "api", *CAPTAIN, "--plural", "captains\n"),
        "invalid plural 'captains\\n'",
    ),
    (
        "webhook-path-newline",
        "project+captain",
        ("create", "webhook", *CAPTAIN, "--defaulting", "--defaulting-path", "/m\n"),
        "invalid --defaulting-path '/m\\n'",
    ),
    (
        "webhook-path-dot-segment",
        "project+captain",
        ("create", "webhook", *CAPTAIN, "--defaulting", "--defaulting-path", "/a/../b"),
        "invalid --defaulting-path '/a/../b'",
    ),
    # Names that are Kubernetes names but break the Python the scaffolds write.
    ("init-project-name-keyword", "empty", ("init", "--project-name", "class"), "invalid project name 'class'"),
    ("init-project-name-typing", "empty", ("init", "--project-name", "typing"), "invalid project name 'typing'"),
    ("init-project-name-pyop", "empty", ("init", "--project-name", "pyop"), "invalid project name 'pyop'"),
    (
        "api-kind-manager",
        "project",
        ("create", "api", "--group", "crew", "--version", "v1", "--kind", "Manager"),
        "invalid kind 'Manager'",
    ),
    (
        "api-group-keyword-multigroup",
        "project+multigroup",
        ("create", "api", "--group", "class", "--version", "v1", "--kind", "Other"),
        "invalid group 'class'",
    ),
    (
        "api-group-digit-multigroup",
        "project+multigroup",
        ("create", "api", "--group", "1abc", "--version", "v1", "--kind", "Other"),
        "invalid group '1abc'",
    ),
    (
        "api-group-keyword-after-changes",
        "project+captain+multigroup",
        ("create", "api", "--group", "class", "--version", "v1", "--kind", "Other"),
        "invalid group 'class'",
    ),
    (
        "api-group-digit-after-changes",
        "project+captain+multigroup",
        ("create", "api", "--group", "1abc", "--version", "v1", "--kind", "Other"),
        "invalid group '1abc'",
    ),
    (
        "api-plural-of-another-kind",
        "project+captain",
        ("create", "api", "--group", "crew", "--version", "v1", "--kind", "Other", "--plural", "captains"),
        "invalid plural 'captains': kind crew/Captain already uses it",
    ),
    (
        "api-second-group-names-edit",
        "project+captain",
        ("create", "api", "--group", "ship", "--version", "v1", "--kind", "Frigate"),
        "turn on the multigroup layout first with `pyop edit --multigroup`",
    ),
    # Kubebuilder's --flag=value booleans: a value that is not one is refused.
    (
        "api-bad-resource-value",
        "project",
        ("create", "api", *CAPTAIN, "--resource=maybe"),
        "invalid --resource value 'maybe'",
    ),
    (
        "webhook-bad-defaulting-value",
        "project+captain",
        ("create", "webhook", *CAPTAIN, "--defaulting=yes"),
        "invalid --defaulting value 'yes': must be true or false",
    ),
    ("init-bad-multigroup-value", "empty", ("init", "--multigroup=2"), "invalid --multigroup value '2'"),
    (
        "api-kind-same-singular",
        "project+captain",
        ("create", "api", "--group", "crew", "--version", "v1", "--kind", "CAPTAIN", "--plural", "capts", "--force"),
        "invalid kind 'CAPTAIN': kind crew/Captain has the same singular name 'captain'",
    ),
    # click's own usage errors are one line too (not the usage line, a hint and the message).
    (
        "api-missing-kind",
        "project",
        ("create", "api", "--group", "crew", "--version", "v1"),
        "Missing option '--kind'. (see `pyop create api --help`)",
    ),
    ("api-unknown-option", "project", ("create", "api", *CAPTAIN, "--bogus"), "No such option: --bogus"),
    ("unknown-command", "project", ("create", "apis"), "No such command 'apis'."),
    (
        "manifests-max-desc-len-not-a-number",
        "project",
        ("make", "manifests", "--max-desc-len", "ten"),
        "Invalid value for '--max-desc-len'",
    ),
    ("edit-value-after-space", "project", ("edit", "--namespaced", "yes"), "Got unexpected extra argument(s) (yes)"),
    # Built-in and external kinds (create api --resource=false, create webhook).
    (
        "api-builtin-kind-missing",
        "project",
        ("create", "api", "--group", "apps", "--version", "v1", "--kind", "Deploymnt", "--resource=false"),
        "invalid kind 'Deploymnt': built-in group apps/v1 has no such kind; its kinds are ControllerRevision, "
        "DaemonSet, Deployment, ReplicaSet, StatefulSet",
    ),
    (
        "api-builtin-version-missing",
        "project",
        ("create", "api", "--group", "batch", "--version", "v7", "--kind", "Job", "--resource=false"),
        "invalid version 'v7' for built-in group 'batch': the Kubernetes 1.37 definitions have v1",
    ),
    (
        "api-builtin-plural-differs",
        "project",
        (
            "create",
            "api",
            "--group",
            "core",
            "--version",
            "v1",
            "--kind",
            "Pod",
            "--resource=false",
            "--plural",
            "podz",
        ),
        "invalid plural 'podz': the built-in core/Pod is 'pods'",
    ),
    (
        "api-external-domain-without-path",
        "project",
        ("create", "api", *CAPTAIN, "--resource=false", "--external-api-domain", "io"),
        "invalid --external-api-domain 'io': only with --external-api-path",
    ),
    (
        "api-external-path-not-a-module",
        "project",
        ("create", "api", *CAPTAIN, "--resource=false", "--external-api-path", "cert-manager/v1"),
        "invalid --external-api-path 'cert-manager/v1': must be a dotted Python import path",
    ),
    (
        "api-external-with-resource",
        "project",
        ("create", "api", *CAPTAIN, "--external-api-path", "crew_models.v1"),
        "invalid --external-api-path 'crew_models.v1': an external kind has no API in this project; pass "
        "--resource=false",
    ),
    (
        "api-external-module-not-a-requirement",
        "project",
        ("create", "api", *CAPTAIN, "--resource=false", "--external-api-path", "m.v1", "--external-api-module", "a b"),
        "invalid --external-api-module 'a b': must be a Python requirement (PEP 508)",
    ),
    (
        "api-external-bad-domain",
        "project",
        ("create", "api", *CAPTAIN, "--resource=false", "--external-api-path", "m.v1", "--external-api-domain", "IO"),
        "invalid domain 'IO'",
    ),
    (
        "webhook-builtin-kind-missing",
        "project",
        ("create", "webhook", "--group", "core", "--version", "v1", "--kind", "Pods", "--defaulting"),
        "invalid kind 'Pods': built-in group core/v1 has no such kind; its kinds are Binding, ComponentStatus",
    ),
    (
        "webhook-builtin-conversion",
        "project",
        (
            "create",
            "webhook",
            "--group",
            "apps",
            "--version",
            "v1",
            "--kind",
            "Deployment",
            "--conversion",
            "--spoke",
            "v2",
        ),
        "invalid --conversion for the built-in kind apps/v1, Kind=Deployment",
    ),
]


@pytest.mark.parametrize(("setup", "args", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_invocation(tmp_path: Path, pyop, tree, setup: str, args: tuple[str, ...], message: str) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "my-operator"
    root.mkdir()
    if setup.startswith("project"):
        _project(root, pyop, *([CAPTAIN] if setup.startswith("project+captain") else []))
        if setup.endswith("+multigroup"):
            assert pyop("edit", "--multigroup", cwd=root).exit_code == 0
        if setup.endswith("+webhook"):
            assert pyop("create", "webhook", *CAPTAIN, "--defaulting", cwd=root).exit_code == 0
        if setup.endswith("+conversion"):
            assert (
                pyop("create", "api", "--group", "crew", "--version", "v2", "--kind", "Captain", cwd=root).exit_code
                == 0
            )
            assert pyop("create", "webhook", *CAPTAIN, "--conversion", "--spoke", "v2", cwd=root).exit_code == 0
    elif setup == "non-empty":
        (root / "notes.txt").write_text("mine\n")
    before = tree(root)
    result = pyop(*args, cwd=root)
    assert result.exit_code == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: ") and message in lines[0], lines[0]
    assert tree(root) == before


def test_missing_required_flag_is_a_usage_error(tmp_path: Path, pyop, tree) -> None:  # type: ignore[no-untyped-def]
    root = _project(tmp_path / "op", pyop)
    before = tree(root)
    result = pyop("create", "api", "--group", "crew", "--version", "v1", cwd=root)
    assert result.exit_code == 2
    assert "--kind" in result.stderr
    assert tree(root) == before


def test_model_that_cannot_become_a_schema(tmp_path: Path, pyop, tree) -> None:  # type: ignore[no-untyped-def]
    root = _project(tmp_path / "op", pyop, CAPTAIN)
    types_file = root / "op/api/v1/captain_types.py"
    source = (
        types_file.read_text()
        .replace("    foo: str | None = None", "    foo: str | None = None\n    blob: Any = None")
        .replace("from pydantic import Field", "from typing import Any\n\nfrom pydantic import Field")
    )
    types_file.write_text(source)
    before = tree(root)
    result = pyop("make", "manifests", cwd=root)
    assert result.exit_code == 2
    line = result.stderr.strip()
    assert line.startswith("Error: op/api/v1/captain_types.py:") and "CaptainSpec.blob" in line
    assert "type Any has no schema" in line
    assert tree(root) == before


def test_misspelled_marker_names_file_line_and_suggestion(tmp_path: Path, pyop, tree) -> None:  # type: ignore[no-untyped-def]
    root = _project(tmp_path / "op", pyop, CAPTAIN)
    types_file = root / "op/api/v1/captain_types.py"
    source = types_file.read_text()
    source = source.replace("    # +optional\n    foo:", "    # +kubebuilder:validation:MaxLenght=5\n    foo:")
    types_file.write_text(source)
    line_number = source.splitlines().index("    # +kubebuilder:validation:MaxLenght=5") + 1
    before = tree(root)
    result = pyop("make", "manifests", cwd=root)
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f"Error: op/api/v1/captain_types.py:{line_number}: unknown marker +kubebuilder:validation:MaxLenght; "
        "did you mean +kubebuilder:validation:MaxLength?"
    )
    assert tree(root) == before


def test_model_that_fails_to_import(tmp_path: Path, pyop, tree) -> None:  # type: ignore[no-untyped-def]
    root = _project(tmp_path / "op", pyop, CAPTAIN)
    (root / "op/api/v1/broken_types.py").write_text("import not_a_module_anywhere\n")
    before = tree(root)
    result = pyop("make", "manifests", cwd=root)
    assert result.exit_code == 2
    assert result.stderr == (
        "Error: op/api/v1/broken_types.py:1: cannot import op.api.v1.broken_types: ModuleNotFoundError: "
        "No module named 'not_a_module_anywhere'\n"
    )
    assert tree(root) == before


TYPES = "my_operator/api/v1/captain_types.py"
FOO = "    foo: str | None = None"
SPEC = "class CaptainSpec(KubeModel):"
SAMPLE = "config/samples/crew_v1_captain.yaml"
CONTROLLER = "my_operator/controllers/captain_controller.py"
TRACEBACK_HINT = "(pyop --debug or PYOP_DEBUG=1 shows the traceback)"


def _nested(body: str) -> list[tuple[str, str, str]]:
    """Edits giving CaptainSpec a field `inner: Inner = Field(default_factory=Inner)`, Inner having `body`."""
    return [
        (TYPES, FOO, f"{FOO}\n    inner: Inner = Field(default_factory=Inner)"),
        (TYPES, SPEC, f"class Inner(KubeModel):\n{body}\n\n\n{SPEC}"),
    ]


# Models and samples that `make manifests` cannot use (the tutorials' first steps, issue 10 points 4 and 7).
# (id, edits (file, old, new) of a project with the Captain kind, args, the whole message after `Error: `, with
# {line} standing for the line of the file named first that holds the text given last)
MODEL_CASES = [
    (
        "undefined-name-in-annotation",
        [(TYPES, FOO, f"{FOO}\n    blob: Any = None")],
        ("make", "manifests"),
        f"{TYPES}:{{line}}: field CaptainSpec.blob: name 'Any' is not defined; add `from typing import Any`",
        "    blob: Any = None",
    ),
    (
        "undefined-pyop-name-in-annotation",
        [(TYPES, FOO, f"{FOO}\n    size: Int32")],
        ("make", "manifests"),
        f"{TYPES}:{{line}}: field CaptainSpec.size: name 'Int32' is not defined; add `from pyop.api import Int32`",
        "    size: Int32",
    ),
    (
        "undefined-spec-class",
        [(TYPES, "    spec: CaptainSpec", "    spec: CaptainSpecification")],
        ("make", "manifests"),
        f"{TYPES}:{{line}}: field Captain.spec: name 'CaptainSpecification' is not defined; import or define "
        f"CaptainSpecification in {TYPES}",
        "    spec: CaptainSpecification",
    ),
    (
        "undefined-name-without-future-import",
        [(TYPES, "from __future__ import annotations\n", ""), (TYPES, FOO, f"{FOO}\n    blob: Any = None")],
        ("make", "manifests"),
        f"{TYPES}:{{line}}: cannot import my_operator.api.v1.captain_types: NameError: name 'Any' is not defined",
        "    blob: Any = None",
    ),
    (
        "syntax-error-in-types",
        [(TYPES, FOO, f"{FOO}\n    size: int = (")],
        ("make", "manifests"),
        f"{TYPES}:{{line}}: cannot import my_operator.api.v1.captain_types: SyntaxError: '(' was never closed",
        "    size: int = (",
    ),
    (
        "missing-module",
        [(TYPES, "from pydantic import Field\n", "from pydantic import Field\nimport pydantic_extras\n")],
        ("make", "manifests"),
        f"{TYPES}:{{line}}: cannot import my_operator.api.v1.captain_types: ModuleNotFoundError: No module named "
        "'pydantic_extras'",
        "import pydantic_extras",
    ),
    (
        "exception-at-import",
        [(TYPES, "from pydantic import Field\n", "from pydantic import Field\n\nraise RuntimeError('no config')\n")],
        ("make", "manifests"),
        f"{TYPES}:{{line}}: cannot import my_operator.api.v1.captain_types: RuntimeError: no config {TRACEBACK_HINT}",
        "raise RuntimeError('no config')",
    ),
    (
        "exit-at-import",
        [(TYPES, "from pydantic import Field\n", "import sys\n\nfrom pydantic import Field\n\nsys.exit(3)\n")],
        ("make", "manifests"),
        f"{TYPES}:{{line}}: cannot import my_operator.api.v1.captain_types: SystemExit: 3 {TRACEBACK_HINT}",
        "sys.exit(3)",
    ),
    (
        "field-with-default-and-factory",
        [(TYPES, FOO, "    foo: str | None = Field(default=None, default_factory=str)")],
        ("make", "manifests"),
        f"{TYPES}:{{line}}: cannot import my_operator.api.v1.captain_types: TypeError: cannot specify both default "
        f"and default_factory {TRACEBACK_HINT}",
        "default_factory=str)",
    ),
    (
        "default-factory-not-callable",
        [(TYPES, FOO, "    tags: list[str] = Field(default_factory=1)")],
        ("make", "manifests"),
        f"{TYPES}:{{line}}: field CaptainSpec.tags: default_factory=1 is not callable; pass a class or function "
        "(default_factory=list), or default= for a value",
        "default_factory=1)",
    ),
    (
        "default-factory-raises",
        _nested(
            "    size: int = 1\n\n    def model_post_init(self, context: object) -> None:\n"
            "        raise ZeroDivisionError('no size')"
        ),
        ("make", "manifests"),
        f"{TYPES}:{{line}}: field CaptainSpec.inner: its default factory Inner() raised ZeroDivisionError: no size; it "
        f"must build a valid Inner from defaults alone {TRACEBACK_HINT}",
        "    inner: Inner = Field(default_factory=Inner)",
    ),
    (
        "types-not-utf8",
        [(TYPES, FOO, f"{FOO}  # \udcff")],  # surrogateescape: the byte 0xff
        ("make", "manifests"),
        f"{TYPES}:{{line}}: not UTF-8 text (byte 0xff cannot be decoded); save the file as UTF-8",
        FOO,
    ),
    (
        "controller-not-python",
        [(CONTROLLER, "        return Result()\n\n\n", "        return Result()\n\n\ndef setup(:\n")],
        ("make", "manifests"),
        f"{CONTROLLER}:{{line}}: not valid Python: invalid syntax",
        "def setup(:",
    ),
    (
        "sample-without-the-required-field",
        [(TYPES, FOO, f"{FOO}\n    size: int"), (SAMPLE, "  foo: bar\n", "  foo: bar\n")],
        ("make", "manifests", "--check"),
        f"{SAMPLE}:{{line}}: spec.size: Required value",
        "spec:",
    ),
]


def _edit(root: Path, path: str, old: str, new: str) -> None:
    file = root / path
    data = file.read_bytes().decode("utf-8")
    assert old in data, (path, old)
    file.write_bytes(data.replace(old, new, 1).encode("utf-8", "surrogateescape"))


@pytest.mark.parametrize(
    ("edits", "args", "message", "line_text"),
    [c[1:] for c in MODEL_CASES],
    ids=[c[0] for c in MODEL_CASES],
)
def test_bad_model(tmp_path: Path, pyop, tree, edits, args, message: str, line_text: str) -> None:  # type: ignore[no-untyped-def]
    """A model or sample pyop cannot use: the whole message is one line naming the file and line, exit code 2,
    and nothing is written (no CRD, no role, no traceback)."""
    root = _project(tmp_path / "my-operator", pyop, CAPTAIN)
    for path, old, new in edits:
        _edit(root, path, old, new)
    named = root / edits[-1][0]
    lines = named.read_bytes().decode("utf-8", errors="replace").splitlines()
    line = next(i for i, text in enumerate(lines, 1) if line_text in text)
    before = tree(root)
    result = pyop(*args, cwd=root)
    assert result.exit_code == 2, result.stdout + result.stderr
    assert result.stderr == f"Error: {message.format(line=line)}\n"
    assert tree(root) == before


def _append_bytes(path: str, data: bytes) -> Callable[[Path], None]:
    def mutate(root: Path) -> None:
        with (root / path).open("ab") as file:
            file.write(data)

    return mutate


def _replace_with_folder(path: str) -> Callable[[Path], None]:
    def mutate(root: Path) -> None:
        target = root / path
        if target.exists():
            target.unlink()
        (target / "inner").mkdir(parents=True)

    return mutate


def _replace_with_file(path: str) -> Callable[[Path], None]:
    def mutate(root: Path) -> None:
        shutil.rmtree(root / path)
        (root / path).write_text("not a folder\n")

    return mutate


def _edit_project_file(old: str, new: str) -> Callable[[Path], None]:
    def mutate(root: Path) -> None:
        text = (root / "PROJECT").read_text()
        assert old in text
        (root / "PROJECT").write_text(text.replace(old, new))

    return mutate


def _write_project_file(text: str) -> Callable[[Path], None]:
    def mutate(root: Path) -> None:
        (root / "PROJECT").write_text(text)

    return mutate


KUBEBUILDER_GO_PROJECT = """\
domain: my.domain
layout:
- go.kubebuilder.io/v4
projectName: guestbook
repo: github.com/example/guestbook
version: "3"
"""
OTHER = ("--group", "crew", "--version", "v1", "--kind", "Other")

# (id, how the project (init + create api Captain) is changed, args, expected fragment of the message)
FILE_CASES = [
    (
        "syntax-error-in-controller",
        _append_bytes("my_operator/controllers/captain_controller.py", b"\ndef (\n"),
        ("make", "manifests"),
        "captain_controller.py:",
    ),
    (
        "syntax-error-in-main",
        _append_bytes("my_operator/main.py", b"\ndef (\n"),
        ("create", "api", *OTHER),
        "cannot edit my_operator/main.py: not valid Python",
    ),
    (
        "main-not-utf8",
        _append_bytes("my_operator/main.py", b"# \xff\xfe\n"),
        ("create", "api", *OTHER),
        "cannot read my_operator/main.py: not UTF-8 text",
    ),
    (
        "types-not-utf8-conversion",
        _append_bytes("my_operator/api/v1/captain_types.py", b"# \xff\xfe\n"),
        ("create", "webhook", *CAPTAIN, "--conversion", "--spoke", "v2"),
        "cannot read my_operator/api/v1/captain_types.py: not UTF-8 text",
    ),
    (
        "boilerplate-not-utf8",
        _append_bytes("hack/boilerplate.py.txt", b"# \xff\n"),
        ("create", "api", *OTHER),
        "cannot read hack/boilerplate.py.txt: not UTF-8 text",
    ),
    (
        "folder-where-the-sample-goes",
        _replace_with_folder("config/samples/crew_v1_other.yaml"),
        ("create", "api", *OTHER),
        "cannot write config/samples/crew_v1_other.yaml: it is a folder",
    ),
    (
        "folder-where-main-is",
        _replace_with_folder("my_operator/main.py"),
        ("create", "api", *OTHER),
        "my_operator/main.py is missing",
    ),
    (
        "file-where-the-api-folder-is",
        _replace_with_file("my_operator/api/v1"),
        ("create", "api", "--group", "crew", "--version", "v1", "--kind", "Other", "--no-controller"),
        "my_operator/api/v1 is a file, not a folder",
    ),
    (
        "project-package-leaves-the-project",
        _edit_project_file("package: my_operator", "package: ../evil"),
        ("create", "api", *OTHER),
        "invalid package '../evil'",
    ),
    (
        "project-path-leaves-the-package",
        _edit_project_file("path: my_operator.api.v1", "path: os.path"),
        ("create", "webhook", *CAPTAIN, "--defaulting"),
        "invalid path 'os.path'",
    ),
    (
        "project-group-is-a-path",
        _edit_project_file("group: crew", "group: ../../crew"),
        ("make", "manifests"),
        "invalid group '../../crew'",
    ),
    (
        "project-plural-with-newline",
        _edit_project_file("kind: Captain", 'kind: Captain\n  plural: "captains\\n"'),
        ("make", "manifests"),
        "invalid plural 'captains\\n'",
    ),
    (
        "project-missing-key",
        _edit_project_file("projectName: my-operator\n", ""),
        ("create", "api", *OTHER),
        "projectName: Field required",
    ),
    (
        "project-config-version",
        _edit_project_file("version: '3'", "version: '2'"),
        ("make", "manifests"),
        "invalid version '2': pyop reads PROJECT files of config version '3'",
    ),
    (
        "project-name-with-newline",
        _edit_project_file("projectName: my-operator", 'projectName: "my-operator\\n"'),
        ("create", "api", *OTHER),
        "invalid project name 'my-operator\\n'",
    ),
    (
        "project-header-file-outside",
        _edit_project_file(
            "projectName: my-operator", "manifests:\n  headerFile: ../../etc/hostname\nprojectName: my-operator"
        ),
        ("make", "manifests"),
        "invalid manifests.headerFile '../../etc/hostname': must be a relative path inside the project",
    ),
    (
        "kubebuilder-go-project",
        _write_project_file(KUBEBUILDER_GO_PROJECT),
        ("create", "api", *OTHER),
        "has layout go.kubebuilder.io/v4: pyop works with projects of layout python.pyop.io/v1",
    ),
]


@pytest.mark.parametrize(("mutate", "args", "message"), [c[1:] for c in FILE_CASES], ids=[c[0] for c in FILE_CASES])
def test_bad_project_file(tmp_path: Path, pyop, tree, mutate, args: tuple[str, ...], message: str) -> None:  # type: ignore[no-untyped-def]
    root = _project(tmp_path / "my-operator", pyop, CAPTAIN)
    if "--spoke" in args:
        assert pyop("create", "api", "--group", "crew", "--version", "v2", "--kind", "Captain", cwd=root).exit_code == 0
    mutate(root)
    before = tree(root)
    result = pyop(*args, cwd=root)
    assert result.exit_code == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: ") and message in lines[0], lines[0]
    assert tree(root) == before


def test_read_only_folder(tmp_path: Path, pyop, tree, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    root = _project(tmp_path / "my-operator", pyop, CAPTAIN)
    samples = root / "config/samples"
    samples.chmod(0o555)
    if os.geteuid() == 0:  # root writes anyway: answer as the kernel would for anyone else
        real_access = os.access
        monkeypatch.setattr(
            project_files.os, "access", lambda path, mode: Path(path) != samples and real_access(path, mode)
        )
    try:
        before = tree(root)
        result = pyop("create", "api", *OTHER, cwd=root)
        assert result.exit_code == 2
        assert result.stderr == (
            "Error: cannot write config/samples/crew_v1_other.yaml: the folder config/samples is not writable\n"
        )
        assert tree(root) == before
    finally:
        samples.chmod(0o755)
