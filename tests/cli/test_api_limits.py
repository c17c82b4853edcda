"""EVO_AGENT_API_TIMEOUT and EVO_AGENT_API_RETRIES: how long the model API may stay silent, how often a try is
repeated. Without them a silent endpoint held print mode for five tries of 600 s (Claude Code reads
API_TIMEOUT_MS for the same reason)."""

from __future__ import annotations

import socket

import pytest

from tests.fake_model_server import error, text


def _silent(conn: socket.socket, request: bytes) -> None:
    """An endpoint that takes the request and never answers (until the test ends)."""
    conn.recv(65536)
    conn.settimeout(None)
    try:
        conn.recv(1)  # waits for the client to give up and close
    except OSError:
        pass


def test_a_silent_api_is_given_up_on_after_the_users_timeout(cli, hostile_endpoint):
    endpoint = hostile_endpoint(_silent)
    env = {**cli.env, "EVO_AGENT_PROVIDER": "anthropic", "ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL":
           endpoint.url, "EVO_AGENT_API_TIMEOUT": "0.5", "EVO_AGENT_API_RETRIES": "1"}
    result = cli.run("-p", "hi", env=env, timeout=60)  # the client's own 600 s would run past this
    assert result.rc == 1, result.err
    assert "Traceback" not in result.err and "time" in result.err.lower(), result.err
    assert len(endpoint.requests) == 2  # the try and one retry


def test_retries_are_the_users_number(cli, model_server):
    model_server.script(error(529), error(529), error(529), text("after one retry"))
    result = cli.run("-p", "hi", env={**cli.env, "EVO_AGENT_API_RETRIES": "1"})
    assert result.rc == 1 and "Traceback" not in result.err
    assert len(model_server.requests) == 2  # the try and one retry: the default would have tried five times
    result = cli.run("-p", "hi", env={**cli.env, "EVO_AGENT_API_RETRIES": "1"})
    assert result.rc == 0 and result.out.strip() == "after one retry"


@pytest.mark.parametrize(("variable", "value"), [
    ("EVO_AGENT_API_TIMEOUT", "soon"), ("EVO_AGENT_API_TIMEOUT", "0"), ("EVO_AGENT_API_TIMEOUT", "-3"),
    ("EVO_AGENT_API_TIMEOUT", "nan"), ("EVO_AGENT_API_TIMEOUT", "inf"), ("EVO_AGENT_API_RETRIES", "-1"),
    ("EVO_AGENT_API_RETRIES", "2.5"), ("EVO_AGENT_API_RETRIES", "lots"), ("EVO_AGENT_API_RETRIES", "²"),
    ("EVO_AGENT_API_RETRIES", "99"),
])
def test_a_value_that_is_no_number_is_one_line_and_exit_2(cli, model_server, variable, value):
    result = cli.run("-p", "hi", env={**cli.env, variable: value})
    assert result.rc == 2 and len(result.err_lines) == 1 and variable in result.err, result.err
    assert not model_server.requests  # nothing was sent


def test_the_demo_provider_ignores_them(cli):
    result = cli.run("-p", "hi", env={**cli.env, "EVO_AGENT_PROVIDER": "demo", "EVO_AGENT_API_TIMEOUT": "5",
                                      "EVO_AGENT_API_RETRIES": "0"})
    assert result.rc == 0, result.err


def test_a_prompt_larger_than_the_context_window_is_refused_before_it_is_sent_or_recorded(cli, model_server):
    """A prompt alone over the model's context window was recorded, sent and refused by the API, and then
    resent (and refused) by every later turn of the session: now one line, exit 1, nothing sent or kept."""
    model_server.script(text("a normal answer"))
    env = {**cli.env, "EVO_AGENT_COMPACT_CHARS": "1000"}  # the limit: 12 thresholds, 12,000 characters
    result = cli.run("-p", "y" * 12_001, env=env)
    assert result.rc == 1 and "Traceback" not in result.err, result.err
    refusal = [line for line in result.err_lines if "12,001 characters" in line]
    assert refusal and "over the 12,000" in refusal[0] and "nothing was sent" in refusal[0], result.err
    assert model_server.requests == []
    assert all("y" * 100 not in cli.transcript(sid).read_text() for sid in cli.session_ids())
    result = cli.run("-p", "x" * 12_000, env=env)  # at the limit: sent
    assert result.rc == 0 and result.out.strip() == "a normal answer", result.err
