"""The OpenAI-compatible provider against the local fake chat completions API."""

from __future__ import annotations

import json
import socket
import time

import pytest

from evo_agent.providers import ProviderError
from evo_agent.providers.base import INVALID_ARGUMENTS_KEY
from evo_agent.providers.openai_provider import MISSING_KEY_MESSAGE, NO_KEY_PLACEHOLDER, OpenAIProvider
from tests.api_rules import check_request
from tests.fake_openai_server import (
    error,
    reasoning,
    reply,
    text,
    tool_call,
    truncated,
)
from tests.scripted_provider import sink

TOOLS = [
    {
        "name": "bash",
        "description": "run a command",
        "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
    },
    {"name": "read_file", "description": "read", "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}},
]
HELLO = [{"role": "user", "content": "hello"}]


@pytest.fixture(autouse=True)
def _no_real_credentials(monkeypatch):
    for key in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID", "OPENAI_ADMIN_KEY",
                "OPENAI_CUSTOM_HEADERS"):  # fmt: skip
        monkeypatch.delenv(key, raising=False)


def provider(server, **kw):
    return OpenAIProvider("gpt-test", api_key=kw.pop("api_key", "test-key"), base_url=server.base_url, **kw)


def test_streamed_text_arrives_in_pieces(openai_server):
    openai_server.script(text("The quick brown fox jumps over the lazy dog."))
    pieces = []
    response = provider(openai_server).complete(
        system="be brief", messages=HELLO, tools=TOOLS, callbacks=sink(text=pieces.append)
    )
    assert len(pieces) >= 2 and "".join(pieces) == "The quick brown fox jumps over the lazy dog."
    assert response.message == {"role": "assistant", "content": [{"type": "text", "text": "".join(pieces)}]}
    assert response.stop_reason == "end_turn"
    sent = openai_server.requests[0]
    assert sent["model"] == "gpt-test" and sent["stream"] is True
    assert sent["stream_options"] == {"include_usage": True} and sent["max_tokens"] == 8192
    assert sent["messages"] == [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hello"}]
    assert sent["tools"][0] == {
        "type": "function",
        "function": {"name": "bash", "description": "run a command", "parameters": TOOLS[0]["input_schema"]},
    }
    assert openai_server.headers[0]["authorization"] == "Bearer test-key"


def test_empty_system_and_tools_are_not_sent(openai_server):
    provider(openai_server).complete(system="", messages=HELLO, tools=[], max_tokens=100)
    sent = openai_server.requests[0]
    assert "tools" not in sent and sent["messages"] == [{"role": "user", "content": "hello"}]
    assert sent["max_tokens"] == 100


def test_usage_is_mapped_with_cached_tokens(openai_server):
    openai_server.script(
        reply("hi", usage={"prompt_tokens": 120, "completion_tokens": 7, "prompt_tokens_details": {"cached_tokens": 100}}),
        "again",
    )
    p = provider(openai_server)
    r = p.complete(system="", messages=HELLO, tools=[])
    assert (r.input_tokens, r.output_tokens, r.cache_read_input_tokens, r.cache_creation_input_tokens) == (20, 7, 100, None)
    openai_server.prompt_tokens = 55
    r = p.complete(system="", messages=HELLO, tools=[])
    assert (r.input_tokens, r.output_tokens, r.cache_read_input_tokens) == (55, 10, None)


def test_tool_calls_chunked_parallel_and_interleaved(openai_server):
    openai_server.script(
        reply(
            "Let me look.",
            tool_call("bash", {"command": "ls -la /tmp", "nested": {"a": [1, 2]}}, id="call_A", pieces=6),
            tool_call("read_file", {"path": "README.md"}, id="call_B", pieces=4),
            tool_call("bash", {"command": "pwd"}, id="call_C"),
            interleave=True,
        ),
        text("done"),
    )
    started = []
    p = provider(openai_server)
    r = p.complete(
        system="s", messages=HELLO, tools=TOOLS, callbacks=sink(named=started.append)
    )
    assert r.message["content"] == [
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": "call_A", "name": "bash", "input": {"command": "ls -la /tmp", "nested": {"a": [1, 2]}}},
        {"type": "tool_use", "id": "call_B", "name": "read_file", "input": {"path": "README.md"}},
        {"type": "tool_use", "id": "call_C", "name": "bash", "input": {"command": "pwd"}},
    ]
    assert started == [("call_A", "bash"), ("call_B", "read_file"), ("call_C", "bash")]
    assert r.stop_reason == "tool_use"

    # What the provider returned is what both APIs accept back, answered in any order.
    results = [{"type": "tool_result", "tool_use_id": i, "content": f"out {i}"} for i in ("call_C", "call_A", "call_B")]
    history = HELLO + [r.message, {"role": "user", "content": results + [{"type": "text", "text": "go on"}]}]
    check_request(history)
    assert p.complete(system="s", messages=history, tools=TOOLS).message["content"] == [{"type": "text", "text": "done"}]
    openai_server.assert_all_valid()
    sent = openai_server.requests[1]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "tool", "tool", "user"]
    assert sent[2] == {
        "role": "assistant",
        "content": "Let me look.",
        "tool_calls": [
            {"id": "call_A", "type": "function", "function": {"name": "bash", "arguments": json.dumps({"command": "ls -la /tmp", "nested": {"a": [1, 2]}})}},
            {"id": "call_B", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "README.md"}'}},
            {"id": "call_C", "type": "function", "function": {"name": "bash", "arguments": '{"command": "pwd"}'}},
        ],
    }
    assert sent[3] == {"role": "tool", "tool_call_id": "call_C", "content": "out call_C"}
    assert sent[6] == {"role": "user", "content": "go on"}


