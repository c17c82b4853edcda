"""The `openai` provider through the real `evo-agent` script: tool loop, resume across providers,
compaction and a subagent, against local chat-completions and Messages servers.

The transcript always holds Anthropic MessageParams, so a session started
with one provider resumes with the other; both strict servers must accept
every request.
"""

from __future__ import annotations

import json

import pytest

from tests import fake_model_server as anthropic_api
from tests import fake_openai_server as openai_api
from tests.prompt_cache import plain


@pytest.fixture
def both_env(cli, model_server, openai_server) -> dict[str, str]:
    """One environment that reaches both local servers; --provider picks one."""
    env = openai_server.env(cli.env)
    env.update(ANTHROPIC_BASE_URL=model_server.base_url, ANTHROPIC_API_KEY="test-key")
    env.pop("EVO_AGENT_PROVIDER", None)
    return env


def tool_names(body: dict) -> set[str]:
    return {t["function"]["name"] for t in body.get("tools", [])}


def test_a_tool_loop_over_chat_completions_is_stored_in_the_anthropic_shape(cli, openai_server, both_env):
    openai_server.script(openai_api.tool_call("bash", {"command": "echo from-openai"}, id="call_1"), "It printed from-openai.")
    result = cli.run("--provider", "openai", "-p", "run the echo", env=both_env)
    assert result.rc == 0 and result.out == "It printed from-openai.\n", result.err
    sid = result.hint_id()
    messages = cli.messages(sid)
    assert messages[1]["content"][0] == {"type": "tool_use", "id": "call_1", "name": "bash", "input": {"command": "echo from-openai"}}
    assert messages[2]["content"][0]["tool_use_id"] == "call_1" and "from-openai" in messages[2]["content"][0]["content"]
    start = cli.records(sid)[0]
    assert (start["provider"], start["model"]) == ("openai", "gpt-4.1")
    second = openai_server.valid_requests[1]["messages"]
    assert [m["role"] for m in second] == ["system", "user", "assistant", "tool"]
    openai_server.assert_all_valid()


def test_an_anthropic_session_resumes_with_openai(cli, model_server, openai_server, both_env):
    model_server.script(anthropic_api.tool_use("grep", {"pattern": "test project"}, id="toolu_g"), "Found it in README.md.")
    first = cli.run("--provider", "anthropic", "-p", "find the title", env=both_env)
    assert first.rc == 0, first.err
    sid = first.hint_id()

    openai_server.script("The title is 'a test project'.")
    resumed = cli.run("--resume", sid, "--provider", "openai", "-p", "what is it?", env=both_env)
    assert resumed.rc == 0 and resumed.out == "The title is 'a test project'.\n", resumed.err
    sent = openai_server.valid_requests[-1]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "assistant", "user"]
    assert sent[2]["tool_calls"][0]["id"] == "toolu_g" and sent[3]["tool_call_id"] == "toolu_g"
    assert json.loads(sent[2]["tool_calls"][0]["function"]["arguments"]) == {"pattern": "test project"}
    assert sent[-1] == {"role": "user", "content": "what is it?"}
    new = cli.records(resumed.hint_id())
    assert new[0]["provider"] == "openai" and new[1]["type"] == "resume_marker"
    openai_server.assert_all_valid()
    model_server.assert_all_valid()


def test_an_openai_session_resumes_with_anthropic(cli, model_server, openai_server, both_env):
    openai_server.script(openai_api.tool_call("glob", {"pattern": "*.md"}, id="call_glob"), "One markdown file.")
    first = cli.run("--provider", "openai", "-p", "count markdown files", env=both_env)
    assert first.rc == 0, first.err

    model_server.script("Still one.")
    resumed = cli.run("--resume", first.hint_id(), "--provider", "anthropic", "-p", "and now?", env=both_env)
    assert resumed.rc == 0 and resumed.out == "Still one.\n", resumed.err
    sent = model_server.valid_requests[-1]["messages"]
    assert sent[1]["content"][0] == {"type": "tool_use", "id": "call_glob", "name": "glob", "input": {"pattern": "*.md"}}
    assert sent[2]["content"][0]["tool_use_id"] == "call_glob"
    assert plain(sent[-1:]) == plain([{"role": "user", "content": "and now?"}])
    model_server.assert_all_valid()
    openai_server.assert_all_valid()


