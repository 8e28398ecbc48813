"""Workload status for tests: the test API server runs no workload controllers (nor does envtest), so a Deployment
never becomes available and a Job never finishes unless the test says so. These helpers write the status the
Deployment and Job controllers would write (through the status subresource, so watches, informers and
`metadata.generation` behave as they do on a cluster) and return the stored object.

    server = TestAPIServer()
    ...  # the operator creates a Deployment
    mark_deployment_available(server, "default", "web")
    complete_job(server, "default", "migrate")
"""

from __future__ import annotations

import copy
from typing import Any

from pyop.apiserver.registry.operations import WriteOptions
from pyop.testing.server import TestAPIServer

_MANAGER = "pyop-testing-workloads"


def _write_status(server: TestAPIServer, group: str, plural: str, namespace: str, name: str, status: Any) -> Any:
    """Replace the object's status the way its controller does: an update of the status subresource."""
    resource_type = server.resources.lookup(group, "v1", plural)
    current = copy.deepcopy(server.operations.get(resource_type, namespace, name))
    current["status"] = status(current)
    return server.operations.update(
        resource_type, namespace, name, current, WriteOptions(field_manager=_MANAGER), subresource="status"
    )


def _condition(kind: str, reason: str, message: str, now: str) -> dict[str, str]:
    return {
        "type": kind,
        "status": "True",
        "lastProbeTime"
        if kind in ("Complete", "Failed", "SuccessCriteriaMet", "FailureTarget")
        else "lastUpdateTime": now,
        "lastTransitionTime": now,
        "reason": reason,
        "message": message,
    }


def mark_deployment_available(
    server: TestAPIServer, namespace: str, name: str, *, replicas: int | None = None
) -> dict[str, Any]:
    """Every replica updated, ready and available, with the Available and Progressing conditions of a finished
    rollout (reasons MinimumReplicasAvailable and NewReplicaSetAvailable); observedGeneration caught up."""
    now = server.operations.now()

    def status(deployment: dict[str, Any]) -> dict[str, Any]:
        count = replicas if replicas is not None else (deployment.get("spec") or {}).get("replicas", 1)
        return {
            "observedGeneration": deployment["metadata"].get("generation", 1),
            "replicas": count,
            "updatedReplicas": count,
            "readyReplicas": count,
            "availableReplicas": count,
            "conditions": [
                _condition("Available", "MinimumReplicasAvailable", "Deployment has minimum availability.", now),
                _condition(
                    "Progressing",
                    "NewReplicaSetAvailable",
                    f'ReplicaSet "{name}" has successfully progressed.',
                    now,
                ),
            ],
        }

    result: dict[str, Any] = _write_status(server, "apps", "deployments", namespace, name, status)
    return result


def complete_job(server: TestAPIServer, namespace: str, name: str) -> dict[str, Any]:
    """`spec.completions` (default 1) pods succeeded: SuccessCriteriaMet then Complete, as the Job controller of
    Kubernetes 1.31+ writes them, with start and completion times."""
    now = server.operations.now()

    def status(job: dict[str, Any]) -> dict[str, Any]:
        previous = job.get("status") or {}
        return {
            "startTime": previous.get("startTime", now),
            "completionTime": now,
            "succeeded": (job.get("spec") or {}).get("completions") or 1,
            "ready": 0,
            "terminating": 0,
            "uncountedTerminatedPods": {},
            "conditions": [
                _condition(
                    "SuccessCriteriaMet", "CompletionsReached", "Reached expected number of succeeded pods", now
                ),
                _condition("Complete", "CompletionsReached", "Reached expected number of succeeded pods", now),
            ],
        }

    result: dict[str, Any] = _write_status(server, "batch", "jobs", namespace, name, status)
    return result


def fail_job(
    server: TestAPIServer,
    namespace: str,
    name: str,
    *,
    reason: str = "BackoffLimitExceeded",
    message: str = "Job has reached the specified backoff limit",
) -> dict[str, Any]:
    """The Job failed: FailureTarget then Failed with the controller's reason (BackoffLimitExceeded by default;
    DeadlineExceeded, PodFailurePolicy, ... as the test needs)."""
    now = server.operations.now()

    def status(job: dict[str, Any]) -> dict[str, Any]:
        previous = job.get("status") or {}
        return {
            "startTime": previous.get("startTime", now),
            "failed": ((job.get("spec") or {}).get("backoffLimit", 6)) + 1,
            "ready": 0,
            "terminating": 0,
            "uncountedTerminatedPods": {},
            "conditions": [
                _condition("FailureTarget", reason, message, now),
                _condition("Failed", reason, message, now),
            ],
        }

    result: dict[str, Any] = _write_status(server, "batch", "jobs", namespace, name, status)
    return result
