"""Importing real Codex CLI rollouts (tests/fixtures/codex, made by make_fixtures.py) (issue #20)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.cli.import_helpers import fixture, resume_request


def _import(cli, path: Path) -> str:
    result = cli.run("sessions", "import", "codex", str(path))
    assert result.rc == 0, result.err
    return result.out.split(" → ", 1)[1].split(" ", 1)[0]


def _texts(message: dict) -> list[str]:
    content = message["content"]
    return [content] if isinstance(content, str) else [b["text"] for b in content if b.get("type") == "text"]




def test_tools_and_a_resume_by_codex_itself(cli, model_server):
    source = fixture("codex", "tools")
    before = source.read_bytes()
    sid = _import(cli, source)
    assert source.read_bytes() == before
    start = cli.records(sid)[0]
    assert start["imported_from"]["agent"] == "codex" and start["imported_from"]["version"] == "0.171.0"
    sent = resume_request(cli, model_server, sid)
    prompts = [t for m in sent if m["role"] == "user" for t in _texts(m)]
    assert prompts == ["what files are here?", "write notes", "next"]  # no developer or environment messages
    calls = [b for m in sent if m["role"] == "assistant" for b in m["content"] if b["type"] == "tool_use"]
    assert [(c["name"], c["input"]["command"]) for c in calls] == [("bash", "ls"), ("bash", "echo '# Notes' > notes.md")]
    results = [b for m in sent if m["role"] == "user" and isinstance(m["content"], list)
               for b in m["content"] if b["type"] == "tool_result"]
    assert [r["tool_use_id"] for r in results] == [c["id"] for c in calls]


def test_killed_mid_tool_resumes_with_the_tool_marked_interrupted(cli, model_server):
    sent = resume_request(cli, model_server, _import(cli, fixture("codex", "killed")))
    assert sent[2]["content"][0]["type"] == "tool_result" and sent[2]["content"][0]["is_error"] is True


def test_a_compacted_record_resumes_with_its_replacement_history(cli, model_server, tmp_path):
    source = tmp_path / "rollout-compacted.jsonl"
    shutil.copy(fixture("codex", "tools"), source)
    replacement = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "what files are here?"}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Summary: app.py and notes.md."}]},
    ]
    with open(source, "a") as f:
        f.write(json.dumps({"timestamp": "2026-12-03T15:00:00.000Z", "type": "compacted",
                            "payload": {"message": "Summary: app.py and notes.md.",
                                        "replacement_history": replacement}}) + "\n")
        f.write(json.dumps({"timestamp": "2026-12-03T15:00:01.000Z", "type": "response_item",
                            "payload": {"type": "message", "role": "assistant",
                                        "content": [{"type": "output_text", "text": "Compacted; go on."}]}}) + "\n")
    sid = _import(cli, source)
    (boundary,) = [r for r in cli.records(sid) if r["type"] == "compact_boundary"]
    assert boundary["summary"] == "Summary: app.py and notes.md." and boundary["trigger"] == "auto"
    sent = resume_request(cli, model_server, sid)
    assert sent[0]["content"][0]["text"] == ("<previous-conversation-summary>\nSummary: app.py and notes.md.\n"
                                             "</previous-conversation-summary>")
    flat = [t for m in sent for t in _texts(m)]
    assert flat[1:] == ["what files are here?", "Compacted; go on.", "next"]


def test_listing_by_recorded_cwd(cli, tmp_path):
    codex_home = tmp_path / "codex"
    day = codex_home / "sessions" / "2026" / "12" / "03"
    day.mkdir(parents=True)
    mine = day / fixture("codex", "tools").name
    mine.write_text(fixture("codex", "tools").read_text().replace("/home/user/project", str(cli.project)))
    other = day / fixture("codex", "killed").name  # recorded in /home/user/project: not this project
    shutil.copy(fixture("codex", "killed"), other)
    listed = cli.run("sessions", "import", "codex", env={**cli.env, "CODEX_HOME": str(codex_home)})
    assert listed.rc == 0, listed.err
    assert "what files are here?" in listed.out and "run the slow tests" not in listed.out


def _assistant_tokens(cli, sid: str) -> list[tuple[int, int]]:
    return [(r.get("input_tokens", 0), r.get("output_tokens", 0)) for r in cli.records(sid) if r["type"] == "assistant"]


def test_tokens_come_from_token_count_events_when_a_rollout_has_no_usage_records(cli, tmp_path):
    source = fixture("codex", "tools")
    with_both = _assistant_tokens(cli, _import(cli, source))
    assert sum(i for i, _ in with_both) == 400 and sum(o for _, o in with_both) == 40  # counted once, not twice
    lines = [line for line in source.read_text().splitlines(keepends=True) if '"token_usage_record"' not in line]
    only_counts = tmp_path / source.name
    only_counts.write_text("".join(lines))
    assert _assistant_tokens(cli, _import(cli, only_counts)) == with_both


def _import_out(cli, path: Path) -> tuple[str, str]:
    result = cli.run("sessions", "import", "codex", str(path))
    assert result.rc == 0, result.err
    return result.out.split(" → ", 1)[1].split(" ", 1)[0], result.out


def test_an_image_a_web_search_and_an_api_error_resume_as_the_user_saw_them(cli, model_server):
    sid, out = _import_out(cli, fixture("codex", "rich"))
    assert "(4 messages, 0 subagents, 0 compactions, 0 lines skipped)" in out
    sent = resume_request(cli, model_server, sid)
    first = sent[0]["content"]
    (image,) = [b for b in first if b["type"] == "image"]
    assert image["source"]["media_type"] == "image/png" and image["source"]["data"].startswith("iVBOR")
    assert _texts(sent[0])[-1] == "what is this picture? search the web"
    assert _texts(sent[1]) == ["[searched the web for 'what is a single pixel png']", "It is a one-pixel picture."]
    # The failed turn left its prompt without an answer; Codex's error is not the model's words.
    assert _texts(sent[2]) == ["describe it in more detail", "are you there?"]
    assert _texts(sent[3]) == ["Back again."]
    assert "Invalid request" not in json.dumps(sent)


def test_an_auto_compaction_by_codex_resumes_from_its_summary(cli, model_server):
    sid, out = _import_out(cli, fixture("codex", "compact"))
    assert "2 compactions" in out and "lines skipped)" in out and "not understood" not in out
    boundaries = [r for r in cli.records(sid) if r["type"] == "compact_boundary"]
    assert [b["summary"].rsplit("\n", 1)[-1] for b in boundaries] == ["There is app.py.",
                                                                      "Summary: the project has app.py."]
    said = [t for r in cli.records(sid) if r["type"] == "assistant" for t in _texts(r["message"])]
    assert "Summary: the project has app.py." not in said  # the summarizer's answer is the boundary's
    sent = resume_request(cli, model_server, sid)
    flat = [t for m in sent for t in _texts(m)]
    assert flat[0].endswith("Summary: the project has app.py.\n</previous-conversation-summary>")
    assert flat[1:] == ["what files are here?", "anything else?", "Still just app.py.", "next"]


def test_a_2025_rollout_from_codex_0_20_imports(cli, model_server):
    source = fixture("codex", "legacy")
    sid, out = _import_out(cli, source)
    assert "(4 messages, 0 subagents, 0 compactions, 0 lines skipped)" in out
    assert cli.records(sid)[0]["imported_from"]["source_id"] == "6c0d0a0a-6945-46b4-bf80-ddf64cf4c573"
    sent = resume_request(cli, model_server, sid)
    calls = [b for m in sent if m["role"] == "assistant" for b in m["content"] if b["type"] == "tool_use"]
    assert [(c["name"], c["input"]["command"]) for c in calls] == [("bash", "bash -lc ls")]
    assert [t for m in sent for t in _texts(m)] == ["what files are here?", "Let me look.", "There is app.py.", "next"]


def test_an_edit_with_reasoning_and_a_ctrl_c_resumes_with_the_turn_marked_aborted(cli, model_server):
    sid, out = _import_out(cli, fixture("codex", "edit"))
    assert "0 lines skipped)" in out and "left out: 1 encrypted reasoning item" in out
    sent = resume_request(cli, model_server, sid)
    calls = [b for m in sent if m["role"] == "assistant" for b in m["content"] if b["type"] == "tool_use"]
    assert [c["name"] for c in calls] == ["apply_patch", "bash", "bash"]
    assert calls[0]["input"]["input"].startswith("*** Begin Patch\n*** Update File: app.py")
    results = {b["tool_use_id"]: b["content"] for m in sent if isinstance(m["content"], list)
               for b in m["content"] if b["type"] == "tool_result"}
    assert results[calls[0]["id"]] == "unsupported custom tool call: apply_patch"
    assert results[calls[2]["id"]].endswith("aborted by user")
    said = [t for m in sent for t in _texts(m)]
    assert said[-5:-2] == ["Changed the greeting.", "run the slow tests", "Running the tests."]
    assert said[-2].startswith("<turn_aborted>\nThe user interrupted the previous turn") and said[-1] == "next"


def test_a_local_shell_call_becomes_a_bash_call(cli, model_server, tmp_path):
    source = tmp_path / "rollout-local-shell.jsonl"
    items = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "list"}]},
             {"type": "local_shell_call", "call_id": "call_ls", "status": "completed",
              "action": {"type": "exec", "command": ["bash", "-lc", "ls"], "timeout_ms": 1000}},
             {"type": "function_call_output", "call_id": "call_ls", "output": "app.py\n"},
             {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "app.py"}]}]
    source.write_text("".join(json.dumps({"timestamp": "2026-01-01T00:00:00Z", "type": "response_item",
                                          "payload": item}) + "\n" for item in items))
    sent = resume_request(cli, model_server, _import(cli, source))
    (call,) = [b for b in sent[1]["content"] if b["type"] == "tool_use"]
    assert (call["name"], call["input"]) == ("bash", {"command": "bash -lc ls"})


def test_a_september_2025_rollout_from_codex_0_40_counts_each_response_once(cli, model_server):
    """0.40 keeps usage only in token_count events, written before the response's items, with running
    totals that restart at the resume: every response's 100 + 10 tokens count once."""
    sid, out = _import_out(cli, fixture("codex", "mid2025"))
    assert "(8 messages, 0 subagents, 0 compactions, 0 lines skipped)" in out
    tokens = _assistant_tokens(cli, sid)
    assert (sum(i for i, _ in tokens), sum(o for _, o in tokens)) == (400, 40)
    sent = resume_request(cli, model_server, sid)
    assert [t for m in sent if m["role"] == "user" for t in _texts(m)] == ["what files are here?", "write notes", "next"]