def test_missing_and_reused_ids_become_deterministic_unique_ids(openai_server):
    history = HELLO + [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "call_same", "name": "bash", "input": {"command": "a"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_same", "content": "a"}]},
    ]
    script = lambda: reply(tool_call("bash", {"command": "b"}, id=""), tool_call("bash", {"command": "c"}, id="call_same"))  # noqa: E731
    openai_server.script(script(), script())
    p = provider(openai_server)
    first = p.complete(system="", messages=history, tools=TOOLS).message
    second = p.complete(system="", messages=history, tools=TOOLS).message
    assert first == second  # deterministic
    ids = [b["id"] for b in first["content"]]
    assert len(set(ids)) == 2 and "call_same" not in ids
    assert all(i.startswith("call_") and len(i) <= 40 for i in ids)
    check_request(history + [first, {"role": "user", "content": [{"type": "tool_result", "tool_use_id": i, "content": "x"} for i in ids]}])


def test_malformed_arguments_become_a_marked_tool_use(openai_server):
    openai_server.script(
        reply(
            tool_call("bash", raw='{"command": "ls', id="call_bad"),
            tool_call("bash", raw="", id="call_empty"),
            tool_call("bash", raw='"{\\"command\\": \\"pwd\\"}"', id="call_twice"),
            tool_call("bash", raw="[1, 2]", id="call_list"),
        ),
        "understood",
    )
    p = provider(openai_server)
    r = p.complete(system="", messages=HELLO, tools=TOOLS)
    blocks = r.message["content"]
    assert [b["input"] for b in blocks] == [
        {INVALID_ARGUMENTS_KEY: '{"command": "ls'},
        {},
        {"command": "pwd"},
        {INVALID_ARGUMENTS_KEY: "[1, 2]"},
    ]
    # (the tool runner answers a marked call with an error: tests/tools/test_registry.py)
    # The marked call goes back as valid JSON, so a strict server accepts the follow-up.
    results = [{"type": "tool_result", "tool_use_id": b["id"], "content": "bad arguments", "is_error": True} for b in blocks]
    history = HELLO + [r.message, {"role": "user", "content": results}]
    p.complete(system="", messages=history, tools=TOOLS)
    openai_server.assert_all_valid()
    assert openai_server.requests[1]["messages"][2]["content"] == "Error: bad arguments"


def test_truncated_by_length_maps_to_max_tokens(openai_server):
    openai_server.script(reply(tool_call("bash", raw='{"command": "cat /very/long'), finish_reason="length"))
    r = provider(openai_server).complete(system="", messages=HELLO, tools=TOOLS, max_tokens=5)
    assert r.stop_reason == "max_tokens"
    assert INVALID_ARGUMENTS_KEY in r.message["content"][0]["input"]


def test_tool_calls_with_finish_reason_stop_are_tool_use(openai_server):
    openai_server.script(reply(tool_call("bash", {"command": "ls"}), finish_reason="stop"))
    assert provider(openai_server).complete(system="", messages=HELLO, tools=TOOLS).stop_reason == "tool_use"


def test_reasoning_is_shown_but_not_stored(openai_server):
    openai_server.script(reply(reasoning("I should greet."), "  \n", "Hello!"))
    thoughts, pieces = [], []
    r = provider(openai_server).complete(
        system="", messages=HELLO, tools=[], callbacks=sink(text=pieces.append, thinking=thoughts.append)
    )
    assert "".join(thoughts) == "I should greet."
    assert r.message["content"] == [{"type": "text", "text": "  \nHello!"}]


def test_whitespace_only_text_before_tool_calls_is_not_stored(openai_server):
    openai_server.script(reply("\n\n", tool_call("bash", {"command": "ls"}, id="call_1")))
    r = provider(openai_server).complete(system="", messages=HELLO, tools=TOOLS)
    assert r.message["content"] == [{"type": "tool_use", "id": "call_1", "name": "bash", "input": {"command": "ls"}}]


def test_plain_json_completion_without_streaming(openai_server):
    openai_server.script(
        reply("checking", tool_call("bash", {"command": "ls"}, id=""), usage={"prompt_tokens": 9, "completion_tokens": 3})
    )
    pieces = []
    p = provider(openai_server, stream=False)
    r = p.complete(system="", messages=HELLO, tools=TOOLS, callbacks=sink(text=pieces.append))
    sent = openai_server.requests[0]
    assert "stream" not in sent and "stream_options" not in sent
    assert pieces == ["checking"] and r.stop_reason == "tool_use" and (r.input_tokens, r.output_tokens) == (9, 3)
    assert r.message["content"][0] == {"type": "text", "text": "checking"}
    tool = r.message["content"][1]
    assert tool["name"] == "bash" and tool["input"] == {"command": "ls"} and tool["id"].startswith("call_")


def test_server_error_then_success_is_retried(openai_server):
    openai_server.script(error(500), error(503), error(429), text("finally"))
    started = time.monotonic()
    retries: list[str] = []
    r = provider(openai_server).complete(system="", messages=HELLO, tools=[],
                                         callbacks=sink(retries=retries.append))
    assert r.message["content"] == [{"type": "text", "text": "finally"}]
    assert len(openai_server.requests) == 4 and time.monotonic() - started < 5
    assert [r.split(", retrying")[0] for r in retries] == [
        "OpenAI-compatible API error 500", "OpenAI-compatible API error 503", "OpenAI-compatible API rate limit reached (429)"]


def test_errors_beyond_the_retries_are_one_line(openai_server):
    openai_server.script(*[error(503)] * 3)
    with pytest.raises(ProviderError) as info:
        provider(openai_server, max_retries=2).complete(system="", messages=HELLO, tools=[])
    assert str(info.value) == (
        f"OpenAI-compatible API error 503 (server_error) at {openai_server.base_url}: The engine is currently overloaded; "
        "the server failed (3 attempts): try again later"
    )
    assert len(openai_server.requests) == 3


def test_wrong_key_is_one_line_and_not_retried(openai_server):
    openai_server.api_key = "the-right-key"
    with pytest.raises(ProviderError) as info:
        provider(openai_server, api_key="wrong").complete(system="", messages=HELLO, tools=[])
    assert str(info.value) == (
        f"OpenAI-compatible API error 401 (invalid_api_key) at {openai_server.base_url}: "
        "Incorrect API key provided: wro***; check OPENAI_API_KEY"
    )
    assert len(openai_server.requests) == 1


def test_ollama_style_error_body_is_one_line(openai_server):
    openai_server.script(error(404, body={"error": "model \"llama9\" not found, try pulling it first"}))
    with pytest.raises(ProviderError) as info:
        provider(openai_server).complete(system="", messages=HELLO, tools=[])
    assert str(info.value) == (
        f"OpenAI-compatible API error 404 at {openai_server.base_url}: model \"llama9\" not found, try pulling it first; "
        "check the model name 'gpt-test' (choose another with --model) and OPENAI_BASE_URL"
    )


def test_html_error_page_is_reduced_to_the_status(openai_server):
    openai_server.script(error(400, body="<html>\n<body>Bad things</body>\n</html>"))
    with pytest.raises(ProviderError) as info:
        provider(openai_server).complete(system="", messages=HELLO, tools=[])
    assert "\n" not in str(info.value) and str(info.value).startswith("OpenAI-compatible API error 400 at ")


def test_invalid_conversation_is_refused_by_the_strict_server(openai_server):
    # A tool_use with no tool_result: the chat API refuses it, and the error says why.
    messages = HELLO + [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "bash", "input": {}}]},
        {"role": "user", "content": "next"},
    ]
    with pytest.raises(ProviderError, match=r"^OpenAI-compatible API error 400 \(invalid_request_error\) at .*tool_call_ids did not have response messages: t1"):
        provider(openai_server).complete(system="", messages=messages, tools=TOOLS)
    assert len(openai_server.invalid) == 1


