"""What both HTTP providers must do alike, against both fake APIs with the same expectations:
say why the answer ended, name a tool as soon as the model does, and stop at once when told to.

`ModelResponse.stop_reason` is in the Messages API's words whichever API answered; `cut_short`
is what a front end tells the user about (an answer cut at max_tokens). `on_tool_use_start`
fires while the tool's input is still streaming, so a UI can show the tool before it runs.
"""

from __future__ import annotations

import json
import threading

import pytest

from evo_agent.providers import ModelResponse, ProviderCancelled, ToolNamed
from evo_agent.providers.anthropic_provider import AnthropicProvider
from evo_agent.providers.anthropic_stream import MessageAssembler
from evo_agent.providers.base import CONTEXT_FULL, END_TURN, INVALID_ARGUMENTS_KEY, MAX_TOKENS, REFUSAL, TOOL_USE
from evo_agent.providers.demo_provider import DemoProvider
from evo_agent.providers.openai_provider import OpenAIProvider
from tests import fake_model_server as anthropic_api
from tests import fake_openai_server as openai_api
from tests.helpers import wait_for
from tests.scripted_provider import sink

TOOLS = [{"name": "bash", "description": "run a command",
          "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}]
HELLO = [{"role": "user", "content": "hello"}]
LONG_COMMAND = {"command": "for i in 1 2 3; do echo step $i; done && ls -la"}


@pytest.fixture(autouse=True)
def _no_real_credentials(monkeypatch):
    for key in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID", "ANTHROPIC_API_KEY",
                "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(key, raising=False)


class Dialect:
    """One fake API and the script items that mean the same thing on it."""

    def __init__(self, name: str, server, provider) -> None:
        self.name, self.server, self.provider = name, server, provider

    def text(self, value: str, cut: str | None = None):
        if self.name == "anthropic":
            return anthropic_api.reply(value, stop_reason=cut)
        return openai_api.reply(value, finish_reason=cut)

    def tool(self, tool_input: dict, cut: str | None = None):
        if self.name == "anthropic":
            return anthropic_api.reply(anthropic_api.tool_use("bash", tool_input), stop_reason=cut)
        return openai_api.reply(openai_api.tool_call("bash", tool_input), finish_reason=cut)

    def hang_in_text(self):
        """Streams "Working on it", then hangs (until the server stops) before the rest."""
        api = anthropic_api if self.name == "anthropic" else openai_api
        return api.hang(300, api.text("never seen"))

    def hang_in_tool_input(self, tool_input: dict):
        api = anthropic_api if self.name == "anthropic" else openai_api
        block = anthropic_api.tool_use("bash", tool_input) if self.name == "anthropic" else openai_api.tool_call(
            "bash", tool_input)
        return api.hang(300, block, in_tool_input=True)

    # what each API calls "cut at max_tokens" and "refused"
    @property
    def length(self) -> str:
        return "max_tokens" if self.name == "anthropic" else "length"

    @property
    def refused(self) -> str:
        return "refusal" if self.name == "anthropic" else "content_filter"


@pytest.fixture(params=["anthropic", "openai"])
def api(request, model_server, openai_server):
    if request.param == "anthropic":
        return Dialect("anthropic", model_server,
                       AnthropicProvider("claude-test", api_key="test-key", base_url=model_server.base_url,
                                         max_retries=0))
    return Dialect("openai", openai_server,
                   OpenAIProvider("gpt-test", api_key="test-key", base_url=openai_server.base_url, max_retries=0))


def ask(api: Dialect, **kw) -> ModelResponse:
    return api.provider.complete(system="", messages=HELLO, tools=TOOLS, **kw)


# --------------------------------------------------------------------------- stop_reason


def test_a_finished_answer_is_end_turn_and_not_cut(api):
    api.server.script(api.text("All done."))
    response = ask(api)
    assert (response.stop_reason, response.cut_short) == (END_TURN, False)


def test_a_tool_call_is_tool_use_and_not_cut(api):
    api.server.script(api.tool({"command": "ls"}))
    response = ask(api)
    assert (response.stop_reason, response.cut_short) == (TOOL_USE, False)


def test_text_cut_at_max_tokens_says_so(api):
    api.server.script(api.text("The first half of a long expl", cut=api.length))
    response = ask(api, max_tokens=8)
    assert (response.stop_reason, response.cut_short) == (MAX_TOKENS, True)
    assert response.message["content"] == [{"type": "text", "text": "The first half of a long expl"}]


def test_a_tool_call_cut_at_max_tokens_is_max_tokens_not_tool_use(api):
    """The call is kept (the history stays valid) but the answer says it was cut, not finished."""
    api.server.script(api.tool({"command": "ls"}, cut=api.length))
    response = ask(api)
    assert (response.stop_reason, response.cut_short) == (MAX_TOKENS, True)
    assert [b["type"] for b in response.message["content"]] == ["tool_use"]


def test_openai_arguments_cut_by_length_are_kept_as_invalid_and_the_answer_is_cut(openai_server):
    openai_server.script(openai_api.reply(openai_api.tool_call("bash", raw='{"command": "echo unfinish'),
                                          finish_reason="length"))
    provider = OpenAIProvider("gpt-test", api_key="k", base_url=openai_server.base_url)
    response = provider.complete(system="", messages=HELLO, tools=TOOLS)
    assert response.stop_reason == MAX_TOKENS and response.cut_short
    assert response.message["content"][0]["input"] == {INVALID_ARGUMENTS_KEY: '{"command": "echo unfinish'}


def test_a_refusal_is_refusal(api):
    api.server.script(api.text("I cannot help with that.", cut=api.refused))
    response = ask(api)
    assert (response.stop_reason, response.cut_short) == (REFUSAL, False)


def test_openai_without_streaming_reports_the_same_stop_reason(openai_server):
    openai_server.script(openai_api.reply("cut her", finish_reason="length"))
    provider = OpenAIProvider("gpt-test", api_key="k", base_url=openai_server.base_url, stream=False)
    response = provider.complete(system="", messages=HELLO, tools=TOOLS)
    assert (response.stop_reason, response.cut_short) == (MAX_TOKENS, True)


def test_anthropic_context_window_stop_is_cut_short(model_server):
    model_server.script(anthropic_api.reply("and then the", stop_reason=CONTEXT_FULL))
    provider = AnthropicProvider("claude-test", api_key="k", base_url=model_server.base_url)
    response = provider.complete(system="", messages=HELLO, tools=TOOLS)
    assert (response.stop_reason, response.cut_short) == (CONTEXT_FULL, True)


def test_the_demo_provider_says_why_it_stopped():
    demo = DemoProvider()
    tools = [{"name": "bash", "description": "", "input_schema": {"type": "object", "properties": {}}}]
    answer = demo.complete(system="", messages=[{"role": "user", "content": "run ls"}], tools=tools)
    assert (answer.stop_reason, answer.cut_short) == (TOOL_USE, False)
    answer = demo.complete(system="", messages=HELLO, tools=tools)
    assert (answer.stop_reason, answer.cut_short) == (END_TURN, False)


# --------------------------------------------------------------------------- on_tool_use_start


def test_a_tool_is_announced_while_its_input_is_still_streaming(api):
    """The server stops inside the tool's input and waits; the callback must already have fired."""
    api.server.script(api.hang_in_tool_input(LONG_COMMAND))
    started: list[tuple[str, str]] = []
    cancel = threading.Event()
    outcome: list[BaseException] = []

    def call() -> None:
        try:
            ask(api, callbacks=sink(named=started.append),
                cancel=cancel)
        except BaseException as exc:  # looked at below
            outcome.append(exc)

    worker = threading.Thread(target=call, daemon=True)
    worker.start()
    wait_for(lambda: started, what="on_tool_use_start")
    wait_for(api.server.hanging.is_set, what="the server to stop inside the tool input")
    assert api.server.hanging.is_set()  # the rest of the input has not been sent
    tool_id, name = started[0]
    assert name == "bash" and tool_id
    cancel.set()
    worker.join(20)
    assert not worker.is_alive() and len(outcome) == 1 and isinstance(outcome[0], ProviderCancelled)
    assert started == [(tool_id, "bash")]


def test_the_announced_id_is_the_id_of_the_finished_call(api):
    api.server.script(api.tool(LONG_COMMAND))
    started: list[tuple[str, str]] = []
    response = ask(api, callbacks=sink(named=started.append))
    block = response.message["content"][-1]
    assert started == [(block["id"], "bash")] and block["input"] == LONG_COMMAND


def test_anthropic_tool_input_cut_at_max_tokens_is_kept_as_invalid_arguments():
    """The Messages API stops mid-call at max_tokens: the call stays (valid history), marked unreadable."""
    events = [
        {"type": "message_start", "message": {"id": "msg_1", "role": "assistant", "content": [],
                                              "usage": {"input_tokens": 5, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0,
         "content_block": {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {}}},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "input_json_delta", "partial_json": '{"command": "echo unfin'}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "max_tokens"}, "usage": {"output_tokens": 8}},
        {"type": "message_stop"},
    ]
    assembler = MessageAssembler()
    shown = [e for event in events for e in assembler.feed(event["type"], json.dumps(event))]
    response = assembler.response()
    assert shown == [ToolNamed("toolu_1", "bash")]
    assert response.message["content"] == [
        {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {INVALID_ARGUMENTS_KEY: '{"command": "echo unfin'}}
    ]
    assert (response.stop_reason, response.cut_short, response.output_tokens) == (MAX_TOKENS, True, 8)
    assert response.cut_notice(64) == 'the answer was cut at the 64-token limit (max_tokens); send "continue" for the rest'


# --------------------------------------------------------------------------- cancel and callbacks


def test_cancel_while_the_server_hangs_mid_answer_returns_at_once(api):
    api.server.script(api.hang_in_text())
    cancel = threading.Event()
    pieces: list[str] = []
    outcome: list[BaseException] = []

    def call() -> None:
        try:
            ask(api, callbacks=sink(text=pieces.append), cancel=cancel)
        except BaseException as exc:  # looked at below
            outcome.append(exc)

    worker = threading.Thread(target=call, daemon=True)
    worker.start()
    # Cancel once the server hangs and the streamed part has reached the caller, as a person would.
    wait_for(lambda: api.server.hanging.is_set() and pieces, what="the partial answer")
    cancel.set()
    worker.join(20)
    assert not worker.is_alive() and len(outcome) == 1 and isinstance(outcome[0], ProviderCancelled)
    assert api.server.hanging.is_set()  # returned while the server still holds the rest of the answer
    assert pieces == ["Working on it"]


def test_cancel_before_the_call_sends_nothing(api):
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(ProviderCancelled):
        ask(api, cancel=cancel)
    assert api.server.requests == []


def test_a_failing_callback_propagates(api):
    api.server.script(api.text("some streamed text here"))

    def boom(_):
        raise RuntimeError("ui broke")

    with pytest.raises(RuntimeError, match="ui broke"):
        ask(api, callbacks=sink(text=boom))
