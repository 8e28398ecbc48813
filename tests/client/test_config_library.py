"""kubernetes_asyncio's config loader imported without its generated client, and the process left as it was.

Each case runs in a fresh interpreter: what is asserted is the state of `sys.modules`, which this test process
shares with every other test.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

KUBECONFIG = {
    "apiVersion": "v1",
    "kind": "Config",
    "current-context": "dev",
    "clusters": [{"name": "dev", "cluster": {"server": "https://10.1.2.3:6443", "insecure-skip-tls-verify": True}}],
    "users": [{"name": "dev", "user": {"token": "s3cret"}}],
    "contexts": [{"name": "dev", "context": {"cluster": "dev", "user": "dev", "namespace": "team-a"}}],
}

LOAD_AND_CHECK = """
import asyncio, sys
from pyop.client import load_config

async def loaded():
    config = await load_config(sys.argv[1])
    assert (config.server, config.namespace, config.context, config.verify_ssl) == (
        "https://10.1.2.3:6443", "team-a", "dev", False
    ), config
    assert await config.auth.authorization() == "Bearer s3cret"
"""


def run_python(code: str, kubeconfig: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-c", LOAD_AND_CHECK + textwrap.dedent(code), str(kubeconfig)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr


@pytest.fixture
def kubeconfig(tmp_path: Path) -> Path:
    path = tmp_path / "config"
    path.write_text(yaml.safe_dump(KUBECONFIG))
    return path


def test_loading_imports_neither_the_generated_client_nor_anything_left_behind(kubeconfig: Path) -> None:
    run_python(
        """
        asyncio.run(loaded())
        heavy = ("kubernetes_asyncio", "aiohttp", "urllib3")
        left = sorted(name for name in sys.modules if name.split(".")[0] in heavy)
        assert left == [], left

        # The process can still import and use the whole library afterwards, and load again.
        import kubernetes_asyncio
        assert kubernetes_asyncio.client.CoreV1Api and kubernetes_asyncio.client.ApiClient
        assert kubernetes_asyncio.config.kube_config.load_kube_config
        asyncio.run(loaded())
        """,
        kubeconfig,
    )


def test_a_library_the_process_already_imported_is_used_as_it_is(kubeconfig: Path) -> None:
    run_python(
        """
        import kubernetes_asyncio.config
        from pyop.client.config_library import config_library
        asyncio.run(loaded())
        library = config_library()
        assert library.kube_config is sys.modules["kubernetes_asyncio.config.kube_config"]
        assert library.Configuration is kubernetes_asyncio.client.Configuration
        """,
        kubeconfig,
    )


def test_when_the_lean_import_fails_the_ordinary_import_is_used(kubeconfig: Path) -> None:
    run_python(
        """
        import pyop.client.config_library as config_library

        real = config_library._unexecuted_package
        def fails_on_the_client_package(name):
            if name.endswith(".client"):
                raise ImportError("layout changed")
            return real(name)
        config_library._unexecuted_package = fails_on_the_client_package

        asyncio.run(loaded())
        import kubernetes_asyncio
        assert kubernetes_asyncio.client.CoreV1Api  # the real, executed package, not a left-over shell
        assert config_library.config_library().kube_config is sys.modules["kubernetes_asyncio.config.kube_config"]
        """,
        kubeconfig,
    )


def test_what_the_lean_loader_puts_off_loads_when_used(kubeconfig: Path) -> None:
    """OIDC's requestor (aiohttp) and urllib3 (basic auth) are imported on first use, and the requestor raises
    the same `ConfigException` class that the loader's callers catch."""
    run_python(
        """
        from pyop.client.config_library import config_library
        asyncio.run(loaded())
        library = config_library()
        assert "aiohttp" not in sys.modules and "urllib3" not in sys.modules

        configuration = library.Configuration()
        configuration.username, configuration.password = "ann", "pw"
        assert configuration.get_basic_auth_token() == "Basic YW5uOnB3"
        assert "urllib3" in sys.modules

        requestor = library.kube_config.OpenIDRequestor("id", "secret", "https://issuer.invalid", None)
        assert type(requestor).__name__ == "OpenIDRequestor" and "aiohttp" in sys.modules
        raises = type(requestor).__init__.__globals__["ConfigException"]
        assert raises is library.ConfigException
        # loaded beside the lean loader, and like it not left in sys.modules
        assert sorted(name for name in sys.modules if name.startswith("kubernetes_asyncio")) == []
        """,
        kubeconfig,
    )


def test_the_lean_loader_reads_kubeconfigs_with_libyaml_and_the_application_module_is_untouched(
    kubeconfig: Path,
) -> None:
    run_python(
        """
        import yaml
        from pyop.client.config_library import config_library
        asyncio.run(loaded())
        lean = config_library().kube_config
        if yaml.__with_libyaml__:
            document = "a: [1, 'x', {b: null}]\\nc: !!binary aGk=\\n"
            assert lean.yaml.safe_load(document) == yaml.safe_load(document)
            assert lean.yaml._yaml is yaml and lean.yaml.safe_dump is yaml.safe_dump
            try:
                lean.yaml.safe_load("!!python/object:os.system {}")
            except yaml.constructor.ConstructorError:
                pass  # the safe constructors: no arbitrary Python objects
            else:
                raise AssertionError("an unsafe tag was constructed")
        import kubernetes_asyncio.config.kube_config as own
        assert own is not lean and own.yaml is yaml  # the application's import is the ordinary one
        """,
        kubeconfig,
    )
