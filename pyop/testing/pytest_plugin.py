"""pytest plugin: the ``test_api_server`` fixture (a started ``TestAPIServer`` per test).

Registered as a ``pytest11`` entry point, and importable with
``pytest_plugins = ["pyop.testing.pytest_plugin"]``.

pytest loads entry-point plugins in every run wherever pyop-kit is installed, so this module imports only pytest
at load time: the test server and pytest-asyncio (pyop-kit's ``testing`` extra) load when a test asks for the
fixture. Without pytest-asyncio the fixture fails that one test with the command that installs it, and pytest
itself starts as usual everywhere else.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pyop.testing.server import TestAPIServer

MISSING_EXTRA = (
    "the test_api_server fixture needs pytest-asyncio and the test server's packages: "
    "pip install 'pyop-kit[testing]'"
)


async def _started_server() -> AsyncIterator[TestAPIServer]:
    from pyop.testing.server import TestAPIServer

    async with TestAPIServer() as server:
        yield server


def _fixture() -> Any:
    try:
        import pytest_asyncio
    except ImportError:

        @pytest.fixture
        def test_api_server() -> Iterator[None]:
            pytest.fail(MISSING_EXTRA, pytrace=False)
            yield  # pragma: no cover  (a generator fixture, like the real one)

        return test_api_server
    return pytest_asyncio.fixture(_started_server, name="test_api_server")


test_api_server = _fixture()
