"""`sessions show` and `sessions list --limit`, run as the real console script; ids checked like everywhere else."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from evo_agent.session import SessionStore
from tests.builders import simple_session
from tests.cli.sessions_helpers import HOSTILE, rich_session
from tests.cli_runner import COMMAND


def one_line_error(result, rc=1):
    assert result.rc == rc, result
    assert len(result.err_lines) == 1 and result.err_lines[0].startswith("evo-agent: "), result.err
    assert "Traceback" not in result.err
    return result.err_lines[0]


def test_show_nests_the_subagent_under_its_call_and_pairs_every_result(demo_cli):
    rich = rich_session(demo_cli.project)
    out = demo_cli.run("sessions", "show", rich.source[:16]).out  # a unique prefix is enough
    lines = out.splitlines()
    task = next(i for i, line in enumerate(lines) if line.strip().startswith("▸ task"))
    start = next(i for i, line in enumerate(lines) if "┌ subagent explore" in line)
    end = next(i for i, line in enumerate(lines) if "└ finished" in line)
    assert task < start < end
    inside = lines[start + 1:end]
    assert all(line.lstrip().startswith("│") for line in inside)
    assert any("read_file (toolu_s1)" in line for line in inside)
    assert any("It sleeps instead of waiting." in line for line in inside)
    assert "✗ error" in out and "No such file or directory" in out
    assert "── compacted · #1 · manual" in out
    assert "no result (the tool was interrupted" in out  # toolu_04 never got one
    assert f"resumed as   {rich.resumed}" in out
    # Transcript text cannot drive the terminal: the escape character is shown, not sent.
    assert "\x1b" not in out and "^[[31mred" in out


def test_show_follows_the_resume_lineage_and_hides_restored_messages_unless_asked(demo_cli):
    rich = rich_session(demo_cli.project)
    store = SessionStore(demo_cli.project, warn=lambda line: None)
    third = store.resume(rich.resumed, model="m", provider="demo").recorder
    third.checkpoint()
    out = demo_cli.run("sessions", "show", third.session_id).out
    assert f"resumed from {rich.resumed} ← {rich.source}" in out
    assert "restored messages not shown" in out and "Fix it" not in out
    everything = demo_cli.run("sessions", "show", third.session_id, "--restored").out
    assert "Fix it" in everything and "Did it pass?" in everything


def test_long_results_are_cut_unless_full(demo_cli):
    rich = rich_session(demo_cli.project)
    short_ = demo_cli.run("sessions", "show", rich.source).out
    full = demo_cli.run("sessions", "show", rich.source, "--full").out
    assert "line 14" not in short_ and "5 more lines (--full shows everything)" in short_
    assert "line 14" in full and "more lines" not in full


def test_show_json_gives_every_record_and_every_sidechain(demo_cli):
    rich = rich_session(demo_cli.project)
    result = demo_cli.run("sessions", "show", rich.source, "--json")
    doc = json.loads(result.out)
    assert doc["id"] == rich.source and doc["resumed_as"] == [rich.resumed] and doc["live"] is False
    assert doc["records"] == demo_cli.records(rich.source)
    side = demo_cli.sessions_dir / rich.source / rich.sidechain
    assert doc["sidechains"] == {rich.sidechain: [json.loads(line) for line in side.read_text().splitlines()]}
    assert doc["meta"]["message_count"] == 9 and doc["unreadable_lines"] == []


def test_damaged_lines_are_shown_where_they_are_and_the_rest_still_renders(demo_cli):
    sid = simple_session(demo_cli.project, "first question")
    path = demo_cli.transcript(sid)
    with open(path, "ab") as f:  # damage after the three good records: garbage, then a torn last line
        f.write(b"\x00\x01 garbage that is not json\n")
        f.write(b'{"type":"user","message":{"role":"user","content":"cut sh')
    result = demo_cli.run("sessions", "show", sid)
    assert result.rc == 0 and "first question" in result.out
    assert "⚠ messages.jsonl line 4: unreadable line" in result.out
    assert "⚠ messages.jsonl line 5: torn last line (an interrupted write)" in result.out
    doc = json.loads(demo_cli.run("sessions", "show", sid, "--json").out)
    assert [(u["line"], u["torn"]) for u in doc["unreadable_lines"]] == [(4, False), (5, True)]


def test_a_marker_naming_a_path_outside_the_session_is_never_opened(demo_cli):
    secret = demo_cli.project / "secret.jsonl"
    secret.write_text('{"type":"user","message":{"role":"user","content":"SECRET CONTENT"}}\n')
    store = SessionStore(demo_cli.project, warn=lambda line: None)
    rec = store.create(model="m", provider="demo")
    rec.user({"role": "user", "content": "go"})
    rec.assistant({"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_x", "name": "task", "input": {"prompt": "x"}}]})
    rec.append("subagent_start", agent_name="evil", subagent_path="../../../secret.jsonl", tool_use_id="toolu_x")
    rec.checkpoint()
    for args in (["show", rec.session_id], ["export", rec.session_id, "--format", "html"],
                 ["export", rec.session_id, "--format", "jsonl"]):
        result = demo_cli.run("sessions", *args)
        assert result.rc == 0 and "SECRET CONTENT" not in result.out
    assert "not a sidechain file name; not opened" in demo_cli.run("sessions", "show", rec.session_id).out


def test_hostile_text_is_kept_as_text(demo_cli):
    rich = rich_session(demo_cli.project)
    out = demo_cli.run("sessions", "show", rich.source).out
    assert HOSTILE.replace("\x1b", "^[") in out


@pytest.mark.parametrize("sub", [["show"], ["export"], ["fsck"], ["rm", "--yes"]])
def test_malformed_ids_are_refused_before_any_path_is_built(demo_cli, sub):
    sid = simple_session(demo_cli.project)
    for bad in ("../sessions", f"{sid}/..", "", f"{sid[:14]}B525857D", "/etc/passwd"):
        result = demo_cli.run("sessions", sub[0], bad, *sub[1:])
        assert "invalid session id" in one_line_error(result)
    assert demo_cli.session_ids() == [sid]


def test_unknown_and_ambiguous_prefixes_fail_with_one_line(demo_cli):
    a = simple_session(demo_cli.project, "a")
    b = simple_session(demo_cli.project, "b")
    common = next(i for i in range(len(a)) if a[i] != b[i])
    for sub in ("show", "export", "fsck", "rm"):
        assert "ambiguous" in one_line_error(demo_cli.run("sessions", sub, a[:common]))
        assert "no session 1234" in one_line_error(demo_cli.run("sessions", sub, "1234"))
    assert sorted(demo_cli.session_ids()) == sorted([a, b])


def test_list_limit_keeps_the_newest(demo_cli):
    ids = [simple_session(demo_cli.project, f"prompt {i}") for i in range(4)]
    table = demo_cli.run("sessions", "list", "--limit", "2")
    rows = [line.split()[0] for line in table.out_lines[1:3]]
    assert rows == [ids[3], ids[2]]
    assert table.out_lines[3] == "… older sessions not shown (--limit 2)"
    assert len(demo_cli.run("sessions", "list", "--limit", "4").out_lines) == 5  # no such line when all fit
    as_json = json.loads(demo_cli.run("sessions", "list", "--json", "--limit", "3").out)
    assert [r["id"] for r in as_json] == [ids[3], ids[2], ids[1]]
    assert set(as_json[0]) >= {"id", "created_ms", "updated_ms", "message_count", "total_tokens", "git_branch",
                               "first_prompt", "resumed_from", "dir"}
    assert "--limit" in one_line_error(demo_cli.run("sessions", "list", "--limit", "0"), rc=2)
    assert "--limit" in one_line_error(demo_cli.run("sessions", "list", "--limit", "x"), rc=2)


def test_a_reader_that_goes_away_gets_no_traceback(demo_cli):
    rich = rich_session(demo_cli.project)
    read_end, write_end = os.pipe()
    os.close(read_end)  # `| head` that has already quit
    try:
        proc = subprocess.run([*COMMAND, "sessions", "show", rich.source], cwd=demo_cli.project, env=demo_cli.env,
                              stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=60)
    finally:
        os.close(write_end)
    assert proc.returncode == 141 and proc.stderr == ""


def test_the_show_model_makes_a_note_of_every_type_the_table_says_is_shown_as_one():
    from evo_agent.cli.sessions.model import NOTE_BUILDERS
    from evo_agent.session.records import RECORD_TYPES

    assert set(NOTE_BUILDERS) == {t.name for t in RECORD_TYPES if t.shown == "note"}
