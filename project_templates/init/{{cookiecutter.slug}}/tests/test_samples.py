{{ cookiecutter.license_header }}"""Every sample under config/samples must be a valid object of its API model."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
import yaml

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SAMPLES = sorted(p for p in (PROJECT_ROOT / "config" / "samples").glob("*.yaml") if p.name != "kustomization.yaml")


def _model_for(api_version: str, kind: str) -> type:
    """Find the model class of a sample among the project's API packages."""
    import {{ cookiecutter.package }}.api as api_root

    for path in sorted(Path(api_root.__path__[0]).rglob("*_types.py")):
        module_name = ".".join(path.relative_to(PROJECT_ROOT).with_suffix("").parts)
        module = importlib.import_module(module_name)
        model = getattr(module, kind, None)
        info = getattr(model, "resource_info", None)
        if info is not None and info.api_version == api_version:
            return model
    raise LookupError(f"no model for {api_version} {kind}")


@pytest.mark.parametrize("sample", SAMPLES, ids=[p.name for p in SAMPLES])
def test_sample_is_a_valid_object(sample: Path) -> None:
    document = yaml.safe_load(sample.read_text())
    model = _model_for(document["apiVersion"], document["kind"])
    obj = model.model_validate(document)
    assert obj.metadata.name == document["metadata"]["name"]
    # Serialising gives back what the sample says (no field lost or renamed on the way).
    dumped = obj.to_dict()
    assert dumped["apiVersion"] == document["apiVersion"]
    assert dumped.get("spec") == (document.get("spec") or dumped.get("spec"))
