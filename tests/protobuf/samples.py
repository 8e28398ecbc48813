"""Built-in objects of many kinds, each exercising a piece of Kubernetes' protobuf mapping, and a containment check.

Every sample is JSON as a client writes it; its protobuf form decodes to Go's JSON of the same struct, which
holds every value of the sample (plus the values Go always writes: `creationTimestamp: null`, empty value
structs, fields without omitempty) and nothing else.
"""

from __future__ import annotations

from typing import Any

SAMPLES: list[dict[str, Any]] = [
    {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "p",
            "namespace": "default",
            "labels": {"a": "b"},
            "annotations": {"x": "y"},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": "rs",
                    "uid": "u-1",
                    "controller": True,
                    "blockOwnerDeletion": False,
                }
            ],
            "creationTimestamp": "2024-05-06T07:08:09Z",
            "deletionGracePeriodSeconds": 0,
            "generation": 3,
            "managedFields": [
                {
                    "manager": "kubectl",
                    "operation": "Update",
                    "apiVersion": "v1",
                    "time": "2024-05-06T07:08:09Z",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:a": {}}}},
                }
            ],
        },
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "nginx",
                    "ports": [{"containerPort": 80, "protocol": "TCP"}],
                    "env": [
                        {"name": "E", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "k", "optional": True}}}
                    ],
                    "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}, "requests": {"cpu": "250m"}},
                    "livenessProbe": {
                        "httpGet": {"path": "/", "port": 8080, "scheme": "HTTP"},
                        "initialDelaySeconds": 3,
                        "periodSeconds": 10,
                    },
                    "readinessProbe": {"tcpSocket": {"port": "http"}},
                    "securityContext": {"runAsUser": -1, "privileged": False},
                }
            ],
            "volumes": [{"name": "v", "configMap": {"name": "cm", "defaultMode": 420}}, {"name": "e", "emptyDir": {}}],
            "activeDeadlineSeconds": 9007199254740993,
            "terminationGracePeriodSeconds": 30,
            "restartPolicy": "Always",
        },
    },
    {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d"},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"a": "b"}},
            "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0}},
        },
    },
    {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s"},
        "data": {"k": "dg==", "empty": ""},
        "type": "Opaque",
        "immutable": False,
    },
    {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c"},
        "data": {"b": "2", "a": "1", "": "e"},
        "binaryData": {"bin": "AAEC"},
    },
    {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "e", "namespace": "n"},
        "eventTime": "2024-05-06T07:08:09.123456Z",
        "reason": "R",
        "action": "A",
        "regarding": {"kind": "Pod", "name": "p"},
        "type": "Normal",
    },
    {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "l"},
        "spec": {"holderIdentity": "me", "leaseDurationSeconds": 15, "renewTime": "2024-05-06T07:08:09.000001Z"},
    },
    {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {"name": "r"},
        "data": {"spec": {"template": {"x": [1, 2.5, None, "s"]}}},
        "revision": 2,
    },
    {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": "m"},
        "webhooks": [
            {
                "name": "a.b.c",
                "clientConfig": {
                    "service": {"namespace": "n", "name": "s", "path": "/m", "port": 443},
                    "caBundle": "Y2E=",
                },
                "rules": [
                    {
                        "operations": ["CREATE"],
                        "apiGroups": [""],
                        "apiVersions": ["v1"],
                        "resources": ["pods"],
                        "scope": "*",
                    }
                ],
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
                "timeoutSeconds": 10,
            }
        ],
    },
    {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "v"},
        "spec": {
            "validations": [{"expression": "object.x > 1", "message": "m"}],
            "variables": [{"name": "n", "expression": "1"}],
        },
    },
    {
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenRequest",
        "metadata": {"name": "t"},
        "spec": {
            "audiences": ["a"],
            "expirationSeconds": 3600,
            "boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "p", "uid": "u"},
        },
    },
    {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "IngressClass",
        "metadata": {"name": "i"},
        "spec": {"controller": "c", "parameters": {"apiGroup": "g", "kind": "K", "name": "n"}},
    },
    {
        "apiVersion": "certificates.k8s.io/v1",
        "kind": "CertificateSigningRequest",
        "metadata": {"name": "c"},
        "spec": {
            "request": "cmVx",
            "signerName": "s",
            "usages": ["digital signature"],
            "extra": {"k": ["v1", "v2"]},
            "uid": "u",
        },
    },
    {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "h"},
        "spec": {
            "scaleTargetRef": {"kind": "Deployment", "name": "d", "apiVersion": "apps/v1"},
            "minReplicas": 1,
            "maxReplicas": 3,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {"name": "cpu", "target": {"type": "AverageValue", "averageValue": "100m"}},
                }
            ],
        },
    },
    {
        "apiVersion": "v1",
        "kind": "Status",
        "metadata": {},
        "status": "Failure",
        "message": "m",
        "reason": "NotFound",
        "details": {"name": "x", "kind": "pods", "causes": [{"reason": "FieldValueInvalid", "field": "a"}]},
        "code": 404,
    },
    {
        "apiVersion": "v1",
        "kind": "APIResourceList",
        "groupVersion": "v1",
        "resources": [
            {
                "name": "pods",
                "singularName": "pod",
                "namespaced": True,
                "kind": "Pod",
                "verbs": ["get", "list"],
                "shortNames": ["po"],
            }
        ],
    },
    {
        "apiVersion": "v1",
        "kind": "ConfigMapList",
        "metadata": {"resourceVersion": "12", "continue": "c", "remainingItemCount": 5},
        "items": [{"metadata": {"name": "a"}, "data": {"k": "v"}}],
    },
    {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "cj"},
        "spec": {
            "schedule": "* * * * *",
            "timeZone": "UTC",
            "jobTemplate": {
                "spec": {
                    "activeDeadlineSeconds": 100,
                    "template": {"spec": {"containers": [{"name": "c", "image": "i"}], "restartPolicy": "Never"}},
                }
            },
        },
    },
    {
        "apiVersion": "flowcontrol.apiserver.k8s.io/v1",
        "kind": "PriorityLevelConfiguration",
        "metadata": {"name": "p"},
        "spec": {
            "type": "Limited",
            "limited": {
                "nominalConcurrencyShares": 0,
                "lendablePercent": 0,
                "limitResponse": {"type": "Queue", "queuing": {"queues": 64, "handSize": 6, "queueLengthLimit": 50}},
            },
        },
    },
    {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "s"},
        "spec": {
            "ports": [{"port": 80, "targetPort": "http"}],
            "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 10800}},
            "ipFamilies": ["IPv4"],
            "clusterIP": "None",
        },
    },
    {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "sc"},
        "provisioner": "p",
        "parameters": {"a": "b"},
        "allowVolumeExpansion": True,
        "mountOptions": ["ro"],
    },
    {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": "pv"},
        "spec": {"capacity": {"storage": "1Gi"}, "hostPath": {"path": "/x"}, "accessModes": ["ReadWriteOnce"]},
    },
]


