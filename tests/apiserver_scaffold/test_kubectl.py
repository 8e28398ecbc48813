"""End to end with kubectl: a scaffolded project's aggregated API server behind pyop's test API server, on the
memory, file and etcd3 stores (in_project/kubectl_e2e.py, run as one of the project's own tests)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from apiserver_scaffold.conftest import FLUNDER, ok
from pyop.apiserver.storage.etcd.local import LocalEtcd, find_etcd

IN_PROJECT = Path(__file__).resolve().parent / "in_project" / "kubectl_e2e.py"


@pytest.fixture
def etcd_url() -> Iterator[str | None]:
    """An etcd on loopback, or None (the etcd3 case then does not run, and this test says so by its count)."""
    binary = find_etcd()
    if binary is None:
        if os.environ.get("PYOP_REQUIRE_ETCD") == "1":
            pytest.fail("PYOP_REQUIRE_ETCD=1 but etcd was not found ($PYOP_ETCD or etcd on PATH)")
        yield None
        return
    with LocalEtcd(binary) as etcd:
        yield etcd.url


def test_kubectl_through_the_aggregation_on_every_store(
    project: Path, pyop, project_pytest, kubectl: str, etcd_url: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    ok(pyop("create", "apiserver", *FLUNDER, cwd=project))
    shutil.copy(IN_PROJECT, project / "tests" / "test_kubectl_e2e.py")
    monkeypatch.setenv("KUBECTL", kubectl)
    if etcd_url is not None:
        monkeypatch.setenv("ETCD_URL", etcd_url)
    run = project_pytest(project, "tests/test_kubectl_e2e.py", "-rA")
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    stores = ["memory", "file", *(["etcd3"] if etcd_url else [])]
    passed = "PASSED tests/test_kubectl_e2e.py::"
    for store in stores:
        assert f"{passed}test_kubectl_through_the_aggregator[{store}]" in run.stdout, run.stdout[-3000:]
    assert f"{passed}test_identity_headers_need_the_aggregators_client_certificate" in run.stdout
    assert f"{len(stores) + 1} passed" in run.stdout
