"""`certificatesigningrequests/<name>/approval` and the CSR's `status` as kube-apiserver serves them (issue 12:
built-in subresources): csrApprovalStrategy keeps only `status.conditions`, csrStatusStrategy keeps the approval
conditions as stored, kube's condition validation, and the CertificateApproval admission plugin (`approve` on the
`signers` resource named after the signerName, or its domain's `/*`).
"""

from __future__ import annotations

import asyncio
import base64
from typing import Any

import pytest

from pyop.manager.certificates import generate_self_signed_certificate
from pyop.testing import TestAPIServer
from testing_server.helpers import Api, official_client

x509 = pytest.importorskip("cryptography.x509")
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402
from cryptography.x509.oid import NameOID  # noqa: E402

CSRS = "/apis/certificates.k8s.io/v1/certificatesigningrequests"
SIGNER = "example.com/serving"
APPROVED = {"type": "Approved", "status": "True", "reason": "Looks", "message": "fine"}


def pem_request() -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "web")])
    request = x509.CertificateSigningRequestBuilder().subject_name(subject).sign(key, hashes.SHA256())
    return base64.b64encode(request.public_bytes(serialization.Encoding.PEM)).decode()


def pem_certificate(name: str = "web") -> str:
    """A self-signed certificate as a signer writes it to status.certificate (base64 of the PEM)."""
    certificate_pem, _ = generate_self_signed_certificate([name])
    return base64.b64encode(certificate_pem).decode()


async def make_csr(api: Api, name: str = "web") -> dict[str, Any]:
    spec = {"request": pem_request(), "signerName": SIGNER, "usages": ["digital signature", "server auth"]}
    return await api.create_ok(CSRS, {"metadata": {"name": name}, "spec": spec})


def with_conditions(csr: dict[str, Any], *conditions: dict[str, Any], **status: Any) -> dict[str, Any]:
    return {**csr, "status": {**(csr.get("status") or {}), **status, "conditions": list(conditions)}}


def causes(answer: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c["field"], c["message"]) for c in answer["details"]["causes"]]


async def test_discovery_lists_the_approval_subresource(api: Api) -> None:
    status, document = await api.get("/apis/certificates.k8s.io/v1")
    entry = next(r for r in document["resources"] if r["name"] == "certificatesigningrequests/approval")
    assert entry["kind"] == "CertificateSigningRequest" and entry["verbs"] == ["get", "patch", "update"]


async def test_an_approval_sets_the_condition_with_timestamps_and_nothing_else(api: Api) -> None:
    csr = await make_csr(api)
    watch = await api.watch(CSRS, resourceVersion=csr["metadata"]["resourceVersion"])
    try:
        body = with_conditions(csr, APPROVED, certificate="Zm9v")
        body["spec"] = {**csr["spec"], "signerName": "example.com/other"}
        status, approved = await api.put(f"{CSRS}/web/approval", body)
        assert status == 200, approved
        [condition] = approved["status"]["conditions"]
        assert {k: condition[k] for k in APPROVED} == APPROVED
        assert condition["lastUpdateTime"] and condition["lastTransitionTime"]
        assert "certificate" not in approved["status"]
        assert approved["spec"]["signerName"] == SIGNER
        event = await watch.next_of("MODIFIED")
        assert event["object"]["status"]["conditions"][0]["type"] == "Approved"
    finally:
        watch.close()
    status, stored = await api.get(f"{CSRS}/web/approval")
    assert stored["status"]["conditions"] == approved["status"]["conditions"]
    assert any(e.get("subresource") == "approval" for e in stored["metadata"]["managedFields"])


async def test_conditions_are_validated_as_kube_validates_them(api: Api) -> None:
    csr = await make_csr(api)
    denied = {"type": "Denied", "status": "True", "reason": "No"}
    status, answer = await api.put(f"{CSRS}/web/approval", with_conditions(csr, APPROVED, denied))
    assert status == 422, answer
    assert causes(answer) == [
        ("status.conditions", 'Invalid value: "Denied": Approved and Denied conditions are mutually exclusive')
    ]
    status, answer = await api.put(f"{CSRS}/web/approval", with_conditions(csr, {**APPROVED, "status": "False"}))
    assert status == 422, answer
    assert causes(answer) == [("status.conditions[0].status", 'Unsupported value: "False": supported values: "True"')]
    status, approved = await api.put(f"{CSRS}/web/approval", with_conditions(csr, APPROVED))
    assert status == 200, approved
    status, answer = await api.put(f"{CSRS}/web/approval", with_conditions(approved))
    assert status == 422, answer
    assert causes(answer) == [("status.conditions", 'Forbidden: updates may not remove a condition of type "Approved"')]


