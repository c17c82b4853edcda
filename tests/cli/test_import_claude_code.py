"""Importing real Claude Code transcripts (tests/fixtures/claude_code, made by make_fixtures.py) (issue #20)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evo_agent.importers import read_claude_code, source_fingerprint, write_import
from evo_agent.importers.claude_code import project_folder
from evo_agent.session import SessionStore
from tests.api_rules import check_request
from tests.cli.import_helpers import fixture, recorded_in, resume_request

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "claude_code"




def _text(message: dict) -> str:
    content = message["content"]
    if isinstance(content, str):
        return content
    return "\n".join(b["text"] for b in content if b.get("type") == "text")


def _import(cli, path: Path) -> str:
    result = cli.run("sessions", "import", "claude-code", str(path))
    assert result.rc == 0, result.err
    assert result.out.startswith(f"{path} → ")
    return result.out.split(" → ", 1)[1].split(" ", 1)[0]




def test_tools_and_a_resume_by_claude_code_itself(cli, model_server):
    source = fixture("claude_code", "tools")
    before = (source.read_bytes(), source.stat().st_mtime_ns)
    sid = _import(cli, source)
    assert (source.read_bytes(), source.stat().st_mtime_ns) == before  # only read
    start = cli.records(sid)[0]
    assert start["type"] == "session_start" and start["provider"] == "claude-code"
    assert start["imported_from"]["agent"] == "claude-code" and start["imported_from"]["version"] == "2.1.197"
    sent = resume_request(cli, model_server, sid)
    calls = [b for m in sent if m["role"] == "assistant" for b in m["content"] if b["type"] == "tool_use"]
    assert [c["name"] for c in calls] == ["bash", "write_file", "edit_file"]
    assert calls[1]["input"]["path"] == "/home/user/project/notes.md"  # file_path became path
    prompts = [_text(m) for m in sent if m["role"] == "user" and _text(m)]
    assert prompts == ["what files are here?", "write notes and fix the greeting", "next"]
    answers = [b["text"] for m in sent if m["role"] == "assistant" for b in m["content"] if b["type"] == "text"]
    assert answers[-1] == "Wrote notes.md and changed the greeting."
    # Original timestamps are kept.
    source_stamps = {json.loads(line).get("timestamp") for line in source.read_text().splitlines()}
    assert all(r["timestamp"] in source_stamps for r in cli.records(sid)[1:] if r["type"] in ("user", "assistant")
               and not r.get("restored"))


def test_compaction_resumes_with_the_summary_and_the_kept_messages(cli, model_server):
    sid = _import(cli, fixture("claude_code", "compact"))
    boundary = [r for r in cli.records(sid) if r["type"] == "compact_boundary"]
    assert len(boundary) == 1 and boundary[0]["trigger"] == "manual"
    assert "The user asked to remember 42 and blue." in boundary[0]["summary"]
    sent = resume_request(cli, model_server, sid)
    assert sent[0]["content"][0]["text"].startswith("<previous-conversation-summary>\nThis session is being continued")
    assert [b["text"] for b in sent[1]["content"]] == ["Second answer.", "No response requested."]
    assert _text(sent[2]) == "what did I say?"
    assert not any("local-command" in json.dumps(m) or "<command-name>" in json.dumps(m) for m in sent)


def test_a_subagent_becomes_a_sidechain(cli, model_server):
    sid = _import(cli, fixture("claude_code", "subagent"))
    records = cli.records(sid)
    kinds = [r["type"] for r in records]
    start, end = kinds.index("subagent_start"), kinds.index("subagent_end")
    assert records[start - 1]["type"] == "assistant" and records[end + 1]["type"] == "user"
    assert records[end]["result"] == "app.py is the entry point."
    side = cli.sessions_dir / sid / records[start]["subagent_path"]
    side_records = [json.loads(line) for line in side.read_text().splitlines()]
    assert [r["type"] for r in side_records] == ["session_start", "user", "assistant", "user", "assistant"]
    assert side_records[2]["message"]["content"][0]["name"] == "bash"
    resume_request(cli, model_server, sid)


def test_a_source_killed_mid_tool_resumes_api_valid(cli, model_server):
    sid = _import(cli, fixture("claude_code", "killed"))
    sent = resume_request(cli, model_server, sid)
    result = sent[2]["content"][0]
    assert result["type"] == "tool_result" and result.get("is_error") is True


def test_unchanged_sources_are_not_imported_twice_and_grown_ones_are_new(cli, tmp_path):
    source = tmp_path / "s.jsonl"
    shutil.copy(fixture("claude_code", "tools"), source)
    first = _import(cli, source)
    again = cli.run("sessions", "import", "claude-code", str(source))
    assert again.out == f"{source} was already imported as {first} (unchanged since)\n"
    with open(source, "a") as f:
        f.write('{"type":"user","message":{"role":"user","content":"one more"},"uuid":"x","timestamp":"2026-01-01T00:00:00Z"}\n')
        f.write('{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","te')  # torn by a kill
    grown = cli.run("sessions", "import", "claude-code", str(source))
    assert f"1 lines skipped; it grew since {first})" in grown.out
    assert "not understood: 1 unreadable line" in grown.out
    new = grown.out.split(" → ", 1)[1].split(" ", 1)[0]
    assert cli.records(new)[0]["imported_from"]["previous_import"] == first


def test_without_source_it_lists_this_projects_sessions(cli, tmp_path):
    config = tmp_path / "claude"
    folder = config / "projects" / project_folder(cli.project)
    recorded_in(fixture("claude_code", "tools"), cli.project, folder / "abc.jsonl")
    env = {**cli.env, "CLAUDE_CONFIG_DIR": str(config)}
    listed = cli.run("sessions", "import", "claude-code", env=env)
    assert listed.rc == 0 and "abc" in listed.out and "not imported" in listed.out and "what files are here?" in listed.out
    done = cli.run("sessions", "import", "claude-code", "--all", env=env)
    assert "(10 messages, 0 subagents, 0 compactions, 0 lines skipped)" in done.out
    assert "imported as " in cli.run("sessions", "import", "claude-code", env=env).out


# Claude Code's own folder names for these paths (its `replace(/[^a-zA-Z0-9]/g, "-")` and, past 200 UTF-16
# code units, a hash), printed by node running the function from Claude Code 2.1.332's bundle.
CLAUDE_CODE_FOLDERS = [
[
"/home/me/my_app",
"-home-me-my-app"
],
[
"/tmp/\u00e9\ud83d\ude00 x.y",
"-tmp-----x-y"
],
[
"/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/a_b/\u00e9\ud83d\ude00end",
"-a-b-a-b-a-b-a-b-a-b-a-b-a-b-a-b-a-b-a-b-a-b-a-b-a-b-a-b-a-b-a-b-a-b-a-b-a-b-a-b-a-b-a-b-a-b-a-b-a-b-a-b-a-b-a-b-a-b-a-b-a-b-a-b-a-b-a-b-a-b-a-b-a-b-a-b-a-b-a-b-a-b-a-b-a-b-a-b-a-b-a-b-a-b-a-b-a-b-a-b-q7ziaa"
],
[
"/zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz",
"-zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"
],
[
"/Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9\udbff\udfff",
"-Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Zz9Z-7332sv"
]
]


def test_a_projects_folder_is_named_as_claude_code_names_it():
    for path, folder in CLAUDE_CODE_FOLDERS:
        assert project_folder(path) == folder


def test_only_sessions_recorded_in_the_project_or_below_are_its_own(cli, tmp_path):
    """Claude Code names `app_x`, `app.x` and `app-x` alike, and `/work/app/x` like `/work/app-x`: a session
    of another directory whose folder looks like this project's (or a child's) is not listed or imported."""
    config, source = tmp_path / "claude", fixture("claude_code", "tools")
    project = cli.project
    below, sibling = project / "sub_dir", project.parent / (project.name + "-other")
    twin = project.parent / (project.name.replace("_", "-") + "_")  # another name, perhaps the same folder
    projects = config / "projects"
    recorded_in(source, project, projects / project_folder(project) / "mine.jsonl")
    recorded_in(source, below, projects / project_folder(below) / "below.jsonl")
    recorded_in(source, sibling, projects / project_folder(sibling) / "sibling.jsonl")
    recorded_in(source, twin, projects / project_folder(project) / "twin.jsonl")  # the folder of this project
    recorded_in(source, Path("/elsewhere"), projects / (project_folder(project) + "-x") / "far.jsonl")
    env = {**cli.env, "CLAUDE_CONFIG_DIR": str(config)}
    listed = cli.run("sessions", "import", "claude-code", env=env)
    assert listed.rc == 0, listed.err
    assert "mine" in listed.out and "below" in listed.out
    assert not any(name in listed.out for name in ("sibling", "twin", "far")), listed.out
    done = cli.run("sessions", "import", "claude-code", "--all", env=env)
    assert done.out.count(" → ") == 2, done.out


def test_unknown_sources_are_one_line_errors(cli):
    result = cli.run("sessions", "import", "claude-code", "no-such-thing")
    assert result.rc == 1 and len(result.err_lines) == 1 and "no Claude Code transcript" in result.err


# Property: whatever the shape of per-block lines, an import resumes API-valid and keeps every text.
_words = st.text(alphabet="abcdefghij ", min_size=1, max_size=12).map(lambda s: s.strip() or "w")


@st.composite
def _claude_lines(draw):
    lines, texts, n = [], [], 0
    for turn in range(draw(st.integers(1, 4))):
        prompt = draw(_words)
        texts.append(prompt)
        lines.append({"type": "user", "message": {"role": "user", "content": prompt}})
        for step in range(draw(st.integers(0, 2))):
            n += 1
            msg_id = f"msg_{n}"
            said = draw(_words)
            texts.append(said)
            lines.append({"type": "assistant", "message": {"id": msg_id, "role": "assistant",
                          "content": [{"type": "text", "text": said}], "usage": {"input_tokens": 5, "output_tokens": 1}}})
            tool_id = f"toolu_{n}"
            lines.append({"type": "assistant", "message": {"id": msg_id, "role": "assistant",
                          "content": [{"type": "tool_use", "id": tool_id, "name": "Bash", "input": {"command": "ls"}}]}})
            if draw(st.booleans()):
                lines.append({"type": "user", "message": {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": tool_id, "content": "out"}]}})
            if draw(st.booleans()):
                lines.append({"type": "attachment", "attachment": {}})
        answer = draw(_words)
        texts.append(answer)
        lines.append({"type": "assistant", "message": {"id": f"msg_end{turn}", "role": "assistant",
                      "content": [{"type": "text", "text": answer}]}})
    return lines, texts


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=_claude_lines())
def test_any_import_resumes_api_valid_and_keeps_every_text(tmp_path_factory, data):
    lines, texts = data
    work = tmp_path_factory.mktemp("imp")
    source = work / "s.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines))
    store = SessionStore(work / "project", warn=lambda line: None)
    imported = read_claude_code(source)
    sid = write_import(store, imported, source_fingerprint(source), None)
    messages = store.load(sid).messages
    check_request(messages + [{"role": "user", "content": "next"}] if messages[-1]["role"] == "assistant"
                  else messages)
    kept = [b.get("text") for m in messages for b in (m["content"] if isinstance(m["content"], list)
                                                       else [{"text": m["content"]}])]
    assert [t for t in kept if t in texts] == texts


def test_a_big_source_imports_in_bounded_memory(tmp_path):
    """Streaming: a 24 MB transcript imports with far less memory than its size."""
    import tracemalloc

    source = tmp_path / "big.jsonl"
    with open(source, "w") as f:  # a parentUuid chain as Claude Code writes it: the tree is held, ids only
        for n in range(3000):
            f.write(json.dumps({"type": "user", "uuid": f"{n:08d}-u-0000-0000-000000000000",
                                "parentUuid": f"{n - 1:08d}-a-0000-0000-000000000000" if n else None,
                                "message": {"role": "user", "content": "x" * 4000}}) + "\n")
            f.write(json.dumps({"type": "assistant", "uuid": f"{n:08d}-a-0000-0000-000000000000",
                                "parentUuid": f"{n:08d}-u-0000-0000-000000000000",
                                "message": {"id": f"msg_{n}", "role": "assistant",
                                            "content": [{"type": "text", "text": "y" * 4000}]}}) + "\n")
    store = SessionStore(tmp_path / "project", warn=lambda line: None, redact=False)
    tracemalloc.start()
    try:
        imported = read_claude_code(source)
        sid = write_import(store, imported, source_fingerprint(source), None)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert imported.counts() == (6000, 0, 0)
    assert store.info(sid).meta.message_count == 6000
    assert peak < 4 << 20, f"peak {peak / (1 << 20):.1f} MiB for a {source.stat().st_size >> 20} MiB source"


def _import_out(cli, path: Path, *options: str) -> tuple[str, str]:
    """(new session id, what the import printed)."""
    result = cli.run("sessions", "import", "claude-code", *options, str(path))
    assert result.rc == 0, result.err
    return result.out.split(" → ", 1)[1].split(" ", 1)[0], result.out


def _said(sent: list[dict]) -> list[str]:
    return [_text(m) for m in sent if _text(m)]


def test_a_rewound_session_resumes_on_the_branch_the_user_last_saw(cli, model_server):
    sid, out = _import_out(cli, fixture("claude_code", "rewind"))
    assert "(6 messages," in out and "left out: 2 messages of rewound branches" in out
    sent = resume_request(cli, model_server, sid)
    assert _said(sent) == ["remember the word apple", "Noted: apple.", "instead the word cherry",
                           "Noted: cherry, not banana.", "which words?", "apple and cherry", "next"]
    assert "banana" not in json.dumps(sent[:3])


def test_an_api_error_is_not_imported_as_the_models_words(cli, model_server):
    sid, out = _import_out(cli, fixture("claude_code", "api_error"))
    assert "left out: 1 API error notice" in out
    assert cli.records(sid)[0]["model"] != "<synthetic>"
    sent = resume_request(cli, model_server, sid)
    assert "Prompt is too long" not in json.dumps(sent)
    assert _said(sent)[-3:] == ["try again", "Second try works.", "next"]


def test_a_response_split_over_lines_with_parallel_tools_and_images_is_one_message(cli, model_server):
    sid, out = _import_out(cli, fixture("claude_code", "split_image"))
    assert "(4 messages, 0 subagents, 0 compactions, 0 lines skipped)" in out
    sent = resume_request(cli, model_server, sid)
    assert [b["type"] for b in sent[0]["content"]] == ["image", "text"]
    assert [b["type"] for b in sent[1]["content"]] == ["thinking", "text", "tool_use", "tool_use"]
    assert sent[1]["content"][0]["signature"] == "sig-36-fake"
    results = {b["tool_use_id"]: b for b in sent[2]["content"]}
    assert set(results) == {b["id"] for b in sent[1]["content"] if b["type"] == "tool_use"}
    image_result = next(r for r in results.values() if isinstance(r["content"], list))
    assert image_result["content"][0]["type"] == "image"
    assert _text(sent[3]) == "app.py is 15 bytes and dot.png is a single dot, like your picture."
    assert cli.records(sid)[2]["output_tokens"] == 10  # the response's usage once, not once per line


def test_a_web_search_resumes_with_its_results_as_a_tool_result(cli, model_server):
    sid, _ = _import_out(cli, fixture("claude_code", "websearch"))
    sent = resume_request(cli, model_server, sid)
    (call,) = [b for b in sent[1]["content"] if b["type"] == "tool_use"]
    assert call["name"] == "WebSearch" and call["input"] == {"query": "latest python release"}
    assert "Python Releases" in json.dumps(sent[2]["content"])
    assert _text(sent[3]) == "The latest Python release is 3.14."


def test_an_interrupted_turn_resumes_with_the_tool_refused_and_the_interrupt_noted(cli, model_server):
    sid, out = _import_out(cli, fixture("claude_code", "interrupted"))
    assert "(4 messages," in out
    sent = resume_request(cli, model_server, sid)
    result, *rest = sent[2]["content"]
    assert result["type"] == "tool_result" and "doesn't want to proceed" in json.dumps(result["content"])
    assert [b["text"] for b in rest] == ["[Request interrupted by user for tool use]", "never mind, just say hi"]
    assert _text(sent[3]) == "Hi."


def test_dry_run_before_the_source_is_read_as_an_option(cli):
    before = len(cli.run("sessions", "list", "--all").out)
    result = cli.run("sessions", "import", "claude-code", "--dry-run", str(fixture("claude_code", "rewind")))
    assert result.rc == 0, result.err
    assert "→ (dry run) (6 messages" in result.out
    assert len(cli.run("sessions", "list", "--all").out) == before  # nothing written


def test_claude_code_1_x_inline_subagent_and_its_resume_in_a_new_file(cli, model_server):
    """Claude Code 1.0.100 (2025) wrote subagent lines into the main file, and a resume into a new file."""
    first, second = sorted((FIXTURES / "v1").glob("*.jsonl"), key=lambda p: "fix the greeting" in p.read_text())
    sid, out = _import_out(cli, first)
    assert "(4 messages, 1 subagents, 0 compactions, 0 lines skipped)" in out and "left out" not in out
    records = cli.records(sid)
    assert records[0]["imported_from"]["version"] == "1.0.100"
    (end,) = [r for r in records if r["type"] == "subagent_end"]
    assert end["result"] == "app.py is the entry point."
    sent = resume_request(cli, model_server, sid)
    assert "Which file is the entry point?" not in [_text(m) for m in sent]  # the sidechain stays aside
    assert _said(sent)[-2:] == ["The subagent says app.py is the entry point.", "next"]
    sid2, out2 = _import_out(cli, second)
    assert "(6 messages, 0 subagents" in out2
    assert _said(resume_request(cli, model_server, sid2))[-3:] == ["fix the greeting", "Changed the greeting.", "next"]


def test_a_response_interrupted_by_its_own_tool_results_stays_one_message(tmp_path):
    """Lines of one response with a tool's result written between them (parallel tools) merge, results after."""
    lines = [
        {"type": "user", "uuid": "u1", "message": {"role": "user", "content": "two things"}},
        {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "message": {
            "id": "msg_1", "role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash",
                                                             "input": {"command": "ls"}}]}},
        {"type": "user", "uuid": "r1", "parentUuid": "a1", "message": {
            "role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a"}]}},
        {"type": "assistant", "uuid": "a2", "parentUuid": "a1", "message": {
            "id": "msg_1", "role": "assistant", "content": [{"type": "tool_use", "id": "t2", "name": "Bash",
                                                             "input": {"command": "pwd"}}]}},
        {"type": "user", "uuid": "r2", "parentUuid": "a2", "message": {
            "role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2", "content": "b"}]}},
        {"type": "assistant", "uuid": "a3", "parentUuid": "r1", "message": {
            "id": "msg_2", "role": "assistant", "content": [{"type": "text", "text": "done"}]}},
    ]
    source = tmp_path / "s.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines))
    store = SessionStore(tmp_path / "project", warn=lambda line: None)
    sid = write_import(store, read_claude_code(source), source_fingerprint(source), None)
    assert sid is not None
    messages = store.load(sid).messages
    assert [[b.get("id") or b.get("tool_use_id") or b.get("text") for b in m["content"]] for m in messages[1:]] == [
        ["t1", "t2"], ["t1", "t2"], ["done"]]
    check_request(messages + [{"role": "user", "content": "next"}])


