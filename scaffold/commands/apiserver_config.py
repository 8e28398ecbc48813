"""config/apiserver and its wiring into config/default and the Makefile, for `pyop create apiserver`.

config/apiserver holds the aggregated server's Deployment, Service, ServiceAccount, RBAC, cert-manager
certificate and one APIService per group version; all but the APIServices are written once and are the user's
afterwards. config/default includes the folder, and its kustomize replacements do what the namespace transformer
cannot: keep the extension-apiserver-authentication-reader RoleBinding in kube-system (with its subject pointing
at the prefixed ServiceAccount), put the Service's names into the certificate and the Certificate's into the
APIServices' CA-injection annotation.
"""

from __future__ import annotations

import copy
from typing import Any

from pyop_scaffold.commands.project_files import read_text
from pyop_scaffold.edit.insertion import has_marker, insert_at_marker
from pyop_scaffold.edit.yaml_edit import append_unique, merge_replacements
from pyop_scaffold.errors import UsageError
from pyop_scaffold.project.apiserver_layout import CONFIG_DIR, PACKAGE_DIR, APIServerLayout
from pyop_scaffold.project.config import Project
from pyop_scaffold.render.changeset import ChangeSet

DEFAULT_KUSTOMIZATION = "config/default/kustomization.yaml"
KUSTOMIZATION = f"{CONFIG_DIR}/kustomization.yaml"
MAKEFILE = "Makefile"
MAKEFILE_MARKER = "makefile-targets"
MANAGER_DEPLOYMENT = "controller-manager"
PROMETHEUS_KUSTOMIZATION = "config/prometheus/cert-manager/kustomization.yaml"
SAMPLE_TEST = "tests/test_samples.py"
GITIGNORE = ".gitignore"
GITIGNORE_LINES = (
    "# make run-apiserver's self-signed certificate (with its private key) and objects",
    "bin/apiserver-certs/",
    "bin/apiserver-data/",
)
# The files of config/apiserver every group version shares: written once, then the user's (even with --force).
SHARED_FILES = {
    KUSTOMIZATION: "config_kustomization.yaml",
    f"{CONFIG_DIR}/service_account.yaml": "service_account.yaml",
    f"{CONFIG_DIR}/deployment.yaml": "deployment.yaml",
    f"{CONFIG_DIR}/service.yaml": "service.yaml",
    f"{CONFIG_DIR}/auth_delegator_binding.yaml": "auth_delegator_binding.yaml",
    f"{CONFIG_DIR}/auth_reader_binding.yaml": "auth_reader_binding.yaml",
    f"{CONFIG_DIR}/role.yaml": "role.yaml",
    f"{CONFIG_DIR}/role_binding.yaml": "role_binding.yaml",
    f"{CONFIG_DIR}/certificate.yaml": "certificate.yaml",
    f"{CONFIG_DIR}/kustomizeconfig.yaml": "kustomizeconfig.yaml",
}
REPLACEMENTS_COMMENT = (
    "The aggregated API server (config/apiserver): its kube-system RoleBinding kept there with the prefixed\n"
    "ServiceAccount as subject, its certificate's DNS names from its Service, and cert-manager's CA injected into\n"
    "every APIService."
)
MAKEFILE_TARGETS = """\
##@ Aggregated API server

# `make run-apiserver` serves the aggregated API server (python -m {package}.apiserver) from your host on :8443,
# delegating authentication and authorization to the cluster of APISERVER_KUBECONFIG, with a self-signed
# certificate in bin/apiserver-certs and its objects in bin/apiserver-data (APISERVER_ARGS changes either).
APISERVER_KUBECONFIG ?= $(or $(KUBECONFIG),$(HOME)/.kube/config)
APISERVER_ARGS ?= --secure-port=8443 --cert-dir=bin/apiserver-certs \\
\t--storage-backend=file --storage-path=bin/apiserver-data

.PHONY: run-apiserver
run-apiserver: ## Run the aggregated API server from your host against the cluster in APISERVER_KUBECONFIG.
\tmkdir -p bin/apiserver-data
\t$(PYTHON) -m {package}.apiserver --kubeconfig=$(APISERVER_KUBECONFIG) \\
\t\t--authentication-kubeconfig=$(APISERVER_KUBECONFIG) --authorization-kubeconfig=$(APISERVER_KUBECONFIG) \\
\t\t$(APISERVER_ARGS)
"""
SET_MANAGER_IMAGE = "\tcd config/manager && $(KUSTOMIZE) edit set image controller=${IMG}\n"
SET_APISERVER_IMAGE = "\tcd config/apiserver && $(KUSTOMIZE) edit set image controller=${IMG}\n"


