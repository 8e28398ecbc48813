"""The file backend's crash and compaction behaviour: what a real disk and a killed process leave behind."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from pyop.apiserver.storage import file as file_module
from pyop.apiserver.storage.backend import StorageUnavailable
from pyop.apiserver.storage.file import FileBackend


def obj(name: str, **spec: object) -> dict[str, object]:
    return {"metadata": {"name": name, "namespace": "default"}, "spec": spec}


def test_a_crash_in_the_middle_of_an_append_leaves_a_readable_log(tmp_path: Path) -> None:
    log = tmp_path / "objects.jsonl"
    backend = FileBackend(log)
    kept = backend.commit("pods", "ADDED", "default", "a", obj("a"), None)
    backend.close()
    with open(log, "ab") as out:  # what a process killed inside write() leaves: half a record, no newline
        out.write(b'{"r":99,"op":"PUT","k":"pods","ns":"default","n":"b","o":{"metad')
    reopened = FileBackend(log)
    snapshot = reopened.load()
    assert snapshot.revision == kept
    assert [item[1]["metadata"]["name"] for item in snapshot.items] == ["a"]
    following = reopened.commit("pods", "ADDED", "default", "b", obj("b"), None)
    reopened.close()
    assert following == kept + 1
    assert [json.loads(line)["n"] for line in log.read_bytes().splitlines()] == ["a", "b"]


def test_a_damaged_record_before_the_end_is_refused_with_its_line(tmp_path: Path) -> None:
    log = tmp_path / "objects.jsonl"
    backend = FileBackend(log)
    for name in ("a", "b", "c"):
        backend.commit("pods", "ADDED", "default", name, obj(name), None)
    backend.close()
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(lines[0] + b"not json\n" + lines[2])
    with pytest.raises(StorageUnavailable, match="line 2"):
        FileBackend(log)


def test_one_process_at_a_time(tmp_path: Path) -> None:
    backend = FileBackend(tmp_path / "objects.jsonl")
    with pytest.raises(StorageUnavailable, match="in use by another process"):
        FileBackend(tmp_path / "objects.jsonl")
    backend.close()
    FileBackend(tmp_path / "objects.jsonl").close()


def test_the_log_is_rewritten_to_its_live_objects_atomically(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(file_module, "COMPACT_MARGIN", 4)
    log = tmp_path / "objects.jsonl"
    backend = FileBackend(log)
    revision = backend.commit("pods", "ADDED", "default", "a", obj("a", n=0), None)
    for n in range(1, 20):
        revision = backend.commit("pods", "MODIFIED", "default", "a", obj("a", n=n), revision)
    assert len(log.read_bytes().splitlines()) < 20  # rewritten along the way, not one line per write
    assert not (tmp_path / "objects.jsonl.tmp").exists()
    backend.close()
    reopened = FileBackend(log)
    snapshot = reopened.load()
    assert snapshot.revision == revision
    assert snapshot.items[0][1]["spec"] == {"n": 19}
    assert snapshot.items[0][1]["metadata"]["resourceVersion"] == str(revision)
    reopened.close()


WRITER = """
import sys
from pyop.apiserver.storage.file import FileBackend
backend = FileBackend(sys.argv[1])
for i in range(100000):
    backend.commit("pods", "ADDED", "default", f"p{i}", {"metadata": {"name": f"p{i}"}, "pad": "x" * 2000}, None)
    print(i, flush=True)  # acknowledged: commit returned after the fsync
"""


def test_every_acknowledged_write_survives_a_kill(tmp_path: Path) -> None:
    log = tmp_path / "objects.jsonl"
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(log)], stdout=subprocess.PIPE, text=True)
    assert writer.stdout is not None
    acknowledged = -1
    for line in writer.stdout:
        acknowledged = int(line)
        if acknowledged >= 200:
            break
    writer.send_signal(signal.SIGKILL)  # in the middle of whatever write comes next
    writer.wait()
    acknowledged = max([acknowledged, *(int(line) for line in writer.stdout)])
    backend = FileBackend(log)
    names = {obj["metadata"]["name"] for _, obj in backend.load().items}
    assert {f"p{i}" for i in range(acknowledged + 1)} <= names
    backend.commit("pods", "ADDED", "default", "after", {"metadata": {"name": "after"}}, None)
    backend.close()
    assert FileBackend(log).load().items[-1][1]["metadata"]["name"] == "after"