def test_error_in_the_middle_of_the_stream_is_one_line(openai_server):
    openai_server.script(error(500, "the model crashed", mid_stream=True))
    pieces = []
    with pytest.raises(ProviderError) as info:
        provider(openai_server, max_retries=0).complete(
            system="", messages=HELLO, tools=[], callbacks=sink(text=pieces.append)
        )
    assert str(info.value) == f"OpenAI-compatible API error (server_error) at {openai_server.base_url}: the model crashed"
    assert pieces == ["Partial"]


def test_a_stream_cut_before_finish_is_an_error_not_a_half_answer(openai_server):
    openai_server.script(truncated("half an ans", tool_call("bash", {"command": "rm -rf build"})))
    with pytest.raises(ProviderError, match=r"ended the stream before the answer was complete"):
        provider(openai_server).complete(system="", messages=HELLO, tools=TOOLS)


def test_connection_refused_is_one_line():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    with pytest.raises(ProviderError) as info:
        OpenAIProvider("m", api_key="k", base_url=url, max_retries=0).complete(system="", messages=HELLO, tools=[])
    assert str(info.value) == (
        f"cannot reach the OpenAI-compatible API at {url}: connection refused; is the server running? (OPENAI_BASE_URL sets the URL)"
    )


def test_timeout_is_one_line(openai_server):
    openai_server.script(reply("late", delay=3))
    with pytest.raises(ProviderError) as info:
        provider(openai_server, max_retries=0, timeout=0.3).complete(system="", messages=HELLO, tools=[])
    assert str(info.value) == f"the OpenAI-compatible API at {openai_server.base_url} did not answer in time (request timed out)"


