"""The Anthropic provider against the local fake Messages API."""

from __future__ import annotations

import socket

import pytest

from evo_agent.providers import ProviderError
from evo_agent.providers.anthropic_provider import AnthropicProvider
from evo_agent.providers.anthropic_stream import block_to_param
from tests.fake_model_server import error, redacted_thinking, reply, text, thinking, tool_use
from tests.scripted_provider import sink

TOOLS = [{"name": "bash", "description": "run a command", "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}}]
HELLO = [{"role": "user", "content": "hello"}]


@pytest.fixture(autouse=True)
def _no_real_credentials(monkeypatch):
    for key in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_PROFILE"):
        monkeypatch.delenv(key, raising=False)


def provider(server, **kw):
    return AnthropicProvider("claude-test", api_key=kw.pop("api_key", "test-key"), base_url=server.base_url, **kw)


def test_streamed_text_arrives_in_pieces_and_matches_the_final_message(model_server):
    model_server.script(text("The quick brown fox jumps over the lazy dog."))
    pieces = []
    response = provider(model_server).complete(
        system="be brief", messages=HELLO, tools=TOOLS, callbacks=sink(text=pieces.append)
    )
    assert len(pieces) >= 2
    assert "".join(pieces) == "The quick brown fox jumps over the lazy dog."
    assert response.message == {"role": "assistant", "content": [{"type": "text", "text": "".join(pieces)}]}
    assert response.stop_reason == "end_turn"
    sent = model_server.requests[0]
    assert sent["model"] == "claude-test" and sent["system"] == "be brief" and sent["tools"] == TOOLS
    assert sent["messages"] == HELLO and sent["stream"] is True and sent["max_tokens"] == 8192


def test_empty_system_and_tools_are_not_sent(model_server):
    provider(model_server).complete(system="", messages=HELLO, tools=[], max_tokens=100)
    sent = model_server.requests[0]
    assert "system" not in sent and "tools" not in sent and sent["max_tokens"] == 100


def test_tool_use_thinking_and_usage_round_trip(model_server):
    model_server.input_tokens = 321
    model_server.script(
        reply(
            thinking("I should list the directory.", "SIGNATURE-xyz"),
            redacted_thinking("opaque=="),
            text(""),
            tool_use("bash", {"command": "ls -la /tmp", "nested": {"a": [1, 2]}}, id="toolu_abc"),
            usage={"output_tokens": 42, "cache_read_input_tokens": 7},
        ),
        text("done"),
    )
    thoughts, started = [], []
    p = provider(model_server)
    response = p.complete(
        system="s",
        messages=HELLO,
        tools=TOOLS,
        callbacks=sink(thinking=thoughts.append, named=started.append),
    )
    assert response.message["content"] == [
        {"type": "thinking", "thinking": "I should list the directory.", "signature": "SIGNATURE-xyz"},
        {"type": "redacted_thinking", "data": "opaque=="},
        {"type": "tool_use", "id": "toolu_abc", "name": "bash", "input": {"command": "ls -la /tmp", "nested": {"a": [1, 2]}}},
    ]
    assert "".join(thoughts) == "I should list the directory." and started == [("toolu_abc", "bash")]
    assert (response.input_tokens, response.output_tokens) == (321, 42)
    assert (response.cache_creation_input_tokens, response.cache_read_input_tokens) == (0, 7)
    assert response.stop_reason == "tool_use"

    # What the provider returned is what the API accepts back.
    history = HELLO + [response.message, {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_abc", "content": "a\nb"}]}]
    assert p.complete(system="s", messages=history, tools=TOOLS).message["content"] == [{"type": "text", "text": "done"}]
    model_server.assert_all_valid()
    assert model_server.requests[1]["messages"][1] == response.message


def test_response_blocks_are_converted_explicitly():
    assert block_to_param({"type": "text", "text": "hi", "citations": None}) == {"type": "text", "text": "hi"}
    assert block_to_param({"type": "text", "text": ""}) is None
    assert block_to_param({"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {}, "x": None}) == {
        "type": "server_tool_use", "id": "s1", "name": "web_search", "input": {}}


def test_overloaded_then_success_is_retried_and_each_retry_is_a_notice(model_server):
    model_server.script(error(529, "overloaded_error"), error(429, "rate_limit_error"), text("finally"))
    notices = []
    response = provider(model_server).complete(system="", messages=HELLO, tools=[],
                                               callbacks=sink(retries=notices.append))
    assert response.message["content"] == [{"type": "text", "text": "finally"}]
    assert len(model_server.requests) == 3
    assert notices == [  # the fake asks for a 10 ms wait (retry-after-ms)
        "Anthropic API overloaded (529), retrying in 10 ms, attempt 2 of 5",
        "Anthropic API rate limit reached (429), retrying in 10 ms, attempt 3 of 5",
    ]


def test_overloaded_beyond_the_retries_is_one_line(model_server):
    model_server.script(*[error(529, "overloaded_error")] * 3)
    with pytest.raises(ProviderError) as info:
        provider(model_server, max_retries=2).complete(system="", messages=HELLO, tools=[])
    assert str(info.value) == (
        "Anthropic API error 529 (overloaded_error): Overloaded; the API is overloaded (3 attempts): try again in a minute"
    )
    assert len(model_server.requests) == 3


def test_bad_request_is_one_line(model_server):
    model_server.script(error(400, "invalid_request_error", "prompt is too long: 250000 tokens > 200000 maximum"))
    with pytest.raises(ProviderError) as info:
        provider(model_server).complete(system="", messages=HELLO, tools=[])
    assert str(info.value) == (
        "Anthropic API error 400 (invalid_request_error): prompt is too long: 250000 tokens > 200000 maximum; "
        "the conversation is too long for the model: run /compact, or start a new session"
    )
    assert len(model_server.requests) == 1  # a 400 is not retried


def test_invalid_conversation_is_refused_by_the_server(model_server):
    messages = HELLO + [{"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "bash", "input": {}}]}, {"role": "user", "content": "next"}]
    with pytest.raises(ProviderError, match=r"^Anthropic API error 400 \(invalid_request_error\): .*tool_result"):
        provider(model_server).complete(system="", messages=messages, tools=TOOLS)
    assert len(model_server.invalid) == 1


def test_wrong_key_is_one_line(model_server):
    model_server.api_key = "the-right-key"
    with pytest.raises(ProviderError) as info:
        provider(model_server, api_key="wrong").complete(system="", messages=HELLO, tools=[])
    assert str(info.value) == "Anthropic API error 401 (authentication_error): invalid x-api-key; check ANTHROPIC_API_KEY"
    assert "\n" not in str(info.value)


def test_error_in_the_middle_of_the_stream_is_one_line(model_server):
    model_server.script(error(529, "overloaded_error", mid_stream=True))
    with pytest.raises(ProviderError, match=r"^Anthropic API error \(overloaded_error\): Overloaded; the API is overloaded: try again in a minute$"):
        provider(model_server, max_retries=0).complete(system="", messages=HELLO, tools=[])


def test_connection_refused_is_one_line():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    with pytest.raises(ProviderError) as info:
        AnthropicProvider("m", api_key="k", base_url=url, max_retries=0).complete(system="", messages=HELLO, tools=[])
    assert str(info.value) == (
        f"cannot reach the Anthropic API at {url}: connection refused; is the server running? (ANTHROPIC_BASE_URL sets the URL)"
    )


def test_missing_key_is_one_line(model_server):
    p = AnthropicProvider("m", base_url=model_server.base_url)
    with pytest.raises(ProviderError, match="no Anthropic API key: set ANTHROPIC_API_KEY"):
        p.complete(system="", messages=HELLO, tools=[])


def test_environment_configures_the_client(model_server, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "from-env")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", model_server.base_url)
    model_server.api_key = "from-env"
    p = AnthropicProvider("m")
    assert p.base_url == model_server.base_url
    assert p.complete(system="", messages=HELLO, tools=[]).message["content"] == [{"type": "text", "text": "ok"}]


def test_a_text_only_request_is_sent_as_any_other_so_the_cache_holds(model_server):
    """No tool_choice: the API documents that a change of it invalidates the cached messages."""
    provider(model_server).complete(system="s", messages=HELLO, tools=TOOLS, text_only=True, cache_key="k")
    provider(model_server).complete(system="s", messages=HELLO, tools=TOOLS, cache_key="k")
    first, second = model_server.valid_requests
    assert first == second and "tool_choice" not in first
