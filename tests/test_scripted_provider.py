"""The in-process provider holds agent tests to the API's rules and to their own script."""

from __future__ import annotations

import pytest

from tests.api_rules import InvalidConversation
from tests.scripted_provider import ScriptedProvider, UnexpectedCall, reply, use

SYSTEM = "You are a test."
TOOLS = [{"name": "bash", "description": "run", "input_schema": {"type": "object", "properties": {}}}]


def ask(provider: ScriptedProvider, messages: list[dict], tools=TOOLS):
    return provider.complete(system=SYSTEM, messages=messages, tools=tools)


def forget(provider: ScriptedProvider) -> None:
    """Take a provider out of the end-of-test check (these tests break the rules on purpose)."""
    ScriptedProvider.made.remove(provider)


def test_answers_in_order_and_keeps_what_was_sent():
    provider = ScriptedProvider(reply("one"), reply("two"))
    first = [{"role": "user", "content": "hi"}]
    assert ask(provider, first).message["content"] == [{"type": "text", "text": "one"}]
    first.append({"role": "assistant", "content": "changed afterwards"})
    assert provider.calls[0] == [{"role": "user", "content": "hi"}]
    assert ask(provider, [{"role": "user", "content": "again"}]).message["content"][0]["text"] == "two"
    provider.assert_used_up()


def test_a_call_past_the_script_fails_unless_then_answers_it():
    strict = ScriptedProvider(reply("only"))
    ask(strict, [{"role": "user", "content": "1"}])
    with pytest.raises(UnexpectedCall, match="model call 2 was not scripted"):
        ask(strict, [{"role": "user", "content": "2"}])
    lenient = ScriptedProvider(then=reply("ok"))
    assert ask(lenient, [{"role": "user", "content": "1"}]).message["content"][0]["text"] == "ok"


def test_a_request_the_api_would_refuse_fails_and_is_remembered():
    provider = ScriptedProvider(reply("never"))
    unanswered = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [use("bash", {"command": "ls"}, "t1")]},
        {"role": "user", "content": "no result for t1"},
    ]
    with pytest.raises(InvalidConversation):
        ask(provider, unanswered)
    with pytest.raises(InvalidConversation, match="must define tools"):
        ask(provider, unanswered[:2] + [{"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "a"}]}], tools=[])
    assert len(provider.invalid) == 2
    with pytest.raises(AssertionError, match="refused 2 request"):
        provider.assert_used_up()
    forget(provider)


def test_an_unused_answer_is_reported():
    provider = ScriptedProvider(reply("asked"), reply("never asked"))
    ask(provider, [{"role": "user", "content": "1"}])
    with pytest.raises(AssertionError, match="1 scripted answer"):
        provider.assert_used_up()
    forget(provider)


def test_exceptions_and_callables_in_the_script():
    provider = ScriptedProvider(RuntimeError("boom"), lambda messages, cancel: reply(f"{len(messages)} messages"))
    with pytest.raises(RuntimeError, match="boom"):
        ask(provider, [{"role": "user", "content": "1"}])
    assert ask(provider, [{"role": "user", "content": "2"}]).message["content"][0]["text"] == "1 messages"
