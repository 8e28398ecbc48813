"""The generic Kubernetes API server library (k8s.io/apiserver), laid out by what a request meets.

`endpoints` (HTTP and wire formats), `authentication`, `authorization`, `admission`, `registry` (resource types,
strategies, the generic store operations), `storage` (the watch cache and its backends) and `server` (composition).
Both `pyop.testing.TestAPIServer` and aggregated API servers are built on it. Nothing is imported here: the
subpackages pull aiohttp and the testing extra, and importing this package must stay cheap.
"""
