"""The operator image, without a Docker daemon: the Dockerfile's builder stage is run step by step.

The steps are the Dockerfile's own (ARG, FROM, WORKDIR, ENV, COPY and RUN read from the generated file, absolute
paths moved under a scratch root), from a build context filtered by the generated .dockerignore. The install runs
with no index at all: the index-released files come from a folder `pip download` filled from the lock (hash-checked),
pyop-kit from the context's wheels/ only. The base image's Python version is set to this interpreter's, the one
thing changed in the generated files, so the cp3XX wheels of the lock fit the interpreter that runs the steps.
Resolving and downloading need the index (PyPI); without it these tests skip, saying so.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from distributions.environments import REPOSITORY


def _pip(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pip", *args], cwd=cwd, capture_output=True, text=True, timeout=600)


# --- a minimal reading of the generated Dockerfile and .dockerignore ---


def instructions(dockerfile: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order, continuation lines joined, comments dropped."""
    joined = re.sub(r"\\\n", " ", dockerfile)
    result = []
    for line in joined.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            result.append((word.upper(), rest.strip()))
    return result


def builder_stage(dockerfile: str) -> list[tuple[str, str]]:
    """The instructions of the first stage (after the global ARGs), up to the next FROM."""
    steps = instructions(dockerfile)
    start = next(i for i, (word, _) in enumerate(steps) if word == "FROM")
    end = next((i for i in range(start + 1, len(steps)) if steps[i][0] == "FROM"), len(steps))
    return steps[start + 1 : end]


def ignored(path: str, patterns: list[str]) -> bool:
    """Docker's rule: the last pattern that matches the path or one of its parent folders decides
    (`**/name` matches `name` at any depth)."""
    parents = ["/".join(path.split("/")[: i + 1]) for i in range(path.count("/") + 1)]
    verdict = False
    for pattern in patterns:
        glob = pattern.removeprefix("!").rstrip("/")
        if glob.startswith("**/"):
            matched = any(fnmatch.fnmatchcase(p.split("/")[-1], glob[3:]) for p in parents)
        else:
            matched = any(fnmatch.fnmatchcase(p, glob) for p in parents)
        if matched:
            verdict = not pattern.startswith("!")
    return verdict


def build_context(project: Path, target: Path) -> Path:
    """The files `docker build` sends: the project minus what .dockerignore leaves out."""
    lines = (project / ".dockerignore").read_text().splitlines()
    patterns = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    for path in sorted(project.rglob("*")):
        rel = path.relative_to(project).as_posix()
        if path.is_file() and not ignored(rel, patterns):
            (target / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target / rel)
    return target


def run_builder_stage(dockerfile: str, context: Path, fs: Path, env: dict[str, str]) -> None:
    """Run the builder stage's WORKDIR, ENV, COPY and RUN steps with absolute paths under `fs`."""

    def rooted(text: str) -> str:
        return re.sub(r"(?<![\w./-])/(opt|workspace)\b", lambda m: f"{fs}/{m.group(1)}", text)

    cwd = fs
    for word, args in builder_stage(dockerfile):
        if word == "WORKDIR":
            cwd = Path(rooted(args))
            cwd.mkdir(parents=True, exist_ok=True)
        elif word == "ENV":
            for item in shlex.split(args):
                key, _, value = item.partition("=")
                env[key] = rooted(re.sub(r"\$(\w+)", lambda m: env.get(m.group(1), ""), value))
        elif word == "COPY":
            *sources, destination = shlex.split(args)
            target = Path(rooted(destination)) if destination.startswith("/") else cwd / destination
            for source in sources:
                origin = context / source
                if origin.is_dir():
                    shutil.copytree(origin, target, dirs_exist_ok=True)
                else:
                    target.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(origin, target / origin.name)
        elif word == "RUN":
            done = subprocess.run(["bash", "-c", rooted(args)], cwd=cwd, env=env, capture_output=True, text=True)
            assert done.returncode == 0, f"RUN {args}\n{done.stdout}\n{done.stderr}"
        else:
            raise AssertionError(f"the test does not model {word} {args}")


