"""`pyop test-server`: check the flags against the project, then run pyop's test API server in the foreground.

In a project (a PROJECT file in the folder) the server plays the project's Kubernetes version and installs its
CRDs from ``config/crd/bases`` unless ``--crds`` names others; elsewhere it starts with no CRDs. The kubeconfig
goes to ``bin/test-server.kubeconfig`` of the project (``./test-server.kubeconfig`` outside one) and is removed
when the server stops. A file there that this command did not write is left alone unless ``--force``. The server
runs on uvloop when it is installed, as an operator's manager does (`pyop.manager.loop.run`).
"""

from __future__ import annotations

import errno
from collections.abc import Callable, Sequence
from pathlib import Path

from pyop_scaffold.errors import UsageError
from pyop_scaffold.project.config import load_project, project_file

DEFAULT_CRDS = Path("config/crd/bases")
PROJECT_KUBECONFIG = Path("bin/test-server.kubeconfig")
LOOSE_KUBECONFIG = Path("test-server.kubeconfig")


def resolve_options(
    project_dir: Path,
    *,
    crds: Sequence[Path] = (),
    kubeconfig: Path | None = None,
    port: int = 0,
    http: bool = False,
    force: bool = False,
    advertise_address: str | None = None,
) -> object:
    """The server's settings (`pyop.testing.standalone.StandaloneOptions`); a bad value is a `UsageError`."""
    from pyop.api.definitions import PINNED_KUBERNETES_VERSION
    from pyop.testing.standalone import StandaloneOptions, is_test_server_kubeconfig

    in_project = project_file(project_dir).is_file()
    version = load_project(project_dir).effective_kubernetes_version if in_project else PINNED_KUBERNETES_VERSION
    paths = [(path if path.is_absolute() else project_dir / path).resolve() for path in crds]
    for given, path in zip(crds, paths, strict=True):
        if not path.exists():
            raise UsageError(f"--crds {given}: no such file or folder (give a folder of CRD YAML files or one file)")
    if not crds and in_project and (project_dir / DEFAULT_CRDS).is_dir():
        paths = [(project_dir / DEFAULT_CRDS).resolve()]
    if not 0 <= port <= 65535:
        raise UsageError(f"--port {port}: not a TCP port (0 to 65535; 0 picks a free one)")
    if advertise_address is not None:
        from pyop.api.validation import non_special_ip_problems

        problems = non_special_ip_problems(advertise_address)
        if problems:
            raise UsageError(
                f"--advertise-address {advertise_address}: {'; '.join(problems)} (give an IP address that is not "
                "unspecified, loopback or link-local)"
            )
    target = kubeconfig or (PROJECT_KUBECONFIG if in_project else LOOSE_KUBECONFIG)
    target = (target if target.is_absolute() else project_dir / target).resolve()
    if target.is_dir():
        raise UsageError(f"--kubeconfig {target}: is a folder (give a file path)")
    if target.exists() and not force and not is_test_server_kubeconfig(target):
        raise UsageError(
            f"--kubeconfig {target}: the file exists and is not a test server's kubeconfig "
            "(give another path, or --force to replace it)"
        )
    return StandaloneOptions(
        crd_paths=paths,
        kubeconfig=target,
        port=port,
        tls=not http,
        kubernetes_version=version,
        advertise_address=advertise_address,
    )


def serve(options: object, *, echo: Callable[[str], None]) -> None:
    """Run until SIGINT/SIGTERM; a port in use or a bad CRD file is a `UsageError` (nothing is left behind: the
    kubeconfig is written after the CRDs are installed)."""
    from pyop.manager.loop import run
    from pyop.testing.standalone import CRDFileError, StandaloneOptions, run_test_server, usage_text

    assert isinstance(options, StandaloneOptions)

    def ready(server: object, crds: list[str]) -> None:
        echo(usage_text(server, options.kubeconfig, crds))  # type: ignore[arg-type]

    try:
        run(run_test_server(options, ready=ready))  # uvloop when installed
    except CRDFileError as exc:
        raise UsageError(f"--crds: {exc}") from None
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise UsageError(f"--port {options.port}: already in use on 127.0.0.1 (give another, or 0)") from None
        raise
