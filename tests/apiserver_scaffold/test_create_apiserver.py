"""What `pyop create apiserver` writes: the server package, a model, strategy and test per kind, PROJECT, and how a
second run (same kinds, more kinds, another version, --force) treats what is there."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

from apiserver_scaffold.conftest import FLUNDER, INIT, ok

PACKAGE = "wardle_operator"
GV_DIR = f"{PACKAGE}/apiserver/wardle/v1alpha1"


def _read(root: Path, path: str) -> str:
    return (root / path).read_text(encoding="utf-8")


def test_first_run_scaffolds_the_server_and_records_it(project: Path, pyop) -> None:  # type: ignore[no-untyped-def]
    result = ok(pyop("create", "apiserver", *FLUNDER, "--kind", "Fischer", cwd=project))
    for path in (
        f"{PACKAGE}/apiserver/__init__.py",
        f"{PACKAGE}/apiserver/__main__.py",
        f"{PACKAGE}/apiserver/wardle/__init__.py",
        f"{GV_DIR}/__init__.py",
        f"{GV_DIR}/groupversion_info.py",
        f"{GV_DIR}/flunder_types.py",
        f"{GV_DIR}/flunder_strategy.py",
        f"{GV_DIR}/fischer_types.py",
        f"{GV_DIR}/fischer_strategy.py",
        "tests/test_apiserver_wardle_v1alpha1_flunder.py",
        "tests/test_apiserver_wardle_v1alpha1_fischer.py",
        "config/samples/wardle_v1alpha1_flunder.yaml",
        "config/rbac/wardle_flunder_editor_role.yaml",
        "config/apiserver/deployment.yaml",
        "config/apiserver/apiservice_wardle_v1alpha1.yaml",
    ):
        assert (project / path).is_file(), path
        assert f"created  {path}" in result.stdout, path
    # Not under <package>/api: make manifests must not turn them into CRDs.
    assert not (project / PACKAGE / "api" / "v1alpha1").exists()

    data = yaml.safe_load(_read(project, "PROJECT"))
    entries = {(r["group"], r["version"], r["kind"]): r for r in data["resources"]}
    assert entries[("wardle", "v1alpha1", "Flunder")] == {
        "apiserver": {"namespaced": True},
        "domain": "example.com",
        "group": "wardle",
        "kind": "Flunder",
        "path": f"{PACKAGE}.apiserver.wardle.v1alpha1",
        "version": "v1alpha1",
    }
    assert ("wardle", "v1alpha1", "Fischer") in entries

    gv = _read(project, f"{GV_DIR}/__init__.py")
    assert (
        "Resource(Flunder, strategy=FlunderStrategy()),\n        Resource(Fischer, strategy=FischerStrategy())," in gv
    )
    assert 'APIGroupVersion(\n    "wardle.example.com",\n    "v1alpha1",' in gv
    types = _read(project, f"{GV_DIR}/flunder_types.py")
    assert "# +kubebuilder:subresource:status\nclass Flunder(" in types and "group_version=GROUP_VERSION" in types
    apiservice = yaml.safe_load(_read(project, "config/apiserver/apiservice_wardle_v1alpha1.yaml"))
    assert apiservice["metadata"]["name"] == "v1alpha1.wardle.example.com"
    assert apiservice["spec"]["group"] == "wardle.example.com" and apiservice["spec"]["version"] == "v1alpha1"
    makefile = _read(project, "Makefile")
    assert f"\t$(PYTHON) -m {PACKAGE}.apiserver --kubeconfig=$(APISERVER_KUBECONFIG)" in makefile
    assert "\tcd config/apiserver && $(KUSTOMIZE) edit set image controller=${IMG}\n" in makefile
    assert "config/default deploys the aggregated API server" in result.stdout
    assert _read(project, ".gitignore").endswith("\nbin/apiserver-certs/\nbin/apiserver-data/\n")


def test_output_is_deterministic(tmp_path: Path, pyop, tree) -> None:  # type: ignore[no-untyped-def]
    snapshots = []
    for name in ("one", "two"):
        root = tmp_path / name / "wardle-operator"
        root.mkdir(parents=True)
        ok(pyop(*INIT, cwd=root))
        ok(pyop("create", "apiserver", *FLUNDER, "--kind", "Fischer", cwd=root))
        snapshots.append(tree(root))
    assert snapshots[0] == snapshots[1]


def test_running_again_changes_nothing(project: Path, pyop, tree) -> None:  # type: ignore[no-untyped-def]
    ok(pyop("create", "apiserver", *FLUNDER, cwd=project))
    before = tree(project)
    result = ok(pyop("create", "apiserver", *FLUNDER, cwd=project))
    assert tree(project) == before
    assert "wardle/v1alpha1, Kind=Flunder is already served: kept its files" in result.stdout


def test_kinds_added_later_keep_the_users_code(project: Path, pyop) -> None:  # type: ignore[no-untyped-def]
    ok(pyop("create", "apiserver", *FLUNDER, cwd=project))
    strategy = project / GV_DIR / "flunder_strategy.py"
    edited = strategy.read_text().replace(
        "        # TODO(user): set your defaults", "        obj.spec.foo = 'x'  # mine"
    )
    strategy.write_text(edited)
    init = project / GV_DIR / "__init__.py"
    init.write_text(init.read_text().replace('"v1alpha1",\n', '"v1alpha1",  # the version\n'))

    result = ok(
        pyop("create", "apiserver", "--group", "wardle", "--version", "v1alpha1", "--kind", "Fischer", cwd=project)
    )
    assert strategy.read_text() == edited
    assert f"updated  {GV_DIR}/__init__.py" in result.stdout
    gv = init.read_text()
    assert '"v1alpha1",  # the version\n' in gv
    assert gv.index("Resource(Flunder,") < gv.index("Resource(Fischer,") < gv.index("apiserver-resources")
    assert f"from {PACKAGE}.apiserver.wardle.v1alpha1.fischer_strategy import FischerStrategy\n" in gv
    assert (project / GV_DIR / "fischer_types.py").is_file()
    kustomization = yaml.safe_load(_read(project, "config/apiserver/kustomization.yaml"))
    assert kustomization["resources"].count("apiservice_wardle_v1alpha1.yaml") == 1


def test_another_version_gets_its_package_and_apiservice(project: Path, pyop) -> None:  # type: ignore[no-untyped-def]
    ok(pyop("create", "apiserver", *FLUNDER, cwd=project))
    deployment = project / "config/apiserver/deployment.yaml"
    deployment.write_text(deployment.read_text().replace("replicas: 1", "replicas: 2"))
    ok(pyop("create", "apiserver", "--group", "wardle", "--version", "v1beta1", "--kind", "Fortune", cwd=project))
    assert "replicas: 2" in deployment.read_text()  # shared config is the user's once written
    top = _read(project, f"{PACKAGE}/apiserver/__init__.py")
    assert f"from {PACKAGE}.apiserver.wardle.v1beta1 import API_GROUP_VERSION as wardle_v1beta1\n" in top
    assert "    wardle_v1alpha1,\n    wardle_v1beta1,\n    # +kubebuilder:scaffold:apiserver-groupversions" in top
    kustomization = yaml.safe_load(_read(project, "config/apiserver/kustomization.yaml"))
    assert kustomization["resources"][-2:] == ["apiservice_wardle_v1alpha1.yaml", "apiservice_wardle_v1beta1.yaml"]
    assert (project / f"{PACKAGE}/apiserver/wardle/v1beta1/fortune_strategy.py").is_file()


def test_force_rewrites_a_kinds_files(project: Path, pyop) -> None:  # type: ignore[no-untyped-def]
    ok(pyop("create", "apiserver", *FLUNDER, cwd=project))
    strategy = project / GV_DIR / "flunder_strategy.py"
    original = strategy.read_text()
    strategy.write_text(original + "\n# mine\n")
    result = ok(pyop("create", "apiserver", *FLUNDER, "--force", cwd=project))
    assert strategy.read_text() == original
    assert f"overwrote  {GV_DIR}/flunder_strategy.py" in result.stdout


def test_kinds_out_of_order_keep_the_project_lint_clean(project: Path, pyop) -> None:  # type: ignore[no-untyped-def]
    for version, kind in (("v1beta1", "Zebra"), ("v1alpha1", "Ant"), ("v1beta1", "Mole"), ("v1alpha1", "Bee")):
        ok(pyop("create", "apiserver", "--group", "wardle", "--version", version, "--kind", kind, cwd=project))
    ok(pyop("create", "apiserver", "--group", "zoo", "--version", "v1", "--kind", "Keeper", cwd=project))
    lint = subprocess.run([sys.executable, "-m", "ruff", "check", "."], cwd=project, capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    top = _read(project, f"{PACKAGE}/apiserver/__init__.py")
    assert top.index("wardle_v1beta1,") < top.index("wardle_v1alpha1,") < top.index("zoo_v1,")


def test_crds_and_the_server_share_no_group_version(project: Path, pyop) -> None:  # type: ignore[no-untyped-def]
    """The other direction of the bad-input table's CRD clash: create api refuses the server's group version."""
    ok(pyop("create", "apiserver", *FLUNDER, cwd=project))
    result = pyop("create", "api", "--group", "wardle", "--version", "v1alpha1", "--kind", "Captain", cwd=project)
    assert result.exit_code == 2
    assert "wardle/v1alpha1, Kind=Flunder is served by the project's aggregated API server" in result.stderr
    # Another group is fine, and single-group projects are not blocked by the server's group.
    ok(pyop("create", "api", "--group", "crew", "--version", "v1", "--kind", "Captain", cwd=project))


def test_webhooks_added_after_the_server_patch_only_the_manager(project: Path, pyop) -> None:  # type: ignore[no-untyped-def]
    ok(pyop("create", "api", "--group", "crew", "--version", "v1", "--kind", "Captain", cwd=project))
    ok(pyop("create", "apiserver", *FLUNDER, cwd=project))
    crew = ("--group", "crew", "--version", "v1", "--kind", "Captain")
    ok(pyop("create", "webhook", *crew, "--defaulting", cwd=project))
    default = yaml.safe_load(_read(project, "config/default/kustomization.yaml"))
    targets = [patch["target"] for patch in default["patches"]]
    assert targets == [{"kind": "Deployment", "name": "controller-manager"}] * 2


def test_a_project_whose_sample_test_predates_the_server_gets_it_updated(project: Path, pyop, project_pytest) -> None:  # type: ignore[no-untyped-def]
    """tests/test_samples.py of older projects looked for models in <package>/api only."""
    test = project / "tests/test_samples.py"
    current = test.read_text()
    new = (
        f'    package = PROJECT_ROOT / "{PACKAGE}"\n'
        '    for path in sorted([*(package / "api").rglob("*_types.py"), '
        '*(package / "apiserver").rglob("*_types.py")]):\n'
    )
    old = (
        f"    import {PACKAGE}.api as api_root\n\n"
        '    for path in sorted(Path(api_root.__path__[0]).rglob("*_types.py")):\n'
    )
    assert new in current
    test.write_text(current.replace(new, old))
    result = ok(pyop("create", "apiserver", *FLUNDER, cwd=project))
    assert "updated  tests/test_samples.py" in result.stdout
    assert test.read_text() == current
    run = project_pytest(project, "tests/test_samples.py")
    assert run.returncode == 0 and "1 passed" in run.stdout, run.stdout + run.stderr


def test_a_project_without_cert_manager_gets_a_server_that_makes_its_certificate(project: Path, pyop) -> None:  # type: ignore[no-untyped-def]
    ok(pyop("edit", "--certificates=pyop", cwd=project))
    result = ok(pyop("create", "apiserver", *FLUNDER, cwd=project))
    assert "makes and rotates its own certificate" in result.stdout and "no cert-manager needed" in result.stdout
    assert not (project / "config/apiserver/certificate.yaml").exists()
    assert (project / "config/apiserver/certificates_role.yaml").is_file()


def test_long_names_keep_the_project_lint_clean(tmp_path: Path, pyop) -> None:  # type: ignore[no-untyped-def]
    """Imports too long for the project's 110 columns are wrapped as ruff's isort wraps them."""
    root = tmp_path / "wardle-operator-for-the-galactic-federation"
    root.mkdir()
    ok(pyop(*INIT, cwd=root))
    group = ("--group", "intergalactic-trade")
    ok(pyop("create", "apiserver", *group, "--version", "v1alpha1", "--kind", "FlunderWithAVeryLongName", cwd=root))
    ok(pyop("create", "apiserver", *group, "--version", "v1alpha1", "--kind", "FischerWithALongerName", cwd=root))
    ok(pyop("create", "apiserver", *group, "--version", "v1beta1", "--kind", "Fortune", cwd=root))
    lint = subprocess.run([sys.executable, "-m", "ruff", "check", "."], cwd=root, capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    top = (root / "wardle_operator_for_the_galactic_federation/apiserver/__init__.py").read_text()
    assert "import (\n    API_GROUP_VERSION as intergalactic_trade_v1beta1,\n)\n" in top


def test_the_projects_image_gets_the_apiserver_extra_once(project: Path, pyop) -> None:  # type: ignore[no-untyped-def]
    from pyop_scaffold import __version__

    ok(pyop("create", "apiserver", *FLUNDER, cwd=project))
    ok(pyop("create", "apiserver", "--group", "wardle", "--version", "v1alpha1", "--kind", "Fischer", cwd=project))
    lines = [line for line in _read(project, "pyproject.toml").splitlines() if line.startswith("dependencies = ")]
    assert lines == [f'dependencies = ["pyop-kit~={__version__}", "pyop-kit[apiserver]~={__version__}"]']
