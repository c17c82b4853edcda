"""The main TUI against a fake agent: streaming blocks, Ctrl+C, slash commands, input keys."""

from __future__ import annotations

import asyncio

from evo_agent.ui.app import (
    AgentApp, AssistantBlock, NoticeBlock, ThinkingBlock, ToolBlock, UserBlock, complete_command,
)
from evo_agent.ui.bridge import AgentLike, TurnCallbacks
from evo_agent.ui.picker import SessionPicker

from .conftest import make_session
from .fakes import FakeAgent

SIZE = (100, 40)


async def settle(app, pilot) -> None:
    await app.workers.wait_for_complete()
    await pilot.pause()


async def wait_until(pilot, predicate, timeout: float = 5.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        assert loop.time() < deadline, "condition not reached"
        await pilot.pause(0.02)


def status(app) -> str:
    return str(app.query_one("#status").render())


def notices(app) -> list[str]:
    return [b.text for b in app.blocks(NoticeBlock)]


def test_fake_agent_matches_protocol(tmp_path):
    assert isinstance(FakeAgent(tmp_path), AgentLike)


async def test_streaming_blocks_appear_in_order(tmp_path):
    agent = FakeAgent(tmp_path, script=[
        ("on_thinking", ("let me ",)), ("on_thinking", ("look",)),
        ("on_text", ("I will **list** ",)), ("on_text", ("the files.",)),
        ("on_tool_start", ("tu_1", "bash", {"command": "ls [dir]"})),
        ("on_tool_end", ("tu_1", "a.txt\nb.txt", False, 0.25)),
        ("on_tool_start", ("tu_2", "read_file", {"path": "missing.txt"})),
        ("on_tool_end", ("tu_2", "no such file", True, 0.01)),
        ("on_notice", ("context compacted",)),
        ("on_text", ("Done.",)),
    ])
    app = AgentApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"list files", "enter")
        await settle(app, pilot)
        kinds = [type(b).__name__ for b in app.blocks()]
        assert kinds == ["UserBlock", "ThinkingBlock", "AssistantBlock", "ToolBlock", "ToolBlock",
                         "NoticeBlock", "AssistantBlock"]
        user, thinking, text, ok_tool, bad_tool, notice, last = app.blocks()
        assert user.prompt == "list files" and agent.turns == ["list files"]
        assert thinking.text == "let me look"
        assert text.text == "I will **list** the files."
        assert ok_tool.status == "done" and ok_tool.result_text == "a.txt\nb.txt"
        assert str(ok_tool.title) == "⏺ bash(ls [dir])  ✓ 0.2s"
        assert ok_tool.collapsed  # results start collapsed
        assert bad_tool.status == "error" and "error" in str(bad_tool.title)
        assert notice.text == "context compacted"
        assert last.text == "Done."
        assert not app.running
        assert "tokens 1,334" in status(app)
        assert "fake-model" in status(app) and agent.session_id in status(app)
        assert "context 5,000/50,000 chars" in status(app)


async def test_ctrl_c_cancels_running_turn_then_second_quits(tmp_path):
    agent = FakeAgent(tmp_path, script=[("on_text", ("working on it",)),
                                        ("on_tool_start", ("tu_1", "bash", {"command": "sleep 100"}))],
                      block=True)
    app = AgentApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"go", "enter")
        await wait_until(pilot, lambda: app.blocks(ToolBlock))
        assert app.running and "working" in status(app)
        await pilot.press("ctrl+c")
        await wait_until(pilot, agent.cancelled.is_set)
        await settle(app, pilot)
        assert not app.running
        assert "cancelled" in notices(app)
        assert app.blocks(ToolBlock)[0].status == "error"  # interrupted
        assert app.is_running  # one Ctrl+C does not quit
        await pilot.press("ctrl+c")
        await pilot.pause()
    assert not app.is_running


async def test_single_ctrl_c_when_idle_clears_box_and_keeps_running(tmp_path):
    app = AgentApp(FakeAgent(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"draft")
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.prompt_input.text == "" and app.is_running
        app._last_ctrl_c = 0.0  # a later Ctrl+C starts over
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running


async def test_resume_with_id_calls_agent_and_swaps_history(tmp_path):
    agent = FakeAgent(tmp_path)
    app = AgentApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"hello", "enter")
        await settle(app, pilot)
        await pilot.press(*"/resume 1780000012345", "enter")
        await settle(app, pilot)
        assert agent.resumed == ["1780000012345"]
        assert agent.turns == ["hello"]  # the command never reached the model
        blocks = app.blocks()
        assert [type(b).__name__ for b in blocks] == ["UserBlock", "AssistantBlock", "ToolBlock", "NoticeBlock"]
        assert blocks[0].prompt == "restored question"
        assert blocks[1].text == "restored answer"
        assert blocks[2].result_text == "a.txt"
        assert "3 messages restored" in blocks[3].text
        assert "1780000099999_bbbbbbbb" in status(app)


