"""A tool name the APIs refuse back, sent by a model (a local OpenAI-compatible one, an Anthropic-compatible
proxy): the call is answered as an unknown tool, and the session goes on, and resumes, without a 400."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from evo_agent.session import api_tool_name
from tests import fake_model_server as anthropic_api
from tests import fake_openai_server as openai_api

API_NAME = r"^[a-zA-Z0-9_-]{1,64}$"
BUILT_IN = {"bash", "read_file", "write_file", "edit_file", "glob", "grep", "compact", "task", "memory"}


def _answered_as_unknown(cli, sid: str, sent: str) -> dict:
    messages = cli.messages(sid)
    call = messages[1]["content"][0]
    result = messages[2]["content"][0]
    assert call["name"] != sent and call["name"] not in BUILT_IN
    assert result["is_error"] is True and f"unknown tool {call['name']!r}" in result["content"]
    return call


def test_an_anthropic_compatible_model_naming_a_tool_read_dot_file_does_not_break_the_session(cli, model_server):
    env = model_server.env(cli.env)
    model_server.script(anthropic_api.tool_use("read.file", {"path": "README.md"}, id="toolu_1"), "Sorry, wrong tool.")
    first = cli.run("-p", "read the readme", env=env)
    assert first.rc == 0 and first.out == "Sorry, wrong tool.\n", first.err
    call = _answered_as_unknown(cli, first.hint_id(), "read.file")
    assert call["name"] == "invalid-name_read_file"  # never read_file: the model did not name it

    model_server.script("Still here.")
    resumed = cli.run("--resume", first.hint_id(), "-p", "and now?", env=env)
    assert resumed.rc == 0 and resumed.out == "Still here.\n", resumed.err
    sent = model_server.valid_requests[-1]["messages"]
    assert sent[1]["content"][0]["name"] == "invalid-name_read_file"
    model_server.assert_all_valid()


def test_a_local_chat_model_naming_a_tool_with_a_dot_or_a_space_does_not_break_the_session(cli, openai_server):
    env = openai_server.env(cli.env)
    openai_server.script(openai_api.tool_call("functions.bash", {"command": "ls"}, id="call_1"), "Done.")
    first = cli.run("-p", "list", env=env)
    assert first.rc == 0 and first.out == "Done.\n", first.err
    _answered_as_unknown(cli, first.hint_id(), "functions.bash")

    openai_server.script(openai_api.tool_call("read file", {"path": "README.md"}, id="call_2"), "Again done.")
    resumed = cli.run("--resume", first.hint_id(), "-p", "again", env=env)
    assert resumed.rc == 0 and resumed.out == "Again done.\n", resumed.err
    openai_server.assert_all_valid()


@given(st.text(max_size=200))
def test_every_recorded_name_is_one_the_apis_accept_and_a_bad_one_never_names_a_real_tool(name):
    import re

    recorded = api_tool_name(name)
    assert re.match(API_NAME, recorded)
    assert api_tool_name(recorded) == recorded
    if recorded != name:
        assert recorded not in BUILT_IN and not recorded.startswith("mcp__")


def _recorded_by_an_older_version(project) -> str:
    """A session an older evo-agent recorded: the model's `read.file` kept as sent (every request after it got a 400)."""
    from tests.builders import quiet_store

    recorder = quiet_store(project).create(model="claude-sonnet-4-5", provider="anthropic")
    recorder.user({"role": "user", "content": "read the readme"})
    recorder.assistant({"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_old", "name": "read.file", "input": {"path": "README.md"}}]},
        input_tokens=100, output_tokens=10)
    recorder.user({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_old", "is_error": True,
                                                "content": "unknown tool 'read.file'"}]})
    recorder.assistant({"role": "assistant", "content": [{"type": "text", "text": "Sorry."}]},
                       input_tokens=100, output_tokens=10)
    recorder.checkpoint()
    return recorder.session_id


def test_a_session_recorded_with_a_bad_name_by_an_older_version_resumes_with_either_api(
        cli, project, model_server, openai_server):
    sid = _recorded_by_an_older_version(project)
    model_server.script("Back again.")
    anthropic = cli.run("--resume", sid, "-p", "go on", env=model_server.env(cli.env))
    assert anthropic.rc == 0 and anthropic.out == "Back again.\n", anthropic.err
    assert model_server.valid_requests[-1]["messages"][1]["content"][0]["name"] == "invalid-name_read_file"
    model_server.assert_all_valid()

    openai_server.script("Back once more.")
    chat = cli.run("--resume", sid, "-p", "go on", env=openai_server.env(cli.env))
    assert chat.rc == 0 and chat.out == "Back once more.\n", chat.err
    openai_server.assert_all_valid()
