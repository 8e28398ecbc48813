"""`make manifests` with nothing to do: decided from a stamp, never wrong, and the output a full run gives."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from manifests.manifests_helpers import PACKAGE, project, snapshot

from pyop_scaffold.commands.make_manifests import ManifestOptions, make_manifests
from pyop_scaffold.manifests import incremental
from pyop_scaffold.manifests.incremental import RunOptions

SHIP = """
class ShipSpec(KubeModel):
    # +kubebuilder:validation:Minimum=1
    crew: int = 9
    name: str = ""


class Ship(Resource, group_version=GROUP_VERSION):
    \"\"\"A ship.\"\"\"

    spec: ShipSpec = Field(default_factory=ShipSpec)
"""

CONTROLLER = """# +kubebuilder:rbac:groups=fleet.example.com,resources=ships,verbs=get;list;watch
"""


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def _project(root: Path) -> Path:
    project(root, {"v1/ship_types.py": SHIP})
    controllers = root / PACKAGE / "controllers"
    controllers.mkdir()
    (controllers / "__init__.py").write_text("")
    (controllers / "ship_controller.py").write_text(CONTROLLER)
    return root


def _config(root: Path) -> dict[str, str]:
    return {path: text for path, text in snapshot(root).items() if path.startswith("config/")}


def test_a_run_after_a_full_one_is_up_to_date_and_any_input_change_is_not(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    assert incremental.up_to_date(root, RunOptions()) is None  # never generated
    make_manifests(root, ManifestOptions())
    stamp = incremental.up_to_date(root, RunOptions())
    assert stamp is not None
    assert sorted(stamp.outputs) == ["config/crd/bases/fleet.example.com_ships.yaml", "config/rbac/role.yaml"]
    assert incremental.up_to_date(root, RunOptions(max_description_length=10)) is None  # other options
    types = root / PACKAGE / "api" / "v1" / "ship_types.py"
    os.utime(types)  # touched, not changed: still up to date
    assert incremental.up_to_date(root, RunOptions()) is not None
    types.write_text(types.read_text().replace("Minimum=1", "Minimum=2"))
    assert incremental.up_to_date(root, RunOptions()) is None
    make_manifests(root, ManifestOptions())
    role = root / "config" / "rbac" / "role.yaml"
    role.write_text(role.read_text() + "# edited\n")  # an output edited by hand: the next run restores it
    assert incremental.up_to_date(root, RunOptions()) is None
    make_manifests(root, ManifestOptions())
    (root / ".pyop-journal-1-x").mkdir()  # an interrupted command: the full run recovers it first
    assert incremental.up_to_date(root, RunOptions()) is None


def _edit_marker(root: Path, rng: random.Random) -> None:
    path = root / PACKAGE / "api" / "v1" / "ship_types.py"
    text = path.read_text()
    minimum = text.split("Minimum=")[1].split("\n")[0]
    path.write_text(text.replace(f"Minimum={minimum}", f"Minimum={rng.randint(0, 9)}"))


def _add_field(root: Path, rng: random.Random) -> None:
    path = root / PACKAGE / "api" / "v1" / "ship_types.py"
    name = f"field{rng.randint(0, 999)}"
    path.write_text(path.read_text().replace('    name: str = ""\n', f'    name: str = ""\n    {name}: int = 0\n', 1))


def _edit_rbac(root: Path, rng: random.Random) -> None:
    path = root / PACKAGE / "controllers" / "ship_controller.py"
    verbs = rng.choice(["get;list;watch", "get;list", "get;list;watch;update"])
    path.write_text(f"# +kubebuilder:rbac:groups=fleet.example.com,resources=ships,verbs={verbs}\n")


def _set_header(root: Path, rng: random.Random) -> None:
    (root / "hack").mkdir(exist_ok=True)
    (root / "hack" / "header.txt").write_text(f"Copyright {rng.randint(2000, 2030)} the authors.\n")
    text = (root / "PROJECT").read_text()
    if "headerFile" not in text:
        (root / "PROJECT").write_text(text + "manifests:\n  headerFile: hack/header.txt\n")


def _delete_output(root: Path, rng: random.Random) -> None:
    outputs = sorted((root / "config").rglob("*.yaml"))
    if outputs:
        rng.choice(outputs).unlink()


def _edit_output(root: Path, rng: random.Random) -> None:
    outputs = sorted((root / "config").rglob("*.yaml"))
    if outputs:
        target = rng.choice(outputs)
        target.write_text(target.read_text() + f"# by hand {rng.random()}\n")


def _touch_everything(root: Path, rng: random.Random) -> None:
    for path in sorted(root.rglob("*.py")):
        os.utime(path)


def _add_module(root: Path, rng: random.Random) -> None:
    (root / PACKAGE / "api" / "v1" / f"extra{rng.randint(0, 9)}.py").write_text(f"VALUE = {rng.random()}\n")


EDITS: list[Callable[[Path, random.Random], None]] = [
    _edit_marker,
    _add_field,
    _edit_rbac,
    _set_header,
    _delete_output,
    _edit_output,
    _touch_everything,
    _add_module,
]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_edit_sequences_give_what_a_full_run_gives(tmp_path: Path, seed: int) -> None:
    """After every edit, the incremental answer (no-op or full run) leaves config/ byte-identical to a full run
    of the same sources in a fresh copy with no stamp."""
    rng = random.Random(seed)
    root = _project(tmp_path / "p")
    make_manifests(root, ManifestOptions())
    for step in range(8):
        edit = rng.choice(EDITS)
        edit(root, rng)
        if incremental.up_to_date(root, RunOptions()) is None:
            make_manifests(root, ManifestOptions())
        fresh = tmp_path / f"fresh{step}"
        shutil.copytree(root, fresh, ignore=shutil.ignore_patterns("config", "__pycache__"))
        make_manifests(fresh, ManifestOptions())
        assert _config(root) == _config(fresh), f"after {edit.__name__} (step {step}, seed {seed})"


def _cli(root: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pyop_scaffold", "make", "manifests", *args],
        cwd=root,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


def test_the_shortcut_prints_what_a_full_run_prints_without_importing_the_generator(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    env = {**os.environ, "XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"], "TTY_COMPATIBLE": "0"}
    env.pop("FORCE_COLOR", None)
    first = _cli(root, env=env)
    assert first.returncode == 0, first.stderr
    incremental.forget(root)
    for args in ((), ("--verbose",)):
        full = _cli(root, *args, env=env)  # a full run with nothing to change
        incremental.forget(root)
        _cli(root, env=env)  # records the stamp again
        shortcut = _cli(root, *args, env=env)
        assert shortcut.returncode == full.returncode == 0
        assert shortcut.stdout == full.stdout
        assert "file(s) unchanged" in full.stdout or "unchanged  config/rbac/role.yaml" in full.stdout
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; sys.argv = ['pyop', 'make', 'manifests']; from pyop_scaffold.cli.entry import main; main(); "
            "print('pydantic' in sys.modules, 'typer' in sys.modules)",
        ],
        cwd=root,
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    probe = subprocess.run(probe.args, cwd=root, capture_output=True, text=True, env=env, check=True)
    assert probe.stdout.splitlines()[-1] == "False False"


def test_the_shortcut_reads_the_project_folder_from_either_spelling(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    env = {**os.environ, "XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"], "TTY_COMPATIBLE": "0"}
    assert _cli(tmp_path, "-C", str(root), env=env).returncode == 0
    probe = (
        "import sys; sys.argv = ['pyop', 'make', 'manifests', {flag!r}, {root!r}]; "
        "from pyop_scaffold.cli.entry import main; main(); print('pydantic' in sys.modules)"
    )
    for flag in ("-C", "--project-dir"):
        command = [sys.executable, "-c", probe.format(flag=flag, root=str(root))]
        subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, env=env, check=True)  # stamps
        second = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, env=env, check=True)
        assert second.stdout.splitlines()[-1] == "False", flag


def test_bad_options_still_get_the_full_clis_error(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    env = {**os.environ, "XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"]}
    assert _cli(root, env=env).returncode == 0
    bad = _cli(root, "--max-desc-len", "-3", env=env)
    assert bad.returncode == 2 and "--max-desc-len" in bad.stderr and "greater than or equal to 0" in bad.stderr
    assert _cli(root, "--no-such-flag", env=env).returncode == 2


# Three kinds whose CRDs depend on each other's modules in the ways a project's do: Harbor reads a constant of
# Ship's module, Crane embeds a model defined in Ship's module, Harbor and Crane share a model of a module that
# defines no kind.
SHIP_MODULE = """
MAX_CREW = 60


