"""The marker table of docs/reference/markers.md, rendered from the registry so the docs cannot drift from it.

    python -m pyop_scaffold.manifests.markers.reference docs/reference/markers.md

rewrites the table between the `<!-- markers:begin -->` and `<!-- markers:end -->` lines of that file; a test
checks that the committed file holds exactly what this renders.
"""

from __future__ import annotations

import sys
from pathlib import Path

from pyop_scaffold.manifests.markers.registry import MARKERS, MarkerDef, Target

BEGIN = "<!-- markers:begin -->"
END = "<!-- markers:end -->"

_REQUIREDNESS = {"kubebuilder:validation:Required", "kubebuilder:validation:Optional", "required", "optional"}


def _schema(definition: MarkerDef) -> bool:
    return definition.apply is not None or definition.name == "kubebuilder:validation:Schemaless"


_CODEGEN = ("genclient", "k8s:deepcopy-gen")  # client-gen's and deepcopy-gen's tags: a section of their own

_SECTIONS = (
    (
        "Package",
        lambda d: (
            d.targets in (Target.PACKAGE, Target.PACKAGE | Target.TYPE)
            and d.name not in _REQUIREDNESS
            and not d.name.startswith(_CODEGEN)
        ),
    ),
    (
        "Kinds (type level, CRD)",
        lambda d: d.targets == Target.TYPE and not _schema(d) and not d.name.startswith(_CODEGEN),
    ),
    ("Schema: validation, type and field", lambda d: _schema(d) and d.name.startswith("kubebuilder:")),
    ("Schema: Kubernetes-style and topology", lambda d: _schema(d) and not d.name.startswith("kubebuilder:")),
    ("Requiredness (field, or package-wide default)", lambda d: d.name in _REQUIREDNESS),
    ("Anywhere in a module (RBAC, webhooks)", lambda d: d.targets == Target.FILE),
    ("Code generation (client-gen and deepcopy-gen tags; `pyop make clients`)", lambda d: d.name.startswith(_CODEGEN)),
)


def _syntax(definition: MarkerDef) -> str:
    if definition.value is not None:
        return f"`+{definition.name}=<{definition.value.value}>`"
    if definition.args:
        args = ",".join(f"{arg.name}=<{arg.type.value}>" + ("?" if arg.optional else "") for arg in definition.args)
        return f"`+{definition.name}:{args}`"
    return f"`+{definition.name}`"


def _notes(definition: MarkerDef) -> str:
    notes = []
    if definition.aliases:
        notes.append("also " + ", ".join(f"`+{alias}`" for alias in definition.aliases))
    if definition.items:
        notes.append("items form `+kubebuilder:validation:items:" + definition.name.rsplit(":", 1)[1] + "`")
    if definition.repeatable:
        notes.append("repeatable")
    if definition.apply is not None and definition.priority != 10:
        notes.append(f"applied {'before' if definition.priority < 10 else 'after'} the others")
    return "; ".join(notes)


def render_table() -> str:
    """Markdown tables of every registry marker, grouped by where it goes."""
    lines: list[str] = []
    placed: set[str] = set()
    for title, belongs in _SECTIONS:
        rows = [d for d in MARKERS if d.name not in placed and belongs(d)]
        if not rows:
            continue
        lines += [f"### {title}", "", "| marker | on | effect | notes |", "|---|---|---|---|"]
        for definition in rows:
            placed.add(definition.name)
            help_text = definition.help.replace("|", "\\|")
            lines.append(
                f"| {_syntax(definition)} | {definition.targets.describe()} | {help_text} | {_notes(definition)} |"
            )
        lines.append("")
    missing = [d.name for d in MARKERS if d.name not in placed]
    if missing:
        raise AssertionError(f"markers in no section of the reference: {missing}")
    return "\n".join(lines).rstrip("\n") + "\n"


def rewrite(path: Path) -> bool:
    """Replace the table in `path`; True when the file changed."""
    text = path.read_text(encoding="utf-8")
    head, _, rest = text.partition(BEGIN + "\n")
    _, _, tail = rest.partition(END)
    new = f"{head}{BEGIN}\n{render_table()}{END}{tail}"
    if new == text:
        return False
    path.write_text(new, encoding="utf-8")
    return True


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/reference/markers.md")
    print(f"{target}: {'updated' if rewrite(target) else 'up to date'}")
