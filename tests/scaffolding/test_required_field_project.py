"""The tutorials' first steps in a scaffolded project: a required spec field (Memcached `size`, CronJob
`schedule`), `make manifests`, then the generated project's own tests, as `make test` runs them.

Also what the scaffold's tests guarantee: tests/test_samples.py accepts a sample that leaves defaults out and
fails one whose field the model does not have; the conversion round trip holds with required fields; mypy
accepts `Memcached(metadata=..., spec=MemcachedSpec(size=1))` and refuses a Memcached without a spec.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

PACKAGE = "memcached_operator"
TYPES = f"{PACKAGE}/api/v1alpha1/memcached_types.py"
SAMPLE = "config/samples/cache_v1alpha1_memcached.yaml"
FOO = "    # +optional\n    foo: str | None = None\n"
MEMCACHED_SPEC = """    # size is the number of memcached pods.
    # +kubebuilder:validation:Minimum=1
    # +kubebuilder:validation:Maximum=3
    size: Int32

    # container_port is the port memcached listens on.
    container_port: Int32 = 11211
"""


def _ok(result) -> None:  # type: ignore[no-untyped-def]
    assert result.exit_code == 0, result.stdout + result.stderr


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1))


def _give_size(root: Path, version: str) -> None:
    """What the Memcached tutorial asks for: `size` (required) and a defaulted port; the sample gives the size."""
    types = root / f"{PACKAGE}/api/{version}/memcached_types.py"
    _edit(types, "from pyop.api import Condition, KubeModel", "from pyop.api import Condition, Int32, KubeModel")
    _edit(types, FOO, MEMCACHED_SPEC)
    _edit(root / f"config/samples/cache_{version}_memcached.yaml", "  foo: bar\n", "  size: 1\n")


@pytest.fixture
def memcached(tmp_path: Path, pyop) -> Path:  # type: ignore[no-untyped-def]
    root = tmp_path / "memcached-operator"
    root.mkdir()
    _ok(pyop("init", "--domain", "example.com", cwd=root))
    _ok(pyop("create", "api", "--group", "cache", "--version", "v1alpha1", "--kind", "Memcached", cwd=root))
    _give_size(root, "v1alpha1")
    return root


def test_required_size_generates_and_the_projects_tests_pass(memcached: Path, pyop, project_pytest) -> None:  # type: ignore[no-untyped-def]
    result = pyop("make", "manifests", "--check", cwd=memcached)
    _ok(result)
    assert "checked 1 sample(s) against their CRDs: all valid" in result.stdout
    crd = yaml.safe_load((memcached / "config/crd/bases/cache.example.com_memcacheds.yaml").read_text())
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert schema["required"] == ["spec"]
    assert schema["properties"]["spec"]["required"] == ["size"]
    assert "default" not in schema["properties"]["spec"]
    # The sample leaves containerPort to its default: the sample test and the controller test both pass.
    tests = project_pytest(memcached)
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert "2 passed" in tests.stdout


def test_the_sample_test_fails_a_field_the_model_does_not_have(memcached: Path, pyop, project_pytest) -> None:  # type: ignore[no-untyped-def]
    """The scaffold's `foo: bar`, left in the sample after `foo` left the model, is caught by `make test`
    (pydantic would drop it silently, and a lenient apply too)."""
    _edit(memcached / SAMPLE, "  size: 1\n", "  size: 1\n  foo: bar\n")
    _ok(pyop("make", "manifests", cwd=memcached))
    tests = project_pytest(memcached, "tests/test_samples.py")
    assert tests.returncode == 1, tests.stdout + tests.stderr
    assert "cache_v1alpha1_memcached.yaml is not kept as written by Memcached: spec.foo: not a field of the model" in (
        tests.stdout
    )


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ("  size: 1\n  containerPort: 11211\n", None),  # defaults spelt out: fine too
        ("  size: '1'\n", "spec.size: '1' became 1"),  # pydantic's coercion is not what the API server accepts
    ],
    ids=["defaults-spelt-out", "string-for-an-integer"],
)
def test_the_sample_test_compares_what_the_sample_writes(
    memcached: Path,
    pyop,  # type: ignore[no-untyped-def]
    project_pytest,  # type: ignore[no-untyped-def]
    spec: str,
    problem: str | None,
) -> None:
    _edit(memcached / SAMPLE, "  size: 1\n", spec)
    _ok(pyop("make", "manifests", cwd=memcached))
    tests = project_pytest(memcached, "tests/test_samples.py")
    if problem is None:
        assert tests.returncode == 0, tests.stdout + tests.stderr
    else:
        assert tests.returncode == 1 and problem in tests.stdout, tests.stdout + tests.stderr


def test_conversion_with_required_fields_round_trips(memcached: Path, pyop, project_pytest) -> None:  # type: ignore[no-untyped-def]
    """Kubebuilder's multi-version step: a second version, a conversion webhook; the scaffolded conversion copies
    the shared fields, so the generated round-trip test holds with `size` required in both versions."""
    _ok(
        pyop(
            "create", "api", "--group", "cache", "--version", "v1beta1", "--kind", "Memcached", "--controller=false",
            cwd=memcached,
        )
    )  # fmt: skip
    _give_size(memcached, "v1beta1")
    _ok(
        pyop(
            "create", "webhook", "--group", "cache", "--version", "v1alpha1", "--kind", "Memcached", "--conversion",
            "--spoke", "v1beta1", cwd=memcached,
        )
    )  # fmt: skip
    _ok(pyop("make", "manifests", "--check", cwd=memcached))
    tests = project_pytest(memcached)
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert "test_v1beta1_round_trips_through_the_hub" in project_pytest(memcached, "--collect-only", "tests").stdout


def test_mypy_wants_a_spec(memcached: Path) -> None:
    """The root's `spec` is required (Kubebuilder's `+required`, no default): mypy accepts a Memcached with a
    spec and refuses one without, as the API server would."""
    (memcached / f"{PACKAGE}/usage.py").write_text(
        "from pyop.api import ObjectMeta\n\n"
        f"from {PACKAGE}.api.v1alpha1.memcached_types import Memcached, MemcachedSpec\n\n"
        'GOOD = Memcached(metadata=ObjectMeta(name="m"), spec=MemcachedSpec(size=1))\n'
        'BAD = Memcached(metadata=ObjectMeta(name="m"))\n'
    )
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", PACKAGE],
        cwd=memcached,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    errors = [line for line in result.stdout.splitlines() if ": error:" in line]
    assert errors == [f'{PACKAGE}/usage.py:6: error: Missing named argument "spec" for "Memcached"  [call-arg]']


CRONJOB_SPEC = """    # The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.
    # +kubebuilder:validation:MinLength=0
    schedule: str

    # Optional deadline in seconds for starting the job if it misses scheduled time for any reason.
    # +kubebuilder:validation:Minimum=0
    # +optional
    starting_deadline_seconds: Int64 | None = None

    # Specifies how to treat concurrent executions of a Job.
    # +optional
    concurrency_policy: Literal["Allow", "Forbid", "Replace"] = "Allow"

    # Specifies the job that will be created when executing a CronJob.
    job_template: JobTemplateSpec
