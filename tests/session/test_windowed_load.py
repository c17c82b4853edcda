"""`load_for_resume(..., window=N)`: an oversized history held as its head and tail only (issue #14 item 4).

A windowed load must agree with the whole load wherever it keeps anything: its head is the
history's first messages, its tail the last ones, in between one marker message, and it knows
how many messages it left out.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from evo_agent.session import load_for_resume, summary_message
from evo_agent.session.jsonio import encode_line
from evo_agent.session.resume import BLOCK

SID = "1780227556183_b525857d"
FILLER = "lorem ipsum dolor sit amet " * 40  # ~1 KB
WINDOW = 1 << 18  # the 800-turn histories below are ~1.8 MB


def envelope(rtype: str, **fields) -> dict:  # noqa: ANN003
    return {"type": rtype, "timestamp": "2026-05-31T19:58:42.705+08:00", "agent_version": "0.1.0",
            "session_id": SID, "cwd": "/project", **fields}


def turn_records(i: int, filler: str = FILLER) -> list[dict]:
    """One user turn: a prompt, a tool call, its result, the answer."""
    tid = f"toolu_{i:08d}"
    return [
        envelope("user", message={"role": "user", "content": f"task {i}: {filler}"}),
        envelope("assistant", message={"role": "assistant", "content": [
            {"type": "text", "text": f"working on {i}"},
            {"type": "tool_use", "id": tid, "name": "read_file", "input": {"path": f"src/file_{i}.py"}}]}),
        envelope("user", message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": tid, "content": f"contents of file {i}: {filler}"}]}),
        envelope("assistant", message={"role": "assistant", "content": [{"type": "text", "text": f"done {i}"}]}),
    ]


def write_history(path: Path, turns: int, *, boundary_after: int | None = None,
                  middle_mentions_boundary: bool = False, filler: str = FILLER) -> Path:
    """A transcript of `turns` turns written as the recorder writes one (0600 in a 0700 directory)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    lines = [encode_line(envelope("session_start", model="claude-sonnet-4-5", provider="anthropic"))]
    for i in range(turns):
        text = filler
        if middle_mentions_boundary and i == turns // 2:
            text = filler + ' and a record {"type":"compact_boundary"} quoted in a prompt'
        lines += [encode_line(r) for r in turn_records(i, text)]
        if boundary_after is not None and i == boundary_after:
            lines.append(encode_line(envelope("compact_boundary", summary="the early work", compact_count=1,
                                              trigger="auto")))
    path.write_bytes(b"".join(lines))
    os.chmod(path, 0o600)
    return path


def test_a_history_inside_the_window_loads_whole(tmp_path):
    path = write_history(tmp_path / SID / "messages.jsonl", 40)
    whole = load_for_resume(path)
    windowed = load_for_resume(path, window=path.stat().st_size)
    assert not windowed.windowed and windowed.messages == whole.messages
    assert windowed.restored_count == len(whole.messages) == 160


def test_a_history_over_the_window_keeps_its_head_and_tail_and_counts_the_middle(tmp_path):
    path = write_history(tmp_path / SID / "messages.jsonl", 2000)  # ~4.5 MB
    whole = load_for_resume(path).messages
    loaded = load_for_resume(path, window=WINDOW)
    assert loaded.windowed
    gap = next(i for i, m in enumerate(loaded.messages) if "were not loaded" in json.dumps(m))
    head, tail = loaded.messages[:gap], loaded.messages[gap + 1:]
    assert head == whole[:len(head)] and tail == whole[-len(tail):]
    assert head[0]["content"].startswith("task 0:") and tail[-1]["content"][0]["text"] == "done 1999"
    assert tail[0]["content"].startswith("task ") and head[-1]["content"][0]["text"].startswith("done ")  # whole turns
    assert loaded.restored_count == len(whole) == len(head) + len(tail) + loaded.omitted_messages
    assert f"{loaded.omitted_messages:,} messages" in json.dumps(loaded.messages[gap], ensure_ascii=False)
    kept = len(json.dumps(head + tail))
    assert WINDOW // 2 < kept < WINDOW + 2 * BLOCK < path.stat().st_size / 2  # the window (in whole blocks), not all
    assert loaded.first_prompt.startswith("task 0:")


def test_the_head_starts_at_the_last_boundary_even_deep_in_the_middle(tmp_path):
    path = write_history(tmp_path / SID / "messages.jsonl", 2000, boundary_after=300)
    whole = load_for_resume(path).messages
    assert whole[0] == summary_message("the early work")
    loaded = load_for_resume(path, window=WINDOW)
    assert loaded.windowed and loaded.compact_count == 1 and loaded.summary == "the early work"
    assert loaded.messages[0] == summary_message("the early work")
    assert loaded.messages[1]["content"].startswith("task 301:")
    assert loaded.restored_count == len(whole)


def test_a_prompt_quoting_a_boundary_does_not_change_what_is_loaded(tmp_path):
    plain = load_for_resume(write_history(tmp_path / "a" / "messages.jsonl", 2000), window=WINDOW)
    quoting = load_for_resume(write_history(tmp_path / "b" / "messages.jsonl", 2000, middle_mentions_boundary=True),
                              window=WINDOW)
    assert plain.windowed and "task 1000:" not in json.dumps(plain.messages)  # the quote is in the middle
    assert quoting.messages == plain.messages and quoting.restored_count == plain.restored_count


def test_a_torn_last_line_is_still_skipped_and_counted(tmp_path):
    path = write_history(tmp_path / SID / "messages.jsonl", 800)
    with open(path, "ab") as f:
        f.write(encode_line(envelope("user", message={"role": "user", "content": "half"}))[:20])
    loaded = load_for_resume(path, window=WINDOW)
    assert loaded.windowed and loaded.skipped_lines == 1 and loaded.warning
