{{ cookiecutter.license_header }}"""Every sample under config/samples must be a valid object of its API model, kept as written.

What this guarantees, for each sample: the model validates it (types, required fields, pydantic
constraints), every field it writes is one the model declares (a misspelt field, or one since removed from
the model, fails here by name: the model would keep it as an undeclared field and the API server would prune
it), and every value comes back unchanged when the object is serialised, as the operator would send it to
the API server. Fields the sample leaves out may come back with their defaults: a sample need not spell out
defaults. The CRD's own rules (markers such as `+kubebuilder:validation:Minimum`) are checked by
`pyop make manifests --check` and by the API server.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SAMPLES = sorted(p for p in (PROJECT_ROOT / "config" / "samples").glob("*.yaml") if p.name != "kustomization.yaml")


class _JSONLoader(yaml.SafeLoader):
    """YAML read as kubectl sends it to the API server: a timestamp stays a string (JSON has no dates)."""


_JSONLoader.add_constructor("tag:yaml.org,2002:timestamp", yaml.SafeLoader.construct_yaml_str)


def _model_for(api_version: str, kind: str) -> type:
    """Find the model class of a sample among the project's API packages (the CRDs' in api/, and those of the
    aggregated API server in apiserver/, if the project has one)."""
    package = PROJECT_ROOT / "{{ cookiecutter.package }}"
    for path in sorted([*(package / "api").rglob("*_types.py"), *(package / "apiserver").rglob("*_types.py")]):
        module_name = ".".join(path.relative_to(PROJECT_ROOT).with_suffix("").parts)
        module = importlib.import_module(module_name)
        model = getattr(module, kind, None)
        info = getattr(model, "resource_info", None)
        if info is not None and info.api_version == api_version:
            return model
    raise LookupError(f"no model for {api_version} {kind}")


def not_kept(written: Any, dumped: Any, path: str = "") -> list[str]:
    """The paths of what `written` says that `dumped` does not say the same way (missing or changed).

    Keys only `dumped` has (defaults) are fine, and a `null` in the sample means "not set"."""
    if isinstance(written, dict):
        if not isinstance(dumped, dict):
            return [f"{path or '.'}: {written!r} became {dumped!r}"]
        lost: list[str] = []
        for key, value in written.items():
            where = _join(path, str(key))
            if value is None:
                continue
            if key not in dumped:
                lost.append(f"{where}: not a field of the model")
            else:
                lost.extend(not_kept(value, dumped[key], where))
        return lost
    if isinstance(written, list) and isinstance(dumped, list) and len(written) == len(dumped):
        pairs = enumerate(zip(written, dumped))
        return [lost for i, (w, d) in pairs for lost in not_kept(w, d, f"{path}[{i}]")]
    if written != dumped or isinstance(written, bool) != isinstance(dumped, bool):  # 1 == True in Python
        return [f"{path or '.'}: {written!r} became {dumped!r}"]
    return []


def undeclared(obj: Any, path: str = "") -> list[str]:
    """The paths of fields in `obj` that its models do not declare (they are kept as `model_extra`).

    Kubernetes' own types (ObjectMeta, Condition, ...) are partial models of what the API server sends, so
    their undeclared fields are fine."""
    if isinstance(obj, BaseModel):
        own = getattr(obj, "__k8s_definition__", None) is None
        found = [_join(path, key) for key in obj.model_extra or {}] if own else []
        for name, field in type(obj).model_fields.items():
            found.extend(undeclared(getattr(obj, name), _join(path, field.alias or name)))
        return found
    if isinstance(obj, (list, tuple)):
        return [where for i, item in enumerate(obj) for where in undeclared(item, f"{path}[{i}]")]
    if isinstance(obj, dict):
        return [where for key, value in obj.items() for where in undeclared(value, _join(path, key))]
    return []


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


@pytest.mark.parametrize("sample", SAMPLES, ids=[p.name for p in SAMPLES])
def test_sample_is_a_valid_object(sample: Path) -> None:
    document = yaml.load(sample.read_text(), Loader=_JSONLoader)
    model = _model_for(document["apiVersion"], document["kind"])
    obj = model.model_validate(document)
    assert obj.metadata.name == document["metadata"]["name"]
    lost = [f"{where}: not a field of the model" for where in undeclared(obj)]
    lost = lost or not_kept(document, obj.to_dict())
    assert not lost, f"{sample.name} is not kept as written by {model.__name__}: " + "; ".join(lost)