# --- offline: what a generated project names and sends ---


def test_no_generated_file_links_to_or_depends_on_pypis_pyop(tmp_path: Path, pyop) -> None:  # type: ignore[no-untyped-def]
    import tomllib

    from pyop_scaffold import __version__

    project = tmp_path / "op"
    project.mkdir()
    assert pyop("init", "--domain", "example.com", cwd=project).exit_code == 0
    for path in project.rglob("*"):
        if path.is_file():
            text = path.read_text()
            assert "pypi.org/project/pyop/" not in text, path
            assert not re.search(r"[\"']pyop\s*(?:[<>=~!;\[]|[\"'])", text), path
    meta = tomllib.loads((project / "pyproject.toml").read_text())["project"]
    assert meta["dependencies"] == [f"pyop-kit~={__version__}"]
    assert meta["optional-dependencies"]["dev"][0] == f"pyop-kit[cli,testing]~={__version__}"


def test_the_build_context_is_the_lock_the_wheels_and_the_package(tmp_path: Path, pyop) -> None:  # type: ignore[no-untyped-def]
    project = tmp_path / "op"
    project.mkdir()
    assert pyop("init", "--domain", "example.com", cwd=project).exit_code == 0
    (project / "requirements.lock").write_text("")
    (project / "wheels").mkdir()
    (project / "wheels" / "pyop_kit-0.1.0-py3-none-any.whl").write_bytes(b"")
    (project / "op" / "__pycache__").mkdir()
    (project / "op" / "__pycache__" / "main.cpython-311.pyc").write_bytes(b"")
    context = build_context(project, tmp_path / "context")
    sent = sorted(p.relative_to(context).as_posix() for p in context.rglob("*") if p.is_file())
    assert "requirements.lock" in sent and "wheels/pyop_kit-0.1.0-py3-none-any.whl" in sent and "op/main.py" in sent
    assert not [p for p in sent if not p.startswith(("op/", "wheels/")) and p != "requirements.lock"]
    assert not [p for p in sent if "__pycache__" in p]
    copied = [args for word, args in builder_stage((project / "Dockerfile").read_text()) if word == "COPY"]
    assert all((context / shlex.split(args)[0]).exists() for args in copied)


# --- the image ---


