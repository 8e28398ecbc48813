"""`pyop make lock`: the operator image's dependency set, pinned with hashes for every image platform.

The lock text (merging platforms, markers, the digest that tells a hand edit) is tested offline; resolving needs
the index (PyPI) and skips, saying so, without it. The wheel pyop-kit puts in the build context when it was not
installed from an index is tested with a small wheel made here (rebuilt from what RECORD lists).
"""

from __future__ import annotations

import base64
import hashlib
import io
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import pytest
from distributions.environments import REPOSITORY

from pyop_scaffold.image import lockfile
from pyop_scaffold.image.resolve import Pin, platform_tags
from pyop_scaffold.image.self_wheel import SelfWheel, build_from_checkout, rebuild_from_record, running_wheel

BOTH = ("linux/amd64", "linux/arm64")


def _project(tmp_path: Path, pyop, name: str = "op") -> Path:  # type: ignore[no-untyped-def]
    root = tmp_path / name
    root.mkdir()
    assert pyop("init", "--domain", "example.com", cwd=root).exit_code == 0
    return root


def _entries(text: str) -> dict[str, list[str]]:
    """{requirement line: its hashes} of a lock."""
    entries: dict[str, list[str]] = {}
    current = ""
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        if line.startswith("    --hash=sha256:"):
            entries[current].append(line.removeprefix("    --hash=sha256:").rstrip(" \\"))
        else:
            current = line.rstrip(" \\")
            entries[current] = []
    return entries


# --- the lock text (offline) ---


def test_platforms_agreeing_share_one_entry_and_differing_ones_get_a_marker_each() -> None:
    pins = {
        "linux/amd64": [Pin("orjson", "3.13.0", "a" * 64), Pin("six", "1.17.0", "c" * 64), Pin("only", "1", "e" * 64)],
        "linux/arm64": [Pin("orjson", "3.13.0", "b" * 64), Pin("six", "1.16.0", "d" * 64)],
    }
    text = lockfile.render_lock(pins, header_lines=["header"])
    entries = _entries(text)
    assert entries["orjson==3.13.0"] == ["a" * 64, "b" * 64]
    assert entries['six==1.16.0 ; platform_machine == "aarch64"'] == ["d" * 64]
    assert entries['six==1.17.0 ; platform_machine == "x86_64"'] == ["c" * 64]
    assert entries['only==1 ; platform_machine == "x86_64"'] == ["e" * 64]
    assert list(entries) == sorted(entries, key=lambda e: e.split("=")[0])
    reordered = {platform: list(reversed(p)) for platform, p in reversed(pins.items())}
    assert lockfile.render_lock(reordered, header_lines=["header"]) == text


def test_the_digest_tells_a_hand_edited_lock_and_comments_do_not_count() -> None:
    text = lockfile.render_lock({"linux/amd64": [Pin("six", "1.17.0", "c" * 64)]}, header_lines=["a header"])
    assert not lockfile.is_hand_edited(text)
    assert not lockfile.is_hand_edited(text.replace("# a header", "# a better header"))
    assert lockfile.is_hand_edited(text.replace("six==1.17.0", "six==1.16.0"))
    assert lockfile.is_hand_edited("six==1.17.0 --hash=sha256:" + "c" * 64 + "\n")


def test_the_constraints_of_a_lock_are_its_pins_per_platform_without_markers() -> None:
    pins = {
        "linux/amd64": [Pin("six", "1.17.0", "c" * 64), Pin("pyop-kit", "0.1.0", "f" * 64, "./wheels/p.whl")],
        "linux/arm64": [Pin("six", "1.16.0", "d" * 64), Pin("pyop-kit", "0.1.0", "f" * 64, "./wheels/p.whl")],
    }
    entries = lockfile.locked_entries(lockfile.render_lock(pins, header_lines=[]))
    assert lockfile.constraints_for(entries, "linux/amd64", leave_out=set()) == ["six==1.17.0"]
    assert lockfile.constraints_for(entries, "linux/arm64", leave_out={"six"}) == []


def test_platform_tags_reach_down_from_the_images_glibc_and_keep_the_legacy_aliases() -> None:
    tags = platform_tags("linux/arm64")
    assert tags[0] == "manylinux_2_36_aarch64" and "manylinux_2_17_aarch64" in tags
    assert "manylinux2014_aarch64" in tags and not any("x86_64" in t for t in tags)
    assert "manylinux1_x86_64" in platform_tags("linux/amd64")


# --- bad input (offline: refused before anything is resolved) ---


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--platform", "linux/s390x"], "invalid --platform 'linux/s390x'"),
        (["--platform", ""], "invalid --platform ''"),
        (["--python-version", "3"], "invalid --python-version '3'"),
    ],
)
def test_bad_flags_are_one_line_errors_and_write_nothing(tmp_path: Path, pyop, tree, args, expected) -> None:  # type: ignore[no-untyped-def]
    root = _project(tmp_path, pyop)
    before = tree(root)
    result = pyop("make", "lock", *args, cwd=root)
    assert result.exit_code == 2
    assert expected in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert tree(root) == before