def test_compaction_over_openai_forbids_tools_and_resume_starts_from_the_summary(cli, openai_server, both_env):
    def answer(body):
        return openai_api.text("S-openai") if body.get("tool_choice") == "none" else openai_api.text("ok")

    openai_server.default = answer
    first = cli.run("--provider", "openai", input="note the colour blue\n/compact\n", env=both_env)
    assert first.rc == 0 and "compaction #1, manual" in first.out, first.err
    turn_call, summary_call = openai_server.valid_requests[-2:]
    # The summary call is the conversation's next request (its prefix read from the cache) with tools forbidden.
    assert summary_call["tool_choice"] == "none" and summary_call["tools"] == turn_call["tools"]
    assert summary_call["messages"][:len(turn_call["messages"])] == turn_call["messages"]
    assert summary_call["messages"][-1]["role"] == "user" and "summar" in json.dumps(summary_call["messages"][-1])

    resumed = cli.run("--resume", first.hint_id("err"), "--provider", "openai", "-p", "which colour?", env=both_env)
    assert resumed.rc == 0, resumed.err
    sent = openai_server.valid_requests[-1]["messages"]
    assert sent[1] == {"role": "user", "content": "<previous-conversation-summary>\nS-openai\n</previous-conversation-summary>"}
    assert "note the colour blue" not in json.dumps(sent)
    openai_server.assert_all_valid()


def test_a_subagent_over_openai_writes_its_sidechain(cli, openai_server, both_env):
    def answer(body):
        if "task" not in tool_names(body):
            return openai_api.text("child report")
        if len(body["messages"]) == 2:  # system + the prompt
            return openai_api.tool_call("task", {"description": "look around", "prompt": "look"}, id="call_task")
        return openai_api.text("parent done")

    openai_server.default = answer
    result = cli.run("--provider", "openai", "-p", "delegate something", env=both_env)
    assert result.rc == 0 and result.out == "parent done\n", result.err
    main = cli.records(result.hint_id())
    end = next(r for r in main if r["type"] == "subagent_end")
    assert end["result"] == "child report" and end["agent_name"] == "look-around"
    side = cli.sessions_dir / result.hint_id() / end["subagent_path"]
    side_types = [json.loads(line)["type"] for line in side.read_text().splitlines()]
    assert side_types == ["session_start", "user", "assistant"]
    assert main[-2]["message"]["content"][0] == {"type": "tool_result", "tool_use_id": "call_task", "content": "child report"}
    openai_server.assert_all_valid()


def test_prompt_cache_key_is_the_resume_chains_first_session_and_clear_starts_a_new_one(cli, openai_server, both_env):
    """SPEC §12: `prompt_cache_key` is the resume chain's first session id, so a resume (of a resume) reads
    the cache its source wrote; `/clear` is a new conversation, with a key of its own."""
    env = {**both_env, "EVO_AGENT_PROMPT_CACHE_KEY": "1"}
    openai_server.script("one")
    first = cli.run("--provider", "openai", "-p", "first", env=env)
    assert first.rc == 0, first.err
    root = first.hint_id()
    openai_server.script("two")
    second = cli.run("--provider", "openai", "--resume", root, "-p", "second", env=env)
    assert second.rc == 0, second.err
    openai_server.script("three", "four")
    third = cli.run("--provider", "openai", "--resume", second.hint_id(), "--plain",
                    input="third\n/clear\nfourth\n/exit\n", env=env)
    assert third.rc == 0, third.err
    assert len(openai_server.requests) == 4  # each accepted as sent: none refused and sent again without it
    keys = [r.get("prompt_cache_key") for r in openai_server.valid_requests]
    assert keys[:3] == [root, root, root] and keys[3] not in (None, root), keys
    assert keys[3] == third.hint_id()
