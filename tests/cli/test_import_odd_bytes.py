"""Real transcripts with odd bytes in them: CRLF line ends, bytes that are not UTF-8, lone surrogates, a
last line cut mid-record. Each is a real fixture changed as a damaged disk, a hand edit or a kill leaves it;
the import keeps what the other agent itself would read, and resumes API-valid."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.import_helpers import fixture, resume_request

SOURCES = {"claude-code": ("claude_code", "2.1.332/tools"), "codex": ("codex", "tools")}


def _import(cli, agent: str, source: Path) -> tuple[str, str]:
    result = cli.run("sessions", "import", agent, str(source))
    assert result.rc == 0 and "Traceback" not in result.err, result.err
    return result.out.split(" → ", 1)[1].split(" ", 1)[0], result.out


def _original(cli, model_server, agent: str) -> list[dict]:
    folder, name = SOURCES[agent]
    sid, _out = _import(cli, agent, fixture(folder, name))
    return resume_request(cli, model_server, sid)


@pytest.mark.parametrize("agent", sorted(SOURCES))
def test_bytes_that_are_not_utf8_cost_those_characters_not_the_line(cli, model_server, tmp_path, agent):
    """Claude Code (Node) reads a line with bytes that are not UTF-8 with U+FFFD in their place: the import
    dropped the whole line, and with it the user's prompt."""
    folder, name = SOURCES[agent]
    original = fixture(folder, name)
    first = _original(cli, model_server, agent)[0]["content"][0]["text"]
    assert first.encode() in original.read_bytes()
    source = tmp_path / original.name.replace(".jsonl", "-odd.jsonl")
    source.write_bytes(original.read_bytes().replace(first.encode(), b"\xff\xfe " + first.encode()))
    sid, out = _import(cli, agent, source)
    assert "0 lines skipped" in out, out
    sent = resume_request(cli, model_server, sid)
    assert sent[0]["content"][0]["text"] == "\ufffd\ufffd " + first


@pytest.mark.parametrize("agent", sorted(SOURCES))
def test_crlf_line_ends_import_as_the_same_conversation(cli, model_server, tmp_path, agent):
    folder, name = SOURCES[agent]
    original = fixture(folder, name)
    source = tmp_path / original.name.replace(".jsonl", "-crlf.jsonl")
    source.write_bytes(original.read_bytes().replace(b"\n", b"\r\n"))
    sid, out = _import(cli, agent, source)
    assert "0 lines skipped" in out, out
    assert resume_request(cli, model_server, sid) == _original(cli, model_server, agent)


@pytest.mark.parametrize("agent", sorted(SOURCES))
def test_a_lone_surrogate_in_a_text_resumes(cli, model_server, tmp_path, agent):
    """JSON may escape half a UTF-16 pair (`"\\ud800"`), which Python reads as a lone surrogate: the session
    holds it and the resume sends it escaped, as the other agent's own JSON.stringify would."""
    folder, name = SOURCES[agent]
    original = fixture(folder, name)
    first = _original(cli, model_server, agent)[0]["content"][0]["text"]
    escaped = json.dumps(first)[1:-1]
    assert escaped in original.read_text()
    source = tmp_path / original.name.replace(".jsonl", "-surrogate.jsonl")
    source.write_text(original.read_text().replace(escaped, "\\ud800 \\udfff " + escaped))
    sid, out = _import(cli, agent, source)
    sent = json.dumps(resume_request(cli, model_server, sid))
    assert "\\ud800 \\udfff" in sent


@pytest.mark.parametrize("agent", sorted(SOURCES))
def test_a_last_line_cut_mid_record_is_one_line_skipped(cli, model_server, tmp_path, agent):
    folder, name = SOURCES[agent]
    original = fixture(folder, name)
    lines = original.read_bytes().splitlines(keepends=True)
    source = tmp_path / original.name.replace(".jsonl", "-cut.jsonl")
    source.write_bytes(b"".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])
    sid, out = _import(cli, agent, source)
    assert "1 lines skipped" in out and "1 unreadable line" in out, out
    resume_request(cli, model_server, sid)