def test_a_dependency_on_pypis_pyop_is_refused(tmp_path: Path, pyop, tree) -> None:  # type: ignore[no-untyped-def]
    root = _project(tmp_path, pyop)
    pyproject = root / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text().replace('dependencies = ["pyop-kit~=', 'dependencies = ["pyop>=0.1", "x~=')
    )
    before = tree(root)
    result = pyop("make", "lock", cwd=root)
    assert result.exit_code == 2 and "unrelated OpenID Connect package" in result.stderr
    assert tree(root) == before


def test_a_hand_edited_lock_is_kept_without_force(tmp_path: Path, pyop, tree) -> None:  # type: ignore[no-untyped-def]
    root = _project(tmp_path, pyop)
    text = lockfile.render_lock({"linux/amd64": [Pin("six", "1.17.0", "c" * 64)]}, header_lines=[])
    (root / "requirements.lock").write_text(text.replace("1.17.0", "1.16.0"))
    before = tree(root)
    result = pyop("make", "lock", cwd=root)
    assert result.exit_code == 2
    assert "refusing to overwrite requirements.lock: its entries were edited by hand" in result.stderr
    assert tree(root) == before


def test_outside_a_project_the_command_refuses(tmp_path: Path, pyop) -> None:  # type: ignore[no-untyped-def]
    result = pyop("make", "lock", cwd=tmp_path)
    assert result.exit_code == 2 and "PROJECT" in result.stderr


# --- the wheel of an installed (non-editable) pyop-kit, rebuilt from RECORD (offline) ---


def _tiny_wheel(folder: Path) -> Path:
    """A wheel with a package, a template that is not Python, and a console script."""
    info = "tiny_dist-1.2.3.dist-info"
    files = {
        "tiny/__init__.py": b"VALUE = 1\n",
        "tiny/templates/{{x}}.py": b"{{ not python }}\n",
        f"{info}/METADATA": b"Metadata-Version: 2.1\nName: tiny-dist\nVersion: 1.2.3\n",
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        f"{info}/entry_points.txt": b"[console_scripts]\ntiny = tiny:main\n",
    }
    record = "".join(f"{name},sha256={_urlsafe_sha256(data)},{len(data)}\n" for name, data in files.items())
    record += f"{info}/RECORD,,\n"
    path = folder / "tiny_dist-1.2.3-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
        archive.writestr(f"{info}/RECORD", record)
    return path


def _urlsafe_sha256(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _install(wheel: Path, target: Path) -> metadata.Distribution:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-index",
            "--target",
            str(target),
            str(wheel),
        ],
        check=True,
        capture_output=True,
    )
    return next(iter(metadata.distributions(path=[str(target)])))


def test_a_wheel_rebuilt_from_record_reinstalls_the_same_files_and_is_byte_identical(tmp_path: Path) -> None:
    first = _install(_tiny_wheel(tmp_path), tmp_path / "first")
    rebuilt = rebuild_from_record(first)
    assert rebuilt.filename == "tiny_dist-1.2.3-py3-none-any.whl"
    assert rebuild_from_record(first).content == rebuilt.content
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / rebuilt.filename).write_bytes(rebuilt.content)
    _install(tmp_path / "out" / rebuilt.filename, tmp_path / "second")

    def files(root: Path) -> dict[str, str]:
        return {
            p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in root.rglob("*")
            if p.is_file()
            and "__pycache__" not in p.parts
            and p.name not in ("RECORD", "INSTALLER", "REQUESTED", "direct_url.json")
        }

    assert files(tmp_path / "second") == files(tmp_path / "first")
    assert "tiny/templates/{{x}}.py" in files(tmp_path / "second")


def test_a_changed_installed_file_is_refused_rather_than_packed(tmp_path: Path) -> None:
    from pyop_scaffold.errors import ProjectError

    dist = _install(_tiny_wheel(tmp_path), tmp_path / "site")
    (tmp_path / "site" / "tiny" / "__init__.py").write_text("VALUE = 2\n")
    with pytest.raises(ProjectError, match=r"tiny/__init__.py changed since it was installed"):
        rebuild_from_record(dist)


# --- resolving (needs the index) ---


@pytest.fixture(scope="module")
def frozen_wheel(index: None, tmp_path_factory: pytest.TempPathFactory) -> SelfWheel:
    """pyop-kit's wheel built once from a copy of this checkout, so that edits made to the checkout while the
    tests run cannot change the wheel between two locks."""
    from pyop_scaffold import __version__

    return build_from_checkout(REPOSITORY, "pyop-kit", __version__)


