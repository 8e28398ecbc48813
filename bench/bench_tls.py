"""Server CPU of a TLS handshake (and one request and answer on it) with the test server's serving context.

An operator's client opens a connection per request in flight, so a converge (bench_controller.py) starts with
dozens of handshakes on the server's one core. This measures the server's side only, in memory (no sockets):
``ServingCertificate.server_context`` of this checkout, and with ``--baseline`` of another checkout's
``pyop/apiserver/server/tls.py`` (a git worktree), interleaved in rounds in one process, against a client context
as Python's default (what pyop's client uses). CPU per handshake is process time around the server's calls; the
10th percentile per round is printed (the machine is shared: other processes only ever add).

    python bench/bench_tls.py --baseline /tmp/watch-base --rounds 9
"""

from __future__ import annotations

import argparse
import importlib.util
import ssl
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent.parent


def load_tls(root: Path, name: str) -> ModuleType:
    """A checkout's pyop/apiserver/server/tls.py as its own module (its imports resolve to this environment)."""
    spec = importlib.util.spec_from_file_location(name, root / "pyop/apiserver/server/tls.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def handshake(server_context: ssl.SSLContext, client_context: ssl.SSLContext) -> tuple[int, str]:
    """Server process-time nanoseconds of one handshake plus a 700-byte request and a 1,500-byte answer; the
    suite negotiated."""
    s_in, s_out, c_in, c_out = ssl.MemoryBIO(), ssl.MemoryBIO(), ssl.MemoryBIO(), ssl.MemoryBIO()
    client = client_context.wrap_bio(c_in, c_out, server_hostname="127.0.0.1")
    began = time.process_time_ns()
    server = server_context.wrap_bio(s_in, s_out, server_side=True)
    spent = time.process_time_ns() - began
    client_done = server_done = False
    while not (client_done and server_done):
        if not client_done:
            try:
                client.do_handshake()
                client_done = True
            except ssl.SSLWantReadError:
                pass
        s_in.write(c_out.read())
        if not server_done:
            began = time.process_time_ns()
            try:
                server.do_handshake()
                server_done = True
            except ssl.SSLWantReadError:
                pass
            spent += time.process_time_ns() - began
        c_in.write(s_out.read())
    client.write(b"x" * 700)
    s_in.write(c_out.read())
    began = time.process_time_ns()
    server.read(65536)
    server.write(b"y" * 1500)
    spent += time.process_time_ns() - began
    c_in.write(s_out.read())
    client.read(65536)
    cipher = server.cipher()
    return spent, cipher[0] if cipher else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", type=Path, help="another checkout (e.g. a git worktree) to compare with")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--handshakes", type=int, default=200, help="handshakes per side per round")
    args = parser.parse_args()
    this = load_tls(HERE, "tls_this")
    certificate = this.ServingCertificate.generate()
    contexts: dict[str, Any] = {"this": certificate.server_context(Path(tempfile.mkdtemp()))}
    if args.baseline:
        base = load_tls(args.baseline, "tls_base")
        pair = base.ServingCertificate(certificate.certificate_pem, certificate.key_pem)
        contexts = {"base": pair.server_context(Path(tempfile.mkdtemp())), **contexts}
    client = certificate.client_context()
    p10: dict[str, list[float]] = {name: [] for name in contexts}
    for _ in range(args.rounds):
        for name, context in contexts.items():
            times = sorted(handshake(context, client)[0] for _ in range(args.handshakes))
            p10[name].append(times[len(times) // 10] / 1000)
    for name, context in contexts.items():
        suite = handshake(context, client)[1]
        print(
            f"{name:>4} ({suite}): server us per handshake + 1 request, 10th percentile, median of rounds: "
            f"{statistics.median(p10[name]):.1f}"
        )
    if "base" in p10:
        ratios = [b / t for b, t in zip(p10["base"], p10["this"], strict=True)]
        print(f"base/this per round: {' '.join(f'x{r:.3f}' for r in ratios)}; median x{statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()
