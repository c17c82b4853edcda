"""Importing real Claude Code 2.1.332 transcripts (tests/fixtures/claude_code/2.1.332, make_fixtures.py --out).

2.1.332 logs every request it sends (`tests/cli/claude_code_requests.py` rebuilds them): the import is
checked against what the model was last sent, not against what this importer happens to read.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from evo_agent.importers import read_claude_code
from evo_agent.importers.claude_code import project_folder
from tests.cli.claude_code_requests import last_request, said
from tests.cli.import_helpers import FIXTURES, recorded_in, resume_request

VERSION = "2.1.332"
SCENARIOS = sorted(p.name for p in (FIXTURES / "claude_code" / VERSION).iterdir() if p.is_dir())
# What Claude Code puts before the model that is its own, not the conversation: its context and reminders,
# its slash commands' output, and its mid-conversation `system` turns (evo-agent sends its own); "Tool loaded."
# it adds beside a ToolSearch result when it builds the request (the import names the tool in the result).
_OWN = ("<system-reminder>", "<local-command-", "<command-name>", "<command-message>", "Tool loaded.")


def _source(name: str) -> Path:
    (path,) = (FIXTURES / "claude_code" / VERSION / name).glob("*.jsonl")
    return path


def _import(cli, path: Path) -> tuple[str, str]:
    result = cli.run("sessions", "import", "claude-code", str(path))
    assert result.rc == 0, result.err
    return result.out.split(" → ", 1)[1].split(" ", 1)[0], result.out


# What the user's hooks told the model, which Claude Code sends among its own notes (a `system` message, a
# system-reminder): carried by the import, so checked like the conversation.
_HOOK_SAID = re.compile(r"^\S+ hook (feedback:|additional context:|success:|blocking error from command|"
                        r"stopped continuation:)", re.M)
_REMINDER = re.compile(r"\A\s*<system-reminder>\n?(.*?)\n?</system-reminder>\s*\Z", re.S)


def _hook_said(atom: tuple[str, ...], role: str) -> list[tuple[str, ...]]:
    """The hook texts in a text of Claude Code's own, as `said` atoms: the paragraphs of a `system` message that
    a hook wrote, a system-reminder holding one (untagged)."""
    if atom[0] != "text":
        return []
    if role == "system":
        return [("text", part.strip()) for part in atom[1].split("\n\n") if _HOOK_SAID.match(part.strip())]
    reminder = _REMINDER.match(atom[1])
    return [("text", reminder.group(1).strip())] if reminder and _HOOK_SAID.search(reminder.group(1)) else []


def _conversation_sent(source: Path) -> list[tuple[str, ...]]:
    """`said` of the last request Claude Code sent, without what is its own (`_OWN`, role `system`, and the
    texts of its `isMeta` records: the notes it adds for the model, such as where a pasted image was saved;
    but not the prompt a slash command expanded to, written `isMeta` after the command, nor a hook's
    feedback); what the user's hooks said (`_hooks_said`) is kept where it was sent."""
    records = [json.loads(line) for line in source.read_text().splitlines()]
    commands = {r.get("uuid") for r in records if r.get("type") == "user" and "<command-name>" in json.dumps(r)}
    notes = {atom[1] for record in records if record.get("type") == "user" and record.get("isMeta")
             and record.get("parentUuid") not in commands  # a slash command's prompt is the user's request
             and not record.get("hookText")  # a hook's feedback is the user's hooks' words
             for atom in said([record["message"]]) if atom[0] == "text"}
    out: list[tuple[str, ...]] = []
    for message in last_request(source):
        for atom in said([message]):
            hooks = _hook_said(atom, message["role"])
            if hooks or message["role"] == "system":
                out += hooks
            elif not (atom[0] == "text" and (atom[1].startswith(_OWN) or atom[1] in notes)):
                out.append(atom)
    return out


def _carried(theirs: tuple[str, ...], ours: tuple[str, ...]) -> bool:
    """Whether our atom carries theirs: the same call or result; a text equal, or whole lines of the other
    (Claude Code wraps a prompt typed mid-turn in sentences of its own; evo-agent wraps a summary in its
    tags, seals the tags inside it, and may join a user's consecutive texts as the API would)."""
    if theirs[0] != ours[0]:
        return False
    if theirs[0] != "text":
        return theirs == ours
    # a summary is sealed as evo-agent's own are: its tags written `&lt;` (session.seal_summary)
    short, long = sorted((theirs[1], ours[1].replace("&lt;", "<")), key=len)
    return f"\n{short}\n" in f"\n{long}\n"