async def test_the_status_subresource_keeps_the_approval_conditions(api: Api) -> None:
    csr = await make_csr(api)
    status, answer = await api.put(f"{CSRS}/web/status", with_conditions(csr, APPROVED))
    assert status == 422, answer
    assert causes(answer) == [("status.conditions", 'Forbidden: updates may not add a condition of type "Approved"')]
    status, approved = await api.put(f"{CSRS}/web/approval", with_conditions(csr, APPROVED))
    assert status == 200, approved
    [stored] = approved["status"]["conditions"]
    changed = {**stored, "message": "rewritten by the signer"}
    issued = pem_certificate()
    status, signed = await api.put(f"{CSRS}/web/status", with_conditions(approved, changed, certificate=issued))
    assert status == 200, signed
    assert signed["status"]["conditions"] == [stored]  # preserveConditionInstances
    assert signed["status"]["certificate"] == issued
    status, answer = await api.put(f"{CSRS}/web/status", with_conditions(signed, stored, certificate=pem_certificate()))
    assert status == 422, answer
    assert causes(answer) == [("status.certificate", "Forbidden: updates may not modify existing certificate content")]


async def test_a_plain_update_keeps_the_spec(api: Api) -> None:
    csr = await make_csr(api)
    status, updated = await api.put(f"{CSRS}/web", {**csr, "spec": {**csr["spec"], "signerName": "example.com/x"}})
    assert status == 200, updated
    assert updated["spec"]["signerName"] == SIGNER


async def _as_alice(server: TestAPIServer, api: Api, rules: list[dict[str, Any]]) -> None:
    server.add_user("alice-token", "alice")
    role = {"metadata": {"name": "approver"}, "rules": rules}
    roles = "/apis/rbac.authorization.k8s.io/v1/clusterroles"
    status, _ = await api.get(f"{roles}/approver")
    if status == 404:
        await api.create_ok(roles, role)
    else:
        assert (await api.put(f"{roles}/approver", role))[0] == 200
    binding = {
        "metadata": {"name": "approver"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "approver"},
        "subjects": [{"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"}],
    }
    bindings = "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings"
    if (await api.get(f"{bindings}/approver"))[0] == 404:
        await api.create_ok(bindings, binding)


async def test_approving_needs_approve_on_the_signer(server: TestAPIServer, api: Api) -> None:
    csr = await make_csr(api)
    body = with_conditions(csr, APPROVED)
    headers = {"Authorization": "Bearer alice-token"}
    update = {
        "apiGroups": ["certificates.k8s.io"],
        "resources": ["certificatesigningrequests/approval"],
        "verbs": ["update"],
    }
    await _as_alice(server, api, [update])
    async with api.session.put(f"{CSRS}/web/approval", json=body, headers=headers) as response:
        assert response.status == 403
        answer = await response.json()
    assert answer["message"] == (
        'certificatesigningrequests.certificates.k8s.io "web" is forbidden: '
        'user not permitted to approve requests with signerName "example.com/serving"'
    )
    signers = {
        "apiGroups": ["certificates.k8s.io"],
        "resources": ["signers"],
        "resourceNames": ["example.com/*"],
        "verbs": ["approve"],
    }
    await _as_alice(server, api, [update, signers])
    async with api.session.put(f"{CSRS}/web/approval", json=body, headers=headers) as response:
        assert response.status == 200, await response.text()


async def test_the_official_client_approves_through_the_subresource(server: TestAPIServer, api: Api) -> None:
    kubernetes = pytest.importorskip("kubernetes")
    await make_csr(api)
    certificates = kubernetes.client.CertificatesV1Api(official_client(server))
    csr = await asyncio.to_thread(certificates.read_certificate_signing_request_approval, "web")
    condition = kubernetes.client.V1CertificateSigningRequestCondition(
        type="Approved", status="True", reason="ByTest", message="approved by the test"
    )
    csr.status.conditions = [condition]
    approved = await asyncio.to_thread(certificates.replace_certificate_signing_request_approval, "web", csr)
    [stored] = approved.status.conditions
    assert (stored.type, stored.reason) == ("Approved", "ByTest")
    assert stored.last_update_time is not None
