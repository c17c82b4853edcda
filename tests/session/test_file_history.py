"""File history for rewinds (issue #19): what is kept, how it is put back, a restore killed half-way."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from evo_agent.session import file_history as fh
from evo_agent.session.file_history import FileHistory, collect_changes, restore_change
from tests.helpers import wait_for


def _history(tmp_path: Path):
    records: list[tuple[Path, dict]] = []
    session_dir = tmp_path / "session"
    session_dir.mkdir(mode=0o700)

    def append(rtype: str, **fields) -> bool:
        records.append((session_dir, {"type": rtype, **fields}))
        return True

    return FileHistory(session_dir, append), records


def test_states_and_restore(tmp_path):
    history, records = _history(tmp_path)
    edited, created = tmp_path / "edited.txt", tmp_path / "created.txt"
    edited.write_text("before\n")
    os.chmod(edited, 0o640)
    for path, content in ((edited, "after\n"), (created, "new\n")):
        history.before_change(path, "toolu_1")
        path.write_text(content)
        history.after_change(path, "toolu_1")
    changes = {Path(c.path).name: c for c in collect_changes(records)}
    assert changes["edited.txt"].state() == "restorable" and changes["created.txt"].state() == "restorable"
    restore_change(changes["edited.txt"])
    restore_change(changes["created.txt"])
    assert edited.read_text() == "before\n" and oct(edited.stat().st_mode & 0o777) == "0o640"
    assert not created.exists()
    assert changes["edited.txt"].state() == "unchanged" and changes["created.txt"].state() == "unchanged"
    edited.write_text("someone else\n")
    assert changes["edited.txt"].state() == "changed-since"


def test_a_file_too_big_to_keep_is_noted(tmp_path, monkeypatch):
    monkeypatch.setattr(fh, "MAX_BACKUP_BYTES", 10)
    history, records = _history(tmp_path)
    big = tmp_path / "big.bin"
    big.write_bytes(b"x" * 100)
    history.before_change(big, "toolu_1")
    big.write_bytes(b"y")
    history.after_change(big, "toolu_1")
    (change,) = collect_changes(records)
    assert change.not_kept == "too big to keep" and change.backup is None
    assert not (tmp_path / "session" / "file-history").exists()


def test_a_backup_name_cannot_point_out_of_the_session(tmp_path):
    (tmp_path / "secret").write_text("x")
    record = {"type": "file_backup", "path": str(tmp_path / "f"), "existed": True, "backup": "file-history/../../secret"}
    (change,) = collect_changes([(tmp_path / "session", record)])
    assert change.backup is None and change.not_kept


def test_a_restore_killed_half_way_leaves_whole_files_and_can_be_rerun(tmp_path):
    files = tmp_path / "files"
    files.mkdir()
    history, records = _history(tmp_path)
    for i in range(300):
        path = files / f"f{i:03}.txt"
        path.write_text(f"before {i}\n" * 2000)
        history.before_change(path, f"toolu_{i}")
        path.write_text(f"after {i}\n")
        history.after_change(path, f"toolu_{i}")
    import json

    (tmp_path / "records.json").write_text(json.dumps([[str(d), r] for d, r in records]))
    script = textwrap.dedent(f"""
        import json, sys
        from pathlib import Path
        from evo_agent.session.file_history import collect_changes, restore_change
        records = [(Path(d), r) for d, r in json.loads(Path({str(tmp_path / 'records.json')!r}).read_text())]
        for change in collect_changes(records):
            if change.state() == "restorable":
                restore_change(change)
                print("restored", change.path, flush=True)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, start_new_session=True)
    seen = []
    wait_for(lambda: len(seen) >= 20 or seen.append(proc.stdout.readline()) or False, what="20 files restored")
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(10)
    proc.stdout.close()
    contents = [(files / f"f{i:03}.txt").read_text() for i in range(300)]
    assert all(c in (f"before {i}\n" * 2000, f"after {i}\n") for i, c in enumerate(contents))
    for change in collect_changes(records):  # the rerun finishes the job
        if change.state() == "restorable":
            restore_change(change)
    assert all((files / f"f{i:03}.txt").read_text() == f"before {i}\n" * 2000 for i in range(300))
