"""Authorization of the test API server, as kube-apiserver's `--authorization-mode=RBAC` (plus the system:masters
privileged group): the attributes of a request (`attributes`), RBAC's rule evaluation over the stored Roles and
bindings (`rbac`), the default ClusterRoles a cluster bootstraps (`bootstrap`), the review APIs that answer from
the same rules (`reviews`) and the one call the request path makes (`Authorization.authorize`)."""

from pyop.testing.authorization.authorizer import Authorization

__all__ = ["Authorization"]
