"""The `pyop` console script: the CLI when its extra is installed, a one-line remedy when it is not.

pyop-kit's base install is an operator's runtime (what its image holds); the command line's packages (typer, the
generators' YAML and schema libraries) come with the `cli` extra. Without them `pyop` says how to get them instead
of printing an ImportError traceback.
"""

from __future__ import annotations

import sys


def main() -> None:
    from pyop_scaffold.cli.noop_manifests import try_noop

    if try_noop(sys.argv[1:]):
        return
    try:
        from pyop_scaffold.cli.app import main as cli_main
    except ImportError as error:
        from pyop_scaffold import __version__

        sys.stderr.write(
            f"Error: the pyop command needs pyop-kit's 'cli' extra ({error.name or error} is not installed): "
            f"pip install 'pyop-kit[cli]~={__version__}'\n"
        )
        raise SystemExit(2) from None
    cli_main()