@pytest.fixture(scope="module")
def image(index: None, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new project, locked, its builder stage run with no index: the scratch root holding /opt/venv and /opt/app."""
    from typer.testing import CliRunner

    from pyop_scaffold.cli.app import app

    base = tmp_path_factory.mktemp("image")
    project = base / "op"
    project.mkdir()
    runner = CliRunner()
    assert runner.invoke(app, ["init", "--domain", "example.com", "--project-dir", str(project)]).exit_code == 0
    dockerfile = project / "Dockerfile"
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    dockerfile.write_text(re.sub(r"(ARG BASE_IMAGE=python:)3\.\d+", rf"\g<1>{here}", dockerfile.read_text()))
    locked = runner.invoke(app, ["make", "lock", "--platform", "linux/amd64", "--project-dir", str(project)])
    assert locked.exit_code == 0, locked.stderr

    # Every index-released file of the lock, fetched and checked against its hash (pyop-kit is a path in the lock).
    lock = (project / "requirements.lock").read_text()
    released = "".join(block + "\n" for block in re.split(r"\n(?=\S)", lock) if not block.startswith(("#", "./")))
    (base / "released.lock").write_text(released)
    fetched = _pip("download", "-q", "--require-hashes", "--no-deps", "--only-binary=:all:",
                   "-d", str(base / "files"), "-r", str(base / "released.lock"))  # fmt: skip
    assert fetched.returncode == 0, fetched.stderr

    context = build_context(project, base / "context")
    fs = base / "fs"
    host = base / "host-bin"
    host.mkdir()
    (host / "python").symlink_to(sys.executable)
    env = {
        "PATH": f"{host}{os.pathsep}/usr/bin:/bin",
        "HOME": str(base),
        # No index at all, and none of this machine's pip configuration: files from the lock's folder only.
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(base / "files"),
    }
    run_builder_stage(dockerfile.read_text(), context, fs, env)
    return fs


def _venv_python(fs: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": f"{fs}/opt/venv/bin:/usr/bin:/bin", "PYTHONPATH": f"{fs}/opt/app", "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([f"{fs}/opt/venv/bin/python", *args], capture_output=True, text=True, env=env, cwd="/")


def test_the_image_runs_the_operators_main_module(image: Path) -> None:
    done = _venv_python(image, "-m", "op.main", "--help")
    assert done.returncode == 0, done.stderr
    assert "--metrics-bind-address" in done.stdout
    assert _venv_python(image, "-c", "import op.main, pyop.manager").returncode == 0


def test_the_image_holds_the_runtime_only(image: Path) -> None:
    listed = _venv_python(image, "-m", "pip", "list", "--format=json")
    names = {item["name"].lower() for item in json.loads(listed.stdout)}
    assert {"pyop-kit", "pydantic", "aiohttp", "orjson"} <= names
    assert not {"typer", "rich", "cookiecutter", "kubernetes-validate", "pytest", "pytest-asyncio", "pyop"} & names


def test_pyop_kit_in_the_image_is_the_exact_wheel_from_the_build_context(image: Path) -> None:
    from pyop_scaffold import __version__

    [info] = (image / "opt" / "venv").glob("lib/python*/site-packages/pyop_kit-*.dist-info")
    assert info.name == f"pyop_kit-{__version__}.dist-info"
    origin = json.loads((info / "direct_url.json").read_text())
    assert origin["url"].endswith(f"/workspace/wheels/pyop_kit-{__version__}-py3-none-any.whl")


def test_compileall_compiled_the_runtime_and_left_pyops_templates_alone(image: Path) -> None:
    [site] = (image / "opt" / "venv").glob("lib/python*/site-packages")
    assert list((site / "pyop" / "manager").glob("__pycache__/*.pyc"))
    assert list((image / "opt" / "app" / "op").glob("__pycache__/main.*.pyc"))
    templates = site / "pyop_scaffold" / "project_templates"
    jinja = [p for p in templates.rglob("*.py") if "{{" in p.read_text() or "{%" in p.read_text()]
    assert jinja, "pyop's templates hold Jinja in .py files: the exclusion must matter"
    assert not list(templates.rglob("*.pyc"))


# --- a generated project's dependency is pyop-kit, never PyPI's pyop (the OpenID Connect provider) ---


def test_a_generated_project_resolves_to_pyop_kit_and_never_to_the_openid_connect_pyop(
    index: None, tmp_path: Path, pyop
) -> None:  # type: ignore[no-untyped-def]
    project = tmp_path / "op"
    project.mkdir()
    assert pyop("init", "--domain", "example.com", cwd=project).exit_code == 0
    built = _pip("wheel", "--no-deps", "-q", "-w", str(tmp_path / "wheels"), str(REPOSITORY))
    assert built.returncode == 0, built.stderr
    resolved = _pip("install", "--dry-run", "--ignore-installed", "-q", "--report", "-",
                    "--find-links", str(tmp_path / "wheels"), f"{project}[dev]")  # fmt: skip
    assert resolved.returncode == 0, resolved.stderr
    names = {item["metadata"]["name"].lower() for item in json.loads(resolved.stdout)["install"]}
    assert {"pyop-kit", "typer", "pytest-asyncio", "ruff", "mypy"} <= names
    assert "pyop" not in names
    # What the test guards against: the bare name resolves to another project on the index.
    other = _pip("install", "--dry-run", "--ignore-installed", "--no-deps", "-q", "--report", "-", "pyop>=0.1.0")
    assert other.returncode == 0, other.stderr
    [item] = json.loads(other.stdout)["install"]
    assert item["metadata"]["name"].lower() == "pyop" and "OpenID Connect" in item["metadata"].get("summary", "")
