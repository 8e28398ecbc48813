"""Planning the chart's files into a command's ChangeSet, keeping what the user made of them.

- a file that is not there is created;
- a file exactly as pyop generated it (its digest matches, `seal.is_pristine`) is regenerated;
- values.yaml edited by the user is merged three ways (`values.merge`): the user's values stay;
- any other edited file, and every file the user added under dist/chart, is left alone (named in the report);
  `--force` replaces edited generated files with the generated version (files pyop does not generate stay);
- a generated template the user deleted (it is in `.pyop/generated.txt` but not on disk) is not made again without
  `--force`: deleting a template is how a user drops an object from the chart;
- a generated file that config/default no longer produces is named in the report, to delete by hand.
"""

from __future__ import annotations

from pathlib import Path

from pyop_scaffold.chart import values
from pyop_scaffold.chart.chart import CHART_DIR, GENERATED_LIST_FILE, VALUES_BASE_FILE, VALUES_FILE, Chart
from pyop_scaffold.chart.seal import is_pristine
from pyop_scaffold.commands.project_files import read_file_text, read_text
from pyop_scaffold.render.changeset import ChangeSet

TEMPLATES = f"{CHART_DIR}/templates/"


def plan_chart(changes: ChangeSet, chart: Chart) -> list[str]:
    """Plan every file of `chart`; returns the report's notes."""
    notes: list[str] = []
    base_text = read_text(changes, VALUES_BASE_FILE)
    generated_before = set((read_text(changes, GENERATED_LIST_FILE) or "").splitlines())
    bookkeeping = (VALUES_BASE_FILE, GENERATED_LIST_FILE)
    for path, text in chart.files.items():
        current = read_text(changes, path)
        if current is None and path in generated_before and path.startswith(TEMPLATES) and not changes.force:
            notes.append(f"{path}: not made again, you deleted it (--force makes it again)")
        elif current is None or path in bookkeeping or is_pristine(current):
            changes.update_file(path, text)
        elif changes.force:
            changes.add_file(path, text)
        elif path == VALUES_FILE:
            merged = values.merge(current, values.load_base(base_text), chart.values, path)
            changes.update_file(path, merged)
            notes.append(f"{path}: your values kept, merged with the values config/default gives now")
        else:
            notes.append(f"{path}: kept as you edited it (--force replaces it with the generated version)")
    notes.extend(_stale(changes.root, chart))
    return notes


def _stale(root: Path, chart: Chart) -> list[str]:
    """Generated templates that config/default no longer renders (the user's own files are not named)."""
    folder = root / CHART_DIR / "templates"
    if not folder.is_dir():
        return []
    stale = []
    for file in sorted(folder.rglob("*.yaml")):
        path = file.relative_to(root).as_posix()
        if path in chart.files:
            continue
        text = read_file_text(root, path)
        if text is not None and is_pristine(text):
            stale.append(f"{path}: config/default no longer renders this object; delete the file")
    return stale
