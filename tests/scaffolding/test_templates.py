"""pyop's in-memory renderer gives exactly what cookiecutter itself renders from the same templates."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyop_scaffold.render.templates import render_template, template_dir

CONTEXTS = {
    "init": [
        {
            "project_name": "fleet",
            "package": "fleet",
            "namespaced": True,
            "multigroup": True,
            "license_header": "# Copyright X.\n\n",
        },
        {"project_name": "fleet", "package": "fleet", "namespaced": False, "multigroup": False},
    ],
    "api": [
        {"kind": "Frigate", "plural": "frigates", "namespaced": False, "custom_plural": False},
        {"kind": "Admiral", "plural": "admirales", "namespaced": True, "custom_plural": True},
        {"kind": "Certificate", "external": True, "rbac_group": "cert-manager.io", "has_status": False},
    ],
    "webhook": [
        {"defaulting": True, "validation": False, "custom_defaulting_path": True, "defaulting_path": "/m-captain"},
        {
            "defaulting": False,
            "validation": True,
            "conversion": True,
            "spokes": "v2,v3",
            "module_imports": "from pyop.manager import Manager\nfrom pyop.webhook import Warnings\n\n"
            "from p.api.v1.captain_types import Captain\n"
            "from p.api.v2.captain_types import Captain as CaptainV2\n"
            "from p.api.v3.captain_types import Captain as CaptainV3",
        },
        # A built-in kind's webhooks (the sample inline, no CRDs) and an external kind's (a stand-in CRD).
        {"foreign": True, "kind": "Pod", "webhook_group": "core", "sample_object": '{"kind": "Pod"}'},
        {"foreign": True, "external": True, "kind": "Certificate", "sample_object": '{"kind": "Certificate"}'},
    ],
    "spoke_conversion": [
        {"kind": "Captain", "hub_version": "v1", "spoke_version": "v3", "added_by": "webhook"},
        {"kind": "Flunder", "hub_version": "v1alpha1", "spoke_version": "v1beta1", "added_by": "apiserver"},
    ],
}


@pytest.mark.parametrize(("name", "context"), [(name, ctx) for name, contexts in CONTEXTS.items() for ctx in contexts])
def test_renderer_matches_cookiecutter(tmp_path: Path, name: str, context: dict[str, object]) -> None:
    from cookiecutter.main import cookiecutter

    rendered_dir = Path(
        cookiecutter(
            str(template_dir(name)),
            no_input=True,
            extra_context=context,
            output_dir=str(tmp_path / "out"),
            default_config={"replay_dir": str(tmp_path / "replay"), "cookiecutters_dir": str(tmp_path / "cc")},
            accept_hooks=False,
        )
    )
    expected = {
        p.relative_to(rendered_dir).as_posix(): p.read_bytes() for p in sorted(rendered_dir.rglob("*")) if p.is_file()
    }
    assert render_template(name, context) == expected


def test_unknown_variables_are_refused() -> None:
    with pytest.raises(KeyError, match="no variables"):
        render_template("api", {"colour": "red"})
