"""DNS-1123 names: one set of rules (pyop.api.validation) for the servers' object names and the scaffolder's
groups and domains, as apimachinery's IsDNS1123Label / IsDNS1123Subdomain state them."""

from __future__ import annotations

import pytest

from pyop.api.status import ApiError
from pyop.api.validation import dns1123_label_problems, dns1123_subdomain_problems, qualified_name_problems
from pyop.apiserver.registry.operations import WriteOptions
from pyop.testing import TestAPIServer
from pyop_scaffold.errors import UsageError
from pyop_scaffold.project.names import validate_dns1123_subdomain

SUBDOMAINS_OK = ["a", "example.com", "a-b.c-d", "1.2.3", ".".join(["x" * 63] * 3 + ["x" * 61])]  # 253 characters
SUBDOMAINS_BAD = ["", "A", "a..b", "-a", "a-", "a_b", "example.com\n", "x" * 254, ".a"]


@pytest.mark.parametrize("name", SUBDOMAINS_OK)
def test_valid_subdomains_pass_everywhere(name: str) -> None:
    assert dns1123_subdomain_problems(name) == []
    assert validate_dns1123_subdomain(name, "group") == name


@pytest.mark.parametrize("name", SUBDOMAINS_BAD)
def test_invalid_subdomains_fail_everywhere(name: str) -> None:
    assert dns1123_subdomain_problems(name)
    with pytest.raises(UsageError):
        validate_dns1123_subdomain(name, "group")


def test_a_trailing_newline_is_no_name() -> None:
    # Go's `$` does not match before a final newline; Python's does unless the whole string must match.
    assert dns1123_label_problems("abc\n") and qualified_name_problems("app\n")


async def test_the_server_names_objects_by_the_kinds_rule() -> None:
    server = TestAPIServer()
    namespaces = server.resources.lookup("", "v1", "namespaces")
    configmaps = server.resources.lookup("", "v1", "configmaps")
    with pytest.raises(ApiError) as label:
        server.operations.create(namespaces, "", {"metadata": {"name": "a.b"}}, WriteOptions())
    assert label.value.code == 422 and "RFC 1123 label" in label.value.causes[0].message
    created = server.operations.create(configmaps, "default", {"metadata": {"name": "a.b"}}, WriteOptions())
    assert created["metadata"]["name"] == "a.b"  # a subdomain is a ConfigMap name
    with pytest.raises(ApiError) as subdomain:
        server.operations.create(configmaps, "default", {"metadata": {"name": "A"}}, WriteOptions())
    assert [cause.field for cause in subdomain.value.causes] == ["metadata.name"]
    assert "RFC 1123 subdomain" in subdomain.value.causes[0].message