"""
CRONJOB_SAMPLE = """  schedule: "*/1 * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - name: hello
            image: busybox
            args: ["/bin/sh", "-c", "date; echo Hello from the Kubernetes cluster"]
          restartPolicy: OnFailure
"""


def test_cronjob_tutorial_first_step(tmp_path: Path, pyop, project_pytest) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "project"
    root.mkdir()
    _ok(pyop("init", "--domain", "tutorial.kubebuilder.io", cwd=root))
    _ok(pyop("create", "api", "--group", "batch", "--version", "v1", "--kind", "CronJob", cwd=root))
    types = root / "project/api/v1/cron_job_types.py"
    _edit(
        types,
        "from pydantic import Field\nfrom pyop.api import Condition, KubeModel, Resource, ResourceList\n",
        "from typing import Literal\n\nfrom pydantic import Field\n"
        "from pyop.api import Condition, Int64, KubeModel, Resource, ResourceList\n"
        "from pyop.api.builtin_types import JobTemplateSpec\n",
    )
    _edit(types, FOO, CRONJOB_SPEC)
    _edit(root / "config/samples/batch_v1_cronjob.yaml", "  foo: bar\n", CRONJOB_SAMPLE)
    _ok(pyop("make", "manifests", "--check", cwd=root))
    crd = yaml.safe_load((root / "config/crd/bases/batch.tutorial.kubebuilder.io_cronjobs.yaml").read_text())
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert spec["required"] == ["jobTemplate", "schedule"]
    tests = project_pytest(root)
    assert tests.returncode == 0, tests.stdout + tests.stderr
    lint = subprocess.run([sys.executable, "-m", "ruff", "check", "."], cwd=root, capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout + lint.stderr
