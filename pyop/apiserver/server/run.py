"""`run`: an aggregated API server's main: flags -> Options -> Config -> Server, serving until SIGTERM.

Bad flags or option values print one ``error: ...`` line each and exit with code 2, before anything starts or is
written; a server that cannot start (a port in use, the cluster unreachable) exits 1 with the reason. It serves on
uvloop when uvloop is installed, as an operator's manager runs (`pyop.manager.loop.run`): the loop's own work (socket
reads and writes, scheduling) is a large part of a small request's CPU.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from typing import NoReturn

from pyop.apiserver.groups import APIGroupVersion, ResourceDefinitionError
from pyop.apiserver.server.aggregated import AggregatedServer
from pyop.apiserver.server.config import build_config
from pyop.apiserver.server.flags import FlagError, parse_flags
from pyop.apiserver.server.options import OptionsError, RecommendedOptions, check
from pyop.manager.loop import run as run_loop

log = logging.getLogger("pyop.apiserver")


def options_from_args(argv: Sequence[str], prog: str = "apiserver") -> RecommendedOptions:
    """Parsed and validated options (`FlagError` or `OptionsError` otherwise)."""
    return check(parse_flags(argv, prog=prog))


async def serve(groups: Sequence[APIGroupVersion], options: RecommendedOptions) -> None:
    server = AggregatedServer(groups, await build_config(options))
    await server.serve_until_signal()


def run(groups: Sequence[APIGroupVersion], argv: Sequence[str] | None = None, *, prog: str | None = None) -> NoReturn:
    """Serve ``groups`` with the options of the command line (``argv``, default ``sys.argv[1:]``) until SIGTERM."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    program = prog or (sys.argv[0].rsplit("/", 1)[-1] if sys.argv and sys.argv[0] else "apiserver")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        options = options_from_args(arguments, program)
    except FlagError as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(2)
    except OptionsError as error:
        for problem in error.problems:
            print(f"error: {problem}", file=sys.stderr)
        sys.exit(2)
    try:
        run_loop(serve(groups, options))  # uvloop when installed
    except OptionsError as error:
        for problem in error.problems:
            print(f"error: {problem}", file=sys.stderr)
        sys.exit(2)
    except ResourceDefinitionError as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(2)
    except OSError as error:
        print(f"error: cannot serve: {error}", file=sys.stderr)
        sys.exit(1)
    sys.exit(0)


__all__ = ["options_from_args", "run", "serve"]
