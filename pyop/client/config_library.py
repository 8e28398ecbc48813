"""kubernetes_asyncio's configuration loader, imported without the library's generated API client.

Why: importing any `kubernetes_asyncio` submodule first runs the package `__init__`s, which import the whole
generated client (every API class and ~800 models, plus `dateutil`) and the dynamic client (which imports
`jsonschema` when `kubernetes-validate` is installed): ~0.4 s of CPU and ~40 MB before an operator's first
request, for the one thing pyop uses, the kubeconfig / in-cluster loader. That loader lives in small modules
(`client/configuration.py`, `client/exceptions.py`, `config/*.py`) that need nothing else from the package.

How: while those modules are imported, the three parent packages are present in `sys.modules` as module objects
made from their real specs but not executed, so importing a submodule does not run a parent's `__init__`.
`kube_config` imports `ApiClient` from the client package only to build one in `new_client_from_config` (which
pyop never calls); it gets a stand-in that imports the real class when called. Two more imports are put off
until used, since an operator's HTTP client is pyop's own and needs neither: `openid` (which imports aiohttp's
client, ~150 ms) is loaded, lean too, when an OIDC token is first refreshed, and `urllib3` (~30 ms, used by
`Configuration.get_basic_auth_token` only) when the configuration first touches it. Afterwards every
`kubernetes_asyncio` entry this added to `sys.modules` is taken out again: the loaded modules are pyop's private
copy, and a later `import kubernetes_asyncio` anywhere in the process is the ordinary, complete import. The
parsing, exec plugins, OIDC and in-cluster logic are still the library's own code, unchanged.

If the library is already imported (the operator uses it), its modules are used as they are. If its layout
ever changes so that the lean import fails, the ordinary import is used instead: slower, same behaviour.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import sys
import threading
from dataclasses import dataclass
from types import ModuleType
from typing import Any

__all__ = ["ConfigLibrary", "config_library"]

log = logging.getLogger(__name__)

_ROOT = "kubernetes_asyncio"
_PACKAGES = (_ROOT, f"{_ROOT}.client", f"{_ROOT}.config")


@dataclass(frozen=True)
class ConfigLibrary:
    """The parts of kubernetes_asyncio that `pyop.client.kubeconfig` calls."""

    Configuration: Any
    ConfigException: type[Exception]
    kube_config: ModuleType
    incluster_config: ModuleType


_lock = threading.Lock()
_loaded: ConfigLibrary | None = None


def config_library() -> ConfigLibrary:
    """The loader modules, imported once per process (lean unless the library is already imported)."""
    global _loaded
    with _lock:
        if _loaded is None:
            _loaded = _import_lean() if _ROOT not in sys.modules else _import_ordinary()
        return _loaded


def _import_ordinary() -> ConfigLibrary:
    kube_config = importlib.import_module(f"{_ROOT}.config.kube_config")
    incluster_config = importlib.import_module(f"{_ROOT}.config.incluster_config")
    exceptions = importlib.import_module(f"{_ROOT}.config.config_exception")
    return ConfigLibrary(kube_config.Configuration, exceptions.ConfigException, kube_config, incluster_config)


def _import_lean() -> ConfigLibrary:
    before = {name for name in sys.modules if _is_library_module(name)}
    urllib3_missing = "urllib3" not in sys.modules
    try:
        packages = {name: _unexecuted_package(name) for name in _PACKAGES}
        if urllib3_missing:
            sys.modules["urllib3"] = _DeferredModule("urllib3")
        sys.modules[_OPENID] = _openid_stand_in()
        configuration = importlib.import_module(f"{_ROOT}.client.configuration")
        client = packages[f"{_ROOT}.client"]
        # What `kube_config` and `incluster_config` import from the client package, without running its __init__.
        setattr(client, "Configuration", configuration.Configuration)  # noqa: B010 - a module mypy cannot see into
        setattr(client, "ApiClient", _api_client)  # noqa: B010
        exceptions = importlib.import_module(f"{_ROOT}.config.config_exception")
        kube_config = importlib.import_module(f"{_ROOT}.config.kube_config")
        _read_with_libyaml(kube_config)
        library = ConfigLibrary(
            configuration.Configuration,
            exceptions.ConfigException,
            kube_config,
            importlib.import_module(f"{_ROOT}.config.incluster_config"),
        )
        # What the lean `openid` needs when it is loaded later: the same packages and the same exception class.
        _lean_parents.update({**packages, exceptions.__name__: exceptions})
    except Exception:
        log.debug("lean import of kubernetes_asyncio's config loader failed; importing the package", exc_info=True)
        library = None
    finally:
        if urllib3_missing and isinstance(sys.modules.get("urllib3"), _DeferredModule):
            del sys.modules["urllib3"]
        for name in [name for name in sys.modules if _is_library_module(name) and name not in before]:
            del sys.modules[name]
    return library if library is not None else _import_ordinary()


_OPENID = f"{_ROOT}.config.openid"
_lean_parents: dict[str, ModuleType] = {}


class _DeferredModule(ModuleType):
    """Stands for a module until one of its attributes is used; then imports it (the ordinary way)."""

    def __getattr__(self, attribute: str) -> Any:
        return getattr(importlib.import_module(self.__name__), attribute)


def _openid_stand_in() -> ModuleType:
    module = ModuleType(_OPENID)
    setattr(module, "OpenIDRequestor", _openid_requestor)  # noqa: B010
    return module


def _openid_requestor(*args: Any, **kwargs: Any) -> Any:
    """Stand-in for `openid.OpenIDRequestor` in the lean `kube_config`: loads the real module on first use."""
    return _lean_openid().OpenIDRequestor(*args, **kwargs)


def _lean_openid() -> ModuleType:
    """The real `openid` module, imported beside the lean loader so that it raises the loader's
    `ConfigException`; the ordinary one when the process has imported the library itself by now."""
    with _lock:
        if _OPENID in _lean_parents:
            return _lean_parents[_OPENID]
        if _ROOT in sys.modules:
            return importlib.import_module(_OPENID)
        added = [name for name in _lean_parents if name not in sys.modules]
        sys.modules.update({name: _lean_parents[name] for name in added})
        try:
            module = importlib.import_module(_OPENID)
        finally:
            for name in [*added, _OPENID]:
                sys.modules.pop(name, None)
        _lean_parents[_OPENID] = module
        return module


class _LibYAMLReader:
    """`yaml` as the private `kube_config` uses it (`safe_load`, `safe_dump`), reading with libyaml's C parser.

    Why: a kubeconfig carries its certificates as long base64 scalars, and PyYAML's pure-Python scanner took
    ~15 ms of an operator's start-up to read one; `CSafeLoader` builds the same documents with the same safe
    constructors, in C. Everything else (`safe_dump` when a refreshed token is persisted) is PyYAML's own.
    """

    def __init__(self, yaml: ModuleType) -> None:
        self._yaml = yaml

    def safe_load(self, stream: Any) -> Any:
        return self._yaml.load(stream, Loader=self._yaml.CSafeLoader)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._yaml, name)


def _read_with_libyaml(kube_config: ModuleType) -> None:
    """Point pyop's private `kube_config` at libyaml's parser when PyYAML was built with it (never the
    process's own `kube_config`, which is the application's module)."""
    yaml = getattr(kube_config, "yaml", None)
    if isinstance(yaml, ModuleType) and getattr(yaml, "__with_libyaml__", False):
        setattr(kube_config, "yaml", _LibYAMLReader(yaml))  # noqa: B010 - a module mypy cannot see into


def _unexecuted_package(name: str) -> ModuleType:
    """The package module as the import system would create it, registered but with its `__init__` not run."""
    spec = importlib.util.find_spec(name)
    if spec is None or spec.submodule_search_locations is None:
        raise ImportError(f"{name} is not a package")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    return module


def _api_client(*args: Any, **kwargs: Any) -> Any:
    """Stand-in for `kubernetes_asyncio.client.ApiClient` in the lean `kube_config` (ordinary import on use)."""
    from kubernetes_asyncio.client import ApiClient

    return ApiClient(*args, **kwargs)


def _is_library_module(name: str) -> bool:
    return name == _ROOT or name.startswith(_ROOT + ".")
