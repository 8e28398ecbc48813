"""Test API server authorization cost: microseconds per decision of the request path's RBAC check.

Three requesters against a server holding the bootstrap policy plus `--bindings` extra RoleBindings and
ClusterRoleBindings (of other subjects, so RBAC has to look at them): the admin token (system:masters, the fast
path every existing test and bench_test_server.py takes), a ServiceAccount allowed by a RoleBinding, and one
denied (every binding visited). Compare with bench_test_server.py's server CPU per write (~150-250 us here).

Run: `python bench/bench_authorization.py [--bindings 50] [--calls 20000]`. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import time
from typing import Any

from pyop.api.status import ApiError
from pyop.apiserver.endpoints.routing import parse_path
from pyop.apiserver.registry.operations import WriteOptions
from pyop.testing import TestAPIServer


def _create(server: TestAPIServer, group: str, plural: str, namespace: str, body: dict[str, Any]) -> None:
    resource_type = server.resources.lookup(group, "v1", plural)
    server.operations.create(resource_type, namespace, body, WriteOptions(field_manager="bench"))


def _binding(name: str, kind: str, role: str, subject: dict[str, str]) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": role},
        "subjects": [subject],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bindings", type=int, default=50, help="extra bindings of other subjects, of each kind")
    parser.add_argument("--calls", type=int, default=20_000, help="decisions timed per requester")
    args = parser.parse_args()
    server = TestAPIServer()
    rbac = "rbac.authorization.k8s.io"
    _create(server, "", "serviceaccounts", "default", {"metadata": {"name": "robot"}})
    _create(
        server,
        rbac,
        "roles",
        "default",
        {
            "metadata": {"name": "cm"},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "update"]}],
        },
    )
    for index in range(args.bindings):
        other = {"kind": "User", "name": f"user-{index}"}
        _create(server, rbac, "rolebindings", "default", _binding(f"other-{index}", "Role", "cm", other))
        _create(server, rbac, "clusterrolebindings", "", _binding(f"other-{index}", "ClusterRole", "view", other))
    robot_subject = {"kind": "ServiceAccount", "name": "robot", "namespace": "default"}
    _create(server, rbac, "rolebindings", "default", _binding("robot", "Role", "cm", robot_subject))
    robot = server.users[server.token_for_service_account("default", "robot")]
    admin = server.users[server.token]
    target = parse_path("/api/v1/namespaces/default/configmaps/settings")
    authorization = server.authorization
    print(f"bootstrap policy + {args.bindings} RoleBindings + {args.bindings} ClusterRoleBindings of other subjects")
    for label, user, verb in (
        ("system:masters (admin token)", admin, "update"),
        ("ServiceAccount, allowed by a RoleBinding", robot, "update"),
        ("ServiceAccount, denied", robot, "delete"),
    ):
        start = time.perf_counter()
        for _ in range(args.calls):
            with contextlib.suppress(ApiError):  # the 403 of the denied case
                authorization.authorize(user, "PUT", "", target, verb, {})
        elapsed = time.perf_counter() - start
        print(f"{label}: {elapsed / args.calls * 1e6:,.2f} us per decision ({args.calls} decisions)")


if __name__ == "__main__":
    main()
