"""The fake Messages API itself: other suites trust its validator and its script."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import anthropic
import pytest

from tests.api_rules import InvalidConversation
from tests.fake_model_server import (
    FakeModelServer,
    default_input_tokens,
    error,
    reply,
    text,
    thinking,
    tool_use,
    validate_request,
)

TOOLS = [{"name": "bash", "description": "run", "input_schema": {"type": "object", "properties": {}}}]
USER = {"role": "user", "content": "hi"}
CALL = {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {}}]}
RESULT = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "out"}]}


def body(messages, **extra):
    return {"model": "m", "max_tokens": 100, "messages": messages, **extra}


def post(server, payload, headers=None, path="/v1/messages"):
    request = urllib.request.Request(
        server.base_url + path,
        data=json.dumps(payload).encode(),
        headers={"content-type": "application/json", "x-api-key": "k", "anthropic-version": "2023-06-01", **(headers or {})},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def client(server):
    return anthropic.Anthropic(api_key="k", base_url=server.base_url, max_retries=0)


# ---------------------------------------------------------------- validator


@pytest.mark.parametrize(
    "payload,reason",
    [
        ({"max_tokens": 5, "messages": [USER]}, "model"),
        (body([USER], max_tokens=0), "max_tokens"),
        ({"model": "m", "messages": [USER]}, "max_tokens"),
        ({"model": "m", "max_tokens": 5}, "messages"),
        (body([]), "at least one"),
        (body([USER, CALL], tools=TOOLS), "without tool_result"),
        (body([USER, CALL, USER], tools=TOOLS), "without tool_result"),
        (body([USER, RESULT], tools=TOOLS), "unexpected tool_use_id"),
        (body([USER, CALL, RESULT]), "must define tools"),
        (body([{"role": "user", "content": [{"type": "text", "text": "x", "citations": None}]}]), "null"),
        (body([{"role": "user", "content": [{"type": "text", "text": "x", "extra": 1}]}]), "Extra inputs"),
        (body([{"role": "user", "content": "x", "name": "bob"}]), "Extra inputs"),
        (
            body([USER, {"role": "assistant", "content": [{"type": "thinking", "thinking": "t"}]}, USER]),
            "signature: Field required",
        ),
        (
            body([USER, {"role": "assistant", "content": [{"type": "tool_use", "id": "bad id!", "name": "bash", "input": {}}]}], tools=TOOLS),
            "pattern",
        ),
        (body([USER], tools=TOOLS + TOOLS), "unique"),
        (body([USER], tools=[{"name": "x"}]), "input_schema"),
        (body([USER], system=123), "system"),
    ],
)
def test_validator_refuses_what_the_api_refuses(payload, reason):
    with pytest.raises(InvalidConversation, match=reason):
        validate_request(payload)


def test_validator_accepts_a_full_tool_round_trip():
    thought = {"type": "thinking", "thinking": "hmm", "signature": "s"}
    call = {"role": "assistant", "content": [thought, {"type": "text", "text": "let me look"}, CALL["content"][0]]}
    validate_request(body([USER, call, RESULT], tools=TOOLS, system="be brief"))
    validate_request(body([USER, CALL, RESULT], tools=TOOLS, system=[{"type": "text", "text": "s"}], stream=True))
    validate_request(body([USER, CALL, RESULT]), tools_required_for_tool_blocks=False)


# ---------------------------------------------------------------- HTTP behaviour


def test_invalid_request_gets_400_is_recorded_and_keeps_the_script(model_server):
    model_server.script(text("scripted"))
    status, raw = post(model_server, body([USER, CALL], tools=TOOLS))
    assert status == 400
    assert json.loads(raw)["error"]["type"] == "invalid_request_error"
    assert len(model_server.invalid) == 1 and "tool_result" in model_server.invalid[0][1]
    assert model_server.pending == 1
    with pytest.raises(anthropic.BadRequestError):
        client(model_server).messages.create(**body([USER, CALL], tools=TOOLS))
    assert client(model_server).messages.create(**body([USER])).content[0].text == "scripted"
    assert len(model_server.requests) == 3 and len(model_server.valid_requests) == 1
    with pytest.raises(AssertionError, match="refused 2"):
        model_server.assert_all_valid()


def test_plain_json_answer_shape_and_default_reply(model_server):
    status, raw = post(model_server, body([USER]))
    assert status == 200
    message = json.loads(raw)
    assert message["type"] == "message" and message["role"] == "assistant" and message["model"] == "m"
    assert message["content"][0]["text"] == "ok" and message["stop_reason"] == "end_turn"
    assert message["usage"] == {
        "input_tokens": default_input_tokens(body([USER])),
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": 10,
    }


def test_auth_and_version_headers_are_required(model_server):
    status, raw = post(model_server, body([USER]), headers={"x-api-key": ""})
    assert status == 401 and "authentication_error" in raw
    model_server.api_key = "right"
    assert post(model_server, body([USER]), headers={"x-api-key": "wrong"})[0] == 401
    assert post(model_server, body([USER]), headers={"x-api-key": "right"})[0] == 200
    status, raw = post(model_server, body([USER]), headers={"x-api-key": "right", "anthropic-version": ""})
    assert status == 400
    assert post(model_server, body([USER]), path="/v1/nothing")[0] == 404


def test_streaming_with_the_sdk_rebuilds_every_block_type(model_server):
    model_server.script([thinking("step by step", "SIG"), text("hello world, how are you"), tool_use("bash", {"command": "ls -la", "timeout": 5})])
    deltas = []
    with client(model_server).messages.stream(**body([USER], tools=TOOLS)) as stream:
        for event in stream:
            if event.type == "content_block_delta":
                deltas.append(event.delta.type)
        message = stream.get_final_message()
    assert [b.type for b in message.content] == ["thinking", "text", "tool_use"]
    assert message.content[0].signature == "SIG" and message.content[0].thinking == "step by step"
    assert message.content[1].text == "hello world, how are you"
    assert message.content[2].input == {"command": "ls -la", "timeout": 5}
    assert message.stop_reason == "tool_use" and message.usage.output_tokens == 10
    assert deltas.count("text_delta") >= 2 and deltas.count("input_json_delta") >= 3
    assert "signature_delta" in deltas and "thinking_delta" in deltas
    assert model_server.requests[0]["stream"] is True


def test_scripted_usage_errors_callables_and_count_tokens(model_server):
    model_server.input_tokens = 123
    model_server.script(
        reply("short", usage={"output_tokens": 3}, stop_reason="max_tokens"),
        error(status=400, type="invalid_request_error", message="prompt is too long"),
        lambda b: text(f"you sent {len(b['messages'])} message(s)"),
    )
    c = client(model_server)
    first = c.messages.create(**body([USER]))
    assert (first.usage.input_tokens, first.usage.output_tokens, first.stop_reason) == (123, 3, "max_tokens")
    with pytest.raises(anthropic.BadRequestError, match="prompt is too long"):
        c.messages.create(**body([USER]))
    assert c.messages.create(**body([USER])).content[0].text == "you sent 1 message(s)"
    assert [e["usage"]["output_tokens"] for e in model_server.log if e.get("usage")] == [3, 10]
    assert post(model_server, {"model": "m", "messages": [USER]}, path="/v1/messages/count_tokens") == (200, '{"input_tokens": 123}')


def test_env_wait_and_dump(model_server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "leak")
    env = model_server.env(EXTRA="1")
    assert env["ANTHROPIC_BASE_URL"] == model_server.base_url and env["ANTHROPIC_API_KEY"] == "test-key"
    assert env["EVO_AGENT_PROVIDER"] == "anthropic" and env["EXTRA"] == "1" and "OPENAI_API_KEY" not in env
    assert "PATH" in env
    post(model_server, body([USER]))
    assert model_server.wait_for_requests(1, timeout=1)[0]["messages"] == [USER]
    with pytest.raises(AssertionError):
        model_server.wait_for_requests(2, timeout=0.1)
    lines = model_server.dump(tmp_path / "log.jsonl").read_text().splitlines()
    assert json.loads(lines[0])["body"]["messages"] == [USER] and json.loads(lines[0])["valid"] is True


def test_server_as_context_manager():
    with FakeModelServer() as server:
        server.script("from a str")
        assert client(server).messages.create(**body([USER])).content[0].text == "from a str"