def test_the_tokens_a_compaction_spent_still_count(cli):
    sid = _import(cli, fixture("codex", "compact"))
    tokens = _assistant_tokens(cli, sid)
    assert (sum(i for i, _ in tokens), sum(o for _, o in tokens)) == (25_000, 50)  # five responses, summaries too


def test_a_2025_compaction_without_replacement_history_resumes_with_the_prompts_codex_kept(cli, model_server):
    """Codex 0.40 wrote `compacted` with the summary alone and sent the user's recent prompts with it."""
    sid, out = _import_out(cli, fixture("codex", "compact2025"))
    assert "2 compactions" in out and "not understood" not in out
    boundaries = [r["summary"] for r in cli.records(sid) if r["type"] == "compact_boundary"]
    assert boundaries == ["There is app.py.", "Still just app.py."]
    sent = resume_request(cli, model_server, sid)
    flat = [t for m in sent for t in _texts(m)]
    assert flat[0].endswith("Still just app.py.\n</previous-conversation-summary>")
    assert flat[1:] == ["what files are here?", "anything else?", "ok", "next"]


def test_an_mcp_tool_found_by_tool_search_keeps_its_server_in_its_name(cli, model_server):
    sent = resume_request(cli, model_server, _import(cli, fixture("codex", "mcp")))
    calls = [b for m in sent if m["role"] == "assistant" for b in m["content"] if b["type"] == "tool_use"]
    assert [(c["name"], c["input"]) for c in calls[:2]] == [("tool_search", {"query": "glossary lookup"}),
                                                            ("mcp__glossary__lookup", {"word": "foo"})]
    results = {b["tool_use_id"]: b["content"] for m in sent if isinstance(m["content"], list)
               for b in m["content"] if b["type"] == "tool_result"}
    assert '"name": "lookup"' in results[calls[0]["id"]]
    assert [b["text"] for b in results[calls[1]["id"]]][-1] == "foo: a word of the glossary (définition ✓)"


