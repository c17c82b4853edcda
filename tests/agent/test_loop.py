"""The agent loop in-process: write points and their order, cancellation, errors, fidelity.

Fidelity is checked everywhere the same way: what the live agent holds equals
what `load_for_resume` restores from its transcript, and both are a valid
next request.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from evo_agent.agent import INTERRUPTED_MARKER, TOOL_INTERRUPTED_TEXT
from evo_agent.agent.events import Notice, Retrying, TextDelta, ToolFinished, ToolStarted, TurnEvent
from evo_agent.agent.prompt import PROMPT_VERSION
from evo_agent.providers import ProviderCancelled, ProviderError
from evo_agent.tools import BASIC_TOOLS, Tool, ToolResult
from evo_agent.tools.plan_tools import PLAN_TOOL_NAMES
from tests.agent.helpers import assert_faithful
from tests.builders import make_agent, read_records
from tests.scripted_provider import ScriptedProvider, reply, use


class Events:
    def __init__(self):
        self.seen = []

    def on_event(self, event: TurnEvent) -> None:
        match event:
            case TextDelta(text=t):
                self.seen.append(("text", t))
            case ToolStarted(tool_id=tid, name=name):
                self.seen.append(("start", tid, name))
            case ToolFinished(tool_id=tid, is_error=is_error):
                self.seen.append(("end", tid, is_error))
            case Notice(text=t) | Retrying(text=t):
                self.seen.append(("notice", t))


def test_a_tool_round_trip_records_four_messages_in_order_with_one_prompt_id(project):
    provider = ScriptedProvider(
        reply("Let me look.", use("bash", {"command": "echo hello"}, "toolu_1"), input_tokens=50, output_tokens=5),
        reply("It printed hello.", input_tokens=80, output_tokens=6, cache_read=30),
        reply("ok"),  # the second turn
    )
    agent, _ = make_agent(project, provider)
    events = Events()
    result = agent.run_turn("say hello", events)
    assert result.status == "done" and result.text == "It printed hello." and result.model_calls == 2

    recs = read_records(agent.recorder.path)
    assert [r["type"] for r in recs] == ["session_start", "system_prompt", "user", "assistant", "user", "assistant"]
    assert recs.pop(1)["version"] == PROMPT_VERSION  # the system prompt's template (agent/prompt.py), held until "say hello"
    assert len({r["prompt_id"] for r in recs[1:]}) == 1
    assert recs[1]["message"] == {"role": "user", "content": "say hello"}
    assert (recs[2]["input_tokens"], recs[2]["output_tokens"]) == (50, 5)
    assert recs[4]["cache_read_input_tokens"] == 30
    result_block = recs[3]["message"]["content"][0]
    assert result_block["type"] == "tool_result" and result_block["tool_use_id"] == "toolu_1"
    assert "hello" in result_block["content"] and "is_error" not in result_block
    # The second call saw exactly the recorded history.
    assert provider.calls[1] == [r["message"] for r in recs[1:4]]
    # SPEC §6: the six file and shell tools, plus task and compact, and the plan's seven (§11).
    assert {t["name"] for t in provider.tools_seen[0]} == ({t.name for t in BASIC_TOOLS} | {"task", "compact"}
                                                           | set(PLAN_TOOL_NAMES))
    assert events.seen[0] == ("text", "Let me look.")
    assert ("start", "toolu_1", "bash") in events.seen and ("end", "toolu_1", False) in events.seen
    assert (agent.usage.input_tokens, agent.usage.output_tokens, agent.total_tokens) == (130, 11, 141)
    assert "130 input + 11 output = 141 tokens in 2 model calls" in agent.cost_text()
    meta = json.loads((agent.recorder.session_dir / "meta.json").read_text())
    assert (meta["total_input_tokens"], meta["total_output_tokens"], meta["message_count"]) == (130, 11, 4)
    assert_faithful(agent)

    second = agent.run_turn("thanks")
    assert second.status == "done"
    recs = read_records(agent.recorder.path)
    assert recs[6]["prompt_id"] != recs[2]["prompt_id"]  # recs[1]: the system_prompt record
    assert_faithful(agent)


def test_each_record_is_on_disk_before_the_step_that_depends_on_it(project):
    seen = {}

    def check_probe(tool_input, ctx):
        seen["at_tool"] = [r["type"] for r in read_records(agent.recorder.path)]
        return ToolResult("probed")

    probe = Tool("probe", "a probe", {"type": "object", "properties": {}}, check_probe)

    def first(messages, cancel):
        seen["at_call_1"] = [r["type"] for r in read_records(agent.recorder.path)]
        return reply(use("probe", {}, "t1"))

    def second(messages, cancel):
        seen["at_call_2"] = [r["type"] for r in read_records(agent.recorder.path)]
        return reply("done")

    agent, _ = make_agent(project, ScriptedProvider(first, second), tools=[probe])
    agent.run_turn("go")
    assert seen["at_call_1"] == ["session_start", "system_prompt", "user"]
    assert seen["at_tool"] == ["session_start", "system_prompt", "user", "assistant"]
    assert seen["at_call_2"] == ["session_start", "system_prompt", "user", "assistant", "user"]


def test_cancel_during_the_model_call_stores_a_marker_and_keeps_the_history_valid(project):
    def slow(messages, cancel):
        assert cancel.wait(5)
        raise ProviderCancelled()

    agent, _ = make_agent(project, ScriptedProvider(slow, reply("fine")))
    cancel = threading.Event()
    threading.Timer(0.1, cancel.set).start()
    result = agent.run_turn("think hard", cancel=cancel)
    assert result.cancelled
    assert agent.history == [{"role": "user", "content": "think hard"}, {"role": "user", "content": INTERRUPTED_MARKER}]
    assert_faithful(agent)
    agent.run_turn("try again")
    assert agent.provider.calls[-1][-1] == {"role": "user", "content": "try again"}
    assert_faithful(agent)


def test_cancel_during_tools_answers_every_tool_use(project):
    provider = ScriptedProvider(
        reply(use("bash", {"command": "sleep 30"}, "t_sleep"), use("bash", {"command": "echo never"}, "t_never")),
    )
    agent, _ = make_agent(project, provider)
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    started = time.monotonic()
    result = agent.run_turn("wait", cancel=cancel)
    assert time.monotonic() - started < 10
    assert result.cancelled
    last = agent.history[-1]
    assert last["role"] == "user"
    by_id = {b["tool_use_id"]: b for b in last["content"] if b["type"] == "tool_result"}
    assert by_id["t_sleep"]["is_error"] and "interrupted" in by_id["t_sleep"]["content"]
    assert by_id["t_never"] == {"type": "tool_result", "tool_use_id": "t_never", "content": TOOL_INTERRUPTED_TEXT, "is_error": True}
    assert last["content"][-1] == {"type": "text", "text": INTERRUPTED_MARKER}
    assert_faithful(agent)


def test_cancel_right_after_the_response_still_answers_its_tools(project):
    def answer_then_cancel(messages, cancel):
        cancel.set()
        return reply(use("bash", {"command": "echo x"}, "t1"))

    agent, _ = make_agent(project, ScriptedProvider(answer_then_cancel))
    assert agent.run_turn("x").cancelled
    assert agent.history[-1]["content"][0]["content"] == TOOL_INTERRUPTED_TEXT
    assert_faithful(agent)


def test_a_provider_error_ends_the_turn_and_the_session_stays_valid(project):
    provider = ScriptedProvider(
        reply(use("bash", {"command": "echo 1"}, "t1")),
        ProviderError("Anthropic API error 500 (api_error): boom"),
        reply("recovered"),
    )
    agent, _ = make_agent(project, provider)
    with pytest.raises(ProviderError):
        agent.run_turn("first")
    assert [m["role"] for m in agent.history] == ["user", "assistant", "user"]
    assert_faithful(agent)
    assert agent.run_turn("again").text == "recovered"
    assert_faithful(agent)


def test_a_failing_tool_is_an_error_result_not_the_end(project):
    provider = ScriptedProvider(reply(use("read_file", {"path": "missing.txt"}, "t1"), use("nope", {}, "t2")), reply("ok"))
    agent, _ = make_agent(project, provider)
    assert agent.run_turn("read").status == "done"
    results = agent.history[2]["content"]
    assert all(b["is_error"] for b in results)
    assert_faithful(agent)


def test_the_model_call_cap_stops_a_runaway_turn(project):
    provider = ScriptedProvider(*[reply(use("bash", {"command": "true"}, f"t{i}")) for i in range(3)])  # a 4th call fails
    agent, _ = make_agent(project, provider)
    agent.max_model_calls = 3
    events = Events()
    result = agent.run_turn("loop", events)
    assert result.status == "limit" and result.model_calls == 3
    assert any(e[0] == "notice" for e in events.seen)
    assert_faithful(agent)


def test_an_empty_response_is_neither_stored_nor_kept(project):
    agent, _ = make_agent(project, ScriptedProvider(reply()))
    assert agent.run_turn("hm").status == "done"
    assert agent.history == [{"role": "user", "content": "hm"}]
    assert_faithful(agent)


def test_resume_and_clear_switch_sessions_without_touching_the_old_one(project):
    agent, store = make_agent(project, ScriptedProvider(reply("one"), reply("two")))
    agent.run_turn("first")
    old_id, old_path = agent.session_id, agent.recorder.path
    old_bytes = Path(old_path).read_bytes()
    old_history = list(agent.history)

    agent.clear()
    assert agent.history == [] and agent.session_id != old_id and agent.total_tokens == 0

    resumed = agent.resume(old_id[:16])
    assert resumed.source == old_id and resumed.session_id == agent.session_id
    assert agent.history == old_history and agent.session_id not in (old_id,)
    agent.run_turn("second")
    assert agent.provider.calls[-1] == old_history + [{"role": "user", "content": "second"}]
    assert Path(old_path).read_bytes() == old_bytes
    assert_faithful(agent)


def test_a_custom_tool_gets_its_call_id_and_validated_input(project):
    seen = {}

    def probe(tool_input, ctx):
        seen["call"] = (tool_input, ctx.tool_use_id)
        return ToolResult("probed")

    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    provider = ScriptedProvider(reply(use("probe", {"n": "x"}, "t0")), reply(use("probe", {"n": 3}, "t1")), reply("ok"))
    agent, _ = make_agent(project, provider, tools=[Tool("probe", "a probe", schema, probe)])
    agent.run_turn("probe twice")
    assert seen["call"] == ({"n": 3}, "t1")
    assert agent.history[2]["content"][0]["is_error"] and "integer" in agent.history[2]["content"][0]["content"]
    assert agent.history[4]["content"][0]["content"] == "probed"
    assert {"probe", "compact", "task"} <= {t["name"] for t in provider.tools_seen[0]}
    assert_faithful(agent)


class Broken:
    """A front end whose every callback raises (a display bug, a closed terminal)."""

    def __getattr__(self, name):
        if not name.startswith("on_") or name == "on_approval":
            raise AttributeError(name)

        def fail(*args):
            raise RuntimeError(f"{name} broke")

        return fail


def test_a_front_end_that_raises_never_breaks_the_turn_or_its_records(project):
    provider = ScriptedProvider(reply("Looking.", use("bash", {"command": "echo hi"}, "toolu_1")), reply("Done."))
    agent, _ = make_agent(project, provider)
    result = agent.run_turn("go", Broken())
    assert (result.status, result.text, result.model_calls) == ("done", "Done.", 2)
    recs = read_records(agent.recorder.path)
    assert [r["type"] for r in recs] == ["session_start", "system_prompt", "user", "assistant", "user", "assistant"]
    assert "hi" in recs[4]["message"]["content"][0]["content"]
    assert_faithful(agent)


def test_a_front_end_may_implement_only_some_callbacks(project):
    class NoticesOnly:
        def __init__(self):
            self.notices = []

        def on_event(self, event: TurnEvent):
            if isinstance(event, Notice | Retrying):
                self.notices.append(event.text)

    provider = ScriptedProvider(*[reply(use("bash", {"command": "true"}, f"toolu_{i}")) for i in range(2)])
    agent, _ = make_agent(project, provider, max_model_calls=2)
    front = NoticesOnly()
    result = agent.run_turn("loop", front)
    assert result.status == "limit" and front.notices == [
        "stopped after 2 model calls in one turn; send a message to continue"]
    assert_faithful(agent)