# Kinds and fields new in Kubernetes 1.33-1.35: their messages come from Helm's client-go 1.35 (Go struct tags).
SAMPLES_1_35: list[dict[str, Any]] = [
    {
        "apiVersion": "resource.k8s.io/v1",  # resource.k8s.io/v1: 1.34
        "kind": "ResourceClaim",
        "metadata": {"name": "gpu", "namespace": "default"},
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "gpu",
                        "exactly": {
                            "deviceClassName": "gpu.example.com",
                            "allocationMode": "ExactCount",
                            "count": 2,
                            "selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}],
                            "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}],
                        },
                    }
                ]
            }
        },
    },
    {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu.example.com"},
        "spec": {"selectors": [{"cel": {"expression": "true"}}], "extendedResourceName": "example.com/gpu"},
    },
    {
        "apiVersion": "networking.k8s.io/v1",  # ServiceCIDR and IPAddress v1: 1.33
        "kind": "ServiceCIDR",
        "metadata": {"name": "extra"},
        "spec": {"cidrs": ["10.96.0.0/16", "fd00::/108"]},
    },
    {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "IPAddress",
        "metadata": {"name": "10.96.0.10"},
        "spec": {"parentRef": {"resource": "services", "namespace": "default", "name": "dns"}},
    },
    {
        "apiVersion": "coordination.k8s.io/v1beta1",  # LeaseCandidate v1beta1: 1.33
        "kind": "LeaseCandidate",
        "metadata": {"name": "c", "namespace": "kube-system"},
        "spec": {
            "leaseName": "kube-controller-manager",
            "binaryVersion": "1.35.0",
            "strategy": "OldestEmulationVersion",
            "pingTime": "2025-01-02T03:04:05.000006Z",
        },
    },
    {
        "apiVersion": "storage.k8s.io/v1",  # VolumeAttributesClass v1: 1.34
        "kind": "VolumeAttributesClass",
        "metadata": {"name": "gold"},
        "driverName": "csi.example.com",
        "parameters": {"iops": "3000"},
    },
    {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "new-fields", "namespace": "default"},
        "spec": {
            "hostnameOverride": "custom-host",  # PodSpec field 41: 1.34
            "containers": [
                {
                    "name": "c",
                    "image": "i",
                    "restartPolicy": "Never",
                    "restartPolicyRules": [  # 1.34
                        {"action": "Restart", "exitCodes": {"operator": "In", "values": [42, 43]}}
                    ],
                }
            ],
        },
        "status": {"observedGeneration": 3, "containerStatuses": [{"name": "c", "stopSignal": "SIGTERM"}]},  # 1.33
    },
    {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d"},
        "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {"spec": {"containers": [{"name": "c"}]}}},
        "status": {"replicas": 2, "terminatingReplicas": 1},  # 1.33
    },
]


