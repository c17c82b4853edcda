"""Hostile and malformed sources: an import reports what it could not read, in one line, never a traceback.

The sources here are written by the test (real files, imported by the real CLI), shaped like what a
damaged disk, a bug in the other agent or a hand-edited file leaves.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evo_agent.importers import model, read_claude_code, source_fingerprint, write_import
from evo_agent.importers.claude_code import project_folder
from evo_agent.importers.codex import read_codex
from evo_agent.session import SessionStore
from tests.api_rules import check_request
from tests.cli.import_helpers import fixture, recorded_in, resume_request


def _with_junk(tmp_path: Path, agent: str, name: str, *junk: bytes) -> Path:
    source = tmp_path / fixture(agent, name).name
    source.write_bytes(b"".join(junk) + fixture(agent, name).read_bytes() + b"".join(junk))
    return source


DEEP = b"[" * 100_000 + b"]" * 100_000 + b"\n"     # past what Python's JSON parser can nest
DEEP_INPUT = (b'{"type":"assistant","uuid":"deep","message":{"id":"m_deep","role":"assistant","content":'
              b'[{"type":"tool_use","id":"toolu_deep","name":"Bash","input":' + b'{"a":' * 300 + b"1"
              + b"}" * 300 + b"}]}}\n")
BINARY = bytes(range(256)) + b"\n"
UNKNOWN = b'{"type":"hologram","uuid":"h1","payload":{"type":"hologram"}}\n'


def test_junk_lines_in_a_claude_code_transcript_are_counted_by_kind(cli, model_server, tmp_path):
    source = _with_junk(tmp_path, "claude_code", "tools", DEEP, BINARY, UNKNOWN, b"42\n", b"{\"type\": \n")
    result = cli.run("sessions", "import", "claude-code", str(source))
    assert result.rc == 0, result.err
    assert "(10 messages, 0 subagents, 0 compactions, 12 lines skipped)" in result.out
    assert "not understood: 10 unreadable line, 2 hologram" in result.out  # BINARY holds a newline: 2 lines
    sid = result.out.split(" → ", 1)[1].split(" ", 1)[0]
    sent = json.dumps(resume_request(cli, model_server, sid))
    assert "what files are here?" in sent and "Wrote notes.md and changed the greeting." in sent


def test_junk_lines_in_a_codex_rollout_are_counted_by_kind(cli, model_server, tmp_path):
    source = _with_junk(tmp_path, "codex", "tools", DEEP, BINARY, UNKNOWN, b"[]\n")
    result = cli.run("sessions", "import", "codex", str(source))
    assert result.rc == 0, result.err
    assert "(8 messages, 0 subagents, 0 compactions, 10 lines skipped)" in result.out
    assert "not understood: 8 unreadable line, 2 hologram" in result.out
    resume_request(cli, model_server, result.out.split(" → ", 1)[1].split(" ", 1)[0])


def test_a_tool_call_nested_past_what_a_session_can_hold_resumes_without_its_input(cli, model_server, tmp_path):
    source = tmp_path / "deep.jsonl"
    source.write_bytes(b'{"type":"user","uuid":"u1","message":{"role":"user","content":"go deep"}}\n' + DEEP_INPUT)
    result = cli.run("sessions", "import", "claude-code", str(source))
    assert result.rc == 0, result.err
    sent = resume_request(cli, model_server, result.out.split(" → ", 1)[1].split(" ", 1)[0])
    (call,) = [b for b in sent[1]["content"] if b["type"] == "tool_use"]
    assert call["input"] == {}
    assert sent[2]["content"][0]["is_error"] is True  # never answered: marked interrupted on resume


def test_a_line_past_the_limit_is_skipped_unread(tmp_path, monkeypatch):
    monkeypatch.setattr(model, "MAX_LINE", 1000)
    source = tmp_path / "long.jsonl"
    huge = json.dumps({"type": "user", "message": {"role": "user", "content": "x" * 50_000}})
    source.write_text(huge + "\n" + json.dumps({"type": "user", "message": {"role": "user", "content": "short"}})
                      + "\n")
    imported = read_claude_code(source)
    sid = write_import(SessionStore(tmp_path / "p", warn=lambda line: None), imported, source_fingerprint(source), None)
    assert sid is not None and imported.counts() == (1, 0, 0)
    assert imported.skipped == Counter({"line too long": 1})


def test_endless_kinds_of_records_are_reported_in_one_short_line(cli, tmp_path):
    source = tmp_path / "kinds.jsonl"
    source.write_text("".join(json.dumps({"type": f"kind-{i}-" + "z" * 500}) + "\n" for i in range(500))
                      + json.dumps({"type": "user", "message": {"role": "user", "content": "hi"}}) + "\n")
    result = cli.run("sessions", "import", "claude-code", str(source))
    assert result.rc == 0, result.err
    (line,) = [line for line in result.out.splitlines() if "not understood" in line]
    assert len(line) < 1500 and "480 other kinds" in line


def test_a_file_with_no_conversation_is_one_error_line_and_no_session(cli, tmp_path):
    for agent, junk in (("claude-code", BINARY * 3), ("codex", DEEP + b"{}\n"), ("claude-code", b"")):
        source = tmp_path / "junk.jsonl"
        source.write_bytes(junk)
        before = cli.run("sessions", "list", "--all").out
        for options in ((), ("--dry-run",)):
            result = cli.run("sessions", "import", agent, *options, str(source))
            assert result.rc == 1 and len(result.err_lines) == 1, result.err
            assert "nothing to import from" in result.err and "Traceback" not in result.err
        assert cli.run("sessions", "list", "--all").out == before
    # Another agent's transcript given to the wrong importer says so too.
    wrong = cli.run("sessions", "import", "codex", str(fixture("claude_code", "tools")))
    assert wrong.rc == 1 and "no Codex conversation in it" in wrong.err


# Property: whatever records a file holds, the import never raises and resumes API-valid.
_scalar = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.text(max_size=6))
_json = st.recursive(_scalar, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                      st.dictionaries(st.text(max_size=5), inner, max_size=3)),
                     max_leaves=8)
_block_type = st.sampled_from(["text", "tool_use", "tool_result", "thinking", "image", "redacted_thinking", "odd"])
_block = st.fixed_dictionaries({"type": _block_type}, optional={
    "text": _json, "id": _json, "name": _json, "input": _json, "tool_use_id": _json, "content": _json,
    "thinking": _json, "signature": _json, "is_error": _json, "source": _json})
_compact_meta = st.one_of(_json, st.fixed_dictionaries({}, optional={
    "trigger": _json, "preservedMessages": st.one_of(_json, st.fixed_dictionaries({}, optional={
        "uuids": st.one_of(_json, st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=3))}))}))
_claude_record = st.fixed_dictionaries(
    {"type": st.sampled_from(["user", "assistant", "system", "summary", "odd"])},
    optional={"message": st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"])}, optional={
        "content": st.one_of(st.text(max_size=8), st.lists(_block, max_size=3), _json), "id": _json,
        "usage": _json, "model": _json}),
        "uuid": st.sampled_from(["a", "b", "c", "d"]), "parentUuid": st.sampled_from(["a", "b", "c", None, 5]),
        "timestamp": _json, "isMeta": _json, "isSidechain": _json, "isApiErrorMessage": _json,
        "subtype": st.sampled_from(["compact_boundary", "x"]), "compactMetadata": _compact_meta,
        "isCompactSummary": _json})
_item = st.fixed_dictionaries(
    {"type": st.sampled_from(["message", "function_call", "function_call_output", "custom_tool_call",
                              "custom_tool_call_output", "web_search_call", "reasoning", "tool_search_call",
                              "tool_search_output", "agent_message", "additional_tools", "odd"])},
    optional={"role": st.sampled_from(["user", "assistant", "developer"]), "content": _json, "name": _json,
              "arguments": _json, "call_id": _json, "output": st.one_of(_json, st.lists(_json, max_size=3)),
              "action": _json, "input": _json, "namespace": _json, "tools": _json})
_fork_meta = st.fixed_dictionaries({"type": st.just("session_meta"), "payload": st.fixed_dictionaries(
    {"id": st.sampled_from(["01a2459a-2698-79f1", "x"])},
    optional={"history_base": st.one_of(_json, st.fixed_dictionaries(
        {"thread_id": st.one_of(st.sampled_from(["01a2459a-2501-7162", "01a2459a-2698-79f1", "../../x"]), _json),
         "end_ordinal_exclusive": st.one_of(st.integers(-3, 1 << 40), _json)})),
        "forked_from_id": _json, "forked_from_ordinal_exclusive": _json})})
_codex_record = st.one_of(
    st.fixed_dictionaries({"type": st.sampled_from(["response_item", "compacted", "event_msg", "odd"]),
                           "payload": st.one_of(_item, _json)}, optional={"timestamp": _json}),
    _item, _fork_meta)


def _import_and_check(work: Path, lines: list[dict], read) -> None:
    source = work / "s.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines))
    store = SessionStore(work / "project", warn=lambda line: None)
    sid = write_import(store, read(source), source_fingerprint(source), None)
    if sid is None:
        return
    messages = store.load(sid).messages
    if messages:
        check_request(messages + [{"role": "user", "content": "next"}] if messages[-1]["role"] == "assistant"
                      else messages)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(_claude_record, max_size=8))
def test_any_claude_code_records_import_without_raising(tmp_path_factory, lines):
    _import_and_check(tmp_path_factory.mktemp("cc"), lines, read_claude_code)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(_codex_record, max_size=8))
def test_any_codex_records_import_without_raising(tmp_path_factory, monkeypatch, lines):
    monkeypatch.setenv("CODEX_HOME", str(tmp_path_factory.getbasetemp() / "no-codex-home"))  # a fork's parent: none
    _import_and_check(tmp_path_factory.mktemp("cx"), lines, read_codex)


def test_import_all_goes_on_past_a_source_with_no_conversation(cli, tmp_path):
    config = tmp_path / "claude"
    folder = config / "projects" / project_folder(cli.project)
    recorded_in(fixture("claude_code", "tools"), cli.project, folder / "zzz-real.jsonl")
    (folder / "aaa-junk.jsonl").write_bytes(BINARY)
    result = cli.run("sessions", "import", "claude-code", "--all", env={**cli.env, "CLAUDE_CONFIG_DIR": str(config)})
    assert result.rc == 1 and len(result.err_lines) == 1 and "aaa-junk.jsonl: no Claude Code conversation" in result.err
    assert "zzz-real.jsonl → " in result.out and "(10 messages" in result.out


def test_past_the_branch_map_limit_every_line_is_kept_in_file_order(tmp_path, monkeypatch):
    from evo_agent.importers import claude_code

    monkeypatch.setattr(claude_code, "MAX_TREE", 3)
    monkeypatch.setattr(claude_code, "MAX_HELD", 1)
    source = tmp_path / "s.jsonl"
    lines = [{"type": "user", "uuid": "u1", "message": {"role": "user", "content": "one"}},
             {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "message": {"id": "m1", "role": "assistant",
                                                                                 "content": [{"type": "text", "text": "1"}]}},
             {"type": "user", "uuid": "u2", "parentUuid": "u1", "message": {"role": "user", "content": "two"}},
             {"type": "assistant", "uuid": "a2", "parentUuid": "u2", "message": {"id": "m2", "role": "assistant",
                                                                                 "content": [{"type": "text", "text": "2"}]}}]
    source.write_text("".join(json.dumps(line) + "\n" for line in lines))
    imported = read_claude_code(source)
    sid = write_import(SessionStore(tmp_path / "p", warn=lambda line: None), imported, source_fingerprint(source), None)
    assert sid is not None and imported.counts() == (4, 0, 0) and not imported.left_out
