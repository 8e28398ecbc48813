"""What importing the runtime costs: an operator's start-up imports pyop.manager and pyop.controller, and neither
may pull in kubernetes_asyncio's generated client nor aiohttp's server side, which it needs only later, if at all.
"""

from __future__ import annotations

import subprocess
import sys


def test_importing_the_runtime_leaves_heavy_optional_modules_unimported() -> None:
    code = (
        "import sys, pyop.manager, pyop.controller, pyop.client, pyop.informers; "
        "heavy = ('kubernetes_asyncio', 'aiohttp.web'); "
        "print(' '.join(sorted(name for name in sys.modules if name.startswith(heavy))))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert result.stdout.split() == []