@pytest.mark.parametrize("name", SCENARIOS)
def test_a_resume_carries_everything_claude_code_last_sent(cli, model_server, name):
    """Every prompt, answer, tool call and result of Claude Code's last logged request is in the request a
    resume of the import sends, in the same order."""
    source = _source(name)
    theirs = _conversation_sent(source)
    assert theirs, "the fixture logs no request"
    sid, out = _import(cli, source)
    ours = said(resume_request(cli, model_server, sid)[:-1])  # without the resume's own prompt
    at = 0
    for atom in theirs:
        found = next((i for i in range(at, len(ours)) if _carried(atom, ours[i])), None)
        assert found is not None, f"{name}: {atom} (sent by Claude Code) is missing after {ours[:at][-2:]}"
        at = found if atom[0] == "text" else found + 1  # one merged text of ours may carry several of theirs


@pytest.mark.parametrize("name", SCENARIOS)
def test_every_record_is_read_or_known_as_bookkeeping(cli, name):
    sid, out = _import(cli, _source(name))
    assert "not understood" not in out and "0 lines skipped" in out, out
    start = cli.records(sid)[0]
    assert start["imported_from"] == {**start["imported_from"], "agent": "claude-code", "version": VERSION}


def test_a_prompt_typed_while_a_tool_ran_is_the_users_words_after_its_result(cli, model_server):
    """Claude Code 2.1.3xx takes a prompt typed mid-turn into the running turn (a `queued_command`
    attachment, rendered beside the next tool result): it was dropped, and the model's answer that
    acknowledges it then referred to nothing."""
    sid, _out = _import(cli, _source("queued"))
    sent = resume_request(cli, model_server, sid)
    (with_result,) = [m for m in sent if any(b["type"] == "tool_result" for b in m["content"])]
    assert [b.get("text") for b in with_result["content"] if b["type"] == "text"] == [
        "also update the README afterwards"]
    assert sent[sent.index(with_result) + 1]["content"][0]["text"].startswith("The check passed, and I noted")


def test_a_prompt_typed_just_before_a_kill_is_the_last_thing_imported(tmp_path):
    """Killed after the user typed mid-turn, before the model answered: the typed prompt is the newest
    message of the conversation, and the import ends with it."""
    lines = _source("queued").read_text().splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if '"queued_command"' in line)
    source = tmp_path / "killed.jsonl"
    source.write_text("".join(lines[:cut + 1]))
    messages = [e.message for e in read_claude_code(source).events]
    assert messages[-1]["role"] == "user"
    assert messages[-1]["content"][-1] == {"type": "text", "text": "also update the README afterwards"}


def test_a_background_agents_notice_reaches_the_model_where_it_did(cli, model_server):
    """2.1.332 runs an Agent call in the background: its result says "launched", and the subagent's answer
    reaches the model later as a notice (a `queued_command` of mode task-notification)."""
    sid, _out = _import(cli, _source("subagent"))
    records = cli.records(sid)
    assert [r["result"] for r in records if r["type"] == "subagent_end"] == ["app.py is the entry point."]
    sent = resume_request(cli, model_server, sid)
    notices = [(i, b["text"]) for i, m in enumerate(sent) for b in m["content"]
               if b["type"] == "text" and "<task-notification>" in b["text"]]
    assert len(notices) == 1 and "<result>app.py is the entry point.</result>" in notices[0][1]
    assert sent[notices[0][0] + 1]["content"][0]["text"] == "The subagent says app.py is the entry point."


def test_a_file_named_with_an_at_sign_comes_back_with_the_prompt(cli, model_server):
    """`explain @app.py`: Claude Code attached the file's content (an attachment of type file, rendered as
    a Read call and its result); the model's answer is about that content, so the resume carries it."""
    sid, _out = _import(cli, _source("mention"))
    sent = resume_request(cli, model_server, sid)
    first = " ".join(b["text"] for b in sent[0]["content"] if b["type"] == "text")
    assert "explain @app.py please" in first and "print('hello')" in first
    assert "gitStatus" not in json.dumps(sent)  # Claude Code's own context stays behind
    assert sent[1]["content"][0]["text"] == "It prints hello."


