"""The Pod Security Standards' checks (k8s.io/pod-security-admission/policy), on a pod's metadata and spec.

Each check answers None (allowed) or a (reason, detail) pair in kube's words, e.g. `("allowPrivilegeEscalation !=
false", 'container "app" must set securityContext.allowPrivilegeEscalation=false')`. `evaluate(level, version,
metadata, spec)` runs the level's checks in kube's order (baseline checks by ID, then restricted ones by ID; a
baseline check that a restricted one supersedes, such as hostPathVolumes by restrictedVolumes, runs at baseline
only) and returns the failures in that order. Containers are visited as kube's visitor does: init containers,
containers, ephemeral containers. Version gates kept: allowPrivilegeEscalation from 1.8, seccompProfile
(restricted) from 1.19, capabilities (restricted) from 1.22, runAsUser from 1.23, the Windows exemptions from
1.25, probe and lifecycle hosts from 1.34, the user-namespace relaxations are off (kube's default).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

Spec = Mapping[str, Any]
Result = tuple[str, str] | None
LATEST: Final = (1, 10_000)  # newer than any numbered version

_BASELINE_CAPABILITIES: Final = frozenset(
    {
        "AUDIT_WRITE",
        "CHOWN",
        "DAC_OVERRIDE",
        "FOWNER",
        "FSETID",
        "KILL",
        "MKNOD",
        "NET_BIND_SERVICE",
        "SETFCAP",
        "SETGID",
        "SETPCAP",
        "SETUID",
        "SYS_CHROOT",
    }
)
_SAFE_SYSCTLS: Final = frozenset(
    {
        "kernel.shm_rmid_forced",
        "net.ipv4.ip_local_port_range",
        "net.ipv4.tcp_syncookies",
        "net.ipv4.ping_group_range",
        "net.ipv4.ip_unprivileged_port_start",
        "net.ipv4.ip_local_reserved_ports",
        "net.ipv4.tcp_keepalive_time",
        "net.ipv4.tcp_fin_timeout",
        "net.ipv4.tcp_keepalive_intvl",
        "net.ipv4.tcp_keepalive_probes",
        "net.ipv4.tcp_rmem",
        "net.ipv4.tcp_wmem",
    }
)
_SELINUX_TYPES: Final = frozenset({"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"})
_ALLOWED_VOLUMES: Final = (
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "image",
    "persistentVolumeClaim",
    "projected",
    "secret",
)
_RESTRICTED_VOLUMES: Final = (
    "hostPath",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "gitRepo",
    "nfs",
    "iscsi",
    "glusterfs",
    "rbd",
    "flexVolume",
    "cinder",
    "cephfs",
    "flocker",
    "fc",
    "azureFile",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "portworxVolume",
    "scaleIO",
    "storageos",
)
_SECCOMP_POD_ANNOTATION: Final = "seccomp.security.alpha.kubernetes.io/pod"
_SECCOMP_CONTAINER_PREFIX: Final = "container.seccomp.security.alpha.kubernetes.io/"
_APPARMOR_PREFIX: Final = "container.apparmor.security.beta.kubernetes.io/"


def join_quote(items: list[str]) -> str:
    return '"' + '", "'.join(items) + '"' if items else ""


def pluralize(singular: str, plural: str, count: int) -> str:
    return singular if count == 1 else plural


def _containers(spec: Spec) -> Iterator[Mapping[str, Any]]:
    for container in itertools.chain(
        spec.get("initContainers") or (), spec.get("containers") or (), spec.get("ephemeralContainers") or ()
    ):
        if isinstance(container, Mapping):
            yield container


def _security(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    value = obj.get("securityContext")
    return value if isinstance(value, Mapping) else {}


def _names(containers: list[Mapping[str, Any]]) -> list[str]:
    return [str(c.get("name", "")) for c in containers]


def _windows(spec: Spec) -> bool:
    return ((spec.get("os") or {}).get("name")) == "windows"


def _setters(pod: bool, containers: list[str], suffix: str) -> str:
    parts = ["pod"] if pod else []
    if containers:
        parts.append(f"{pluralize('container', 'containers', len(containers))} {join_quote(containers)}")
    return " and ".join(parts) + suffix


def _go_quote(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return f'"{escaped}"'


# --- baseline -----------------------------------------------------------------------------------------


def app_armor_profile(metadata: Mapping[str, Any], spec: Spec) -> Result:
    setters: list[str] = []
    values: set[str] = set()
    pod_profile = _security(spec).get("appArmorProfile")
    if isinstance(pod_profile, Mapping) and pod_profile.get("type") not in ("RuntimeDefault", "Localhost"):
        setters.append("pod")
        values.add(str(pod_profile.get("type", "")))
    bad = []
    for container in _containers(spec):
        profile = _security(container).get("appArmorProfile")
        if isinstance(profile, Mapping) and profile.get("type") not in ("RuntimeDefault", "Localhost"):
            bad.append(str(container.get("name", "")))
            values.add(str(profile.get("type", "")))
    if bad:
        setters.append(f"{pluralize('container', 'containers', len(bad))} {join_quote(bad)}")
    forbidden = sorted(
        f"{key}={_go_quote(str(value))}"
        for key, value in ((metadata.get("annotations") or {}).items())
        if key.startswith(_APPARMOR_PREFIX)
        and value
        and value != "runtime/default"
        and not str(value).startswith("localhost/")
    )
    shown = sorted(values) + forbidden
    if forbidden:
        setters.append(pluralize("annotation", "annotations", len(forbidden)))
    if not setters:
        return None
    reason = pluralize("forbidden AppArmor profile", "forbidden AppArmor profiles", len(shown))
    return reason, f"{' and '.join(setters)} must not set AppArmor profile type to {join_quote(shown)}"


def capabilities_baseline(metadata: Mapping[str, Any], spec: Spec) -> Result:
    bad, added = [], set()
    for container in _containers(spec):
        capabilities = _security(container).get("capabilities")
        if not isinstance(capabilities, Mapping):
            continue
        extra = {str(c) for c in capabilities.get("add") or () if c not in _BASELINE_CAPABILITIES}
        if extra:
            added |= extra
            bad.append(str(container.get("name", "")))
    if not bad:
        return None
    return "non-default capabilities", (
        f"{pluralize('container', 'containers', len(bad))} {join_quote(bad)} must not include "
        f"{join_quote(sorted(added))} in securityContext.capabilities.add"
    )


def host_namespaces(metadata: Mapping[str, Any], spec: Spec) -> Result:
    found = [f"{field}=true" for field in ("hostNetwork", "hostPID", "hostIPC") if spec.get(field) is True]
    return ("host namespaces", ", ".join(found)) if found else None


def host_path_volumes(metadata: Mapping[str, Any], spec: Spec) -> Result:
    names = [str(v.get("name", "")) for v in spec.get("volumes") or () if v.get("hostPath") is not None]
    return ("hostPath volumes", f"{pluralize('volume', 'volumes', len(names))} {join_quote(names)}") if names else None


def host_ports(metadata: Mapping[str, Any], spec: Spec) -> Result:
    bad, ports = [], set()
    for container in _containers(spec):
        used = {int(p.get("hostPort") or 0) for p in container.get("ports") or ()} - {0}
        if used:
            bad.append(str(container.get("name", "")))
            ports |= used
    if not bad:
        return None
    shown = sorted(str(port) for port in ports)  # sets.String order: as strings
    return "hostPort", (
        f"{pluralize('container', 'containers', len(bad))} {join_quote(bad)} {pluralize('uses', 'use', len(bad))} "
        f"{pluralize('hostPort', 'hostPorts', len(shown))} {', '.join(shown)}"
    )


def _handler_hosts(handler: Any) -> list[str]:
    if not isinstance(handler, Mapping):
        return []
    return [
        str(handler[kind]["host"])
        for kind in ("httpGet", "tcpSocket")
        if isinstance(handler.get(kind), Mapping) and handler[kind].get("host")
    ]


def host_probes_and_lifecycle(metadata: Mapping[str, Any], spec: Spec) -> Result:
    bad, hosts = set(), set()
    for container in _containers(spec):
        found = [
            h
            for probe in ("livenessProbe", "readinessProbe", "startupProbe")
            for h in _handler_hosts(container.get(probe))
        ]
        lifecycle = container.get("lifecycle") or {}
        found += [h for hook in ("postStart", "preStop") for h in _handler_hosts(lifecycle.get(hook))]
        if found:
            bad.add(str(container.get("name", "")))
            hosts |= set(found)
    if not bad:
        return None
    names, shown = sorted(bad), sorted(hosts)
    return "probe or lifecycle host", (
        f"{pluralize('container', 'containers', len(names))} {join_quote(names)} "
        f"{pluralize('uses', 'use', len(names))} "
        f"{pluralize('probe or lifecycle host', 'probe or lifecycle hosts', len(shown))} {join_quote(shown)}"
    )


def privileged(metadata: Mapping[str, Any], spec: Spec) -> Result:
    bad = [str(c.get("name", "")) for c in _containers(spec) if _security(c).get("privileged") is True]
    if not bad:
        return None
    containers = f"{pluralize('container', 'containers', len(bad))} {join_quote(bad)}"
    return "privileged", f"{containers} must not set securityContext.privileged=true"


def proc_mount(metadata: Mapping[str, Any], spec: Spec) -> Result:
    bad, kinds = [], set()
    for container in _containers(spec):
        mount = _security(container).get("procMount")
        if mount is not None and mount != "Default":
            bad.append(str(container.get("name", "")))
            kinds.add(str(mount))
    if not bad:
        return None
    return "procMount", (
        f"{pluralize('container', 'containers', len(bad))} {join_quote(bad)} must not set securityContext.procMount "
        f"to {join_quote(sorted(kinds))}"
    )


def se_linux_options(metadata: Mapping[str, Any], spec: Spec) -> Result:
    bad_types: set[str] = set()
    flags = {"user": False, "role": False}

    def valid(options: Any) -> bool:
        if not isinstance(options, Mapping):
            return True
        ok = True
        if str(options.get("type") or "") not in _SELINUX_TYPES:
            ok = False
            bad_types.add(str(options.get("type")))
        for field in ("user", "role"):
            if options.get(field):
                ok, flags[field] = False, True
        return ok

    pod_bad = not valid(_security(spec).get("seLinuxOptions"))
    bad = [str(c.get("name", "")) for c in _containers(spec) if not valid(_security(c).get("seLinuxOptions"))]
    if not pod_bad and not bad:
        return None
    data = []
    if bad_types:
        data.append(f"{pluralize('type', 'types', len(bad_types))} {join_quote(sorted(bad_types))}")
    data += [f"{field} may not be set" for field in ("user", "role") if flags[field]]
    return "seLinuxOptions", _setters(pod_bad, bad, f" set forbidden securityContext.seLinuxOptions: {'; '.join(data)}")


def _valid_seccomp_annotation(value: str) -> bool:
    return value in ("runtime/default", "docker/default") or value.startswith("localhost/")


def seccomp_profile_baseline(metadata: Mapping[str, Any], spec: Spec) -> Result:
    annotations = metadata.get("annotations") or {}
    forbidden = set()
    if _SECCOMP_POD_ANNOTATION in annotations and not _valid_seccomp_annotation(
        str(annotations[_SECCOMP_POD_ANNOTATION])
    ):
        forbidden.add(f"{_SECCOMP_POD_ANNOTATION}={_go_quote(str(annotations[_SECCOMP_POD_ANNOTATION]))}")
    for container in _containers(spec):
        key = _SECCOMP_CONTAINER_PREFIX + str(container.get("name", ""))
        if key in annotations and not _valid_seccomp_annotation(str(annotations[key])):
            forbidden.add(f"{key}={_go_quote(str(annotations[key]))}")
    if forbidden:
        shown = sorted(forbidden)
        return "seccompProfile", f"forbidden {pluralize('annotation', 'annotations', len(shown))} {', '.join(shown)}"
    pod_bad, bad, _, values = _seccomp(spec)
    if not pod_bad and not bad:
        return None
    return "seccompProfile", _setters(
        pod_bad, bad, f" must not set securityContext.seccompProfile.type to {join_quote(values)}"
    )


def _seccomp(spec: Spec) -> tuple[bool, list[str], list[str], list[str]]:
    """(pod sets a bad type, containers that do, containers that set none and are not covered, bad types)."""
    values: set[str] = set()
    pod_profile = _security(spec).get("seccompProfile")
    pod_bad = pod_set = False
    if isinstance(pod_profile, Mapping):
        if pod_profile.get("type") in ("RuntimeDefault", "Localhost"):
            pod_set = True
        else:
            pod_bad = True
            values.add(str(pod_profile.get("type", "")))
    explicit, implicit = [], []
    for container in _containers(spec):
        profile = _security(container).get("seccompProfile")
        if isinstance(profile, Mapping):
            if profile.get("type") not in ("RuntimeDefault", "Localhost"):
                explicit.append(str(container.get("name", "")))
                values.add(str(profile.get("type", "")))
        elif not pod_set:
            implicit.append(str(container.get("name", "")))
    return pod_bad, explicit, implicit, sorted(values)


def sysctls(metadata: Mapping[str, Any], spec: Spec) -> Result:
    names = [str(s.get("name", "")) for s in _security(spec).get("sysctls") or () if s.get("name") not in _SAFE_SYSCTLS]
    return ("forbidden sysctls", ", ".join(names)) if names else None


def windows_host_process(metadata: Mapping[str, Any], spec: Spec) -> Result:
    def host_process(obj: Mapping[str, Any]) -> bool:
        return ((_security(obj).get("windowsOptions") or {}).get("hostProcess")) is True

    bad = [str(c.get("name", "")) for c in _containers(spec) if host_process(c)]
    pod_bad = host_process(spec)
    if not bad and not pod_bad:
        return None
    return "hostProcess", _setters(pod_bad, bad, " must not set securityContext.windowsOptions.hostProcess=true")


# --- restricted ---------------------------------------------------------------------------------------


def allow_privilege_escalation(metadata: Mapping[str, Any], spec: Spec) -> Result:
    bad = [
        str(c.get("name", "")) for c in _containers(spec) if _security(c).get("allowPrivilegeEscalation") is not False
    ]
    if not bad:
        return None
    return "allowPrivilegeEscalation != false", (
        f"{pluralize('container', 'containers', len(bad))} {join_quote(bad)} must set "
        "securityContext.allowPrivilegeEscalation=false"
    )


def capabilities_restricted(metadata: Mapping[str, Any], spec: Spec) -> Result:
    missing_drop, adding, added = [], [], set()
    for container in _containers(spec):
        name = str(container.get("name", ""))
        capabilities = _security(container).get("capabilities")
        if not isinstance(capabilities, Mapping):
            missing_drop.append(name)
            continue
        if "ALL" not in (capabilities.get("drop") or ()):
            missing_drop.append(name)
        extra = {str(c) for c in capabilities.get("add") or () if c != "NET_BIND_SERVICE"}
        if extra:
            adding.append(name)
            added |= extra
    details = []
    if missing_drop:
        details.append(
            f"{pluralize('container', 'containers', len(missing_drop))} {join_quote(missing_drop)} must set "
            'securityContext.capabilities.drop=["ALL"]'
        )
    if adding:
        details.append(
            f"{pluralize('container', 'containers', len(adding))} {join_quote(adding)} must not include "
            f"{join_quote(sorted(added))} in securityContext.capabilities.add"
        )
    return ("unrestricted capabilities", "; ".join(details)) if details else None


def restricted_volumes(metadata: Mapping[str, Any], spec: Spec) -> Result:
    bad, kinds = [], set()
    for volume in spec.get("volumes") or ():
        if any(volume.get(source) is not None for source in _ALLOWED_VOLUMES):
            continue
        bad.append(str(volume.get("name", "")))
        kinds.add(next((kind for kind in _RESTRICTED_VOLUMES if volume.get(kind) is not None), "unknown"))
    if not bad:
        return None
    shown = sorted(kinds)
    return "restricted volume types", (
        f"{pluralize('volume', 'volumes', len(bad))} {join_quote(bad)} {pluralize('uses', 'use', len(bad))} "
        f"{pluralize('restricted volume type', 'restricted volume types', len(shown))} {join_quote(shown)}"
    )


def run_as_non_root(metadata: Mapping[str, Any], spec: Spec) -> Result:
    pod_value = _security(spec).get("runAsNonRoot")
    pod_bad, pod_ok = pod_value is False, pod_value is True
    explicit, implicit = [], []
    for container in _containers(spec):
        value = _security(container).get("runAsNonRoot")
        if value is not None:
            if value is False:
                explicit.append(str(container.get("name", "")))
        elif not pod_ok:
            implicit.append(str(container.get("name", "")))
    if pod_bad or explicit:
        return "runAsNonRoot != true", _setters(pod_bad, explicit, " must not set securityContext.runAsNonRoot=false")
    if implicit:
        return "runAsNonRoot != true", (
            f"pod or {pluralize('container', 'containers', len(implicit))} {join_quote(implicit)} must set "
            "securityContext.runAsNonRoot=true"
        )
    return None


def run_as_user(metadata: Mapping[str, Any], spec: Spec) -> Result:
    pod_bad = _security(spec).get("runAsUser") == 0
    bad = [str(c.get("name", "")) for c in _containers(spec) if _security(c).get("runAsUser") == 0]
    if not pod_bad and not bad:
        return None
    return "runAsUser=0", _setters(pod_bad, bad, " must not set runAsUser=0")


def seccomp_profile_restricted(metadata: Mapping[str, Any], spec: Spec) -> Result:
    pod_bad, explicit, implicit, values = _seccomp(spec)
    if pod_bad or explicit:
        return "seccompProfile", _setters(
            pod_bad, explicit, f" must not set securityContext.seccompProfile.type to {join_quote(values)}"
        )
    if implicit:
        return "seccompProfile", (
            f"pod or {pluralize('container', 'containers', len(implicit))} {join_quote(implicit)} must set "
            'securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"'
        )
    return None


# --- the registry ---------------------------------------------------------------------------------------

CheckFn = Callable[[Mapping[str, Any], Spec], Result]


@dataclass(frozen=True)
class Check:
    id: str
    restricted: bool
    function: CheckFn
    since: tuple[int, int] = (1, 0)
    overlap: bool = False  # a baseline check superseded by a restricted one: baseline level only
    windows_exempt_since: tuple[int, int] | None = None


CHECKS: Final = (
    Check("appArmorProfile", False, app_armor_profile),
    Check("capabilities_baseline", False, capabilities_baseline, overlap=True),
    Check("hostNamespaces", False, host_namespaces),
    Check("hostPathVolumes", False, host_path_volumes, overlap=True),
    Check("hostPorts", False, host_ports),
    Check("hostProbesAndHostLifecycle", False, host_probes_and_lifecycle, since=(1, 34)),
    Check("privileged", False, privileged),
    Check("procMount", False, proc_mount),
    Check("seLinuxOptions", False, se_linux_options),
    Check("seccompProfile_baseline", False, seccomp_profile_baseline, overlap=True),
    Check("sysctls", False, sysctls),
    Check("windowsHostProcess", False, windows_host_process),
    Check("allowPrivilegeEscalation", True, allow_privilege_escalation, since=(1, 8), windows_exempt_since=(1, 25)),
    Check("capabilities_restricted", True, capabilities_restricted, since=(1, 22), windows_exempt_since=(1, 25)),
    Check("restrictedVolumes", True, restricted_volumes),
    Check("runAsNonRoot", True, run_as_non_root),
    Check("runAsUser", True, run_as_user, since=(1, 23)),
    Check("seccompProfile_restricted", True, seccomp_profile_restricted, since=(1, 19), windows_exempt_since=(1, 25)),
)


def evaluate(level: str, version: tuple[int, int], metadata: Mapping[str, Any], spec: Spec) -> list[tuple[str, str]]:
    """The failures of ``level`` (baseline or restricted) at ``version``, in kube's order; privileged: none."""
    if level not in ("baseline", "restricted"):
        return []
    failures = []
    for check in CHECKS:
        if version < check.since or (check.restricted and level != "restricted"):
            continue
        if check.overlap and level == "restricted":
            continue
        if check.windows_exempt_since and version >= check.windows_exempt_since and _windows(spec):
            continue
        result = check.function(metadata, spec)
        if result is not None:
            failures.append(result)
    return failures


def forbidden_detail(failures: list[tuple[str, str]]) -> str:
    """AggregateCheckResult.ForbiddenDetail: `reason (detail), reason`."""
    return ", ".join(f"{reason} ({detail})" if detail else reason for reason, detail in failures)


def forbidden_reason(failures: list[tuple[str, str]]) -> str:
    return ", ".join(reason for reason, _ in failures)


__all__ = ["CHECKS", "LATEST", "evaluate", "forbidden_detail", "forbidden_reason"]
