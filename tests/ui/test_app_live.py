"""The TUI driving the real Agent, which talks to the local Messages API through the official SDK.

The other app tests use a fake agent to pin down rendering; these check that
what the user sees matches what was streamed, recorded and sent.
"""

from __future__ import annotations

from evo_agent.session import load_for_resume, summary_message
from evo_agent.ui.app import AgentApp, AssistantBlock, NoticeBlock, ThinkingBlock, ToolBlock, UserBlock
from tests.agent.helpers import make_agent, records, server_provider
from tests.api_rules import check_request
from tests.fake_model_server import hang, reply, text, thinking, tool_use

from .test_app import SIZE, notices, settle, status, wait_until


async def test_a_streamed_turn_with_a_tool_shows_blocks_and_records_the_same(project, model_server):
    model_server.input_tokens = 200
    model_server.script(
        reply(thinking("Check the readme first."), text("Let me look at it."),
              tool_use("read_file", {"path": "README.md"}, id="toolu_r")),
        text("It is **a test project**."),
    )
    agent, _ = make_agent(project, server_provider(model_server))
    app = AgentApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"what is this project?", "enter")
        await settle(app, pilot)
        kinds = [type(b) for b in app.blocks()]
        assert kinds == [UserBlock, ThinkingBlock, AssistantBlock, ToolBlock, AssistantBlock]
        _, think, first, tool, last = app.blocks()
        assert think.text == "Check the readme first." and first.text == "Let me look at it."
        assert tool.status == "done" and "a test project" in tool.result_text
        assert last.text == "It is **a test project**."
        assert "tokens 420" in status(app)  # 2 calls × (200 in + 10 out), as the API reported
        assert f"session {agent.session_id}" in status(app)
    history = load_for_resume(agent.recorder.path).messages
    assert history == agent.history and history[1]["content"][0]["type"] == "thinking"
    model_server.assert_all_valid()


async def test_ctrl_c_while_the_model_streams_cancels_and_the_session_stays_valid(project, model_server):
    model_server.script(hang(30, text("never shown")), text("fresh answer"))
    agent, _ = make_agent(project, server_provider(model_server))
    app = AgentApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"take your time", "enter")
        await wait_until(pilot, model_server.hanging.is_set, timeout=15)
        await wait_until(pilot, lambda: app.blocks(AssistantBlock))  # the streamed start is on screen
        await pilot.press("ctrl+c")
        await wait_until(pilot, lambda: not app.running, timeout=15)
        assert "cancelled" in notices(app) and app.is_running
        assert agent.history[-1] == {"role": "user", "content": "[Request interrupted by user]"}
        await pilot.press(*"try again", "enter")
        await settle(app, pilot)
        assert app.blocks(AssistantBlock)[-1].text == "fresh answer"
    sent = model_server.valid_requests[-1]["messages"]
    assert sent[-2:] == [{"role": "user", "content": "[Request interrupted by user]"}, {"role": "user", "content": "try again"}]
    assert load_for_resume(agent.recorder.path).messages == agent.history


async def test_slash_resume_id_swaps_the_history_on_screen_and_in_the_next_request(project, model_server):
    model_server.script(text("The answer is 7."), text("first answer"), text("Yes, 7."))
    old, store = make_agent(project, server_provider(model_server))
    old.run_turn("what is 3 + 4?")
    agent, _ = make_agent(project, server_provider(model_server))
    app = AgentApp(agent, store=store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"unrelated", "enter")
        await settle(app, pilot)
        await pilot.press(*f"/resume {old.session_id[:15]}", "enter")
        await settle(app, pilot)
        await wait_until(pilot, lambda: any("restored" in n for n in notices(app)))
        users = [b.prompt for b in app.blocks(UserBlock)]
        assert users == ["what is 3 + 4?"]
        assert [b.text for b in app.blocks(AssistantBlock)] == ["The answer is 7."]
        assert agent.session_id not in (old.session_id,) and agent.session_id in status(app)
        await pilot.press(*"sure?", "enter")
        await settle(app, pilot)
    assert model_server.valid_requests[-1]["messages"] == [
        {"role": "user", "content": "what is 3 + 4?"},
        {"role": "assistant", "content": [{"type": "text", "text": "The answer is 7."}]},
        {"role": "user", "content": "sure?"},
    ]


async def test_slash_compact_records_a_boundary_and_the_next_request_starts_from_the_summary(project, model_server):
    model_server.default = lambda body: text("ok") if body.get("tools") else text("S-tui")
    agent, _ = make_agent(project, server_provider(model_server))
    app = AgentApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"remember blue", "enter")
        await settle(app, pilot)
        await pilot.press(*"/compact colours", "enter")
        await settle(app, pilot)
        await wait_until(pilot, lambda: any("compaction #1, manual" in n for n in notices(app)))
        await pilot.press(*"which colour?", "enter")
        await settle(app, pilot)
        assert not [b for b in app.blocks(NoticeBlock) if b.text.startswith("error")]
    (boundary,) = [r for r in records(agent.recorder.path) if r["type"] == "compact_boundary"]
    assert boundary["summary"] == "S-tui" and boundary["trigger"] == "manual"
    sent = model_server.valid_requests[-1]["messages"]
    assert sent == [summary_message("S-tui"), {"role": "user", "content": "which colour?"}]
    check_request(sent)


async def test_ctrl_c_during_slash_compact_stops_the_summary_and_changes_nothing(project, model_server):
    model_server.default = lambda body: text("ok") if body.get("tools") else hang(30, text("too late"))
    agent, _ = make_agent(project, server_provider(model_server))
    app = AgentApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"remember blue", "enter")
        await settle(app, pilot)
        history, transcript = list(agent.history), agent.recorder.path.read_bytes()
        await pilot.press(*"/compact", "enter")
        await wait_until(pilot, model_server.hanging.is_set, timeout=15)
        assert "compacting" in status(app)
        await pilot.press("ctrl+c")
        await wait_until(pilot, lambda: any("nothing was compacted" in n for n in notices(app)), timeout=15)
        assert app.is_running and not app.running
    assert agent.history == history and agent.recorder.path.read_bytes() == transcript