def test_a_rewinds_summary_from_here_follows_the_start_it_kept(cli, model_server):
    """`tui` (the terminal UI, by hand): `/rewind` to an earlier prompt and "Summarize from here" keeps the
    conversation's start and sends the summary of the rest after it; the import sent the summary first and
    the kept start after it, where the model never read them. Also in it: a `!` command (its input and output
    are user messages the model reads), an interrupted tool call and a "Restore conversation" rewind."""
    sid, out = _import(cli, _source("tui"))
    assert "compactions" in out and "1 compactions" not in out  # the summary is a message, not a boundary
    sent = resume_request(cli, model_server, sid)
    texts = [b["text"] for m in sent for b in m["content"] if b["type"] == "text"]
    start = texts.index("remember the word apple")
    summary = next(i for i, t in enumerate(texts) if t.startswith("This session is being continued"))
    assert start < texts.index("<bash-input>echo bash-mode-output</bash-input>") < summary
    assert texts[summary + 1:-1] == ["which words?", "Answer 10 to:  which words?"]
    assert "&lt;system-reminder>" in texts[summary]  # sealed as evo-agent's own summaries are
    assert not any("cherry" in t or "banana" in t for t in texts)  # summarised, rewound: never sent again


def test_a_slash_commands_prompt_is_the_request_the_answer_follows(cli, model_server):
    """`tui_commands` (by hand): a project command `.claude/commands/review.md` run as `/review app.py`; Claude
    Code sends the prompt it expands to (an `isMeta` record after the command), and the model answers it. The
    import dropped it with Claude Code's own notes: the resumed answer followed no request. Before it, a paste
    (2.1.332 keeps it whole, in `<pasted_content>`) and `/rewind`'s "Summarize up to here"."""
    sid, _out = _import(cli, _source("tui_commands"))
    sent = resume_request(cli, model_server, sid)
    texts = [b["text"].strip() for m in sent for b in m["content"] if b["type"] == "text"]
    asked = texts.index("Review the file app.py carefully and list three problems.")
    assert texts[asked + 1].startswith("Answer 19 to:")
    assert texts.index("third prompt: the word plum") < asked
    assert not any(t.startswith("<command-") for t in texts)  # the command as typed stays Claude Code's


def test_a_pdf_read_comes_back_as_the_document_the_model_read(cli, model_server):
    """Read of a PDF: Claude Code's tool result is a note and a `document` block (the PDF, base64). The import
    kept the note alone: the resumed answer "The PDF says Hello PDF world." quoted a document no longer there."""
    source = _source("pdf")
    (theirs,) = [b for r in map(json.loads, source.read_text().splitlines()) if r.get("type") == "user"
                 for b in (r["message"]["content"] if isinstance(r["message"]["content"], list) else [])
                 if b.get("type") == "tool_result"]
    sid, _out = _import(cli, source)
    sent = resume_request(cli, model_server, sid)
    (ours,) = [b for m in sent for b in m["content"] if b["type"] == "tool_result"]
    assert [p["type"] for p in ours["content"]] == ["text", "document"]
    assert ours["content"][1]["source"] == theirs["content"][1]["source"]  # the PDF's bytes, not redacted


def test_a_deferred_tool_loaded_by_toolsearch_is_named_in_its_result(cli, model_server):
    """2.1.3xx defers tools (MCP tools among them) until the model asks ToolSearch, which answers with
    `tool_reference` blocks; the import kept an empty result, as if the search found nothing."""
    sid, _out = _import(cli, _source("toolsearch"))
    sent = resume_request(cli, model_server, sid)
    (result,) = [b for m in sent for b in m["content"] if b["type"] == "tool_result"]
    assert result["content"] == [{"type": "text", "text": "Tool loaded: NotebookEdit"}]


