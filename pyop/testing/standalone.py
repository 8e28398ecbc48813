"""The test API server as a program: ``pyop test-server`` runs one in the foreground until SIGINT or SIGTERM.

envtest's binaries can be started by hand for ``make run`` and ``kubectl``; this is that for pyop's server. It
installs CRDs (a project's ``config/crd/bases`` by default), writes a kubeconfig that kubectl, the manager and any
client can use (HTTPS with the server's CA and an admin token), tells where it is, and on a signal stops the
server and removes the kubeconfig it wrote (its token and port are dead afterwards). State lives in memory only.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from pyop.api.definitions import PINNED_KUBERNETES_VERSION
from pyop.api.status import ApiError
from pyop.testing.kubeconfig import CONTEXT, write_kubeconfig
from pyop.testing.server import TestAPIServer

__all__ = [
    "CRDFileError",
    "StandaloneOptions",
    "install_crds",
    "is_test_server_kubeconfig",
    "run_test_server",
    "usage_text",
]


@dataclass(frozen=True)
class StandaloneOptions:
    crd_paths: Sequence[Path] = ()
    kubeconfig: Path = Path("test-server.kubeconfig")
    port: int = 0
    tls: bool = True
    kubernetes_version: str = PINNED_KUBERNETES_VERSION
    advertise_address: str | None = None  # kube-apiserver's --advertise-address (default: the host's)
    signals: tuple[signal.Signals, ...] = field(default=(signal.SIGINT, signal.SIGTERM))


def is_test_server_kubeconfig(path: Path) -> bool:
    """Whether ``path`` holds a kubeconfig this command wrote (one context, named ``pyop-test``): only such a
    file is replaced without ``--force``, so a user's own kubeconfig is never overwritten by accident."""
    try:
        config = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError, UnicodeDecodeError):
        return False
    return (
        isinstance(config, dict)
        and config.get("current-context") == CONTEXT
        and [context.get("name") for context in config.get("contexts") or [] if isinstance(context, dict)] == [CONTEXT]
    )


class CRDFileError(ValueError):
    """A CRD file that does not parse or that the server refuses (the message is one line naming the file)."""


def install_crds(server: TestAPIServer, path: Path) -> list[str]:
    """The CRDs of a file, or of every YAML file under a folder (sorted), as `TestAPIServer.load_crds` reads them;
    a file that is not YAML or holds a CRD the server refuses is a `CRDFileError` naming it."""
    files = sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml")) if path.is_dir() else [path]
    names = []
    for file in files:
        try:
            names.extend(server.load_crds(file))
        except (ApiError, yaml.YAMLError, OSError, UnicodeDecodeError) as error:
            raise CRDFileError(f"{file}: {' '.join(str(error).split())}") from error
    return names


def usage_text(server: TestAPIServer, kubeconfig: Path, crds: Sequence[str]) -> str:
    """What the command prints once the server answers: where it is and how to use it."""
    lines = [
        f"pyop test API server (Kubernetes {server.kubernetes_version}) listening on {server.url}",
        f"CRDs installed: {', '.join(crds) if crds else 'none'}",
        f"kubeconfig: {kubeconfig}",
        "",
        "Use it from another shell:",
        f"  export KUBECONFIG={kubeconfig}",
        "  kubectl get crds",
        "  make run        # the manager of this project, against this server",
        "",
        "State is kept in memory only. Stop with Ctrl-C (SIGINT) or SIGTERM.",
    ]
    return "\n".join(lines)


async def run_test_server(
    options: StandaloneOptions, *, ready: Callable[[TestAPIServer, list[str]], None], stop: asyncio.Event | None = None
) -> None:
    """Start a server, install the CRDs, write the kubeconfig, call ``ready``, serve until a signal (or ``stop``)."""
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in options.signals:
        loop.add_signal_handler(signum, stop.set)
    kubeconfig = options.kubeconfig.resolve()
    try:
        async with TestAPIServer(
            tls=options.tls,
            port=options.port,
            kubernetes_version=options.kubernetes_version,
            advertise_address=options.advertise_address,
        ) as server:
            crds = [name for path in options.crd_paths for name in install_crds(server, path)]
            made = [folder for folder in (kubeconfig.parent, *kubeconfig.parent.parents) if not folder.exists()]
            kubeconfig.parent.mkdir(parents=True, exist_ok=True)
            write_kubeconfig(kubeconfig, server.kubeconfig_dict())
            try:
                ready(server, crds)
                await stop.wait()
            finally:
                with contextlib.suppress(OSError):
                    kubeconfig.unlink()
                    for folder in made:  # the folders it made (bin/ of a project), innermost first, if empty
                        folder.rmdir()
    finally:
        for signum in options.signals:
            loop.remove_signal_handler(signum)