async def test_resume_bad_id_is_one_error_line(tmp_path):
    agent = FakeAgent(tmp_path)
    app = AgentApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"/resume nope", "enter")
        await settle(app, pilot)
        assert agent.resumed == []
        assert notices(app) == ["error: invalid session id 'nope'"]
        assert app.is_running and not app.running


async def test_resume_without_id_opens_picker_and_resumes_choice(tmp_path, store):
    ids = [make_session(store, f"task {i}", session_id=f"{1_780_000_000_000 + i}_{i:08x}").session_id
           for i in range(3)]
    agent = FakeAgent(store.project_dir)
    app = AgentApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"/resume", "enter")
        await pilot.pause()
        assert isinstance(app.screen, SessionPicker)
        await pilot.press("down", "enter")
        await settle(app, pilot)
        assert not isinstance(app.screen, SessionPicker)
        assert agent.resumed == [ids[1]]
        await pilot.press(*"/resume", "enter")
        await pilot.pause()
        await pilot.press("escape")
        await settle(app, pilot)
        assert agent.resumed == [ids[1]]
        assert app.focused is app.prompt_input


async def test_resume_without_sessions_says_so(tmp_path):
    app = AgentApp(FakeAgent(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"/resume", "enter")
        await pilot.pause()
        assert not isinstance(app.screen, SessionPicker)
        assert notices(app) == ["no other session to resume in this project"]


async def test_clear_compact_cost_help_unknown(tmp_path):
    agent = FakeAgent(tmp_path)
    app = AgentApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"hi", "enter")
        await settle(app, pilot)
        await pilot.press(*"/clear", "enter")
        await settle(app, pilot)
        assert agent.cleared == 1
        assert [type(b) for b in app.blocks()] == [NoticeBlock]
        assert "1780000088888_cccccccc" in notices(app)[0] and "1780000000000_aaaaaaaa" in notices(app)[0]
        await pilot.press(*"/compact keep the API notes", "enter")
        await settle(app, pilot)
        assert agent.compacted == ["keep the API notes"]
        await pilot.press(*"/compact", "enter")
        await settle(app, pilot)
        assert agent.compacted == ["keep the API notes", None]
        await pilot.press(*"/cost", "enter")
        await pilot.press(*"/help", "enter")
        await pilot.press(*"/frobnicate", "enter")
        await pilot.pause()
        texts = notices(app)
        assert "tokens: 1,334" in texts
        assert any(t.startswith("Commands:") and "/resume [ID]" in t for t in texts)
        assert texts[-1] == "unknown command /frobnicate (try /help)"
        assert agent.turns == ["hi"]


async def test_exit_command_quits(tmp_path):
    app = AgentApp(FakeAgent(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"/exit", "enter")
        await pilot.pause()
    assert not app.is_running


async def test_newline_keys_and_enter_sends(tmp_path):
    agent = FakeAgent(tmp_path)
    app = AgentApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("a", "shift+enter", "b", "alt+enter", "c", "ctrl+j", "d")
        assert app.prompt_input.text == "a\nb\nc\nd"
        await pilot.press("enter")
        await settle(app, pilot)
        assert agent.turns == ["a\nb\nc\nd"]
        assert app.prompt_input.text == ""


async def test_history_with_up_down_in_empty_box(tmp_path):
    agent = FakeAgent(tmp_path)
    app = AgentApp(agent)
    async with app.run_test(size=SIZE) as pilot:
        for prompt in ("first", "second"):
            await pilot.press(*prompt, "enter")
            await settle(app, pilot)
        box = app.prompt_input
        await pilot.press("up")
        assert box.text == "second"
        await pilot.press("up")
        assert box.text == "first"
        await pilot.press("up")
        assert box.text == "first"
        await pilot.press("down")
        assert box.text == "second"
        await pilot.press("down")
        assert box.text == ""
        await pilot.press(*"typed", "up")
        assert box.text == "typed"  # history only from an empty box


async def test_slash_completion(tmp_path):
    assert [n for n, _ in complete_command("/c")] == ["/clear", "/compact", "/cost"]
    assert complete_command("/resume 123") == []
    assert complete_command("hello") == []
    app = AgentApp(FakeAgent(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"/c")
        await pilot.pause()
        shown = str(app.query_one("#completions").render())
        assert "/clear" in shown and "/compact" in shown and "/cost" in shown
        assert app.query_one("#completions").display
        await pilot.press(*"l", "tab")
        assert app.prompt_input.text == "/clear "
        await pilot.pause()
        assert not app.query_one("#completions").display


async def test_turn_error_is_one_line_and_app_goes_on(tmp_path):
    class Broken(FakeAgent):
        def run_turn(self, prompt, callbacks, cancel):
            raise ConnectionError("cannot reach the model server")

    app = AgentApp(Broken(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"hi", "enter")
        await settle(app, pilot)
        assert notices(app) == ["error: cannot reach the model server"]
        assert not app.running and app.is_running


def test_callbacks_protocol_shape():
    from evo_agent.ui.app import _UICallbacks
    assert issubclass(_UICallbacks, TurnCallbacks)