def _fork_files() -> tuple[Path, Path]:
    parent, child = sorted(fixture_dir("fork").glob("*.jsonl"), key=lambda p: '"history_base"' in p.read_text())
    return parent, child


def fixture_dir(name: str) -> Path:
    return fixture("codex", "tools").parents[1] / name


def test_a_fork_whose_parent_is_gone_imports_its_own_turns_and_says_what_is_missing(cli, model_server, tmp_path):
    _, child = _fork_files()
    alone = tmp_path / "day" / child.name
    alone.parent.mkdir()
    shutil.copy(child, alone)
    result = cli.run("sessions", "import", "codex", str(alone), env={**cli.env, "CODEX_HOME": str(tmp_path / "none")})
    assert result.rc == 0, result.err
    assert "left out: 1 forked-from rollout not found (its turns before the fork)" in result.out
    sid = result.out.split(" → ", 1)[1].split(" ", 1)[0]
    sent = resume_request(cli, model_server, sid)
    assert [t for m in sent for t in _texts(m)] == ["take another direction", "Plan B: rewrite it in Rust.", "go on",
                                                "Rust it is.", "next"]


def test_forks_naming_each_other_import_without_looping(cli, tmp_path):
    parent, child = _fork_files()
    parent_id = parent.stem.split("-", 6)[-1]
    child_id = child.stem.split("-", 6)[-1]
    looped = tmp_path / parent.name
    lines = parent.read_text().splitlines(keepends=True)
    first = json.loads(lines[0])
    first["payload"]["history_base"] = {"thread_id": child_id, "end_ordinal_exclusive": 5, "end_byte_offset": 1}
    looped.write_text(json.dumps(first) + "\n" + "".join(lines[1:]))
    shutil.copy(child, tmp_path / child.name)
    for path in (looped, tmp_path / child.name):
        result = cli.run("sessions", "import", "codex", str(path))
        assert result.rc == 0 and "Traceback" not in result.err, result.err
    assert parent_id in child.read_text()


