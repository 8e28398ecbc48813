"""The pytest plugin loads from its entry point and from ``pytest_plugins`` in the same run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_fixture_available_through_pytest_plugins_and_entry_point(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["pyop.testing.pytest_plugin"]\n')
    (tmp_path / "test_uses_server.py").write_text(
        "import aiohttp\n\n"
        "async def test_server(test_api_server):\n"
        "    headers = {'Authorization': f'Bearer {test_api_server.token}'}\n"
        "    async with aiohttp.ClientSession(headers=headers) as session:\n"
        "        url = test_api_server.url + '/api/v1/namespaces/default'\n"
        "        async with session.get(url, ssl=test_api_server.ssl_context()) as response:\n"
        "            assert response.status == 200\n"
    )
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout
