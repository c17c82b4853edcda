"""An in-process provider for agent tests: answers from a script, checks every request like the API.

    provider = ScriptedProvider(reply("Let me look.", use("bash", {"command": "ls"}, "t1")), reply("done"))
    agent, store = make_agent(project, provider)         # tests/builders.py

An item of the script is a `ModelResponse`, an exception (raised, e.g. `ProviderError(...)`), or
`fn(messages, cancel) -> item` called when the request arrives. Each call is checked first with
`validate_request` of tests/fake_model_server.py (the Messages API's rules: tests/api_rules.py for
the conversation, plus block shapes and tool definitions); a request the real API would refuse
raises `InvalidConversation` in the agent, as a 400 would, and is kept in `invalid`.

Strict by default, so a test says every call it expects: a call after the script ran out raises
`UnexpectedCall` (unless `then=` gives the answer for every extra call), and a script not used up
when the test ends fails it (tests/plugins/servers.py checks every provider the test made).
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from evo_agent.providers import (
    ModelResponse,
    Retrying,
    StreamCallbacks,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolNamed,
)
from tests.api_rules import InvalidConversation
from tests.fake_model_server import validate_request


class UnexpectedCall(AssertionError):
    """The agent made a model call the test's script did not plan for."""


class ScriptedProvider:
    """Answers from a list; an item is a ModelResponse, an exception, or fn(messages, cancel)."""

    name = "scripted"
    model = "scripted-model"
    made: ClassVar[list[ScriptedProvider]] = []  # every provider made during the current test

    def __init__(self, *items: Any, then: ModelResponse | None = None) -> None:
        self.items = list(items)
        self.then = then
        self.calls: list[list[dict]] = []  # the messages of each call, as sent
        self.tools_seen: list[list[dict]] = []
        self.systems: list[str] = []  # the system prompt of each call
        self.text_only: list[bool] = []  # whether each call was to answer without tools (the summary in place)
        self.invalid: list[str] = []  # why each refused request was refused
        ScriptedProvider.made.append(self)

    def complete(self, *, system, messages, tools, max_tokens=8192, callbacks=None, cancel=None,
                 cache_key=None, text_only=False) -> ModelResponse:
        assert system and isinstance(system, str), "every request carries the system prompt"
        snapshot = json.loads(json.dumps(messages))  # as sent: the agent may change its list afterwards
        self.calls.append(snapshot)
        self.tools_seen.append(tools)
        self.systems.append(system)
        self.text_only.append(text_only)
        body = {"model": self.model, "max_tokens": max_tokens, "system": system, "messages": snapshot}
        if tools:
            body["tools"] = tools
        try:
            validate_request(body)
        except InvalidConversation as exc:
            self.invalid.append(str(exc))
            raise
        item = self._next(len(self.calls))
        if callable(item) and not isinstance(item, ModelResponse):
            item = item(messages, cancel)
        if isinstance(item, BaseException):
            raise item
        if callbacks:
            for block in item.message["content"]:
                if block.get("type") == "text":
                    callbacks.emit(TextDelta(block["text"]))
        return item

    def _next(self, call_number: int) -> Any:
        if self.items:
            return self.items.pop(0)
        if self.then is not None:
            return self.then
        raise UnexpectedCall(f"model call {call_number} was not scripted (the script had {call_number - 1})")

    def assert_used_up(self) -> None:
        assert not self.invalid, f"the provider refused {len(self.invalid)} request(s); first: {self.invalid[0]}"
        assert not self.items, f"{len(self.items)} scripted answer(s) never asked for: {self.items!r}"


def reply(*blocks: Any, input_tokens: int = 100, output_tokens: int = 7, cache_read: int | None = None) -> ModelResponse:
    """An assistant answer of text (a `str`) and other blocks (dicts), with its token counts."""
    content = [{"type": "text", "text": b} if isinstance(b, str) else b for b in blocks]
    return ModelResponse({"role": "assistant", "content": content}, input_tokens, output_tokens,
                         cache_read_input_tokens=cache_read)


def use(name: str, tool_input: dict, tid: str) -> dict:
    """A tool_use block."""
    return {"type": "tool_use", "id": tid, "name": name, "input": tool_input}


def sink(*, text: list | Any = None, thinking: list | Any = None, named: list | Any = None,
         retries: list | Any = None) -> StreamCallbacks:
    """StreamCallbacks that sort a provider's events: each kind's payload to its own `append`
    (text and thinking as str, a named tool as (tool_id, name), a retry as its line)."""

    def on_event(event: StreamEvent) -> None:
        match event:
            case TextDelta(text=value) if text is not None:
                text(value)
            case ThinkingDelta(text=value) if thinking is not None:
                thinking(value)
            case ToolNamed(tool_id=tool_id, name=name) if named is not None:
                named((tool_id, name))
            case Retrying(text=value) if retries is not None:
                retries(value)

    return StreamCallbacks(on_event=on_event)