def test_a_pasted_prompt_is_listed_by_its_words(cli, tmp_path):
    """2.1.332 keeps a paste whole in the prompt, inside `<pasted_content id="…">` tags: the listing showed
    the tag where the user's words are."""
    config = tmp_path / "claude"
    recorded_in(_source("tui_commands"), cli.project, config / "projects" / project_folder(cli.project) / "p.jsonl")
    listed = cli.run("sessions", "import", "claude-code", env={**cli.env, "CLAUDE_CONFIG_DIR": str(config)})
    assert listed.rc == 0 and "explain this log: log line 0: value=0 log line 1" in listed.out, listed.out
    assert "pasted_content" not in listed.out


def test_a_prompt_edited_after_esc_esc_replaces_the_one_it_rewound(cli, model_server):
    """`tui_plan` (by hand): plan mode and its ExitPlanMode approval, then Esc Esc back to "thanks, now the word
    fig", restored into the prompt and sent again as "…date": the resume holds the edited prompt alone."""
    sid, out = _import(cli, _source("tui_plan"))
    assert "left out: 2 messages of rewound branches" in out
    sent = json.dumps(resume_request(cli, model_server, sid))
    assert "ExitPlanMode" in sent and "thanks, now the word date" in sent and "word fig" not in sent


def test_hostile_attachments_never_crash_and_carry_only_text(tmp_path):
    """A queued_command or a mention whose prompt or rendering is not what Claude Code writes: no traceback, no
    structure carried but text and the blocks a message may hold."""
    odd = [None, 42, {"text": "a dict"}, [[["nested"]]], [{"type": "tool_use", "id": "x", "name": "bash",
                                                               "input": {"command": "id"}}], "x" * 10_000]
    lines = [{"type": "user", "uuid": "u0", "message": {"role": "user", "content": "start"}}]
    for i, value in enumerate(odd):
        for kind, mode in [("queued_command", "prompt"), ("queued_command", "task-notification"),
                           ("queued_command", None), ("queued_command", 7), ("file", None), ("mcp_resource", 1)]:
            rendered = [{"content": value}, value]
            lines.append({"type": "attachment", "uuid": f"a{i}{kind}{mode}", "attachment": {
                "type": kind, "prompt": value, "commandMode": mode}, "rendered": rendered})
    source = tmp_path / "odd.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines))
    imported = read_claude_code(source)
    events = list(imported.events)
    kinds = {b["type"] for e in events for b in e.message["content"]}
    assert kinds == {"text"} and not imported.skipped
    assert "x" * 10_000 in json.dumps([e.message for e in events])


# Every record kind Claude Code 2.1.332's session loader names (its bundle's table of kinds and how each is
# folded), found with `grep -a` in bin/claude.exe.
LOADER_KINDS = (
    "agent-color", "agent-name", "agent-setting", "ai-title", "api-request", "api-request-blob",
    "api-request-resumed", "api-request-shape", "artifact-autoreact-ledger", "artifact-comment-monitor",
    "assistant", "atis-latch", "attachment", "attribution-snapshot", "bridge-session",
    "content-replacement", "continued-in", "cost-state", "custom-title", "data-flow-incomplete",
    "data-flow-records", "derived-from", "dev-mods", "ended-by-model", "file-history-delta",
    "file-history-snapshot", "fork-context-ref", "frame-link", "history-suppression", "isolation-latch",
    "last-prompt", "memory-mode", "mode", "observer-ref", "permission-mode", "pr-link", "progress",
    "queue-operation", "relocated", "resume-head-vouch", "session-owner", "summary", "system", "tag",
    "tools-used", "user", "worktree-state",
)


def test_every_kind_claude_code_writes_is_read_or_known_as_bookkeeping(tmp_path):
    """A kind the importer does not know is reported as "not understood" to the user importing: none of
    Claude Code's own kinds is."""
    lines = [{"type": "user", "uuid": "u0", "message": {"role": "user", "content": "start"}}]
    lines += [{"type": kind, "uuid": f"k{i}", "parentUuid": "u0", "sessionId": "s"} for i, kind in enumerate(LOADER_KINDS)]
    source = tmp_path / "kinds.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines))
    imported = read_claude_code(source)
    list(imported.events)
    assert not imported.skipped, imported.skipped


