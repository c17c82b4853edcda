"""The app driving the real Agent, which talks to the local Messages API through the official SDK.

The other app tests use a fake agent to pin down keys and rendering; these check that what the user
sees matches what was streamed, recorded and sent.
"""

from __future__ import annotations

from evo_agent.session import load_for_resume, summary_message
from tests.agent.helpers import is_summary_request
from tests.api_rules import check_request
from tests.builders import make_agent, server_provider
from tests.builders import read_records as records
from tests.fake_model_server import hang, reply, text, thinking, tool_use
from tests.prompt_cache import plain

from .test_app import CTRL_C, ENTER, ESC, running


async def test_a_streamed_turn_with_a_tool_is_printed_and_recorded_the_same(project, model_server):
    model_server.input_tokens = 200
    model_server.script(
        reply(thinking("Check the readme first."), text("Let me look at it."),
              tool_use("read_file", {"path": "README.md"}, id="toolu_r")),
        text("It is **a test project**.\nSecond line."),
    )
    agent, _ = make_agent(project, server_provider(model_server))
    async with running(agent) as run:
        run.type("what is this project?" + ENTER)
        await run.until(lambda: len(model_server.valid_requests) == 2 and not run.app.running, timeout=30)
        shown = run.printed
        order = ["› what is this project?", "✻ thinking", "Let me look at it.", "● read_file(README.md)",
                 "└  ", "It is a test project.\nSecond line."]
        positions = [shown.index(part) for part in order]
        assert positions == sorted(positions), shown
        assert "420 tokens" in run.status()  # 2 calls × (200 in + 10 out), as the API reported
    history = load_for_resume(agent.recorder.path).messages
    assert history == agent.history and history[1]["content"][0]["type"] == "thinking"
    model_server.assert_all_valid()


async def test_esc_while_the_model_streams_interrupts_and_the_session_stays_valid(project, model_server):
    model_server.script(hang(30, text("never shown")), text("fresh answer"))
    agent, _ = make_agent(project, server_provider(model_server))
    async with running(agent) as run:
        run.type("take your time" + ENTER)
        await run.until(model_server.hanging.is_set, timeout=15)
        await run.until(lambda: "Working on it" in run.app.view.stream.tail)  # the streamed start is live
        run.type(ESC)
        await run.until(lambda: not run.app.running, timeout=15)
        assert "Interrupted by user" in run.printed and "never shown" not in run.printed
        assert agent.history[-1] == {"role": "user", "content": "[Request interrupted by user]"}
        run.type("try again" + ENTER)
        await run.until(lambda: "fresh answer" in run.printed and not run.app.running, timeout=30)
    sent = model_server.valid_requests[-1]["messages"]
    assert plain(sent[-2:]) == plain([{"role": "user", "content": "[Request interrupted by user]"},
                         {"role": "user", "content": "try again"}])
    assert load_for_resume(agent.recorder.path).messages == agent.history


async def test_slash_resume_id_shows_the_history_and_the_next_request_continues_it(project, model_server):
    model_server.script(text("The answer is 7."), text("first answer"), text("Yes, 7."))
    old, store = make_agent(project, server_provider(model_server))
    old.run_turn("what is 3 + 4?")
    agent, _ = make_agent(project, server_provider(model_server))
    async with running(agent, store=store) as run:
        run.type("unrelated" + ENTER)
        await run.until(lambda: "first answer" in run.printed and not run.app.running, timeout=30)
        run.type(f"/resume {old.session_id[:15]}" + ENTER)
        await run.until(lambda: "messages restored" in run.printed, timeout=30)
        tail = run.printed.split("first answer", 1)[1]
        assert tail.index("› what is 3 + 4?") < tail.index("The answer is 7.") < tail.index("Resumed")
        assert agent.session_id != old.session_id and agent.session_id in run.printed
        run.type("sure?" + ENTER)
        await run.until(lambda: "Yes, 7." in run.printed and not run.app.running, timeout=30)
    assert plain(model_server.valid_requests[-1]["messages"]) == plain([
        {"role": "user", "content": "what is 3 + 4?"},
        {"role": "assistant", "content": [{"type": "text", "text": "The answer is 7."}]},
        {"role": "user", "content": "sure?"},
    ])


async def test_slash_compact_records_a_boundary_and_the_next_request_starts_from_the_summary(project, model_server):
    model_server.default = lambda body: text("S-tui") if is_summary_request(body) else text("ok")
    agent, _ = make_agent(project, server_provider(model_server))
    async with running(agent) as run:
        run.type("remember blue" + ENTER)
        await run.until(lambda: "ok" in run.printed and not run.app.running, timeout=30)
        run.type("/compact colours" + ENTER)
        await run.until(lambda: "compaction #1, manual" in run.printed, timeout=30)
        run.type("which colour?" + ENTER)
        await run.until(lambda: len(model_server.valid_requests) == 3 and not run.app.running, timeout=30)
        assert "error" not in run.printed
    (boundary,) = [r for r in records(agent.recorder.path) if r["type"] == "compact_boundary"]
    assert boundary["summary"] == "S-tui" and boundary["trigger"] == "manual"
    sent = model_server.valid_requests[-1]["messages"]
    assert plain(sent) == plain([summary_message("S-tui"), {"role": "user", "content": "which colour?"}])
    check_request(sent)


async def test_ctrl_c_during_slash_compact_stops_the_summary_and_changes_nothing(project, model_server):
    model_server.default = lambda body: hang(30, text("too late")) if is_summary_request(body) else text("ok")
    agent, _ = make_agent(project, server_provider(model_server))
    async with running(agent) as run:
        run.type("remember blue" + ENTER)
        await run.until(lambda: "ok" in run.printed and not run.app.running, timeout=30)
        history, transcript = list(agent.history), agent.recorder.path.read_bytes()
        run.type("/compact" + ENTER)
        await run.until(model_server.hanging.is_set, timeout=15)
        assert "compacting" in run.status()
        run.type(CTRL_C)
        await run.until(lambda: "nothing was compacted" in run.printed, timeout=15)
        assert not run.task.done() and not run.app.running
    assert agent.history == history and agent.recorder.path.read_bytes() == transcript


async def test_a_subagents_tool_calls_are_shown_nested_under_its_task(project, model_server):
    model_server.script(
        tool_use("task", {"description": "look around", "prompt": "list the files",
                          "subagent_type": "general-purpose"}, id="toolu_task"),
        tool_use("bash", {"command": "echo from-the-child"}, id="toolu_child"),
        text("The child saw one line."),
        text("All done."),
    )
    agent, _ = make_agent(project, server_provider(model_server))
    async with running(agent) as run:
        run.type("delegate it" + ENTER)
        await run.until(lambda: "All done." in run.printed and not run.app.running, timeout=60)
        shown = run.printed
        order = ["● task(look around)", "  ● bash(echo from-the-child)", "    └  from-the-child",
                 "  └  The child saw one line.", "All done."]
        assert [shown.index(p) for p in order] == sorted(shown.index(p) for p in order), shown
    model_server.assert_all_valid()
