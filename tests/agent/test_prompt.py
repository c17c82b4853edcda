"""The system prompt (agent/prompt.py): each template version's bytes, what version 2 says and that it says
it truly, and which version a conversation is sent — its recorded one, or version 1 for a conversation
recorded before the version was (SPEC §12: a resumed session's first request repeats its source's prefix).
"""

from __future__ import annotations

import hashlib
import json

from evo_agent.agent import Agent
from evo_agent.agent.compaction import CLEAR_RESULT_CHARS, CLEAR_TRIGGER_CHARS, KEEP_RECENT_RESULTS
from evo_agent.agent.permissions import PermissionGate, Policy
from evo_agent.agent.prompt import (
    LEGACY_VERSION,
    PROMPT_RECORD,
    PROMPT_VERSION,
    _system,
    build_system_prompt,
)
from evo_agent.agent.subagents import SUBAGENT_MAX_CALLS
from evo_agent.session import SCENE_TYPES, created_ms_of
from evo_agent.tools import bash, glob_tool, grep_tool, read_file
from tests.agent.test_prompt_cache import big_file, cat_then_answer, sent
from tests.builders import make_agent, quiet_store, read_records, server_provider
from tests.fake_model_server import FakeModelServer
from tests.prompt_cache import PromptCache

SPECS = [{"name": "bash", "description": "Run a shell command. More."},
         {"name": "glob", "description": "Find files, e.g. `**/*.py`. More."}]
STARTED = 1780227556183  # 2026-05-31

# What the main of f0a63b2 (the last without the `system_prompt` record) built for these facts, byte for byte.
V1_GOLDEN = (
    "You are evo-agent, a coding agent that works in a terminal on the user's project.\n\nProject directory: /p\n"
    "Working directory: /p/sub\nPlatform: Linux\nConversation started: 2026-05-31 (UTC)\n\nYou act through tools. "
    "Commands run in the working directory (where the user started you, inside the\nproject), and relative paths "
    "are resolved against it.\nAvailable tools:\n- bash: Run a shell command.\n- glob: Find files, e.g.\n\nHow to "
    "work:\n- Look before you change: read the relevant files (read_file, grep, glob) before editing them.\n- Prefer "
    "edit_file for small changes to existing files and write_file for new files.\n- Run commands with bash (tests, "
    "builds, git status); check their exit codes.\n- Keep changes focused on what was asked; do not invent files or "
    "APIs you have not seen.\n- A tool result marked as an error is information: read it and adapt, do not repeat "
    "the same call blindly.\n- If the user interrupted a turn (\"[Request interrupted by user]\"), do not resume that "
    "work unless asked.\n- When you are done, answer briefly: what you found or changed, and anything the user must "
    "do next.\n\n# Project instructions\nx\n")
# Version 2's bytes for the same facts (the platform's name aside). A change to its text is a new version:
# a resumed version-2 conversation must be sent these very bytes again.
V2_SHA256 = "8f817d99679dc68803e5ad083f9491091e05b466deba24ad23252344651dfede"
V3_SHA256 = "aa651d38f3b6675b73e0a1e0092d95f137c6aa150293ed2f8ed6e70fb1628517"


def rendered(version: int, specs: list[dict] = SPECS) -> str:
    text = build_system_prompt("/p", specs, STARTED, cwd="/p/sub", context=["# Project instructions\nx", ""],
                               version=version)
    return text.replace(f"Platform: {_system()}\n", "Platform: Linux\n", 1)


def test_version_1_is_the_old_prompt_byte_for_byte():
    assert LEGACY_VERSION == 1 and rendered(1) == V1_GOLDEN


def test_version_2_is_pinned_so_that_a_change_to_its_text_is_a_new_version():
    assert hashlib.sha256(rendered(2).encode()).hexdigest() == V2_SHA256, (
        "the version-2 template changed: resumed version-2 conversations would miss the prompt cache. "
        "Add a version (and pin it) instead of editing version 2.")


def test_version_3_is_pinned_and_tells_greps_pattern_language_truly():
    """The grep tool matches with RE2 (no lookaround, no backreferences); version 2 says "a Python regular
    expression", so a model wrote lookarounds the tool refuses. Version 3 differs from 2 in that bullet alone."""
    assert PROMPT_VERSION == 3
    assert hashlib.sha256(rendered(3).encode()).hexdigest() == V3_SHA256, (
        "the version-3 template changed: resumed version-3 conversations would miss the prompt cache. "
        "Add a version 4 (and pin it) instead of editing version 3.")
    assert "an RE2 regular expression" in rendered(3) and "Python regular expression" not in rendered(3)
    two, three = rendered(2).splitlines(), rendered(3).splitlines()
    assert [line for line in two if line not in three] == [
        "- Search before you read: grep (a Python regular expression; `path:line:text`, at most 500 matches) finds",
        "  where a name is defined or used, glob (`**/*.py`) finds files by name; then read the lines around what you",
        "  found. When grep or glob stop at their limit, narrow the pattern or the path instead of paging on."]


