"""`pyop create apiserver` with bad input: one line on stderr naming the bad value, exit code 2, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

from apiserver_scaffold.conftest import FLUNDER, INIT, ok

CAPTAIN = ("--group", "crew", "--version", "v1", "--kind", "Captain")


def _setup(root: Path, pyop, setup: str) -> None:  # type: ignore[no-untyped-def]
    root.mkdir(parents=True)
    if setup == "empty":
        return
    ok(pyop(*INIT, cwd=root))
    if setup == "captain":
        ok(pyop("create", "api", *CAPTAIN, cwd=root))
    elif setup == "flunder":
        ok(pyop("create", "apiserver", *FLUNDER, cwd=root))
    elif setup == "no-default":
        (root / "config/default/kustomization.yaml").unlink()
    elif setup == "flunder-no-marker":
        ok(pyop("create", "apiserver", *FLUNDER, cwd=root))
        init = root / "wardle_operator/apiserver/__init__.py"
        init.write_text(init.read_text().replace("    # +kubebuilder:scaffold:apiserver-groupversions\n", ""))


def _args(group: str = "wardle", version: str = "v1alpha1", *kinds: str) -> tuple[str, ...]:
    flags = [f for kind in kinds or ("Flunder",) for f in ("--kind", kind)]
    return ("create", "apiserver", "--group", group, "--version", version, *flags)


# (id, setup, args, expected fragment of the one-line message)
CASES = [
    ("outside-project", "empty", _args(), "no PROJECT file"),
    ("group-upper", "project", _args("Wardle"), "invalid group 'Wardle'"),
    ("group-keyword", "project", _args("class"), "invalid group 'class'"),
    ("version-no-v", "project", _args("wardle", "1alpha1"), "invalid version '1alpha1'"),
    ("kind-lower", "project", _args("wardle", "v1alpha1", "flunder"), "invalid kind 'flunder'"),
    ("kind-list", "project", _args("wardle", "v1alpha1", "FlunderList"), "invalid kind 'FlunderList'"),
    ("kind-reserved-by-pyop-api", "project", _args("wardle", "v1alpha1", "Resource"), "invalid kind 'Resource'"),
    ("kind-reserved-by-the-server", "project", _args("wardle", "v1alpha1", "Strategy"), "invalid kind 'Strategy'"),
    (
        "kind-twice",
        "project",
        _args("wardle", "v1alpha1", "Flunder", "Flunder"),
        "invalid --kind 'Flunder': given twice",
    ),
    (
        "kinds-same-singular",
        "project",
        _args("wardle", "v1alpha1", "Flunder", "FLunder"),
        "invalid --kind 'FLunder': it has the same singular name and files as --kind 'Flunder'",
    ),
    (
        "crd-same-gvk",
        "captain",
        _args("crew", "v1", "Captain"),
        "invalid kind 'Captain': crew/v1, Kind=Captain is already a CRD of this project",
    ),
    (
        "crd-same-group-version",
        "captain",
        _args("crew", "v1", "Mate"),
        "invalid version 'v1': crew/v1 has the CRD kind Captain",
    ),
    (
        "crd-same-kind-other-version",
        "captain",
        _args("crew", "v2", "Captain"),
        "invalid kind 'Captain': crew/v1, Kind=Captain is a CRD of this project",
    ),
    (
        "no-default-kustomization",
        "no-default",
        _args(),
        "cannot add to config/default/kustomization.yaml: the file is missing",
    ),
    (
        "insertion-point-removed",
        "flunder-no-marker",
        _args("wardle", "v1beta1", "Fortune"),
        "its insertion point '# +kubebuilder:scaffold:apiserver-groupversions' is missing",
    ),
]


@pytest.mark.parametrize(("setup", "args", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input(tmp_path: Path, pyop, tree, setup: str, args: tuple[str, ...], message: str) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "wardle-operator"
    _setup(root, pyop, setup)
    before = tree(root)
    result = pyop(*args, cwd=root)
    assert result.exit_code == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: ") and message in lines[0], lines[0]
    assert tree(root) == before


def test_no_kind_is_a_usage_error(project: Path, pyop, tree) -> None:  # type: ignore[no-untyped-def]
    before = tree(project)
    result = pyop("create", "apiserver", "--group", "wardle", "--version", "v1alpha1", cwd=project)
    assert result.exit_code == 2 and "--kind" in result.stderr
    assert tree(project) == before