@pytest.fixture(scope="module")
def locked(frozen_wheel: SelfWheel, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A new project locked once (the resolution of two platforms costs seconds), with the frozen pyop-kit wheel."""
    from typer.testing import CliRunner

    from pyop_scaffold.cli.app import app

    root = tmp_path_factory.mktemp("locked") / "op"
    root.mkdir()
    runner = CliRunner()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("pyop_scaffold.commands.lock.running_wheel", lambda: frozen_wheel)
        assert runner.invoke(app, ["init", "--domain", "example.com", "--project-dir", str(root)]).exit_code == 0
        result = runner.invoke(app, ["make", "lock", "--project-dir", str(root)])
        assert result.exit_code == 0, result.stderr
        yield root


def test_a_checkouts_wheel_is_byte_identical_when_built_again(index: None, tmp_path: Path) -> None:
    from distributions.environments import clean_copy

    from pyop_scaffold import __version__

    source = clean_copy(tmp_path / "source")
    first = build_from_checkout(source, "pyop-kit", __version__)
    (source / "pyop" / "__init__.py").touch()  # a newer file time changes nothing
    assert build_from_checkout(source, "pyop-kit", __version__).content == first.content


def test_an_editable_pyop_kit_is_packed_from_its_checkout(index: None) -> None:
    from pyop_scaffold import __version__

    wheel = running_wheel()  # this checkout's own environment holds pyop-kit editable
    assert wheel is not None and wheel.origin == f"built from the checkout {REPOSITORY}"
    assert wheel.filename == f"pyop_kit-{__version__}-py3-none-any.whl"
    with zipfile.ZipFile(io.BytesIO(wheel.content)) as archive:
        names = archive.namelist()
    assert "pyop/manager/__init__.py" in names and "pyop_scaffold/cli/app.py" in names
    assert any(n.startswith("pyop_scaffold/project_templates/init/") for n in names)


def test_the_lock_pins_the_runtime_only_with_a_hash_per_platform_file(locked: Path) -> None:
    entries = _entries((locked / "requirements.lock").read_text())
    names = {e.split("==")[0].split(" ")[0] for e in entries}
    assert {"pydantic", "aiohttp", "orjson", "httptools"} <= names
    assert not {"typer", "rich", "cookiecutter", "kubernetes-validate", "pytest", "pyop"} & names
    assert all(hashes for hashes in entries.values())
    compiled = next(hashes for entry, hashes in entries.items() if entry.startswith("orjson=="))
    assert len(set(compiled)) == 2  # one wheel for amd64, one for arm64


def test_pyop_kit_is_the_wheel_in_the_build_context_named_by_its_hash(locked: Path) -> None:
    from pyop_scaffold import __version__

    entries = _entries((locked / "requirements.lock").read_text())
    [(path, hashes)] = [(e, h) for e, h in entries.items() if "pyop_kit" in e or e.startswith("pyop-kit")]
    assert path == f"./wheels/pyop_kit-{__version__}-py3-none-any.whl"
    assert hashes == [hashlib.sha256((locked / path).read_bytes()).hexdigest()]


def test_locking_again_writes_the_same_bytes(locked: Path, frozen_wheel: SelfWheel, pyop, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    before = {p: p.read_bytes() for p in [locked / "requirements.lock", *(locked / "wheels").iterdir()]}
    monkeypatch.setattr("pyop_scaffold.commands.lock.running_wheel", lambda: frozen_wheel)
    result = pyop("make", "lock", cwd=locked)
    assert result.exit_code == 0, result.stderr
    assert {p: p.read_bytes() for p in before} == before
    assert "updated" not in result.stdout and "created" not in result.stdout and "unchanged" in result.stdout


def test_versions_already_locked_are_kept_and_upgrade_takes_newer_ones(index: None, tmp_path: Path, pyop) -> None:  # type: ignore[no-untyped-def]
    root = _project(tmp_path, pyop)
    pyproject = root / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('dependencies = ["', 'dependencies = ["six", "', 1))
    stale = lockfile.render_lock({"linux/amd64": [Pin("six", "1.16.0", "0" * 64)]}, header_lines=[])
    (root / "requirements.lock").write_text(stale)
    assert pyop("make", "lock", "--platform", "linux/amd64", cwd=root).exit_code == 0
    kept = _entries((root / "requirements.lock").read_text())
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--dest", str(tmp_path / "dl"), "six==1.16.0"],
        check=True,
        capture_output=True,
    )
    [wheel] = (tmp_path / "dl").glob("six-*.whl")
    assert kept["six==1.16.0"] == [hashlib.sha256(wheel.read_bytes()).hexdigest()]  # the version kept, hash fixed
    assert pyop("make", "lock", "--platform", "linux/amd64", "--upgrade", cwd=root).exit_code == 0
    upgraded = _entries((root / "requirements.lock").read_text())
    assert "six==1.16.0" not in upgraded and any(e.startswith("six==") for e in upgraded)