def test_missing_key_without_a_base_url_is_one_line():
    p = OpenAIProvider("m")
    assert p.base_url == "https://api.openai.com/v1" and p.max_tokens_param == "max_completion_tokens"
    with pytest.raises(ProviderError) as info:
        p.complete(system="", messages=HELLO, tools=[])
    assert str(info.value) == MISSING_KEY_MESSAGE


def test_a_local_server_needs_no_key(openai_server, monkeypatch):
    openai_server.require_auth = False
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)
    p = OpenAIProvider("llama3.2")
    assert p.base_url == openai_server.base_url and p.max_tokens_param == "max_tokens"
    assert p.complete(system="", messages=HELLO, tools=[]).message["content"] == [{"type": "text", "text": "ok"}]
    assert openai_server.headers[0]["authorization"] == f"Bearer {NO_KEY_PLACEHOLDER}"


def test_environment_configures_the_client(openai_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "from-env")
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url + "/")
    openai_server.api_key = "from-env"
    p = OpenAIProvider(None)
    assert p.model == "gpt-4.1" and p.base_url == openai_server.base_url
    assert p.complete(system="", messages=HELLO, tools=[]).message["content"] == [{"type": "text", "text": "ok"}]


def test_server_without_stream_options_gets_a_second_request_without_them(openai_server):
    openai_server.reject_stream_options = True
    openai_server.script("one", "two")
    p = provider(openai_server)
    assert p.complete(system="", messages=HELLO, tools=[]).message["content"] == [{"type": "text", "text": "one"}]
    assert p.complete(system="", messages=HELLO, tools=[]).message["content"] == [{"type": "text", "text": "two"}]
    assert ["stream_options" in r for r in openai_server.requests] == [True, False, False]


def test_model_that_wants_max_completion_tokens_gets_it(openai_server):
    openai_server.reject_max_tokens = True
    r = provider(openai_server).complete(system="", messages=HELLO, tools=[], max_tokens=64)
    assert r.message["content"] == [{"type": "text", "text": "ok"}]
    assert [r.get("max_tokens") for r in openai_server.requests] == [64, None]
    assert openai_server.requests[1]["max_completion_tokens"] == 64


