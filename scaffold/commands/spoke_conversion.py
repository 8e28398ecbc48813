"""A spoke version's conversion methods: ``convert_to``/``convert_from`` through the kind's hub, appended to the
spoke's model class.

Two commands make a kind's version a spoke of its hub (the pattern of `pyop.webhook.Convertible`): `pyop create
webhook --conversion` for a CRD (the conversion webhook calls the methods) and `pyop create apiserver` for a kind an
aggregated server already serves in another version (the server converts every request through the hub). Both add
the same methods from the one template `project_templates/spoke_conversion/`, whose opening comment says which
command added them and who calls them.
"""

from __future__ import annotations

from typing import Literal

from pyop_scaffold.edit.python_source import add_import, append_to_class, class_defines
from pyop_scaffold.render.templates import render_template

AddedBy = Literal["webhook", "apiserver"]


def add_conversion_methods(
    text: str,
    *,
    kind: str,
    spoke_version: str,
    hub_version: str,
    hub_module: str,
    package: str,
    added_by: AddedBy,
    source: str,
) -> str:
    """``text`` (the spoke's types module at ``source``) with the methods and their imports (``typing.Self``, the
    hub's class as ``Hub<kind>`` from ``hub_module``); unchanged where the class already defines ``convert_to``,
    so running a command again leaves the user's translations alone."""
    if class_defines(text, kind, "convert_to", source=source):
        return text
    context = {"kind": kind, "hub_version": hub_version, "spoke_version": spoke_version, "added_by": added_by}
    methods = render_template("spoke_conversion", context)["spoke_conversion_methods.py"].decode("utf-8")
    text = add_import(text, "from typing import Self", source=source)
    text = add_import(text, f"from {hub_module} import {kind} as Hub{kind}", source=source, first_party=package)
    return append_to_class(text, kind, methods, source=source)


__all__ = ["AddedBy", "add_conversion_methods"]