class Hook(KubeModel):
    # +kubebuilder:validation:Maximum=10
    tons: int = 1


class ShipSpec(KubeModel):
    # +kubebuilder:validation:Minimum=1
    crew: int = 9
    name: str = ""


class Ship(Resource, group_version=GROUP_VERSION):
    \"\"\"A ship.\"\"\"

    spec: ShipSpec = Field(default_factory=ShipSpec)
"""
COMMON_MODULE = """#!raw
from pyop.api import KubeModel


class Dock(KubeModel):
    # +kubebuilder:validation:MaxLength=20
    label: str = ""
"""
HARBOR_MODULE = """
from .common import Dock
from .ship_types import MAX_CREW


class HarborSpec(KubeModel):
    berths: int = Field(default=3, le=MAX_CREW)
    dock: Dock | None = None


class Harbor(Resource, group_version=GROUP_VERSION):
    \"\"\"A harbor.\"\"\"

    spec: HarborSpec = Field(default_factory=HarborSpec)
"""
CRANE_MODULE = """
from .common import Dock
from .ship_types import Hook


class CraneSpec(KubeModel):
    hook: Hook | None = None
    dock: Dock | None = None
    # +kubebuilder:validation:Minimum=0
    reach: int = 5


class Crane(Resource, group_version=GROUP_VERSION):
    \"\"\"A crane.\"\"\"

    spec: CraneSpec = Field(default_factory=CraneSpec)