def plan_config(changes: ChangeSet, project: Project, layout: APIServerLayout, rendered: dict[str, bytes]) -> list[str]:
    """config/apiserver with the layout's group version's APIService, config/default and the Makefile; the notes
    for the report."""
    for path, template in SHARED_FILES.items():
        if changes.read(path) is None:
            changes.add_file(path, rendered[template])
    changes.add_file(layout.apiservice_file, rendered["apiservice.yaml"])
    append(changes, KUSTOMIZATION, "resources", [layout.apiservice_file.removeprefix(f"{CONFIG_DIR}/")])
    _plan_default(changes)
    prometheus = read_text(changes, PROMETHEUS_KUSTOMIZATION)
    if prometheus is not None:  # the optional component config/default lists commented out
        changes.update_file(PROMETHEUS_KUSTOMIZATION, narrow_deployment_patches(prometheus))
    notes = _plan_makefile(changes, project.package)
    notes += _plan_sample_test(changes, project.package)
    _plan_gitignore(changes)
    notes.append(
        "config/default deploys the aggregated API server with a cert-manager certificate and an etcd sidecar: "
        "install cert-manager in the cluster"
    )
    if project.certificates == "pyop":
        notes.append(
            "the webhooks use pyop's own certificates (certificates: pyop), but the aggregated server's comes from "
            "cert-manager: pyop.apiserver does not make and rotate its own yet"
        )
    return notes


def _plan_default(changes: ChangeSet) -> None:
    text = read_text(changes, DEFAULT_KUSTOMIZATION)
    if text is None:
        raise UsageError(
            f"cannot add to {DEFAULT_KUSTOMIZATION}: the file is missing (was the project made by `pyop init`?)"
        )
    text = narrow_deployment_patches(text)
    if not any(line.strip() == "- ../apiserver" for line in text.splitlines()):
        text = insert_at_marker(text, "defaultresources", "- ../apiserver", source=DEFAULT_KUSTOMIZATION)
    text = merge_replacements(
        text, copy.deepcopy(replacements()), source=DEFAULT_KUSTOMIZATION, comment=REPLACEMENTS_COMMENT
    )
    changes.update_file(DEFAULT_KUSTOMIZATION, text)


def manager_patch_target(project: Project) -> dict[str, str]:
    """The target of a patch of the manager's Deployment: every Deployment of config/default, until the project has
    an aggregated API server, whose Deployment must not get the manager's flags and mounts."""
    if any(entry.apiserver is not None for entry in project.resources):
        return {"kind": "Deployment", "name": MANAGER_DEPLOYMENT}
    return {"kind": "Deployment"}


def narrow_deployment_patches(text: str) -> str:
    """Patches pyop wrote for the manager (`target:` with only `kind: Deployment`) get the manager's name, so they
    leave the apiserver's Deployment alone; other targets stay as they are."""
    lines = text.splitlines(keepends=True)
    after: set[int] = set()
    for index, line in enumerate(lines):
        if line.strip() != "target:":
            continue
        indent = len(line) - len(line.lstrip())
        body: list[int] = []
        for number in range(index + 1, len(lines)):
            following = lines[number]
            if following.strip() and len(following) - len(following.lstrip()) <= indent:
                break
            if following.strip():
                body.append(number)
        if [lines[number].strip() for number in body] == ["kind: Deployment"]:
            after.add(body[0])
    out: list[str] = []
    for index, line in enumerate(lines):
        out.append(line)
        if index in after:
            out.append(line[: len(line) - len(line.lstrip())] + f"name: {MANAGER_DEPLOYMENT}\n")
    return "".join(out)