def test_tool_errors_come_back_as_errors_the_model_read(cli, model_server):
    """`errors`: a command exiting 3, an Edit whose text is not in the file, NotebookEdit before a Read, and a
    tool this Claude Code does not have (TodoWrite): each result is the error text Claude Code sent, marked
    an error, and the model's answer follows them."""
    sid, _out = _import(cli, _source("errors"))
    sent = resume_request(cli, model_server, sid)
    results = [b for m in sent for b in m["content"] if b["type"] == "tool_result"]
    assert [r.get("is_error") for r in results] == [True] * 4
    assert results[0]["content"] == "Exit code 3\nbroken"
    assert "No such tool available: TodoWrite" in results[3]["content"]
    assert sent[-2]["content"] == [{"type": "text", "text": "Everything failed."}]


def test_after_clear_the_session_holds_only_what_came_after_it(cli, model_server):
    """`clear`: `/clear` in one Claude Code process starts a new transcript (the old one is `before_clear/`):
    the new one resumes without the word the user asked to remember before it."""
    sid, _out = _import(cli, _source("clear"))
    sent = json.dumps(resume_request(cli, model_server, sid))
    assert "which word?" in sent and "I know no word." in sent and "apple" not in sent
    assert "/clear" not in sent  # the command as typed is Claude Code's


def test_what_hooks_told_the_model_comes_back_where_it_read_it(cli, model_server):
    """`hooks`: the project's hooks added context to the prompt (UserPromptSubmit) and to a tool result
    (PostToolUse), and a Stop hook refused the first stop, so the model answered its feedback. The import
    dropped all of it: the model's two answers were merged into one, the second answering nothing."""
    sid, _out = _import(cli, _source("hooks"))
    sent = resume_request(cli, model_server, sid)
    texts = [[b.get("text", "") for b in m["content"] if b["type"] == "text"] for m in sent]
    assert "UserPromptSubmit hook additional context: hook: ticket ABC-7" in texts[0]
    assert "UserPromptSubmit hook success: hook: the build is green" in texts[0]
    (first_result,) = [m for m in sent if any(b.get("tool_use_id") == "toolu_fake_000001" for b in m["content"])]
    assert first_result["content"][-1] == {"type": "text",
                                           "text": "PostToolUse:Bash hook additional context: hook: lint passed"}
    blocked = texts.index(["The hook blocked the second command."])
    assert "hook: run the tests before stopping" in "\n".join(texts[blocked + 1])
    assert sent[blocked + 1]["role"] == "user" and texts[blocked + 2] == ["The tests would pass."]


def test_a_permission_denial_is_the_error_result_the_model_answered(cli, model_server):
    """`denied`: `-p` without Bash allowed: Claude Code refused the call itself, and told the model why."""
    sid, _out = _import(cli, _source("denied"))
    sent = resume_request(cli, model_server, sid)
    (result,) = [b for m in sent for b in m["content"] if b["type"] == "tool_result"]
    assert result.get("is_error") is True and "needs approval" in result["content"]
    assert sent[-2]["content"] == [{"type": "text", "text": "I may not run commands here."}]


def test_a_forked_session_holds_the_conversation_it_was_forked_from(cli, model_server):
    """`fork`: `--resume … --fork-session` writes a new transcript starting with a copy of its parent's
    (`parent/`): the fork resumes with both prompts, the parent with its own alone."""
    sid, _out = _import(cli, _source("fork"))
    texts = [b["text"] for m in resume_request(cli, model_server, sid) for b in m["content"] if b["type"] == "text"]
    assert texts[:4] == ["remember the word apple", "Noted: apple.", "now the word banana", "Noted: banana, after apple."]
    (parent,) = (FIXTURES / "claude_code" / VERSION / "fork" / "parent").glob("*.jsonl")
    sid, _out = _import(cli, parent)
    assert "banana" not in json.dumps(resume_request(cli, model_server, sid))