def test_a_review_s_own_thread_is_not_listed_beside_the_session_it_reviewed(cli, model_server, tmp_path):
    """`/review` runs the reviewer in a thread of its own (`thread_source: subagent`); its findings reach the
    reviewed session's rollout, which is listed (and resumes with the image prompt, the review, the follow-up)."""
    day = tmp_path / "codex" / "sessions" / "2026" / "12" / "05"
    day.mkdir(parents=True)
    for source in fixture_dir("review").glob("*.jsonl"):
        (day / source.name).write_text(source.read_text().replace("/home/user/project", str(cli.project)))
    env = {**cli.env, "CODEX_HOME": str(tmp_path / "codex")}
    listed = cli.run("sessions", "import", "codex", env=env)
    assert listed.rc == 0, listed.err
    assert len(listed.out.splitlines()) == 2 and listed.out.splitlines()[0].endswith("  what is this picture")
    imported = cli.run("sessions", "import", "codex", "--all", env=env)
    sid = imported.out.split(" → ", 1)[1].split(" ", 1)[0]
    said = [t for m in resume_request(cli, model_server, sid) for t in _texts(m)]
    assert said[-4:] == ["One nit.\n\nReview comment:\n\n- Prints twice — " + str(cli.project) + "/app.py:2-2\n"
                         "  app.py now prints two lines.", "fix what the review found", "I will drop the second print.",
                         "next"]
    assert said[-5].startswith("<user_action>\n  <context>User initiated a review task.")