def replacements() -> list[dict[str, Any]]:
    """kustomize replacements that run after config/default's namespace and name prefix."""
    account = {"kind": "ServiceAccount", "version": "v1", "name": "apiserver"}
    binding = {"kind": "RoleBinding", "name": "apiserver-auth-reader"}
    service = {"kind": "Service", "version": "v1", "name": "apiserver"}
    certificate = {"kind": "Certificate", "group": "cert-manager.io", "version": "v1", "name": "apiserver-serving-cert"}

    def dns(index: int) -> list[dict[str, Any]]:
        return [
            {
                "select": dict(certificate),
                "fieldPaths": [".spec.dnsNames.0", ".spec.dnsNames.1"],
                "options": {"delimiter": ".", "index": index, "create": True},
            }
        ]

    def inject(index: int) -> list[dict[str, Any]]:
        return [
            {
                "select": {"kind": "APIService"},
                "fieldPaths": [".metadata.annotations.[cert-manager.io/inject-ca-from]"],
                "options": {"delimiter": "/", "index": index, "create": True},
            }
        ]

    return [
        {
            "source": {**account, "fieldPath": ".metadata.name"},
            "targets": [{"select": dict(binding), "fieldPaths": [".subjects.0.name"]}],
        },
        {
            "source": {**account, "fieldPath": ".metadata.namespace"},
            "targets": [{"select": dict(binding), "fieldPaths": [".subjects.0.namespace"]}],
        },
        {
            "source": {**binding, "fieldPath": ".metadata.annotations.[pyop.io/namespace]"},
            "targets": [{"select": dict(binding), "fieldPaths": [".metadata.namespace"]}],
        },
        {"source": {**service, "fieldPath": ".metadata.name"}, "targets": dns(0)},
        {"source": {**service, "fieldPath": ".metadata.namespace"}, "targets": dns(1)},
        {"source": {**certificate, "fieldPath": ".metadata.namespace"}, "targets": inject(0)},
        {"source": {**certificate, "fieldPath": ".metadata.name"}, "targets": inject(1)},
    ]


def _plan_makefile(changes: ChangeSet, package: str) -> list[str]:
    """`make run-apiserver` at the Makefile's insertion point, and the apiserver's image set by build-installer."""
    text = read_text(changes, MAKEFILE)
    if text is None:
        return ["no Makefile: add a run-apiserver target that runs python -m " + package + ".apiserver"]
    notes: list[str] = []
    if "run-apiserver:" not in text:
        if not has_marker(text, MAKEFILE_MARKER):  # Makefiles written before the init template had it: at the end
            text = text.rstrip("\n") + f"\n\n# +kubebuilder:scaffold:{MAKEFILE_MARKER}\n"
        text = insert_at_marker(text, MAKEFILE_MARKER, MAKEFILE_TARGETS.format(package=package), source=MAKEFILE)
    if SET_APISERVER_IMAGE not in text:
        if SET_MANAGER_IMAGE in text:
            text = text.replace(SET_MANAGER_IMAGE, SET_MANAGER_IMAGE + SET_APISERVER_IMAGE, 1)
        else:
            notes.append("set the apiserver's image where your Makefile sets the manager's (config/apiserver)")
    changes.update_file(MAKEFILE, text)
    return notes


def _plan_gitignore(changes: ChangeSet) -> None:
    """`make run-apiserver` keeps a private key and its objects under bin/: never to be committed."""
    text = read_text(changes, GITIGNORE)
    if text is None or GITIGNORE_LINES[1] in text.splitlines():
        return
    changes.update_file(GITIGNORE, text.rstrip("\n") + "\n\n" + "\n".join(GITIGNORE_LINES) + "\n")


def _plan_sample_test(changes: ChangeSet, package: str) -> list[str]:
    """tests/test_samples.py of projects made before it looked for models in apiserver/ too: it would find no
    model for the server's samples."""
    text = read_text(changes, SAMPLE_TEST)
    if text is None or f'package / "{PACKAGE_DIR}"' in text:
        return []
    old = (
        f"    import {package}.api as api_root\n\n"
        '    for path in sorted(Path(api_root.__path__[0]).rglob("*_types.py")):\n'
    )
    if old not in text:
        return [f"{SAMPLE_TEST} finds models in {package}/api only: make it look in {package}/{PACKAGE_DIR} too"]
    new = (
        f'    package = PROJECT_ROOT / "{package}"\n'
        '    for path in sorted([*(package / "api").rglob("*_types.py"), '
        '*(package / "apiserver").rglob("*_types.py")]):\n'
    )
    changes.update_file(SAMPLE_TEST, text.replace(old, new, 1))
    return []


def append(changes: ChangeSet, path: str, key: str, values: list[str]) -> None:
    text = read_text(changes, path)
    if text is None:
        raise UsageError(f"cannot add to {path}: the file is missing (was the project made by `pyop init`?)")
    changes.update_file(path, append_unique(text, key, values, source=path))
