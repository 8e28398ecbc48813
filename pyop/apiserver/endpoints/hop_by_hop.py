"""The hop-by-hop headers a proxy drops in both directions.

Go's `httputil.ReverseProxy` list (RFC 9110 section 7.6.1), which kube-apiserver's proxies use: the aggregator's
proxy to an APIService's backend and the pods/services/nodes `proxy` subresources both drop these, plus whatever
names a `Connection` header lists. One list, so the two proxies cannot drift apart.
"""

from __future__ import annotations

from typing import Final

HOP_BY_HOP: Final = frozenset(
    {
        "connection",
        "proxy-connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    }
)