"""


def _fleet(root: Path) -> Path:
    return project(
        root,
        {
            "v1/ship_types.py": SHIP_MODULE,
            "v1/common.py": COMMON_MODULE,
            "v1/harbor_types.py": HARBOR_MODULE,
            "v1/crane_types.py": CRANE_MODULE,
        },
    )


def _replace_number(path: Path, prefix: str, rng: random.Random, low: int = 1, high: int = 99) -> None:
    text = path.read_text()
    old = text.split(prefix, 1)[1].split("\n", 1)[0].split(")", 1)[0].split(",", 1)[0]
    path.write_text(text.replace(f"{prefix}{old}", f"{prefix}{rng.randint(low, high)}", 1))


def _v1(root: Path, name: str) -> Path:
    return root / PACKAGE / "api" / "v1" / name


FLEET_EDITS: list[Callable[[Path, random.Random], None]] = [
    lambda root, rng: _replace_number(_v1(root, "ship_types.py"), "MAX_CREW = ", rng, 50, 99),
    lambda root, rng: _replace_number(_v1(root, "ship_types.py"), "Maximum=", rng),
    lambda root, rng: _replace_number(_v1(root, "ship_types.py"), "Minimum=", rng, 0, 9),
    lambda root, rng: _replace_number(_v1(root, "common.py"), "MaxLength=", rng),
    lambda root, rng: _replace_number(_v1(root, "harbor_types.py"), "default=", rng, 1, 49),
    lambda root, rng: _replace_number(_v1(root, "crane_types.py"), "reach: int = ", rng),
    _delete_output,
    _edit_output,
    _touch_everything,
]


@pytest.mark.parametrize("seed", [4, 5, 6])
def test_random_edits_of_interdependent_kinds_give_what_a_full_run_gives(tmp_path: Path, seed: int) -> None:
    """Kinds are rebuilt only where something they are made of changed, and the result is a full run's."""
    rng = random.Random(seed)
    root = _fleet(tmp_path / "p")
    make_manifests(root, ManifestOptions())
    for step in range(10):
        edit = rng.choice(FLEET_EDITS)
        edit(root, rng)
        if incremental.up_to_date(root, RunOptions()) is None:
            make_manifests(root, ManifestOptions())
        fresh = tmp_path / f"fresh{step}"
        shutil.copytree(root, fresh, ignore=shutil.ignore_patterns("config", "__pycache__"))
        make_manifests(fresh, ManifestOptions())
        assert _config(root) == _config(fresh), f"after {FLEET_EDITS.index(edit)} (step {step}, seed {seed})"


def _built_kinds(root: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    from pyop_scaffold.manifests.crd import assemble

    built: list[str] = []
    original = assemble._build_crd

    def spy(group: str, versions: list[Any], *args: Any) -> Any:
        built.append(versions[0].info.kind)
        return original(group, versions, *args)

    monkeypatch.setattr(assemble, "_build_crd", spy)
    make_manifests(root, ManifestOptions())
    monkeypatch.setattr(assemble, "_build_crd", original)
    return sorted(built)


def test_a_change_to_one_kind_rebuilds_what_is_made_of_it_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _fleet(tmp_path / "p")
    assert _built_kinds(root, monkeypatch) == ["Crane", "Harbor", "Ship"]
    crane = _v1(root, "crane_types.py")
    crane.write_text(crane.read_text().replace("reach: int = 5", "reach: int = 6"))
    assert _built_kinds(root, monkeypatch) == ["Crane"]
    ship = _v1(root, "ship_types.py")
    ship.write_text(ship.read_text().replace("crew: int = 9", "crew: int = 8"))  # Crane's Hook and Harbor's bound
    assert _built_kinds(root, monkeypatch) == ["Crane", "Harbor", "Ship"]
    common = _v1(root, "common.py")
    common.write_text(common.read_text().replace("MaxLength=20", "MaxLength=21"))  # no kind's: every CRD
    assert _built_kinds(root, monkeypatch) == ["Crane", "Harbor", "Ship"]
    assert _built_kinds(root, monkeypatch) == []  # nothing changed (the command line's shortcut answers earlier)
    fresh = tmp_path / "fresh"
    shutil.copytree(root, fresh, ignore=shutil.ignore_patterns("config", "__pycache__"))
    make_manifests(fresh, ManifestOptions())
    assert _config(root) == _config(fresh)


def test_check_and_check_compat_build_every_crd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _fleet(tmp_path / "p")
    make_manifests(root, ManifestOptions())
    from pyop_scaffold.manifests.crd import assemble

    built: list[str] = []
    original = assemble._build_crd
    monkeypatch.setattr(
        assemble, "_build_crd", lambda group, versions, *a: built.append(group) or original(group, versions, *a)
    )
    make_manifests(root, ManifestOptions(check_samples=True))
    assert len(built) == 3