def test_a_history_from_the_anthropic_provider_is_sent_faithfully(openai_server):
    """Thinking dropped, list tool_result content flattened, is_error prefixed, odd ids hashed consistently."""
    long_id = "toolu_" + "x" * 50
    history = [
        {"role": "user", "content": [{"type": "text", "text": "list and read"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "plan", "signature": "sig"},
                {"type": "text", "text": "Sure."},
                {"type": "tool_use", "id": "toolu_01abc", "name": "bash", "input": {"command": "ls"}},
                {"type": "tool_use", "id": long_id, "name": "read_file", "input": {"path": "x"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01abc", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
                {"type": "tool_result", "tool_use_id": long_id, "content": "no such file", "is_error": True},
            ],
        },
        {"role": "assistant", "content": [{"type": "redacted_thinking", "data": "zz"}, {"type": "text", "text": "Done."}]},
        {"role": "user", "content": "thanks"},
    ]
    check_request(history)
    provider(openai_server).complete(system="sys", messages=history, tools=TOOLS)
    openai_server.assert_all_valid()
    sent = openai_server.requests[0]["messages"]
    wire = sent[2]["tool_calls"][1]["id"]
    assert wire != long_id and len(wire) <= 40
    assert sent[3:5] == [
        {"role": "tool", "tool_call_id": "toolu_01abc", "content": "a\nb"},
        {"role": "tool", "tool_call_id": wire, "content": "Error: no such file"},
    ]
    assert sent[5] == {"role": "assistant", "content": "Done."}
    assert sent[6] == {"role": "user", "content": "thanks"}


def test_a_server_that_ignores_stream_true_is_named(openai_server):
    # a 200 with a plain JSON body to a streaming request: no SSE events at all
    openai_server.script(error(200, body={"choices": [{"message": {"role": "assistant", "content": "hi"}}]}))
    with pytest.raises(ProviderError) as info:
        provider(openai_server).complete(system="", messages=HELLO, tools=[])
    assert str(info.value) == (
        f"the OpenAI-compatible API at {openai_server.base_url} sent an empty stream "
        "(does the server support stream=true for chat completions?)"
    )


# ---- prompt_cache_key (SPEC §12): where the endpoint accepts it, never where it would be refused

def test_prompt_cache_key_is_not_sent_to_an_endpoint_not_known_to_accept_it(openai_server, monkeypatch):
    monkeypatch.delenv("EVO_AGENT_PROMPT_CACHE_KEY", raising=False)
    provider(openai_server).complete(system="", messages=HELLO, tools=[], cache_key="1780000000000-abc")
    assert "prompt_cache_key" not in openai_server.requests[0]


def test_prompt_cache_key_is_sent_to_openai_and_where_the_setting_says(openai_server, monkeypatch):
    from evo_agent.providers.openai_provider import sends_cache_key

    monkeypatch.delenv("EVO_AGENT_PROMPT_CACHE_KEY", raising=False)
    assert sends_cache_key("api.openai.com") and not sends_cache_key("localhost")
    monkeypatch.setenv("EVO_AGENT_PROMPT_CACHE_KEY", "0")
    assert not sends_cache_key("api.openai.com")
    monkeypatch.setenv("EVO_AGENT_PROMPT_CACHE_KEY", "1")
    p = provider(openai_server)
    p.complete(system="", messages=HELLO, tools=[], cache_key="1780000000000-abc")
    p.complete(system="", messages=HELLO, tools=[])  # a one-off request (the summary call): no key
    assert openai_server.requests[0]["prompt_cache_key"] == "1780000000000-abc"
    assert "prompt_cache_key" not in openai_server.requests[1]


def test_an_endpoint_that_refuses_prompt_cache_key_gets_the_request_again_without_it(openai_server, monkeypatch):
    monkeypatch.setenv("EVO_AGENT_PROMPT_CACHE_KEY", "1")
    openai_server.reject_prompt_cache_key = True
    p = provider(openai_server)
    r = p.complete(system="", messages=HELLO, tools=[], cache_key="k")
    assert r.message["content"] == [{"type": "text", "text": "ok"}]
    p.complete(system="", messages=HELLO, tools=[], cache_key="k")
    assert [("prompt_cache_key" in r) for r in openai_server.requests] == [True, False, False]  # refused once only


# ---- text_only (the summary call sent in place): the tools stay in the prompt, none may be called

def test_a_text_only_request_keeps_its_tools_and_sends_tool_choice_none(openai_server):
    p = provider(openai_server)
    p.complete(system="", messages=HELLO, tools=TOOLS, text_only=True)
    p.complete(system="", messages=HELLO, tools=TOOLS)
    p.complete(system="", messages=HELLO, tools=[], text_only=True)  # no tools: nothing to forbid
    first, second, third = openai_server.requests
    assert first["tool_choice"] == "none" and first["tools"] == second["tools"]
    assert "tool_choice" not in second and "tool_choice" not in third


def test_an_endpoint_that_refuses_tool_choice_gets_the_request_again_without_it(openai_server):
    openai_server.reject_tool_choice = True
    p = provider(openai_server)
    assert p.complete(system="", messages=HELLO, tools=TOOLS, text_only=True).message["content"]
    p.complete(system="", messages=HELLO, tools=TOOLS, text_only=True)
    assert [("tool_choice" in r) for r in openai_server.requests] == [True, False, False]  # refused once only