def test_a_compaction_done_by_openai_keeps_the_conversation_it_encrypted(cli, model_server):
    """With the built-in openai provider the server compacts: `compacted` has no summary, only an encrypted
    item no other model reads. Rather than resume from nothing, the import keeps what it replaced."""
    sid, out = _import_out(cli, fixture("codex", "compactremote"))
    assert "left out: 2 encrypted compactions (the conversation before them kept whole)" in out
    assert "not understood" not in out and "0 compactions" in out
    assert not [r for r in cli.records(sid) if r["type"] == "compact_boundary"]
    sent = resume_request(cli, model_server, sid)
    assert [t for m in sent for t in _texts(m)] == ["what files are here", "Let me look.", "There is app.py.",
                                                    "anything else", "Still app.py.", "next"]
    (call,) = [b for m in sent if m["role"] == "assistant" for b in m["content"] if b["type"] == "tool_use"]
    assert call["id"] == "call_ls"


def test_waiting_on_a_long_command_is_a_call_of_its_own(cli, model_server):
    sent = resume_request(cli, model_server, _import(cli, fixture("codex", "longcmd")))
    calls = [(b["name"], b["input"]) for m in sent if m["role"] == "assistant" for b in m["content"]
             if b["type"] == "tool_use"]
    assert [name for name, _ in calls] == ["exec", "wait", "exec", "wait"]
    assert calls[3][1] == {"cell_id": "2", "terminate": True}


def test_a_rewound_thread_is_listed_once_and_resumes_with_the_edited_prompts(cli, model_server, tmp_path):
    """Each rewind in the TUI (Esc Esc, an edited prompt) begins a segment file of the same thread that
    continues the one before after a count of records: the listing offers the thread once, its newest segment,
    and the import carries the conversation the user last saw, without the prompts they rewound."""
    day = tmp_path / "codex" / "sessions" / "2026" / "12" / "05"
    day.mkdir(parents=True)
    for source in sorted(fixture_dir("rewind").glob("*.jsonl")):
        (day / source.name).write_text(source.read_text().replace("/home/user/project", str(cli.project)))
    env = {**cli.env, "CODEX_HOME": str(tmp_path / "codex")}
    listed = cli.run("sessions", "import", "codex", env=env)
    assert listed.rc == 0 and len(listed.out.splitlines()) == 2 and "_" in listed.out.split()[0], listed.out
    imported = cli.run("sessions", "import", "codex", "--all", env=env)
    assert imported.out.count(" → ") == 1 and "not understood" not in imported.out, imported.out
    sid = imported.out.split(" → ", 1)[1].split(" ", 1)[0]
    said = [t for m in resume_request(cli, model_server, sid) for t in _texts(m)]
    assert said == ["first prompt", "First answer.", "There is app.py.", "second prompt, edited", "Edited answer.",
                    "third prompt, edited", "Re-edited answer.", "next"]


def test_a_fifo_named_as_a_fork_s_parent_is_not_read(cli, tmp_path):
    """A rollout imported by its path from a directory someone else filled: a FIFO (or a link to /dev/zero)
    named as its parent's file would be opened and read for ever; like the path given, only a file is read."""
    import os

    parent, child = _fork_files()
    parent_id = parent.stem.split("-", 6)[-1]
    shutil.copy(child, tmp_path / child.name)
    os.mkfifo(tmp_path / f"rollout-2026-12-05T00-00-00-{parent_id}.jsonl")
    result = cli.run("sessions", "import", "codex", str(tmp_path / child.name),
                     env={**cli.env, "CODEX_HOME": str(tmp_path / "none")})
    assert result.rc == 0, result.err
    assert "left out: 1 forked-from rollout not found (its turns before the fork)" in result.out


