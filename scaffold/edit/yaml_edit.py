"""Round-trip YAML edits with ruamel.yaml: add to a list in a kustomization without losing comments.

pyop's kustomization files end their lists with a `# +kubebuilder:scaffold:<name>` comment. ruamel.yaml attaches a
comment after the last item to that item, so a naive append would land below the marker; `append_unique` moves the
comment to the new last item, which keeps the marker at the end of the list.
"""

from __future__ import annotations

import io
from typing import Any

from pyop_scaffold.errors import ProjectError


def _yaml() -> Any:
    from ruamel.yaml import YAML

    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=2, offset=0)
    return yaml


def _append_keeping_trailing_comments(seq: Any, value: Any) -> None:
    """Append to a ruamel sequence so that comment lines after its last item stay after the new last item.

    ruamel stores "end-of-line comment of the last item + every comment line below it" as one token on that item.
    The end-of-line part stays with the old item; the lines below move to the new one.
    """
    from ruamel.yaml.error import CommentMark
    from ruamel.yaml.tokens import CommentToken

    last = len(seq) - 1
    entry = seq.ca.items.get(last) if last >= 0 else None
    token = entry[0] if entry else None
    seq.append(value)
    if token is None or not isinstance(token.value, str):
        return
    text = token.value
    if text.startswith("#") and entry is not None:  # an end-of-line comment first: keep it on the old item
        eol, _, below = text.partition("\n")
        entry[0] = CommentToken(eol + "\n", token.start_mark, None)
        if not below:
            return
        text = "\n" + below
    else:
        del seq.ca.items[last]
    seq.ca.items[last + 1] = [CommentToken(text, CommentMark(0), None), None, None, None]


def _load_mapping(yaml: Any, text: str, source: str) -> Any:
    from ruamel.yaml.comments import CommentedMap

    try:
        data = yaml.load(text) if text.strip() else CommentedMap()
    except Exception as exc:  # ruamel raises many parser error types
        raise ProjectError(f"cannot edit {source}: not valid YAML ({str(exc).splitlines()[0]})") from exc
    if data is None:
        data = CommentedMap()
    if not isinstance(data, dict):
        raise ProjectError(f"cannot edit {source}: expected a mapping at the top level")
    return data


def _list_at(data: Any, key: str, source: str, comment: str | None = None) -> Any:
    """The top-level list `key`, created (at the end, with `comment` above it) when missing."""
    from ruamel.yaml.comments import CommentedSeq

    seq = data.get(key)
    if seq is None:
        seq = CommentedSeq()
        separate = len(data) > 0  # a blank line between the new list and what comes before it
        data[key] = seq
        if comment or separate:
            before = ("\n" if separate else "") + (comment or "")
            data.yaml_set_comment_before_after_key(key, before=before)
    if not isinstance(seq, list):
        raise ProjectError(f"cannot edit {source}: {key!r} must be a list")
    return seq


def _dump(yaml: Any, data: Any) -> str:
    out = io.StringIO()
    yaml.dump(data, out)
    return out.getvalue()


def append_unique(text: str, key: str, values: list[Any], *, source: str, comment: str | None = None) -> str:
    """Return `text` with each of `values` appended to the top-level list `key` unless an equal item is there.

    Values are strings or plain dicts/lists (a kustomize patch entry); `comment` goes above the first new item.
    """
    yaml = _yaml()
    data = _load_mapping(yaml, text, source)
    seq = _list_at(data, key, source)
    added = 0
    for value in values:
        if value in seq:
            continue
        _append_keeping_trailing_comments(seq, value)
        if comment and not added:
            seq.yaml_set_comment_before_after_key(len(seq) - 1, before=comment, indent=0)
        added += 1
    return _dump(yaml, data) if added else text


def merge_replacements(text: str, replacements: list[dict[str, Any]], *, source: str, comment: str) -> str:
    """Add kustomize `replacements` entries: an entry with the same `source` gains the targets it lacks.

    One replacement per source field keeps the file readable as webhooks (and their target kinds) are added.
    """
    yaml = _yaml()
    data = _load_mapping(yaml, text, source)
    seq = _list_at(data, "replacements", source, comment)
    changed = False
    for replacement in replacements:
        existing = next((r for r in seq if isinstance(r, dict) and r.get("source") == replacement["source"]), None)
        if existing is None:
            _append_keeping_trailing_comments(seq, replacement)
            changed = True
            continue
        targets = existing.get("targets")
        if not isinstance(targets, list):
            raise ProjectError(f"cannot edit {source}: the targets of a replacement must be a list")
        for target in replacement.get("targets", []):
            if target not in targets:
                targets.append(target)
                changed = True
    return _dump(yaml, data) if changed else text


def load_documents(text: str, *, source: str) -> list[Any]:
    """Every document of a multi-document YAML file, as ruamel round-trip nodes (comments and order kept)."""
    yaml = _yaml()
    try:
        return [doc for doc in yaml.load_all(text)]
    except Exception as exc:  # ruamel raises many parser error types
        raise ProjectError(f"cannot edit {source}: not valid YAML ({str(exc).splitlines()[0]})") from exc


def dump_documents(documents: list[Any], *, original: str) -> str:
    """The documents written back with `---` between them, in pyop's YAML style.

    A file that opened with `---` (as `make manifests` writes them, after controller-gen) keeps it: ruamel drops
    the first document's start marker unless told, and the next `make manifests` would rewrite the file for it.
    """
    yaml = _yaml()
    first = next((line for line in original.splitlines() if line.strip() and not line.startswith("#")), "")
    yaml.explicit_start = first.rstrip() == "---"
    out = io.StringIO()
    yaml.dump_all(documents, out)
    return out.getvalue()