# apiextensions.k8s.io/v1 (Helm links its types): a schema with every self-marshalling wrapper (JSON values,
# items, additionalProperties as a bool and as a schema, dependencies as a string list and as a schema).
CRD_SAMPLE: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {
        "group": "example.com",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "additionalPrinterColumns": [{"name": "Size", "type": "integer", "jsonPath": ".spec.size"}],
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "x-kubernetes-preserve-unknown-fields": False,
                        "properties": {
                            "spec": {
                                "type": "object",
                                "required": ["size"],
                                "x-kubernetes-validations": [{"rule": "self.size > 0", "message": "positive"}],
                                "properties": {
                                    "size": {"type": "integer", "default": 3, "minimum": 1, "maximum": 10.5},
                                    "mode": {"type": "string", "enum": ["a", "b", None], "nullable": True},
                                    "tags": {
                                        "type": "array",
                                        "items": {"type": "string", "maxLength": 63},
                                        "x-kubernetes-list-type": "set",
                                    },
                                    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                                    "free": {"type": "object", "additionalProperties": True},
                                    "closed": {"type": "object", "additionalProperties": False},
                                    "pair": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]},
                                    "config": {
                                        "type": "object",
                                        "x-kubernetes-preserve-unknown-fields": True,
                                        "default": {"k": ["v", 1, True, None]},
                                    },
                                },
                                "dependencies": {"mode": ["tags"], "labels": {"required": ["free"]}},
                            },
                            "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                        },
                    }
                },
            }
        ],
        "conversion": {"strategy": "None"},
    },
}


def assert_contains(big: Any, small: Any, path: str = "") -> None:
    """Every value of `small` is in `big` at the same place (None in `small`: JSON null, which Go drops)."""
    if isinstance(small, dict):
        assert isinstance(big, dict), f"{path}: {big!r} is not an object"
        for key, value in small.items():
            if value is None:
                continue
            assert key in big, f"{path}.{key} is missing from {sorted(big)}"
            assert_contains(big[key], value, f"{path}.{key}")
    elif isinstance(small, list):
        assert isinstance(big, list) and len(big) == len(small), f"{path}: {big!r} != {small!r}"
        for index, (have, want) in enumerate(zip(big, small, strict=True)):
            assert_contains(have, want, f"{path}[{index}]")
    else:
        assert big == small and type(big) is type(small), f"{path}: {big!r} != {small!r}"
