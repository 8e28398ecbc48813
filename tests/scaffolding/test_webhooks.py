"""`pyop create webhook` end to end: scaffold, generate, build with kustomize, validate, run the project's tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

KUBERNETES_VERSION = "1.32"
CERT_MANAGER_KINDS = {"Certificate", "Issuer"}  # CRDs of cert-manager: no schema in kubernetes-validate

CAPTAIN = ("--group", "crew", "--version", "v1", "--kind", "Captain")
FIRST_MATE = ("--group", "crew", "--version", "v1", "--kind", "FirstMate")
SAILOR = ("--group", "crew", "--version", "v1", "--kind", "Sailor")


def _ok(result) -> None:  # type: ignore[no-untyped-def]
    assert result.exit_code == 0, result.stdout + result.stderr


def _scaffold(root: Path, pyop) -> Path:  # type: ignore[no-untyped-def]
    """Captain: defaulting + validation; FirstMate: conversion v1 (hub) <-> v2; Sailor: custom paths."""
    root.mkdir(parents=True)
    _ok(pyop("init", "--domain", "example.com", cwd=root))
    for api in (CAPTAIN, FIRST_MATE, SAILOR, ("--group", "crew", "--version", "v2", "--kind", "FirstMate")):
        _ok(pyop("create", "api", *api, cwd=root))
    _ok(pyop("create", "webhook", *CAPTAIN, "--defaulting", "--programmatic-validation", cwd=root))
    _ok(pyop("create", "webhook", *FIRST_MATE, "--conversion", "--spoke", "v2", cwd=root))
    _ok(
        pyop(
            "create",
            "webhook",
            *SAILOR,
            "--defaulting",
            "--defaulting-path",
            "/custom-mutate-sailor",
            "--programmatic-validation",
            "--validation-path",
            "/custom-validate-sailor",
            cwd=root,
        )
    )
    return root


@pytest.fixture
def scaffolded(tmp_path: Path, pyop) -> Path:  # type: ignore[no-untyped-def]
    return _scaffold(tmp_path / "fleet-operator", pyop)


@pytest.fixture
def project(scaffolded: Path, pyop) -> Path:  # type: ignore[no-untyped-def]
    _ok(pyop("make", "manifests", cwd=scaffolded))
    return scaffolded


def _build(kubectl: str, folder: Path) -> list[dict]:  # type: ignore[type-arg]
    built = subprocess.run([kubectl, "kustomize", str(folder)], capture_output=True, text=True, check=False)
    assert built.returncode == 0, built.stderr
    return [d for d in yaml.safe_load_all(built.stdout) if d]


def test_project_file_records_the_webhooks(scaffolded: Path) -> None:
    data = yaml.safe_load((scaffolded / "PROJECT").read_text())
    hooks = {(r["kind"], r["version"]): r.get("webhooks") for r in data["resources"]}
    assert hooks == {
        ("Captain", "v1"): {"webhookVersion": "v1", "defaulting": True, "validation": True},
        ("FirstMate", "v1"): {"webhookVersion": "v1", "conversion": True, "spoke": ["v2"]},
        ("FirstMate", "v2"): None,
        ("Sailor", "v1"): {
            "webhookVersion": "v1",
            "defaulting": True,
            "defaultingPath": "/custom-mutate-sailor",
            "validation": True,
            "validationPath": "/custom-validate-sailor",
        },
    }


def test_webhook_module_carries_kubebuilders_markers(scaffolded: Path) -> None:
    source = (scaffolded / "fleet_operator/webhook/v1/captain_webhook.py").read_text()
    assert (
        "# +kubebuilder:webhook:path=/mutate-crew-example-com-v1-captain,mutating=true,failurePolicy=fail,"
        "sideEffects=None,groups=crew.example.com,resources=captains,verbs=create;update,versions=v1,"
        "name=mcaptain-v1.kb.io,admissionReviewVersions=v1\n"
    ) in source
    assert (
        "# +kubebuilder:webhook:path=/validate-crew-example-com-v1-captain,mutating=false,failurePolicy=fail,"
        "sideEffects=None,groups=crew.example.com,resources=captains,verbs=create;update,versions=v1,"
        "name=vcaptain-v1.kb.io,admissionReviewVersions=v1\n"
    ) in source
    assert "class CaptainDefaulter:" in source and "class CaptainValidator:" in source
    sailor = (scaffolded / "fleet_operator/webhook/v1/sailor_webhook.py").read_text()
    assert "path=/custom-mutate-sailor,mutating=true" in sailor
    assert '.with_defaulting_path("/custom-mutate-sailor")' in sailor
    assert '.with_validation_path("/custom-validate-sailor")' in sailor
    conversion = (scaffolded / "fleet_operator/webhook/v1/first_mate_webhook.py").read_text()
    assert "+kubebuilder:webhook:" not in conversion
    assert ".with_conversion(hub=FirstMate, spokes=[FirstMateV2])" in conversion
    for package in ("fleet_operator/webhook/__init__.py", "fleet_operator/webhook/v1/__init__.py"):
        assert (scaffolded / package).is_file()


def test_conversion_marks_the_hub_and_gives_the_spoke_its_methods(scaffolded: Path) -> None:
    hub = (scaffolded / "fleet_operator/api/v1/first_mate_types.py").read_text()
    assert "from pyop.webhook import Hub\n" in hub
    assert "# +kubebuilder:storageversion\nclass FirstMate(\n    Resource,\n    Hub,\n" in hub
    spoke = (scaffolded / "fleet_operator/api/v2/first_mate_types.py").read_text()
    assert "from fleet_operator.api.v1.first_mate_types import FirstMate as HubFirstMate\n" in spoke
    assert "    def convert_to(self) -> HubFirstMate:" in spoke
    assert "    def convert_from(cls, hub: HubFirstMate) -> Self:" in spoke
    assert "+kubebuilder:storageversion" not in spoke
    # Only the kind with conversion is touched.
    assert "Hub" not in (scaffolded / "fleet_operator/api/v1/captain_types.py").read_text()


def test_main_registers_webhooks_unless_disabled(scaffolded: Path) -> None:
    main = (scaffolded / "fleet_operator/main.py").read_text()
    assert "from fleet_operator.webhook.v1 import captain_webhook as crew_captain_v1_webhook\n" in main
    assert (
        '    if os.environ.get("ENABLE_WEBHOOKS") != "false":\n'
        "        crew_sailor_v1_webhook.setup_sailor_webhook(manager)\n"
        "    # +kubebuilder:scaffold:webhooks\n"
    ) in main
    assert main.count('"--webhook-cert-path"') == 1 and main.count("webhook_port=args.webhook_port") == 1
    makefile = (scaffolded / "Makefile").read_text()
    assert "ENABLE_WEBHOOKS ?= false" in makefile
    assert "\tENABLE_WEBHOOKS=$(ENABLE_WEBHOOKS) $(PYTHON) -m fleet_operator.main\n" in makefile

    probe = (
        "import sys\n"
        "from fleet_operator.main import build_manager, parse_args\n"
        "flags = ['--webhook-port', '9555', '--webhook-cert-path', '/certs', '--webhook-cert-key', 'k.pem']\n"
        "args = parse_args(flags)\n"
        "manager = build_manager(args)\n"
        "o = manager.options\n"
        "print(o.webhook_port, o.webhook_cert_path, o.webhook_cert_name, o.webhook_key_name)\n"
        "server = manager.webhook_server\n"
        "print(sorted(server.endpoints) if server else 'no webhook server')\n"
    )
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "ENABLE_WEBHOOKS": "true"}
    on = subprocess.run([sys.executable, "-c", probe], cwd=scaffolded, capture_output=True, text=True, env=env)
    assert on.returncode == 0, on.stderr
    options, paths = on.stdout.splitlines()
    assert options == "9555 /certs tls.crt k.pem"
    assert paths == str(
        [
            "/convert",
            "/custom-mutate-sailor",
            "/custom-validate-sailor",
            "/mutate-crew-example-com-v1-captain",
            "/validate-crew-example-com-v1-captain",
        ]
    )
    env["ENABLE_WEBHOOKS"] = "false"
    off = subprocess.run([sys.executable, "-c", probe], cwd=scaffolded, capture_output=True, text=True, env=env)
    assert off.returncode == 0, off.stderr
    assert off.stdout.splitlines()[1] == "no webhook server"


def test_make_manifests_writes_the_webhook_configurations(project: Path, pyop, tree) -> None:  # type: ignore[no-untyped-def]
    documents = list(yaml.safe_load_all((project / "config/webhook/manifests.yaml").read_text()))
    by_kind = {d["kind"]: d for d in documents if d}
    assert set(by_kind) == {"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"}
    mutating = by_kind["MutatingWebhookConfiguration"]["webhooks"]
    assert [(w["name"], w["clientConfig"]["service"]["path"]) for w in mutating] == [
        ("mcaptain-v1.kb.io", "/mutate-crew-example-com-v1-captain"),
        ("msailor-v1.kb.io", "/custom-mutate-sailor"),
    ]
    validating = by_kind["ValidatingWebhookConfiguration"]["webhooks"]
    assert [w["clientConfig"]["service"]["path"] for w in validating] == [
        "/validate-crew-example-com-v1-captain",
        "/custom-validate-sailor",
    ]
    crd = yaml.safe_load((project / "config/crd/bases/crew.example.com_firstmates.yaml").read_text())
    assert {v["name"]: v["storage"] for v in crd["spec"]["versions"]} == {"v1": True, "v2": False}
    before = tree(project)
    _ok(pyop("make", "manifests", cwd=project))
    assert tree(project) == before


def test_kustomize_builds_and_every_object_is_valid_kubernetes(project: Path, kubectl: str) -> None:
    documents = _build(kubectl, project / "config/default")
    for document in documents:
        if document["kind"] not in CERT_MANAGER_KINDS:
            kubernetes_validate.validate(document, KUBERNETES_VERSION, strict=True)
    by_name = {(d["kind"], d["metadata"]["name"]): d for d in documents}
    ca = "fleet-operator-system/fleet-operator-serving-cert"
    for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
        config = by_name[
            (kind, f"fleet-operator-{kind.removesuffix('WebhookConfiguration').lower()}-webhook-configuration")
        ]
        assert config["metadata"]["annotations"] == {"cert-manager.io/inject-ca-from": ca}
        for webhook in config["webhooks"]:
            assert webhook["clientConfig"]["service"]["name"] == "fleet-operator-webhook-service"
            assert webhook["clientConfig"]["service"]["namespace"] == "fleet-operator-system"
    first_mates = by_name[("CustomResourceDefinition", "firstmates.crew.example.com")]
    assert first_mates["metadata"]["annotations"]["cert-manager.io/inject-ca-from"] == ca
    assert first_mates["spec"]["conversion"] == {
        "strategy": "Webhook",
        "webhook": {
            "clientConfig": {
                "service": {
                    "name": "fleet-operator-webhook-service",
                    "namespace": "fleet-operator-system",
                    "path": "/convert",
                }
            },
            "conversionReviewVersions": ["v1"],
        },
    }
    captains = by_name[("CustomResourceDefinition", "captains.crew.example.com")]
    assert "conversion" not in captains["spec"]
    assert "cert-manager.io/inject-ca-from" not in captains["metadata"].get("annotations", {})

    service = by_name[("Service", "fleet-operator-webhook-service")]
    assert service["spec"]["ports"] == [{"port": 443, "protocol": "TCP", "targetPort": 9443}]
    certificate = by_name[("Certificate", "fleet-operator-serving-cert")]
    assert certificate["metadata"]["namespace"] == "fleet-operator-system"
    assert certificate["spec"] == {
        "dnsNames": [
            "fleet-operator-webhook-service.fleet-operator-system.svc",
            "fleet-operator-webhook-service.fleet-operator-system.svc.cluster.local",
        ],
        "issuerRef": {"kind": "Issuer", "name": "fleet-operator-selfsigned-issuer"},
        "secretName": "webhook-server-cert",
    }
    issuer = by_name[("Issuer", "fleet-operator-selfsigned-issuer")]
    assert issuer["apiVersion"] == "cert-manager.io/v1" and issuer["spec"] == {"selfSigned": {}}

    pod = by_name[("Deployment", "fleet-operator-controller-manager")]["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert "--webhook-cert-path=/tmp/k8s-webhook-server/serving-certs" in container["args"]
    assert {"containerPort": 9443, "name": "webhook-server", "protocol": "TCP"} in container["ports"]
    assert {
        "mountPath": "/tmp/k8s-webhook-server/serving-certs",
        "name": "webhook-certs",
        "readOnly": True,
    } in container["volumeMounts"]
    assert {"name": "webhook-certs", "secret": {"secretName": "webhook-server-cert"}} in pod["volumes"]


def test_network_policies_build(project: Path, kubectl: str) -> None:
    documents = _build(kubectl, project / "config/network-policy")
    for document in documents:
        kubernetes_validate.validate(document, KUBERNETES_VERSION, strict=True)
    webhook = next(d for d in documents if d["metadata"]["name"] == "allow-webhook-traffic")
    assert webhook["spec"]["ingress"][0]["ports"] == [{"port": 9443, "protocol": "TCP"}]


def test_conversion_only_project_builds(tmp_path: Path, pyop, kubectl: str) -> None:  # type: ignore[no-untyped-def]
    """No admission webhook: no webhook configuration to list, and kustomize still builds."""
    root = tmp_path / "conv-operator"
    root.mkdir()
    _ok(pyop("init", "--domain", "example.com", "--multigroup", cwd=root))
    _ok(pyop("create", "api", *CAPTAIN, "--no-controller", cwd=root))
    _ok(pyop("create", "api", "--group", "crew", "--version", "v2", "--kind", "Captain", "--no-controller", cwd=root))
    _ok(pyop("create", "webhook", *CAPTAIN, "--conversion", "--spoke", "v2", cwd=root))
    # The edited types files and main.py stay clean for the project's linter (imports in isort's groups).
    lint = subprocess.run([sys.executable, "-m", "ruff", "check", "."], cwd=root, capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    assert (root / "conv_operator/webhook/crew/v1/captain_webhook.py").is_file()
    assert (root / "conv_operator/webhook/crew/__init__.py").is_file()
    assert (root / "config/crd/patches/webhook_in_crew_captains.yaml").is_file()
    _ok(pyop("make", "manifests", cwd=root))
    assert not (root / "config/webhook/manifests.yaml").exists()
    assert yaml.safe_load((root / "config/webhook/kustomization.yaml").read_text()) == {"resources": ["service.yaml"]}
    documents = _build(kubectl, root / "config/default")
    for document in documents:
        if document["kind"] not in CERT_MANAGER_KINDS:
            kubernetes_validate.validate(document, KUBERNETES_VERSION, strict=True)
    kinds = {d["kind"] for d in documents}
    assert "MutatingWebhookConfiguration" not in kinds and "Certificate" in kinds


def test_generated_project_tests_pass(project: Path, project_pytest) -> None:  # type: ignore[no-untyped-def]
    result = project_pytest(project)
    assert result.returncode == 0, result.stdout + result.stderr
    # The webhook tests among them: Captain and Sailor (paths, defaulting, validation, the test API server calling
    # them on create), FirstMate (paths, v2 round trip through the hub: the sample and random objects; every version
    # served through /convert by the test API server).
    collected = project_pytest(project, "--collect-only", "tests")
    webhook_tests = [line for line in collected.stdout.splitlines() if "_webhook.py::" in line]
    assert sorted(line.rpartition("::")[2] for line in webhook_tests) == sorted(
        [
            "test_setup_serves_the_paths_of_the_markers",
            "test_defaulting_keeps_the_sample_a_valid_captain",
            "test_validation_accepts_the_sample",
            "test_the_api_server_calls_the_webhooks_when_the_sample_is_created",
            "test_setup_serves_the_paths_of_the_markers",
            "test_v2_round_trips_through_the_hub",
            "test_random_objects_of_every_version_round_trip_through_the_hub",
            "test_the_api_server_serves_every_version_through_the_conversion_webhook",
            "test_setup_serves_the_paths_of_the_markers",
            "test_defaulting_keeps_the_sample_a_valid_sailor",
            "test_validation_accepts_the_sample",
            "test_the_api_server_calls_the_webhooks_when_the_sample_is_created",
        ]
    )


def test_rerun_writes_nothing(scaffolded: Path, pyop, tree) -> None:  # type: ignore[no-untyped-def]
    before = tree(scaffolded)
    refused = pyop("create", "webhook", *CAPTAIN, "--defaulting", "--programmatic-validation", cwd=scaffolded)
    assert refused.exit_code == 2 and "already exists: pass --force" in refused.stderr
    assert tree(scaffolded) == before
    forced = pyop("create", "webhook", *CAPTAIN, "--defaulting", "--programmatic-validation", "--force", cwd=scaffolded)
    _ok(forced)
    assert tree(scaffolded) == before
    assert "created" not in forced.stdout and "updated" not in forced.stdout and "overwrote" not in forced.stdout
    again = pyop("create", "webhook", *FIRST_MATE, "--conversion", "--spoke", "v2", "--force", cwd=scaffolded)
    _ok(again)
    assert tree(scaffolded) == before


def test_adding_a_webhook_kind_to_an_existing_module_keeps_it_and_force_rewrites_it(tmp_path: Path, pyop, tree) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "op"
    root.mkdir()
    _ok(pyop("init", cwd=root))
    _ok(pyop("create", "api", *CAPTAIN, cwd=root))
    _ok(pyop("create", "webhook", *CAPTAIN, "--defaulting", cwd=root))
    module = root / "op/webhook/v1/captain_webhook.py"
    module.write_text(module.read_text().replace("# TODO(user): fill in your defaulting logic", "# mine"))
    added = pyop("create", "webhook", *CAPTAIN, "--programmatic-validation", cwd=root)
    _ok(added)
    assert "updated  op/webhook/v1/captain_webhook.py" in added.stdout
    source = module.read_text()
    assert "class CaptainDefaulter:" in source and "class CaptainValidator:" in source and "# mine" in source
    hooks = yaml.safe_load((root / "PROJECT").read_text())["resources"][0]["webhooks"]
    assert hooks == {"webhookVersion": "v1", "defaulting": True, "validation": True}
    forced = pyop("create", "webhook", *CAPTAIN, "--defaulting", "--programmatic-validation", "--force", cwd=root)
    _ok(forced)
    assert "overwrote  op/webhook/v1/captain_webhook.py" in forced.stdout
    assert "# mine" not in module.read_text()


def test_user_edits_survive_later_commands(scaffolded: Path, pyop) -> None:  # type: ignore[no-untyped-def]
    root = scaffolded
    edits = {
        "fleet_operator/webhook/v1/captain_webhook.py": "\n# my webhook notes\n",
        "config/webhook/service.yaml": "# my service comment\n",
        "config/certmanager/certificate-webhook.yaml": "# my certificate comment\n",
        "config/default/manager_webhook_patch.yaml": "# my patch comment\n",
        "fleet_operator/api/v2/first_mate_types.py": "\n# my spoke notes\n",
    }
    for path, extra in edits.items():
        with (root / path).open("a") as handle:
            handle.write(extra)
    default = root / "config/default/kustomization.yaml"
    default.write_text(
        default.read_text().replace("- ../certmanager\n", "- ../certmanager  # cert-manager is installed\n")
    )
    main = root / "fleet_operator/main.py"
    main.write_text(main.read_text().replace("import os\n", "import os\nimport sys  # mine\n"))

    _ok(
        pyop(
            "create",
            "api",
            "--group",
            "crew",
            "--version",
            "v1",
            "--kind",
            "Admiral",
            "--plural",
            "admirales",
            cwd=root,
        )
    )
    _ok(pyop("create", "webhook", "--group", "crew", "--version", "v1", "--kind", "Admiral", "--defaulting", cwd=root))
    _ok(pyop("create", "webhook", *FIRST_MATE, "--conversion", "--spoke", "v2", "--force", cwd=root))
    _ok(pyop("make", "manifests", cwd=root))

    for path, extra in edits.items():
        assert (root / path).read_text().endswith(extra), path
    text = default.read_text()
    assert "- ../certmanager  # cert-manager is installed\n" in text
    assert text.count("- ../webhook\n") == 1 and text.count("manager_webhook_patch.yaml") == 1
    main_text = main.read_text()
    assert "import sys  # mine\n" in main_text
    assert "crew_admiral_v1_webhook.setup_admiral_webhook(manager)" in main_text
    assert "crew_admiral_controller.setup_with_manager(manager)" in main_text
    assert main_text.count('"--webhook-port"') == 1
    spoke = (root / "fleet_operator/api/v2/first_mate_types.py").read_text()
    assert spoke.count("def convert_to(") == 1
    assert "resources=admirales" in (root / "fleet_operator/webhook/v1/admiral_webhook.py").read_text()
    configs = {d["kind"]: d for d in yaml.safe_load_all((root / "config/webhook/manifests.yaml").read_text()) if d}
    mutating = configs["MutatingWebhookConfiguration"]["webhooks"]
    assert [w["name"] for w in mutating] == ["madmiral-v1.kb.io", "mcaptain-v1.kb.io", "msailor-v1.kb.io"]
    assert mutating[0]["rules"][0]["resources"] == ["admirales"]


def test_older_main_without_insertion_points_gets_them(tmp_path: Path, pyop) -> None:  # type: ignore[no-untyped-def]
    """A main.py and Makefile scaffolded before pyop had webhooks: the insertion points are added first."""
    root = tmp_path / "op"
    root.mkdir()
    _ok(pyop("init", cwd=root))
    _ok(pyop("create", "api", *CAPTAIN, cwd=root))
    main = root / "op/main.py"
    old = main.read_text()
    for line in ("    # +kubebuilder:scaffold:flags\n", "        # +kubebuilder:scaffold:manageroptions\n"):
        old = old.replace(line, "")
    old = old.replace("    setup_webhooks(manager)\n", "")
    start = old.index("\n\ndef setup_webhooks")
    old = old[:start] + old[old.index("\n\n\ndef build_manager") :]
    main.write_text(old)
    makefile = root / "Makefile"
    makefile.write_text(
        makefile.read_text()
        .replace("ENABLE_WEBHOOKS=$(ENABLE_WEBHOOKS) ", "")
        .replace("ENABLE_WEBHOOKS ?= false\n", "")
        .replace("ENABLE_WEBHOOKS", "")
    )
    assert "ENABLE_WEBHOOKS" not in makefile.read_text()

    _ok(pyop("create", "webhook", *CAPTAIN, "--programmatic-validation", cwd=root))
    text = main.read_text()
    assert (
        "    crew_captain_controller.setup_with_manager(manager)\n"
        '    if os.environ.get("ENABLE_WEBHOOKS") != "false":\n'
        "        crew_captain_v1_webhook.setup_captain_webhook(manager)\n"
        "    # +kubebuilder:scaffold:webhooks\n"
        "    # +kubebuilder:scaffold:builder\n"
    ) in text
    assert (
        '    parser.add_argument("--webhook-port"' in text and "    # +kubebuilder:scaffold:flags\n    return" in text
    )
    assert (
        "        webhook_key_name=args.webhook_cert_key,\n        # +kubebuilder:scaffold:manageroptions\n    )" in text
    )
    compile(text, "main.py", "exec")
    assert "\tENABLE_WEBHOOKS=false $(PYTHON) -m op.main\n" in makefile.read_text()


def test_same_input_gives_byte_identical_projects(tmp_path: Path, pyop, tree) -> None:  # type: ignore[no-untyped-def]
    snapshots = [tree(_scaffold(tmp_path / name / "same-operator", pyop)) for name in ("a", "b")]
    assert snapshots[0] == snapshots[1]