def test_a_rewind_in_the_terminal_ui_resumes_in_order_on_the_new_branch(cli, model_server):
    """/rewind in the real TUI forks the file: the first prompt is written after its answer, and
    each prompt hangs off the turn_duration record of the turn before it."""
    sid, out = _import_out(cli, fixture("claude_code", "rewind_tui"))
    assert "(6 messages," in out and "left out: 2 messages of rewound branches" in out
    sent = resume_request(cli, model_server, sid)
    assert _said(sent) == ["remember the word apple", "Noted: banana.", "instead the word cherry", "ok",
                           "which words?", "ok", "next"]


def test_what_hooks_told_the_model_in_2_1_197_comes_back_where_it_read_it(cli, model_server):
    """`hooks` by 2.1.197, whose hook attachments carry no rendering: Claude Code built the text it sent (seen in
    the fake server's log when the fixture was made) from the attachment, `<hook> hook additional context: …`
    and, for a prompt's hooks, `<hook> hook success: …`. The import dropped them."""
    sid, _out = _import_out(cli, fixture("claude_code", "hooks"))
    sent = resume_request(cli, model_server, sid)
    texts = [[b.get("text", "") for b in m["content"] if b["type"] == "text"] for m in sent]
    assert texts[0] == ["run two commands", "UserPromptSubmit hook success: hook: the build is green",
                        "UserPromptSubmit hook additional context: hook: ticket ABC-7"]
    assert texts[2] == ["PostToolUse:Bash hook additional context: hook: lint passed"]  # after the call's result
    assert "PostToolUse:Bash hook success" not in json.dumps(sent)  # a tool's hook's plain success: never sent
    blocked = texts.index(["The hook blocked the second command."])
    assert texts[blocked + 1][0].startswith("Stop hook feedback:") and texts[blocked + 2] == ["The tests would pass."]
