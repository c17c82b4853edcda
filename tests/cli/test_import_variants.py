"""Real transcripts changed by hand the way a clock, a sync tool or another version changes them: the import
resumes with the conversation the unchanged transcript gives (tests/fixtures: lines of the real peers)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.cli.claude_code_requests import said
from tests.cli.import_helpers import FIXTURES, resume_request


def _records(name: str) -> list[dict[str, Any]]:
    (path,) = (FIXTURES / "claude_code" / "2.1.332" / name).glob("*.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()]


def _codex_records(name: str) -> list[dict[str, Any]]:
    (path,) = (FIXTURES / "codex" / name).glob("*.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()]


def _resumed(cli, model_server, folder: Path, records: list[dict[str, Any]],
             agent: str = "claude-code") -> tuple[list[tuple[str, ...]], str]:
    """What a resume of the import of `records` (written as a transcript in `folder`) sends, as `said` atoms."""
    folder.mkdir()
    source = folder / ("rollout-2026-12-05T00-00-00-01a24387-a7fd-7fd2-adaf-809aab44c6e8.jsonl" if agent == "codex"
                       else "session.jsonl")
    source.write_text("".join(json.dumps(record) + "\n" for record in records))
    result = cli.run("sessions", "import", agent, str(source))
    assert result.rc == 0, result.err
    sid = result.out.split(" → ", 1)[1].split(" ", 1)[0]
    return said(resume_request(cli, model_server, sid)), result.out


def test_a_clock_set_back_mid_session_keeps_the_conversation_after_it(cli, model_server, tmp_path):
    """Resumed on a machine whose clock is behind (or after the clock was corrected), later lines are stamped
    before earlier ones. Claude Code resumes at the end of the conversation (its leaf, the message nothing
    follows); the import took the message with the newest stamp as the end and left everything after it out
    as a rewound branch."""
    records = _records("chain")
    whole, _ = _resumed(cli, model_server, tmp_path / "whole", records)
    later = next(i for i, r in enumerate(records) if r.get("type") == "user"
                 and r["message"].get("content") == "now the word banana")
    behind = [dict(r, timestamp="2020" + r["timestamp"][4:]) if i >= later and "timestamp" in r else r
              for i, r in enumerate(records)]
    ours, out = _resumed(cli, model_server, tmp_path / "behind", behind)
    assert ours == whole, out
    assert ("text", "apple, banana and cherry") in ours and "rewound" not in out


def test_one_early_line_stamped_in_the_future_leaves_nothing_out(cli, model_server, tmp_path):
    records = _records("tools")
    whole, _ = _resumed(cli, model_server, tmp_path / "whole", records)
    first = next(r for r in records if r.get("type") == "assistant")
    skewed = [dict(r, timestamp="2031-01-01T00:00:00.000Z") if r is first else r for r in records]
    ours, out = _resumed(cli, model_server, tmp_path / "skewed", skewed)
    assert ours == whole, out


def test_a_transcript_stamped_ahead_of_this_machines_clock_resumes(cli, model_server, tmp_path):
    """Written on a machine whose clock was ahead (or imported on one whose clock is behind): the import kept the
    source's stamps, so the new session was "dated in the future", refused as someone else's, never resumed."""
    for agent, records in (("claude-code", _records("tools")), ("codex", _codex_records("tools"))):
        ahead = [dict(r, timestamp="2099" + r["timestamp"][4:]) if isinstance(r.get("timestamp"), str) else r
                 for r in records]
        whole, _ = _resumed(cli, model_server, tmp_path / f"{agent}-whole", records, agent)
        ours, out = _resumed(cli, model_server, tmp_path / f"{agent}-ahead", ahead, agent)
        assert ours == whole, out


def test_lines_written_twice_are_read_once(cli, model_server, tmp_path):
    """The same uuid twice (a transcript appended to itself by a sync or a copy, a line written again): Claude
    Code keeps one message per uuid; the import sent each prompt, answer, call and result twice."""
    records = _records("chain")
    whole, _ = _resumed(cli, model_server, tmp_path / "whole", records)
    twice = [r for r in records for _ in range(2 if r.get("type") in ("user", "assistant") else 1)]
    ours, out = _resumed(cli, model_server, tmp_path / "twice", twice)
    assert ours == whole, out
    appended, out = _resumed(cli, model_server, tmp_path / "appended", records + records)
    assert appended == whole, out


def test_claude_codes_own_notes_on_a_rewound_branch_are_not_reported_as_not_understood(cli, tmp_path):
    """A slash command run on a branch later rewound leaves Claude Code's `isMeta` note there: the import
    reported it as a record it did not understand ("not understood: 1 user"), as if something were lost."""
    records = _records("rewind")
    banana = next(r for r in records if r.get("type") == "assistant" and "Noted: banana." in json.dumps(r))
    note = dict(banana, type="user", uuid="0badc0de-0000-4000-8000-000000000001", parentUuid=banana["uuid"],
                isMeta=True, message={"role": "user", "content": "<local-command-caveat>Caveat: the messages below "
                                      "were generated by the user while running local commands.</local-command-caveat>"})
    at = records.index(banana) + 1
    source = tmp_path / "session.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in records[:at] + [note] + records[at:]))
    result = cli.run("sessions", "import", "claude-code", str(source))
    assert result.rc == 0, result.err
    assert "not understood" not in result.out and "left out: 2 messages of rewound branches" in result.out, result.out


def _cut_points(lines: list[str], count: int) -> list[int]:
    """`count` lines spread over a transcript, each a conversation's line (a kill while Claude Code or Codex wrote it)."""
    talk = [i for i, line in enumerate(lines) if any(kind in line for kind in (
        '"type":"user"', '"type":"assistant"', '"response_item"', '"compacted"', '"compact_boundary"'))]
    return [talk[i * (len(talk) - 1) // (count - 1)] for i in range(count)]


def test_a_long_session_killed_while_writing_any_line_imports_and_resumes(cli, model_server, tmp_path):
    """Killed mid-write, a transcript ends in half a line: wherever that falls in a long session resumed and
    compacted many times, the import says so in its counts and resumes API-valid (checked by resume_request)."""
    sources = [("claude-code", FIXTURES / "claude_code" / "2.1.332" / "chain"),
               ("claude-code", FIXTURES / "claude_code" / "2.0.77" / "chain"),
               ("codex", FIXTURES / "codex" / "marathon"), ("codex", FIXTURES / "codex" / "marathon077")]
    for agent, folder in sources:
        (source,) = [p for p in folder.glob("*.jsonl") if p.stat().st_size and not p.name.startswith("agent-")
                     and (agent == "codex" or "remember the word apple" in p.read_text())]
        lines = source.read_text().splitlines(keepends=True)
        for at in _cut_points(lines, 6)[1:]:
            cut = tmp_path / f"{agent}-{folder.parent.name}-{at}" / source.name
            cut.parent.mkdir()
            cut.write_text("".join(lines[:at]) + lines[at][: len(lines[at]) // 2])
            result = cli.run("sessions", "import", agent, str(cut))
            assert result.rc == 0 and "1 unreadable line" in result.out, (source, at, result.out, result.err)
            resume_request(cli, model_server, result.out.split(" → ", 1)[1].split(" ", 1)[0])