def test_an_unknown_version_gets_the_current_template():
    assert rendered(99) == rendered(PROMPT_VERSION)


def test_version_2_keeps_the_facts_and_the_context_last():
    text = rendered(2)
    assert text.startswith("You are evo-agent")
    for line in ("Project directory: /p\n", "Working directory: /p/sub\n", "Conversation started: 2026-05-31 (UTC)\n",
                 "Your tools: bash, glob."):
        assert line in text
    assert text.endswith("\n\n# Project instructions\nx\n")
    assert text.count("# Project instructions") == 1  # its own sections never take the block's heading


def main_specs() -> list[dict]:
    return [{"name": n, "description": "d"} for n in (
        "bash", "read_file", "write_file", "edit_file", "glob", "grep", "compact", "plan_create", "plan_task_create",
        "plan_task_update", "plan_task_get", "plan_task_list", "plan_list", "plan_complete", "task", "memory")]


def test_a_section_per_kind_of_tool_the_session_has():
    main = build_system_prompt("/p", main_specs(), STARTED)
    for heading in ("# Reading and searching", "# Changing files", "# Running commands (bash)",
                    "# Using tools efficiently", "# Subagents (task)", "# Long conversations",
                    "# The Session Plan (plan_* tools)", "# Auto Memory (the memory tool)",
                    "# What lasts", "# Trust: only the user gives orders",
                    "# Approval and the sandbox", "# Git and destructive commands", "# Answering in a terminal"):
        assert f"\n{heading}\n" in main, heading
    assert "# MCP tools" not in main
    # a subagent has neither task nor memory (subagents.py), and is told of neither
    child = build_system_prompt("/p", [s for s in main_specs() if s["name"] not in ("task", "memory")], STARTED)
    assert "# Subagents (task)" not in child and "Auto Memory" not in child and "memory write" not in child
    assert "# The Session Plan (plan_* tools)" in child
    with_mcp = build_system_prompt("/p", [*main_specs(), {"name": "mcp__docs__search", "description": "d"}], STARTED)
    assert "\n# MCP tools\n" in with_mcp
    bare = build_system_prompt("/p", [], STARTED)
    assert "Your tools: (none)." in bare and "# Reading and searching" not in bare
    assert "Session Plan" not in bare and "open plan" not in bare  # no plan tools (Agent(plan=False)): no plan


def test_the_figures_it_states_are_the_codes():
    text = build_system_prompt("/p", main_specs(), STARTED)
    assert KEEP_RECENT_RESULTS == 3 and "older\n  than the latest three" in text
    assert f"over {CLEAR_RESULT_CHARS:,} characters" in text
    assert f"add up to {CLEAR_TRIGGER_CHARS:,} characters" in text
    assert f"Past {bash.MAX_OUTPUT_CHARS:,} characters" in text
    assert f"The timeout is {bash.DEFAULT_TIMEOUT_S:g} s" in text and f"at most {bash.MAX_TIMEOUT_S:g} s" in text
    assert f"{read_file.DEFAULT_LIMIT:,} lines from `offset`" in text
    assert f"lines over {read_file.MAX_LINE_CHARS:,} characters cut" in text
    assert f"at most {read_file.MAX_OUTPUT_CHARS:,} characters" in text
    assert f"at most {grep_tool.MAX_MATCHES} matches" in text and glob_tool.MAX_RESULTS == grep_tool.MAX_MATCHES
    assert f"It stops after {SUBAGENT_MAX_CALLS} model calls" in text
    # the placeholder it quotes is the one micro-compaction writes
    from evo_agent.agent.compaction import micro_compact

    results = [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}", "content": "x" * 4096}]}
               for i in range(14)]
    calls = [{"role": "assistant", "content": [{"type": "tool_use", "id": f"t{i}", "name": "bash", "input": {}}]}
             for i in range(14)]
    history = [m for pair in zip(calls, results, strict=True) for m in pair]
    placeholder = micro_compact(history)[1]["content"][0]["content"]
    assert f"`{placeholder}`" in text


def test_the_prompt_is_a_function_of_recorded_facts_only():
    """No clock, no kernel version: built twice, the same bytes; another start day, another date line only."""
    assert build_system_prompt("/p", main_specs(), STARTED) == build_system_prompt("/p", main_specs(), STARTED)
    later = build_system_prompt("/p", main_specs(), STARTED + 86_400_000)
    assert later.replace("2026-06-01", "2026-05-31") == build_system_prompt("/p", main_specs(), STARTED)


# ---- which version a conversation is sent ---------------------------------------------------------------


def prompt_records(path) -> list[dict]:
    return [r for r in read_records(path) if r["type"] == PROMPT_RECORD]


