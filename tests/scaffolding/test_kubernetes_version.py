"""The Kubernetes version as a project setting: PROJECT's `kubernetesVersion`, set by `pyop init/edit
--kubernetes-version`, chooses the built-in schemas `make manifests` embeds and the generated tests' server."""

from __future__ import annotations

from pathlib import Path

import yaml

from pyop.api.definitions import PINNED_KUBERNETES_VERSION
from pyop_scaffold.project.config import dump_project, load_project

CAPTAIN = ("--group", "crew", "--version", "v1", "--kind", "Captain")
CRD = "config/crd/bases/crew.example.com_captains.yaml"
# PodSpec.hostnameOverride is in the 1.37 definitions and not in 1.32's.
NEW_FIELD = "hostnameOverride"


def _project(root: Path, pyop, *init_flags: str) -> Path:  # type: ignore[no-untyped-def]
    root.mkdir(parents=True)
    result = pyop("init", "--domain", "example.com", *init_flags, cwd=root)
    assert result.exit_code == 0, result.stderr
    return root


def _recorded(root: Path) -> object:
    return yaml.safe_load((root / "PROJECT").read_text(encoding="utf-8")).get("kubernetesVersion")


def _embed_pod_template(root: Path) -> None:
    types = root / root.name.replace("-", "_") / "api" / "v1" / "captain_types.py"
    text = types.read_text(encoding="utf-8")
    text = text.replace(
        "from pyop.api import ", "from pyop.api.builtin_types import PodTemplateSpec\nfrom pyop.api import "
    )
    text = text.replace(
        "    foo: str | None = None\n", "    foo: str | None = None\n    template: PodTemplateSpec | None = None\n", 1
    )
    types.write_text(text, encoding="utf-8")


def _pod_spec_properties(root: Path) -> dict[str, object]:
    crd = yaml.safe_load((root / CRD).read_text(encoding="utf-8"))
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    return spec["properties"]["template"]["properties"]["spec"]["properties"]  # type: ignore[no-any-return]


def test_init_records_the_normalised_version_and_project_round_trips(tmp_path: Path, pyop) -> None:  # type: ignore[no-untyped-def]
    root = _project(tmp_path / "kv", pyop, "--kubernetes-version", "v1.32.4")
    assert _recorded(root) == "1.32"
    project = load_project(root)
    assert project.effective_kubernetes_version == "1.32"
    assert dump_project(project) == (root / "PROJECT").read_text(encoding="utf-8")


def test_init_without_the_flag_records_nothing_and_means_the_pinned_version(tmp_path: Path, pyop) -> None:  # type: ignore[no-untyped-def]
    root = _project(tmp_path / "kv", pyop)
    assert _recorded(root) is None
    assert load_project(root).effective_kubernetes_version == PINNED_KUBERNETES_VERSION


def test_edit_sets_the_version_and_a_repeat_writes_nothing(tmp_path: Path, pyop) -> None:  # type: ignore[no-untyped-def]
    root = _project(tmp_path / "kv", pyop)
    result = pyop("edit", "--kubernetes-version", "1.33", cwd=root)
    assert result.exit_code == 0, result.stderr
    assert _recorded(root) == "1.33"
    before = (root / "PROJECT").read_bytes()
    result = pyop("edit", "--kubernetes-version", "v1.33.0", cwd=root)
    assert result.exit_code == 0, result.stderr
    assert "nothing changed" in result.stdout
    assert (root / "PROJECT").read_bytes() == before


def test_a_bad_version_in_project_is_a_one_line_error(tmp_path: Path, pyop) -> None:  # type: ignore[no-untyped-def]
    root = _project(tmp_path / "kv", pyop)
    path = root / "PROJECT"
    path.write_text(path.read_text(encoding="utf-8") + "kubernetesVersion: '1.99'\n", encoding="utf-8")
    result = pyop("make", "manifests", cwd=root)
    assert result.exit_code == 2
    assert "invalid Kubernetes version '1.99'" in result.stderr and "fix the value in PROJECT" in result.stderr


def test_make_manifests_embeds_the_projects_version(tmp_path: Path, pyop) -> None:  # type: ignore[no-untyped-def]
    root = _project(tmp_path / "kv", pyop)
    assert pyop("create", "api", *CAPTAIN, cwd=root).exit_code == 0
    _embed_pod_template(root)
    result = pyop("make", "manifests", cwd=root)
    assert result.exit_code == 0, result.stderr
    assert NEW_FIELD in _pod_spec_properties(root)

    assert pyop("edit", "--kubernetes-version", "1.32", cwd=root).exit_code == 0
    result = pyop("make", "manifests", cwd=root)
    assert result.exit_code == 0, result.stderr
    old = _pod_spec_properties(root)
    assert NEW_FIELD not in old and "containers" in old


def test_generated_tests_pass_and_run_the_server_at_the_projects_version(  # type: ignore[no-untyped-def]
    tmp_path: Path, pyop, project_pytest
) -> None:
    root = _project(tmp_path / "kv", pyop, "--kubernetes-version", "1.32")
    assert pyop("create", "api", *CAPTAIN, cwd=root).exit_code == 0
    assert pyop("make", "manifests", cwd=root).exit_code == 0
    probe = root / "tests" / "test_probe_version.py"
    probe.write_text(
        "from pyop.testing import TestAPIServer\n\n\n"
        "async def test_server_version(test_api_server: TestAPIServer) -> None:\n"
        "    assert test_api_server.kubernetes_version == '1.32'\n",
        encoding="utf-8",
    )
    result = project_pytest(root)
    assert result.returncode == 0, result.stdout + result.stderr
    assert " passed" in result.stdout and "failed" not in result.stdout
