"""A transcript nested too deeply for the redactor never crashes a resume or an adoption (SPEC §4, §7, §9).

A JSON line nested a few hundred levels deep still parses (the parsers stop near a thousand), so `sessions show`,
`list`, `search`, `export` and `fsck` read it; but every record a resume or `sessions adopt` copies into the new
session is redacted on the way, by a walk that recursed once per level: a planted session (committed in a clone,
adopted by the user) or a session of one's own holding such a line made `sessions adopt`, `-c` and `--resume`
end in a Python traceback, every time. Now a record the redactor cannot take is left out of the copy with one
line on stderr, as a live turn's record already was.
"""

from __future__ import annotations

import json

import pytest

from evo_agent.session import SessionStore

from .hostile import clone, git, upstream


def _nested(depth: int) -> list:
    value: list | str = "deep"
    for _ in range(depth):
        value = [value]
    assert isinstance(value, list)
    return value


def _deep_lines(session_id: str, where: str, depth: int) -> str:
    """A tool call and its result, one of them holding a value nested `depth` levels deep."""
    envelope = {"timestamp": "2026-01-01T00:00:00.000+00:00", "agent_version": "0.1.0", "session_id": session_id,
                "cwd": "/src/x"}
    payload = _nested(depth)
    call = {"type": "tool_use", "id": "toolu_deep", "name": "bash",
            "input": {"command": "true", **({"extra": payload} if where == "tool_use" else {})}}
    result = {"type": "tool_result", "tool_use_id": "toolu_deep",
              "content": payload if where == "tool_result" else "ok"}
    content = [result, {"type": "text", "text": "go on", **({"extra": payload} if where == "text" else {})}]
    lines = [json.dumps({**envelope, "type": "assistant", "message": {"role": "assistant", "content": [call]}}),
             json.dumps({**envelope, "type": "user", "message": {"role": "user", "content": content}})]
    for line in lines:
        json.loads(line)  # the control: every line parses, so every reader meets it
    return "\n".join(lines) + "\n"


def _session_with_deep_lines(project, where: str, depth: int) -> str:
    store = SessionStore(project, warn=lambda line: None)
    source = store.create(model="m", provider="demo", git_branch=None)
    source.user({"role": "user", "content": "first prompt"})
    source.assistant({"role": "assistant", "content": [{"type": "text", "text": "ok"}]}, input_tokens=1,
                     output_tokens=1)
    source.checkpoint()
    with source.path.open("a") as f:
        f.write(_deep_lines(source.session_id, where, depth))
    return source.session_id


def _no_traceback(result) -> None:
    assert "Traceback" not in result.err and "RecursionError" not in result.err, result.err[-2000:]


CASES = [("tool_use", 600), ("tool_result", 750), ("text", 900)]


@pytest.mark.parametrize(("where", "depth"), CASES)
def test_adopting_a_planted_session_with_a_deep_record_ends_in_one_line(tmp_path, demo_cli, where, depth):
    author = tmp_path / "author"
    author.mkdir()
    assert git(author, "init", "-q").returncode == 0
    sid = _session_with_deep_lines(author, where, depth)
    victim = clone(upstream(tmp_path, {f".evo-agent/sessions/{sid}/messages.jsonl":
                                       (author / ".evo-agent" / "sessions" / sid / "messages.jsonl").read_text()}),
                   tmp_path / "victim")
    cli = type(demo_cli)(victim, demo_cli.env)
    shown = cli.run("sessions", "show", sid)
    assert shown.rc == 0 and "first prompt" in shown.out  # the planted session is read
    adopted = cli.run("sessions", "adopt", sid)
    _no_traceback(adopted)
    assert adopted.rc == 1 and adopted.err_lines[-1].startswith(f"evo-agent: session {sid} was not adopted")
    assert [ln for ln in adopted.err_lines if "cannot encode" in ln], (adopted.out, adopted.err)


@pytest.mark.parametrize(("where", "depth"), CASES)
@pytest.mark.parametrize("how", ["continue", "resume"])
def test_continuing_a_session_with_a_deep_record_starts_without_it(demo_cli, where, depth, how):
    sid = _session_with_deep_lines(demo_cli.project, where, depth)
    args = ["-c"] if how == "continue" else ["--resume", sid]
    result = demo_cli.run(*args, "-p", "hello again")
    _no_traceback(result)
    assert result.rc == 0, result.err[-2000:]
    assert [ln for ln in result.err_lines if "cannot encode" in ln]
    new_id = result.hint_id()
    again = demo_cli.run("--resume", new_id, "-p", "and again")  # the new session resumes as any other
    assert again.rc == 0 and "cannot encode" not in again.err, again.err[-2000:]
