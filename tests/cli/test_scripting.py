"""Scripting: `evo-agent PROMPT`, piped stdin with -p, --output-format json/stream-json, and the help texts."""

from __future__ import annotations

import json

import pytest

from tests.fake_model_server import error, reply, text, tool_use
from tests.prompt_cache import last_text


def test_a_positional_prompt_starts_the_session_with_it(cli, model_server):
    model_server.script(text("Fixed it."), text("And the next."))
    result = cli.run("fix the test", "--plain", input="and the next one\n")
    assert result.rc == 0, result.err
    assert "Fixed it." in result.out and "And the next." in result.out
    sid = result.hint_id()
    assert [m["content"] for m in cli.messages(sid) if m["role"] == "user"] == ["fix the test", "and the next one"]


def test_print_mode_appends_piped_stdin_to_the_prompt(cli, model_server):
    model_server.script(text("It is a KeyError."), text("Only stdin."))
    result = cli.run("-p", "explain", input="Traceback ...\nKeyError: 'x'\n")
    assert result.rc == 0 and result.out == "It is a KeyError.\n", result.err
    assert last_text(model_server.requests[0]) == "explain\n\nTraceback ...\nKeyError: 'x'"

    alone = cli.run("-p", input="what is 2+2?\n")  # no prompt after -p: stdin is the prompt
    assert alone.rc == 0 and alone.out == "Only stdin.\n"
    assert last_text(model_server.requests[1]) == "what is 2+2?"

    empty = cli.run("-p", input="")
    assert empty.rc == 2 and empty.err_lines[0].startswith("evo-agent: the prompt is empty")


def test_json_output_is_one_result_object(cli, model_server):
    model_server.script(reply(text("The answer is 4."), usage={"input_tokens": 1000, "output_tokens": 200}))
    result = cli.run("-p", "2+2?", "--output-format", "json", "--model", "claude-sonnet-4-5-20250929")
    assert result.rc == 0, result.err
    data = json.loads(result.out)
    sid = result.hint_id()
    assert data["type"] == "result" and data["subtype"] == "success" and data["is_error"] is False
    assert data["result"] == "The answer is 4." and data["session_id"] == sid
    assert data["usage"]["input_tokens"] == 1000 and data["usage"]["output_tokens"] == 200
    assert data["total_cost_usd"] == pytest.approx((1000 * 3 + 200 * 15) / 1e6)
    assert data["num_turns"] == 1


def test_json_output_of_a_failure_says_is_error(cli, model_server):
    model_server.script(error(401, "authentication_error", "invalid x-api-key"))
    result = cli.run("-p", "hi", "--output-format", "json", "--model", "some-local-model")
    assert result.rc == 1
    data = json.loads(result.out)
    assert data["is_error"] is True and "401" in data["result"] and data["total_cost_usd"] is None
    assert data["session_id"] == result.hint_id()


def test_stream_json_prints_events_as_they_happen(cli, model_server):
    model_server.script([text("Looking."), tool_use("bash", {"command": "echo streamed"})], text("Done: streamed."))
    result = cli.run("-p", "run it", "--output-format", "stream-json")
    assert result.rc == 0, result.err
    events = [json.loads(line) for line in result.out_lines]
    sid = result.hint_id()
    assert events[0]["type"] == "system" and events[0]["subtype"] == "init" and events[0]["session_id"] == sid
    assert "bash" in events[0]["tools"]
    kinds = [e["type"] for e in events]
    assert kinds[-1] == "result" and events[-1]["result"] == "Done: streamed."
    deltas = "".join(e["event"]["delta"]["text"] for e in events if e["type"] == "stream_event")
    assert deltas == "Looking.Done: streamed."
    (use,) = [e["message"]["content"][0] for e in events if e["type"] == "assistant"]
    (res,) = [e["message"]["content"][0] for e in events if e["type"] == "user"]
    assert use["name"] == "bash" and use["input"] == {"command": "echo streamed"}
    assert res["tool_use_id"] == use["id"] and "streamed" in res["content"] and res["is_error"] is False
    assert kinds.index("assistant") < kinds.index("user") < kinds.index("result")


def test_output_format_outside_print_mode_is_a_usage_error(cli):
    result = cli.run("--output-format", "json", "--plain")
    assert result.rc == 2 and result.err_lines == ["evo-agent: --output-format is for print mode: use it with -p"]


@pytest.mark.parametrize("value", ["abc", "0", "-5"])
def test_a_bad_compact_chars_is_a_usage_error(cli, model_server, value):
    result = cli.run("-p", "hi", env={**cli.env, "EVO_AGENT_COMPACT_CHARS": value})
    assert result.rc == 2 and len(result.err_lines) == 1
    assert result.err_lines[0].startswith("evo-agent: EVO_AGENT_COMPACT_CHARS must be a whole number")
    assert model_server.requests == [] and cli.session_ids() == []


def test_help_lists_slash_commands_environment_and_exit_codes(cli):
    top = cli.run("--help")
    assert top.rc == 0
    for needle in ("PROMPT", "/compact", "/cost", "EVO_AGENT_COMPACT_CHARS", "ANTHROPIC_API_KEY", "129", "130",
                   "143", "--output-format", "sessions"):
        assert needle in top.out, needle
    sub = cli.run("sessions", "export", "--help")
    assert "--project-dir DIR  the project whose sessions to use" in " ".join(sub.out.split("\n")) or \
        "the project whose sessions" in sub.out
    bad = cli.run("sessions", "list", "--bogus")
    assert bad.rc == 2 and bad.err_lines == [
        "evo-agent: unrecognized arguments: --bogus (see evo-agent sessions list --help)"]
    missing = cli.run("sessions", "show")
    assert missing.err_lines[-1].endswith("(see evo-agent sessions show --help)")
