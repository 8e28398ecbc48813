"""A user's edit to a generated file survives every later pyop command run without --force."""

from __future__ import annotations

from pathlib import Path

CAPTAIN = ("--group", "crew", "--version", "v1", "--kind", "Captain")


def test_edits_survive_later_commands(tmp_path: Path, pyop) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "op"
    root.mkdir()
    assert pyop("init", cwd=root).exit_code == 0
    assert pyop("create", "api", *CAPTAIN, cwd=root).exit_code == 0

    edits = {
        "op/api/v1/captain_types.py": "\n# my own helper\nMY_CONSTANT = 42\n",
        "op/controllers/captain_controller.py": "\n# reconcile notes\n",
        "config/samples/crew_v1_captain.yaml": "# my sample comment\n",
        "op/api/v1/groupversion_info.py": "\n# group notes\n",
        "Makefile": "\nmy-target:\n\techo mine\n",
        "config/manager/manager.yaml": "# my manager comment\n",
    }
    for path, extra in edits.items():
        with (root / path).open("a") as handle:
            handle.write(extra)
    kustomization = root / "config/rbac/kustomization.yaml"
    kustomization.write_text(kustomization.read_text().replace("- role.yaml\n", "- role.yaml  # the manager's\n"))
    main = root / "op/main.py"
    main.write_text(main.read_text().replace("import os\n", "import os\nimport sys  # mine\n"))

    # Later commands: another version, a kind in the same version, manifests, re-run of a refused command.
    assert pyop("create", "api", "--group", "crew", "--version", "v1", "--kind", "FirstMate", cwd=root).exit_code == 0
    second_version = pyop("create", "api", "--group", "crew", "--version", "v2", "--kind", "Captain", cwd=root)
    assert second_version.exit_code == 0
    assert "kept the existing controller of crew/Captain" in second_version.stdout
    assert "+kubebuilder:storageversion" in second_version.stdout
    v1 = root / "op/api/v1/captain_types.py"
    v1.write_text(
        v1.read_text().replace(
            "# +kubebuilder:subresource:status\n",
            "# +kubebuilder:subresource:status\n# +kubebuilder:storageversion\n",
            1,
        )
    )
    assert pyop("create", "api", *CAPTAIN, cwd=root).exit_code == 2
    assert pyop("init", "--force", cwd=root).exit_code == 2
    assert pyop("make", "manifests", cwd=root).exit_code == 0

    for path, extra in edits.items():
        assert (root / path).read_text().endswith(extra), path
    assert "- role.yaml  # the manager's\n" in kustomization.read_text()
    assert "- firstmate_admin_role.yaml" in kustomization.read_text()
    text = main.read_text()
    assert "import sys  # mine\n" in text
    assert "crew_first_mate_controller.setup_with_manager(manager)" in text


def test_force_overwrites_the_scaffold_of_that_kind(tmp_path: Path, pyop) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "op"
    root.mkdir()
    pyop("init", cwd=root)
    pyop("create", "api", *CAPTAIN, cwd=root)
    types_file = root / "op/api/v1/captain_types.py"
    original = types_file.read_text()
    types_file.write_text(original + "\n# edit\n")
    result = pyop("create", "api", *CAPTAIN, "--force", cwd=root)
    assert result.exit_code == 0
    assert types_file.read_text() == original
    assert "overwrote" in result.stdout


def test_reruns_are_idempotent(tmp_path: Path, pyop) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "op"
    root.mkdir()
    pyop("init", cwd=root)
    pyop("create", "api", *CAPTAIN, cwd=root)
    main_before = (root / "op/main.py").read_text()
    kustomizations = {p: p.read_text() for p in (root / "config").rglob("kustomization.yaml")}
    assert pyop("create", "api", *CAPTAIN, "--force", cwd=root).exit_code == 0
    assert (root / "op/main.py").read_text() == main_before
    assert {p: p.read_text() for p in (root / "config").rglob("kustomization.yaml")} == kustomizations
