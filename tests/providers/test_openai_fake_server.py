"""The fake chat completions API itself, over raw HTTP: other suites trust its validator and script."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

from tests.fake_openai_server import error, reply, text, tool_call

USER = {"role": "user", "content": "hi"}


def post(server, payload, headers=None, path="/chat/completions"):
    request = urllib.request.Request(
        server.base_url + path,
        data=json.dumps(payload).encode(),
        headers={"content-type": "application/json", "authorization": "Bearer k", **(headers or {})},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers.get("content-type"), response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers.get("content-type"), exc.read().decode()


def test_plain_json_answer(openai_server):
    openai_server.script(reply("hello", tool_call("bash", {"command": "ls"}, id="call_1")))
    status, kind, body = post(openai_server, {"model": "m", "messages": [USER]})
    data = json.loads(body)
    assert status == 200 and kind == "application/json"
    assert data["choices"][0]["message"] == {
        "role": "assistant",
        "content": "hello",
        "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls"}'}}],
    }
    assert data["choices"][0]["finish_reason"] == "tool_calls" and data["usage"]["completion_tokens"] == 10


def test_sse_answer_with_usage_and_done(openai_server):
    openai_server.script(text("hello there"))
    status, kind, body = post(openai_server, {"model": "m", "messages": [USER], "stream": True, "stream_options": {"include_usage": True}})
    assert status == 200 and kind == "text/event-stream"
    events = [e for e in body.split("\n\n") if e]
    assert all(e.startswith("data: ") for e in events) and events[-1] == "data: [DONE]"
    chunks = [json.loads(e[len("data: ") :]) for e in events[:-1]]
    assert "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"]) == "hello there"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["prompt_tokens"] >= 1
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop"


def test_no_usage_chunk_unless_asked(openai_server):
    _, _, body = post(openai_server, {"model": "m", "messages": [USER], "stream": True})
    assert '"usage"' not in body


def test_invalid_requests_are_refused_and_do_not_consume_the_script(openai_server):
    openai_server.script(text("kept"))
    call = {"role": "assistant", "content": None, "tool_calls": [{"id": "a", "type": "function", "function": {"name": "bash", "arguments": "{}"}}]}
    status, _, body = post(openai_server, {"model": "m", "messages": [USER, call, USER]})
    assert status == 400 and "did not have response messages: a" in json.loads(body)["error"]["message"]
    status, _, body = post(openai_server, {"model": "m", "messages": [USER], "temperature_x": 1})
    assert status == 400 and "Unrecognized request argument supplied: temperature_x" in body
    status, _, body = post(openai_server, {"model": "m", "messages": [USER], "stream_options": {"include_usage": True}})
    assert status == 400 and "only allowed when 'stream' is enabled" in body
    assert len(openai_server.invalid) == 3 and openai_server.pending == 1
    status, _, body = post(openai_server, {"model": "m", "messages": [USER]})
    assert json.loads(body)["choices"][0]["message"]["content"] == "kept"


def test_auth_and_routes(openai_server):
    status, _, _ = post(openai_server, {"model": "m", "messages": [USER]}, headers={"authorization": ""})
    assert status == 401
    openai_server.require_auth = False
    status, _, _ = post(openai_server, {"model": "m", "messages": [USER]}, headers={"authorization": ""})
    assert status == 200
    status, _, _ = post(openai_server, {"model": "m", "messages": [USER]}, path="/completions")
    assert status == 404


def test_scripted_errors_carry_status_body_and_retry_header(openai_server):
    openai_server.script(error(429, "slow down", code="rate_limit_exceeded"))
    request = urllib.request.Request(
        openai_server.base_url + "/chat/completions",
        data=json.dumps({"model": "m", "messages": [USER]}).encode(),
        headers={"authorization": "Bearer k", "content-type": "application/json"},
        method="POST",
    )
    try:
        urllib.request.urlopen(request, timeout=10)
        raise AssertionError("expected an HTTP error")
    except urllib.error.HTTPError as exc:
        assert exc.code == 429 and exc.headers["retry-after-ms"] == "10"
        assert json.loads(exc.read())["error"] == {"message": "slow down", "type": "rate_limit_exceeded", "param": None, "code": "rate_limit_exceeded"}


def test_env_points_a_subprocess_at_the_server(openai_server):
    env = openai_server.env({"OPENAI_API_KEY": "real", "ANTHROPIC_API_KEY": "real", "PATH": "/bin"})
    assert env == {"PATH": "/bin", "OPENAI_BASE_URL": openai_server.base_url, "OPENAI_API_KEY": "test-key", "EVO_AGENT_PROVIDER": "openai"}
