"""Delegated authentication and authorization cost: microseconds per request an aggregated server forwards.

What an aggregated API server (pyop.apiserver) does for every request kube-aggregator forwards:
1. `DelegatingAuthenticator`: parse the client's certificate from its DER (`PeerCertificate.from_der`) and verify
   its chain against the request-header CA (`CertificateBundle.verify`), then read its common name. The
   certificate is the test server's front-proxy identity (an ECDSA CA and client certificate).
2. `DelegatingAuthorizer.decide` of a question whose SubjectAccessReview answer is cached (a ServiceAccount's get
   of a namespaced object): the cache lookup every request but the first pays.
A/B: run under each checkout's pyop by turns, `PYTHONPATH=<worktree> python bench/bench_client_certificates.py`.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
import timeit
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding

import pyop
from pyop.apiserver.authentication.delegating import DelegatedUser
from pyop.apiserver.authentication.x509 import CertificateBundle, PeerCertificate
from pyop.apiserver.authorization.attributes import Attributes
from pyop.apiserver.authorization.delegating import DelegatingAuthorizer
from pyop.testing.aggregator.certificates import FrontProxyIdentity


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000, help="requests judged per repetition")
    parser.add_argument("--repeat", type=int, default=5, help="repetitions (the fastest is printed)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        identity = FrontProxyIdentity.generate(Path(folder) / "front-proxy")
    der = x509.load_pem_x509_certificate(identity.client.certificate).public_bytes(Encoding.DER)
    bundle = CertificateBundle(identity.ca.certificate)

    def judged() -> str:
        peer = PeerCertificate.from_der(der)
        failure = bundle.verify(peer)
        return failure or peer.common_name

    assert judged() == "front-proxy-client"
    best = min(timeit.repeat(judged, number=args.calls, repeat=args.repeat)) / args.calls
    print(f"pyop from {Path(pyop.__file__).parent.parent}")
    print(f"client certificate: {best * 1e6:.2f} us per request (parse, verify, name)")
    print(f"cached SubjectAccessReview: {cached_decision(args.calls, args.repeat) * 1e6:.2f} us per request")


class _Cluster:
    async def review_access(self, spec: dict[str, object]) -> dict[str, object]:
        return {"allowed": True}


def cached_decision(calls: int, repeat: int) -> float:
    """CPU seconds per `decide` of a question answered from the cache."""
    authorizer = DelegatingAuthorizer(_Cluster())
    groups = ["system:serviceaccounts", "system:serviceaccounts:team", "system:authenticated"]
    user = DelegatedUser("system:serviceaccount:team:robot", groups, "uid-1")
    attributes = Attributes(user, "get", True, "wardle.example.com", "v1alpha1", "flunders", "", "default", "x")

    async def decide() -> None:
        for _ in range(calls):
            await authorizer.decide(attributes)

    loop = asyncio.new_event_loop()
    best = float("inf")
    for _ in range(repeat):
        began = time.process_time()
        loop.run_until_complete(decide())
        best = min(best, time.process_time() - began)
    loop.close()
    return best / calls


if __name__ == "__main__":
    main()