def test_hostile_hook_attachments_never_crash_and_carry_only_text(tmp_path):
    """Hook attachments and hook feedback whose fields are not what Claude Code writes: no traceback, text only."""
    odd = [None, 42, "", {"text": "a dict"}, [[["nested"]]], ["a", 1, None], "x" * 10_000]
    lines = [{"type": "user", "uuid": "u0", "message": {"role": "user", "content": "start"}}]
    for i, value in enumerate(odd):
        for kind in ("hook_success", "hook_additional_context", "hook_blocking_error", "hook_stopped_continuation"):
            attachment = {"type": kind, "hookName": value, "hookEvent": "UserPromptSubmit", "content": value,
                          "blockingError": value, "message": value}
            lines.append({"type": "attachment", "uuid": f"a{i}{kind}", "attachment": attachment})
            lines.append({"type": "attachment", "uuid": f"r{i}{kind}", "attachment": attachment, "rendered": value})
        lines.append({"type": "user", "uuid": f"m{i}", "isMeta": True, "hookText": True, "hookTextLead": value,
                      "message": {"role": "user", "content": value}})
    source = tmp_path / "odd.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines))
    imported = read_claude_code(source)
    events = list(imported.events)
    assert {b["type"] for e in events for b in e.message["content"]} == {"text"} and not imported.skipped
    assert "x" * 10_000 in json.dumps([e.message for e in events])


def test_an_mcp_tools_text_image_and_resource_come_back_as_the_model_read_them(cli, model_server):
    """`mcp`: an MCP server's tools (loaded by ToolSearch) keep their `mcp__server__tool` names, and a result of
    text, an image and an embedded resource is the text, the image and the resource's text Claude Code sent."""
    sid, _out = _import(cli, _source("mcp"))
    sent = resume_request(cli, model_server, sid)
    calls = [b["name"] for m in sent for b in m["content"] if b["type"] == "tool_use"]
    assert calls == ["ToolSearch", "mcp__glossary__lookup", "mcp__glossary__sample"]
    sample = [b for m in sent for b in m["content"] if b["type"] == "tool_result"][-1]["content"]
    assert [p["type"] for p in sample] == ["text", "image", "text", "text"]
    assert sample[3]["text"] == "[Resource from glossary at file:///glossary.txt] foo: a word\nbar: another word"


def test_a_prompt_a_hook_refused_never_reaches_the_model(cli, model_server):
    """`hook_blocked`: a UserPromptSubmit hook exiting 2 on "the secret is swordfish": Claude Code never sent it
    (it is only in a `system` note and its queue): the resume does not send it either."""
    sid, out = _import(cli, _source("hook_blocked"))
    sent = json.dumps(resume_request(cli, model_server, sid))
    assert "swordfish" not in sent and "which word?" in sent and "You said apple." in sent


def test_a_call_the_user_refused_in_the_terminal_ui_keeps_what_they_said(cli, model_server):
    """`tui_reject` (by hand): manual mode, a Bash call refused with "No, and tell Claude what to do differently"
    ("use make test instead"), then one refused with Esc: both results are the refusals the model read, the
    first carrying the user's words, the second followed by Claude Code's interrupt note and the next prompt."""
    sid, _out = _import(cli, _source("tui_reject"))
    sent = resume_request(cli, model_server, sid)
    results = [b for m in sent for b in m["content"] if b["type"] == "tool_result"]
    assert [r.get("is_error") for r in results] == [True, True]
    assert results[0]["content"].endswith("the user said:\nuse make test instead")
    (last,) = [m for m in sent if results[1] in m["content"]]
    assert [b.get("text", "").strip() for b in last["content"][1:]] == [
        "[Request interrupted by user for tool use]", "thanks, the word is plum"]


def test_an_image_pasted_in_the_terminal_ui_comes_back_with_its_prompt(cli, model_server):
    """`tui_image` (by hand): an image file's path pasted into the prompt is attached as `[Image #1]`."""
    sid, _out = _import(cli, _source("tui_image"))
    first = resume_request(cli, model_server, sid)[0]["content"]
    assert [b["type"] for b in first] == ["text", "image"] and first[0]["text"] == "[Image #1] what is in this picture"


def test_a_call_answered_by_two_processes_resumes_with_the_answer_the_model_read(cli, model_server):
    """`--continue` in a second terminal while a call ran: that process wrote the call's result as interrupted,
    the first wrote the real one later and went on from it. Both results hang off the call: the import sent
    both, and the resume put its own interruption note in their place; the model had read "passed"."""
    sid, _out = _import(cli, _source("concurrent"))
    sent = resume_request(cli, model_server, sid)
    results = [b for m in sent for b in m["content"] if b["type"] == "tool_result"]
    assert len(results) == 1 and "passed" in json.dumps(results[0]["content"]), results
