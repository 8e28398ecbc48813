"""Client certificate authentication cost: microseconds per request of judging a front proxy's certificate.

What an aggregated API server (pyop.apiserver's `DelegatingAuthenticator`) does for every request kube-aggregator
forwards: parse the client's certificate from its DER (`PeerCertificate.from_der`) and verify its chain against
the request-header CA (`CertificateBundle.verify`), then read its common name. The certificate is the test
server's front-proxy identity (an ECDSA CA and client certificate). A/B: run under each checkout's pyop by turns,
`PYTHONPATH=<worktree> python bench/bench_client_certificates.py`. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import tempfile
import timeit
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding

import pyop
from pyop.apiserver.authentication.x509 import CertificateBundle, PeerCertificate
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
    print(f"pyop from {Path(pyop.__file__).parent.parent}: {best * 1e6:.2f} us per request (parse, verify, name)")


if __name__ == "__main__":
    main()