def test_a_chain_of_rewinds_deeper_than_the_import_follows_says_what_is_missing(cli, tmp_path):
    """Each rewind in Codex's TUI begins a segment naming the previous one: past MAX_FORKS segments the import
    stops following, and says so (the first turns are not silently dropped)."""
    from evo_agent.importers.codex import MAX_FORKS

    segments = [f"0000{n:04d}-aaaa-bbbb-cccc-dddddddddddd" for n in range(MAX_FORKS + 3)]
    for n, segment in enumerate(segments):
        meta = {"id": "thread01-aaaa-bbbb-cccc-dddddddddddd", "cwd": str(cli.project), "cli_version": "0.171.0"}
        if n:
            meta["history_base"] = {"thread_id": segments[n - 1], "end_ordinal_exclusive": 2 * n}
        lines = [{"timestamp": "2026-12-05T10:00:00.000Z", "type": "session_meta", "payload": meta},
                 {"timestamp": "2026-12-05T10:00:00.000Z", "type": "response_item",
                  "payload": {"type": "message", "role": "user", "content": [{"type": "input_text",
                                                                              "text": f"prompt {n}"}]}}]
        (tmp_path / f"rollout-2026-12-05T10-00-{n:02d}-thread01_{segment}.jsonl").write_text(
            "".join(json.dumps(line) + "\n" for line in lines))
    newest = tmp_path / f"rollout-2026-12-05T10-00-{len(segments) - 1:02d}-thread01_{segments[-1]}.jsonl"
    result = cli.run("sessions", "import", "codex", str(newest), env={**cli.env, "CODEX_HOME": str(tmp_path / "none")})
    assert result.rc == 0, result.err
    assert "forked-from rollout" in result.out, result.out


def test_what_hooks_told_the_model_comes_back_where_it_read_it(cli, model_server):
    """`hooks`: Codex 0.171 runs `$CODEX_HOME/hooks.json`: a UserPromptSubmit and a PostToolUse hook's
    `additionalContext` reach the model as developer messages (marked `hooks.additional_context`), a Stop
    hook's refusal as a `<hook_prompt>` user message the model answered. The import dropped the context with
    Codex's own developer instructions."""
    sent = resume_request(cli, model_server, _import(cli, fixture("codex", "hooks")))
    texts = [t for m in sent for t in _texts(m)]
    assert texts.index("what files are here?") < texts.index("hook: ticket ABC-7")
    (after,) = [m for m in sent if "hook: lint passed" in _texts(m)]
    assert after["content"][0]["type"] == "tool_result"  # the context follows the output it was about
    stop = next(i for i, t in enumerate(texts) if t.startswith("<hook_prompt"))
    assert texts[stop - 1] == "There is app.py." and texts[stop + 1] == "The tests would pass."


def test_an_answer_after_a_resume_whose_running_totals_match_the_last_process_keeps_its_tokens(cli):
    """Codex 0.77 keeps usage in `token_count` events, running totals that restart in each process: a resumed
    process whose first total equals the last one of the process before was taken for a repeated event, and the
    answer's tokens were lost (the session's cost too low). Real 0.77 rollouts, resumed with one answer each."""
    for name in ("rich077", "marathon077"):
        tokens = _assistant_tokens(cli, _import(cli, fixture("codex", name)))
        assert tokens[-1] != (0, 0) and all(i > 0 for i, _ in tokens), (name, tokens)


def test_each_response_counts_once_whichever_codex_wrote_the_counts(cli):
    """Every response of these real rollouts reported 100 input and 10 output tokens (no compaction): 0.63 writes
    a count before the response's items and repeats it after a tool's output, 0.77 writes it after them, and
    both begin each process with a count holding no usage. The sum is every response once, no more."""
    for name, responses in (("tools063", 4), ("rich063", 2), ("tools077", 4), ("rich077", 2)):
        tokens = _assistant_tokens(cli, _import(cli, fixture("codex", name)))
        assert (sum(i for i, _ in tokens), sum(o for _, o in tokens)) == (100 * responses, 10 * responses), name


def test_each_answer_carries_its_own_responses_tokens(cli):
    """0.40-0.63 write a response's `token_count` before its items, 0.77 after them: each answer carries the usage
    of the response that wrote it (every response here reported 100 input and 10 output tokens). Before, in the
    older rollouts each count went to the answer before it: the first answer showed two responses' usage, the
    last none."""
    for name in ("mid2025", "tools063", "rich063", "tools077", "rich077"):
        tokens = _assistant_tokens(cli, _import(cli, fixture("codex", name)))
        assert tokens and all(t == (100, 10) for t in tokens), (name, tokens)
