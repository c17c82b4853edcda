"""The prototype in benchmarks/proposals.py must restore exactly what the library restores.

RESULTS.md reports its speed as a proposed fix; that claim holds only if the result is identical,
including on torn, corrupt and oddly placed lines, and across block edges.
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import proposals  # noqa: E402
from evo_agent.session import SessionStore, load_for_resume  # noqa: E402
from evo_agent.session import resume as resume_mod  # noqa: E402

FIELDS = ("messages", "skipped_lines", "repairs", "compact_count", "summary", "first_prompt", "records", "file_size")


def _write_session(root: Path, rng: random.Random) -> Path:
    rec = SessionStore(root, warn=lambda _: None).create(model="m", provider="demo", git_branch=None)
    tool = 0
    for _ in range(rng.randint(0, 12)):
        roll = rng.random()
        if roll < 0.1:
            rec.compact_boundary("summary " + "s" * rng.randint(0, 300), rng.randint(1, 5), "auto")
        elif roll < 0.15:
            rec.append("user", message={"role": "user", "content": 'mentions "compact_boundary" literally'})
        elif roll < 0.2:
            rec.assistant({"role": "assistant", "content": [
                {"type": "tool_use", "id": f"t{tool}", "name": "x", "input": {"type": "compact_boundary"}}]})
            tool += 1
        else:
            rec.user({"role": "user", "content": "u" * rng.randint(1, 400)})
            tid = f"t{tool}"
            tool += 1
            rec.assistant({"role": "assistant", "content": [
                {"type": "text", "text": "a" * rng.randint(1, 300)},
                {"type": "tool_use", "id": tid, "name": "bash", "input": {"command": "ls"}}]})
            if rng.random() < 0.8:
                rec.user({"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid, "content": "r"}]})
    path = rec.path
    data = bytearray(path.read_bytes())
    for _ in range(rng.randint(0, 3)):  # corruption: torn tails, junk lines, blank lines, flipped bytes
        kind = rng.random()
        if kind < 0.3:
            del data[rng.randint(0, len(data)):]
        elif kind < 0.6:
            at = rng.randint(0, len(data))
            data[at:at] = rng.choice([b"\n", b"garbage\n", b"  \n", b"[1,2]\n", b'{"type":"compact_boundary"}\n'])
        elif data:
            data[rng.randrange(len(data))] = rng.randrange(256)
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize("block", [7, 64, 1 << 20])
def test_fast_loader_restores_what_the_library_restores(tmp_path, monkeypatch, block):
    monkeypatch.setattr(resume_mod, "BLOCK", block)
    monkeypatch.setattr(proposals, "BLOCK", block)
    rng = random.Random(block)
    for i in range(60):
        path = _write_session(tmp_path / f"p{i}", rng)
        a, b = load_for_resume(path), proposals.load_for_resume_fast(path)
        for field in FIELDS:
            assert getattr(a, field) == getattr(b, field), (field, path.read_bytes()[-400:])


def test_first_screen_by_mtime_lists_newest_sessions(tmp_path):
    store = SessionStore(tmp_path, warn=lambda _: None)
    ids = []
    for i in range(5):
        rec = store.create(model="m", provider="demo", git_branch=None)
        rec.user({"role": "user", "content": f"prompt {i}"})
        rec.checkpoint()
        ids.append(rec.id)
        time.sleep(0.02)  # distinct ids, timestamps and (coarse) mtimes: no ties to order
    store.create(model="m", provider="demo", git_branch=None)  # empty: hidden, as list() hides it
    rows, seen = proposals.first_screen_by_mtime(tmp_path, rows=3)
    assert seen == 6
    assert [r.id for r in rows] == [r.id for r in store.list()][:3]