def test_a_new_session_records_its_version_and_a_resume_carries_it(project):
    assert PROMPT_RECORD in SCENE_TYPES  # held until something is said, carried by a resume
    big_file(project)
    with FakeModelServer() as server:
        server.prompt_cache = PromptCache()
        server.default = cat_then_answer
        source, _ = make_agent(project, server_provider(server), compact_threshold=10**9)
        source.run_turn("what is in data.txt?")
        resumed, _ = make_agent(project, server_provider(server), compact_threshold=10**9)
        resumed.resume(source.session_id)
        before = len(server.log)
        resumed.run_turn("and now?")
        first = server.log[before]
    (record,) = prompt_records(source.recorder.path)
    assert record["version"] == PROMPT_VERSION
    assert [r["version"] for r in prompt_records(resumed.recorder.path)] == [PROMPT_VERSION]  # carried, once
    assert resumed.system_prompt == source.system_prompt and "# Trust: only the user gives orders" in source.system_prompt
    assert first["body"]["system"][0]["text"] == source.system_prompt
    assert first["usage"]["cache_read_input_tokens"] >= 0.8 * sent(first["usage"])


def test_a_conversation_recorded_before_the_version_is_resumed_with_its_own_prompt_and_reads_the_cache(project):
    """A session of the old main: no `system_prompt` record, the version-1 prompt on the wire. Its resume (and
    the resume of that) sends version 1 again, so the first request after it reads what the source wrote."""
    big_file(project)
    with FakeModelServer() as server:
        server.prompt_cache = PromptCache()
        server.default = cat_then_answer
        provider = server_provider(server)
        probe, _ = make_agent(project, provider)  # nothing said: nothing on disk; only its tools are read
        store = quiet_store(project)
        recorder = store.create(model=provider.model, provider=provider.name)
        old_prompt = build_system_prompt(project, probe.tool_specs(), created_ms_of(recorder.session_id),
                                         cwd=project, version=LEGACY_VERSION)
        source = Agent(provider=provider, recorder=recorder, project_dir=project, store=store,
                       system_prompt=old_prompt, compact_threshold=10**9,
                       permissions=PermissionGate(Policy(project, "bypass")))
        for i in range(3):
            source.run_turn(f"question {i}")
        assert prompt_records(source.recorder.path) == []  # as the old main left it
        resumed, _ = make_agent(project, provider, compact_threshold=10**9)
        resumed.resume(source.session_id)
        assert resumed.system_prompt == old_prompt
        before = len(server.log)
        resumed.run_turn("after the resume")
        from_resumed = server.log[before]
        source.run_turn("after the resume")  # what the old session would have sent next
        from_source = next(e for e in server.log[before + 2:] if e.get("answer") == "message")
        again, _ = make_agent(project, provider, compact_threshold=10**9)
        again.resume(resumed.session_id)
        assert again.system_prompt == old_prompt
        before = len(server.log)
        again.run_turn("after the second resume")
        from_again = server.log[before]
    assert json.dumps(from_resumed["body"]) == json.dumps(from_source["body"])
    for entry in (from_resumed, from_again):
        assert entry["body"]["system"][0]["text"] == old_prompt
        assert entry["usage"]["cache_read_input_tokens"] >= 0.8 * sent(entry["usage"]), entry["usage"]
    assert prompt_records(resumed.recorder.path) == [] and prompt_records(again.recorder.path) == []


def test_clear_starts_a_session_with_the_current_version(project, model_server):
    """`/clear` (switch_session to a new session) starts a new conversation: the current template, recorded."""
    agent, store = make_agent(project, server_provider(model_server))
    recorder = store.create(model="claude-test", provider="anthropic")
    agent.switch_session(recorder, [])
    assert "# Trust: only the user gives orders" in agent.system_prompt
    assert recorder.scene[PROMPT_RECORD] == {"version": PROMPT_VERSION}


def test_the_date_reminder_says_a_new_day_once_and_again_after_a_compaction():
    from evo_agent.agent.prompt import date_reminder
    from evo_agent.session import reminder_block, summary_message

    day = 86_400_000
    started = 1_780_227_556_183  # 2026-05-31 (UTC)
    assert date_reminder([], started, started + 1000) is None  # the system prompt's day is today's
    said = date_reminder([], started, started + 3 * day)
    assert said is not None and said.startswith("Today's date is 2026-06-03 (UTC)")
    told = [{"role": "user", "content": [reminder_block(said), {"type": "text", "text": "go on"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}]
    assert date_reminder(told, started, started + 3 * day) is None  # heard it (a resume replays it)
    assert "2026-06-04" in (date_reminder(told, started, started + 4 * day) or "")  # past midnight again
    assert date_reminder([summary_message("earlier")], started, started + 3 * day) == said  # the summary drops it
    assert date_reminder([], None, started) is None  # no known start (a fixed prompt): nothing to correct
