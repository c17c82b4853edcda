"""A redirect from the model API is never followed: the key and the prompt go to the URL the user set, and only there.

A 307 or 308 asks a client to repeat the same POST, body and all, at another URL; a client that follows it sends
`x-api-key` (or `Authorization`) and the whole conversation to whatever the Location names: another host, another
port, plain http. evo-agent never did (a second server, the Location's, must get nothing); the failure now says
what happened in one line (`error 307`, that redirects are not followed, which variable sets the URL) instead of
"sent no message".
"""

from __future__ import annotations

import pytest

from tests.cli_runner import Cli, clean_env
from tests.hostile_endpoint import http_answer

KEY = "sk-ant-api03-" + "r" * 40
PROMPT = "the secret plan is in notes.txt"


def _locations(other: str) -> list[str]:
    host_port = other.removeprefix("http://")
    return [f"{other}/v1/messages", f"//{host_port}/v1/messages", f"https://{host_port}/v1/messages",
            f"{other.replace('127.0.0.1', 'localhost')}/", f"http://user:pw@{host_port}/x"]


@pytest.mark.parametrize("status", ["301 Moved Permanently", "302 Found", "303 See Other", "307 Temporary Redirect",
                                    "308 Permanent Redirect"])
@pytest.mark.parametrize("where", range(5))
def test_a_redirect_sends_nothing_to_its_location(project, tmp_path, hostile_endpoint, status, where):
    other = hostile_endpoint(http_answer("200 OK", {}, b"{}"))
    location = _locations(other.url)[where]
    endpoint = hostile_endpoint(http_answer(status, {"Location": location}, b"moved"))
    result = Cli(project, clean_env(tmp_path / "home", ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=endpoint.url)).run(
        "-p", PROMPT)
    assert len(endpoint.requests) == 1 and KEY.encode() in endpoint.requests[0]
    assert other.requests == [], "the redirect was followed"
    assert result.rc == 1
    assert f"error {status[:3]}" in result.err and "redirect" in result.err and "ANTHROPIC_BASE_URL" in result.err


def test_an_openai_compatible_redirect_sends_nothing_to_its_location(project, tmp_path, hostile_endpoint):
    other = hostile_endpoint(http_answer("200 OK", {}, b"{}"))
    endpoint = hostile_endpoint(http_answer("307 Temporary Redirect", {"Location": other.url + "/v1/chat/completions"}))
    result = Cli(project, clean_env(tmp_path / "home", OPENAI_API_KEY=KEY, OPENAI_BASE_URL=endpoint.url + "/v1")).run(
        "-p", PROMPT)
    assert other.requests == [] and len(endpoint.requests) == 1
    assert result.rc == 1 and "error 307" in result.err and "OPENAI_BASE_URL" in result.err
