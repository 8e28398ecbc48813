"""What importing the runtime costs: an operator's start-up imports pyop.manager and pyop.controller, and neither
may pull in kubernetes_asyncio's generated client nor aiohttp (its server side is needed only later, if at all;
its client never: the runtime's HTTP is its own), and loading a kubeconfig adds neither, nor urllib3.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_importing_the_runtime_leaves_heavy_optional_modules_unimported(tmp_path: Path) -> None:
    code = (
        "import sys, asyncio, pyop.manager, pyop.controller, pyop.client, pyop.informers; "
        "heavy = ('kubernetes_asyncio', 'aiohttp', 'urllib3'); "
        "print(' '.join(sorted(name for name in sys.modules if name.startswith(heavy)))); "
        "config = asyncio.run(pyop.client.load_config(sys.argv[1])); "
        "print('|', ' '.join(sorted(name for name in sys.modules if name.startswith(heavy))))"
    )
    kubeconfig = tmp_path / "config"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: c, cluster: {server: 'https://10.0.0.1:6443'}}]\n"
        "users: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, str(kubeconfig)], capture_output=True, text=True, timeout=120, check=True
    )
    assert result.stdout.split() == ["|"]
