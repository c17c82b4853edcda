"""The API key never appears in the line that says why a model call failed, not even where the server echoes it.

A server (a misconfigured gateway, a proxy, an impostor behind a wrong base URL) answers a refused key with the key
itself: `invalid x-api-key: sk-ant-...`, OpenAI's `Incorrect API key provided: sk-...`, the reason phrase, a stream's
error event. That text became evo-agent's failure line on stderr, in the app and in a subagent's tool_result (which
the model reads and the transcript keeps): the line a user pastes into an issue. The line now names the variable
instead of the value, masked before the line is cut to length (a cut key left its first characters). A base URL's
password (`https://user:PASSWORD@host`) is not shown either, nor a key holding a line break, which wrote a header
of its own into every request (`x-api-key: sk-…\r\nX-Injected: 1`) and is now refused before anything is sent.
The control: the same failures still say which status came back and what to check.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_runner import Cli, clean_env
from tests.hostile_endpoint import http_answer

KEY = "sk-ant-api03-" + "Zq7" * 30
OPENAI_KEY = "sk-proj-" + "Wx9" * 30
URL_PASSWORD = "hunt3r"  # 6 characters: masked, as on disk


def _error_json(message: str, kind: str = "authentication_error") -> bytes:
    return json.dumps({"type": "error", "error": {"type": kind, "message": message}}).encode()


def _sse(event: str, payload: dict) -> bytes:
    return f"event: {event}\ndata: {json.dumps(payload)}\n\n".encode()


ANTHROPIC_ANSWERS = {
    "401 json": http_answer("401 Unauthorized", {"Content-Type": "application/json"},
                            _error_json(f"invalid x-api-key: {KEY}")),
    "400 text": http_answer("400 Bad Request", {"Content-Type": "text/plain"}, f"no such key {KEY}\n".encode()),
    "403 reason": http_answer(f"403 Forbidden for {KEY}", {}),
    "401 kind": http_answer("401 Unauthorized", {}, _error_json("refused", kind=KEY)),
    "401 long": http_answer("401 Unauthorized", {}, _error_json("x" * 200 + f" the key {KEY} is unknown")),
    "200 stream error": http_answer("200 OK", {"Content-Type": "text/event-stream"}, _sse(
        "error", {"type": "error", "error": {"type": "invalid_request_error", "message": f"key {KEY} revoked"}})),
}


def _echoing(template: bytes, key: str):
    def answer(conn, request: bytes) -> None:
        conn.sendall(template.replace(KEY.encode(), key.encode()))
    return answer


def _everything_written(*roots: Path) -> bytes:
    return b"".join(p.read_bytes() for root in roots for p in root.rglob("*") if p.is_file() and ".git" not in p.parts)


def _run(project: Path, home: Path, **env: str):
    return Cli(project, clean_env(home, **env)).run("-p", "hi")


@pytest.mark.parametrize("name", list(ANTHROPIC_ANSWERS))
@pytest.mark.parametrize("variable", ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"])
def test_an_anthropic_error_that_echoes_the_key_never_shows_it(project, tmp_path, hostile_endpoint, name, variable):
    endpoint = hostile_endpoint(_echoing(ANTHROPIC_ANSWERS[name], KEY))
    result = _run(project, tmp_path / "home", **{variable: KEY}, ANTHROPIC_BASE_URL=endpoint.url,
                  EVO_AGENT_PROVIDER="anthropic")
    assert endpoint.requests and KEY.encode() in endpoint.requests[0]  # it was sent, and echoed back
    assert result.rc == 1
    assert KEY[:20] not in result.err + result.out, result.err
    assert KEY[:20].encode() not in _everything_written(project, tmp_path / "home")
    assert "Anthropic API error" in result.err and variable in result.err  # the control: what failed, what to check


OPENAI_ANSWERS = {
    "401 json": http_answer("401 Unauthorized", {"Content-Type": "application/json"}, json.dumps(
        {"error": {"message": f"Incorrect API key provided: {KEY}.", "type": "invalid_request_error",
                   "code": "invalid_api_key"}}).encode()),
    "200 stream error": http_answer("200 OK", {"Content-Type": "text/event-stream"},
                                    b"data: " + json.dumps({"error": {"message": f"bad key {KEY}"}}).encode()
                                    + b"\n\n"),
}


@pytest.mark.parametrize("name", list(OPENAI_ANSWERS))
def test_an_openai_error_that_echoes_the_key_never_shows_it(project, tmp_path, hostile_endpoint, name):
    endpoint = hostile_endpoint(_echoing(OPENAI_ANSWERS[name], OPENAI_KEY))
    result = _run(project, tmp_path / "home", OPENAI_API_KEY=OPENAI_KEY, OPENAI_BASE_URL=endpoint.url + "/v1")
    assert endpoint.requests and f"Bearer {OPENAI_KEY}".encode() in endpoint.requests[0]
    assert result.rc == 1
    assert OPENAI_KEY[:20] not in result.err + result.out, result.err
    assert "OpenAI-compatible API error" in result.err


def test_a_base_url_s_password_is_not_shown_in_the_failure_line(project, tmp_path, hostile_endpoint):
    endpoint = hostile_endpoint(http_answer("401 Unauthorized", {}, _error_json("who are you")))
    url = endpoint.url.replace("http://", f"http://someone:{URL_PASSWORD}@") + "/v1"
    result = _run(project, tmp_path / "home", OPENAI_API_KEY=OPENAI_KEY, OPENAI_BASE_URL=url)
    assert result.rc == 1
    assert URL_PASSWORD not in result.err + result.out, result.err
    assert "error 401" in result.err and endpoint.url.removeprefix("http://") in result.err  # which server it was


@pytest.mark.parametrize("url", [f"ftp://someone:{URL_PASSWORD}@127.0.0.1/v1", f"http://someone:{URL_PASSWORD}@"])
def test_a_base_url_that_is_refused_is_named_without_its_password(project, tmp_path, url):
    result = _run(project, tmp_path / "home", OPENAI_API_KEY=OPENAI_KEY, OPENAI_BASE_URL=url)
    assert result.rc != 0 and "OPENAI_BASE_URL" in result.err
    assert URL_PASSWORD not in result.err + result.out, result.err


@pytest.mark.parametrize(("variable", "value"), [
    ("ANTHROPIC_API_KEY", KEY + "\r\nX-Injected: 1"), ("ANTHROPIC_API_KEY", KEY + "\nHost: elsewhere"),
    ("ANTHROPIC_API_KEY", KEY[:20] + "\x1b" + KEY[20:]), ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/v1\tx"),
    ("ANTHROPIC_AUTH_TOKEN", KEY + "\r\nX-Injected: 1")])
def test_a_setting_with_a_line_break_is_refused_without_showing_it(project, tmp_path, hostile_endpoint, variable,
                                                                   value):
    endpoint = hostile_endpoint(http_answer("401 Unauthorized", {}, _error_json("no")))
    env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": endpoint.url, "EVO_AGENT_PROVIDER": "anthropic"}
    env[variable] = value
    if variable == "ANTHROPIC_AUTH_TOKEN":
        del env["ANTHROPIC_API_KEY"]
    result = _run(project, tmp_path / "home", **env)
    assert endpoint.requests == []  # nothing with a header of the value's own making was sent
    assert result.rc == 1 and variable in result.err and "line break" in result.err
    assert KEY[:20] not in result.err + result.out
