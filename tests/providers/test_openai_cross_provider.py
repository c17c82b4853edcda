"""A history written through one provider is accepted by the other (provider level; the CLI's
`--resume ID --provider openai` scenario builds on this)."""

from __future__ import annotations

import pytest

from evo_agent.providers.anthropic_provider import AnthropicProvider
from evo_agent.providers.base import INVALID_ARGUMENTS_KEY
from evo_agent.providers.openai_provider import OpenAIProvider
from tests.api_rules import check_request
from tests.fake_model_server import reply as a_reply
from tests.fake_model_server import text as a_text
from tests.fake_model_server import thinking, tool_use
from tests.fake_openai_server import reasoning, reply, tool_call

TOOLS = [
    {"name": "bash", "description": "run", "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}},
    {"name": "glob", "description": "find", "input_schema": {"type": "object", "properties": {"pattern": {"type": "string"}}, "required": ["pattern"]}},
]


@pytest.fixture(autouse=True)
def _no_real_credentials(monkeypatch):
    for key in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(key, raising=False)


def answer_tools(message: dict) -> dict:
    """What the agent loop does after an assistant turn: one tool_result per tool_use, in order."""
    results = []
    for block in message["content"]:
        if block["type"] != "tool_use":
            continue
        if INVALID_ARGUMENTS_KEY in block["input"]:  # the tool runner refuses it (tests/tools/test_registry.py)
            problem = f"the arguments of this {block['name']} call were not one JSON object; nothing was run"
            results.append({"type": "tool_result", "tool_use_id": block["id"], "content": problem, "is_error": True})
        else:
            results.append({"type": "tool_result", "tool_use_id": block["id"], "content": f"ran {block['name']}"})
    return {"role": "user", "content": results}


def test_an_openai_session_continues_with_anthropic(openai_server, model_server):
    openai_server.script(
        # what local servers really send: odd ids, a missing id, reasoning, whitespace text, broken JSON
        reply(reasoning("think"), "\n\n", tool_call("bash", {"command": "ls"}, id="functions.bash:0"), tool_call("glob", {"pattern": "*"}, id="")),
        reply(tool_call("bash", raw='{"command": "ls', id="functions.bash:0")),  # the same id again
        reply("All done."),
    )
    openai = OpenAIProvider("local", api_key="k", base_url=openai_server.base_url)
    history = [{"role": "user", "content": "look around"}]
    for _ in range(3):
        response = openai.complete(system="sys", messages=history, tools=TOOLS)
        history.append(response.message)
        if response.stop_reason == "tool_use":
            history.append(answer_tools(response.message))
    openai_server.assert_all_valid()
    history.append({"role": "user", "content": "now with the other model"})
    check_request(history)

    model_server.script(a_text("Continuing."))
    anthropic = AnthropicProvider("claude-test", api_key="k", base_url=model_server.base_url)
    assert anthropic.complete(system="sys", messages=history, tools=TOOLS).message["content"] == [{"type": "text", "text": "Continuing."}]
    model_server.assert_all_valid()  # ids, names, inputs and text blocks as the Messages API wants them
    assert model_server.requests[0]["messages"] == history


def test_an_anthropic_session_continues_with_openai(openai_server, model_server):
    model_server.script(
        a_reply(thinking("plan", "sig-1"), a_text("Let me check."), tool_use("bash", {"command": "ls"}), tool_use("glob", {"pattern": "*.py"})),
        a_text("Two files."),
    )
    anthropic = AnthropicProvider("claude-test", api_key="k", base_url=model_server.base_url)
    history = [{"role": "user", "content": "what is here?"}]
    first = anthropic.complete(system="sys", messages=history, tools=TOOLS)
    history += [first.message, answer_tools(first.message)]
    history.append(anthropic.complete(system="sys", messages=history, tools=TOOLS).message)
    model_server.assert_all_valid()
    history.append({"role": "user", "content": "and now?"})

    openai_server.script(reply("Still two files."))
    openai = OpenAIProvider("local", api_key="k", base_url=openai_server.base_url)
    assert openai.complete(system="sys", messages=history, tools=TOOLS).message["content"] == [{"type": "text", "text": "Still two files."}]
    openai_server.assert_all_valid()
    sent = openai_server.requests[0]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "tool", "assistant", "user"]
    assert sent[2]["content"] == "Let me check." and [c["function"]["name"] for c in sent[2]["tool_calls"]] == ["bash", "glob"]
