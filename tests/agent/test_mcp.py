"""MCP tools inside the agent (SPEC §12, §13): rules, approval like bash, the list fixed at the first request,
a late server announced in a reminder (never spliced into the tools), `/mcp`."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from evo_agent.agent.events import Notice, Retrying, TurnEvent
from evo_agent.agent.permissions import Policy
from evo_agent.agent.rules import Rule, RuleError, parse_rules
from evo_agent.tools.approval import ApprovalDecision
from evo_agent.tools.mcp_client import McpManager
from evo_agent.tools.mcp_config import expand_server, parse_server
from tests.builders import make_agent, server_provider
from tests.builders import read_records as records
from tests.fake_model_server import text, tool_use

SERVER = str(Path(__file__).parents[1] / "tools" / "mcp_test_server.py")


def test_mcp_rules_parse_and_cover():
    exact, star, bare = parse_rules("mcp__gh__get_issue,mcp__gh__*,mcp__web")
    assert str(exact) == "mcp__gh__get_issue" and Rule.parse(str(star)) == star
    assert exact.covers_tool("mcp__gh__get_issue") and not exact.covers_tool("mcp__gh__get_issues")
    assert star.covers_tool("mcp__gh__create_pr") and not star.covers_tool("mcp__ghx__a")
    assert bare.covers_tool("mcp__web__fetch") and not bare.covers_tool("mcp__webx__fetch")
    assert not exact.covers_command("mcp__gh__get_issue")
    for bad in ("mcp__gh(x)", "mcp__gh__a b", "mcp__gh;rm"):
        with pytest.raises(RuleError):
            Rule.parse(bad)


@pytest.mark.parametrize("mode, expected", [("ask", "ask"), ("accept-edits", "ask"), ("read-only", "deny"),
                                            ("bypass", "allow")])
def test_an_mcp_tool_is_treated_like_bash(project, mode, expected):
    policy = Policy(project, mode)
    verdict = policy.check("mcp__gh__create_pr", {"title": "x"})
    assert verdict.action == expected
    if expected == "ask":
        assert str(verdict.suggestion) == "mcp__gh__create_pr"
    policy.read_only_tools = {"mcp__gh__create_pr"}
    assert policy.check("mcp__gh__create_pr", {}).action == "allow"
    ruled = Policy(project, mode, parse_rules("mcp__gh__*"))
    assert ruled.check("mcp__gh__create_pr", {}).action == ("deny" if mode == "read-only" else "allow")


def _manager(project, tmp_path, **env) -> McpManager:
    config = parse_server("t", {"command": sys.executable, "args": [SERVER], "env": env}, "user")
    return McpManager([expand_server(config, {})], project, start_timeout=120)


def test_asked_then_always_for_the_session(project, tmp_path, model_server):
    model_server.script(tool_use("mcp__t__echo", {"text": "a"}, id="t1"), tool_use("mcp__t__echo", {"text": "b"}, id="t2"),
                        text("done"))
    agent, _ = make_agent(project, server_provider(model_server), mode="ask", mcp=_manager(project, tmp_path))
    asked = []

    class Front:
        def on_approval(self, request):
            asked.append(request)
            return ApprovalDecision("always-session")

    try:
        agent.run_turn("echo twice", Front())
    finally:
        agent.close()
    assert [r.summary for r in asked] == ["call mcp__t__echo"] and '"text": "a"' in asked[0].detail
    results = [r["messages"][-1]["content"][0]["content"] for r in model_server.requests[1:]]
    assert results == ["echo: a", "echo: b"]
    perms = [r["rule"] for r in records(agent.recorder.path) if r["type"] == "permission"]
    assert perms == ["user: always in this session mcp__t__echo", "rule mcp__t__echo"]


def test_a_server_that_connects_late_is_announced_not_added(project, tmp_path, model_server):
    ready = tmp_path / "ready"
    manager = _manager(project, tmp_path, MCP_TEST_REQUIRE=str(ready))
    model_server.script(text("first"), text("second"))
    agent, _ = make_agent(project, server_provider(model_server), mode="ask", mcp=manager)
    told = []

    class Front:
        def on_event(self, event: TurnEvent):
            if isinstance(event, Notice | Retrying):
                told.append(event.text)

    try:
        agent.run_turn("hi", Front())
        assert manager.status("t").state == "failed"
        assert "t (user, stdio) — failed: " in agent.mcp_text() and "does not exist" in agent.mcp_text()
        assert len(told) == 1 and told[0].startswith("evo-agent: MCP server t failed: "), told
        ready.touch()
        assert agent.mcp_reconnect("t") == "MCP server t: connected"
        agent.run_turn("again")
    finally:
        agent.close()
    first, second = model_server.requests
    assert first["tools"] == second["tools"] and not any(t["name"].startswith("mcp__") for t in first["tools"])
    sent = second["messages"][-1]["content"]
    assert any("connected after this session's tools were fixed" in b.get("text", "") for b in sent)
    reminders = [r for r in records(agent.recorder.path) if r["type"] == "reminder" and r["reason"] == "mcp_late"]
    assert len(reminders) == 1


def test_clear_fixes_a_new_list(project, tmp_path, model_server):
    ready = tmp_path / "ready"
    manager = _manager(project, tmp_path, MCP_TEST_REQUIRE=str(ready))
    model_server.script(text("first"), text("second"))
    agent, _ = make_agent(project, server_provider(model_server), mode="ask", mcp=manager)
    try:
        agent.run_turn("hi")
        ready.touch()
        agent.mcp_reconnect("t")
        agent.clear()
        agent.run_turn("fresh")
    finally:
        agent.close()
    assert "mcp__t__echo" in [t["name"] for t in model_server.requests[1]["tools"]]
    assert "mcp__t__echo" in model_server.requests[1]["system"][0]["text"]


def test_a_subagent_gets_the_sessions_mcp_tools(project, tmp_path, model_server):
    def answer(body):
        names = {t["name"] for t in body["tools"]}
        child = "task" not in names
        last = body["messages"][-1]["content"]
        done = isinstance(last, list) and any(b.get("type") == "tool_result" for b in last)
        if child:
            assert "mcp__t__echo" in names
            return text("child done") if done else tool_use("mcp__t__echo", {"text": "from the child"})
        if done:
            return text("parent done")
        return tool_use("task", {"description": "helper", "prompt": "use echo"})

    model_server.default = answer
    agent, _ = make_agent(project, server_provider(model_server), mode="bypass", mcp=_manager(project, tmp_path))
    try:
        result = agent.run_turn("delegate")
    finally:
        agent.close()
    assert result.text == "parent done"
    child_results = [b for r in model_server.requests if "task" not in {t["name"] for t in r["tools"]}
                     for m in r["messages"] if isinstance(m["content"], list)
                     for b in m["content"] if b.get("type") == "tool_result"]
    assert child_results and child_results[0]["content"] == "echo: from the child"


def test_mcp_without_servers_fits_an_80_column_terminal(project):
    """The app lets the terminal wrap text (ids and paths stay copyable), which breaks a long line mid-word."""
    from rich.cells import cell_len

    from tests.scripted_provider import ScriptedProvider

    agent, _ = make_agent(project, ScriptedProvider())
    try:
        text = agent.mcp.describe()
    finally:
        agent.close()
    assert "evo-agent mcp add NAME -- COMMAND" in text
    assert [line for line in text.splitlines() if cell_len(line) > 80] == []


def test_mcp_with_every_server_refused_at_launch_does_not_say_none_is_configured(project, monkeypatch, tmp_path):
    """A `.mcp.json` whose servers were all refused at launch (an untrusted clone, a variable unset): `/mcp` said
    "No MCP servers are configured. Add one with …", as if the file were not there."""
    from tests.scripted_provider import ScriptedProvider

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    (project / ".mcp.json").write_text('{"mcpServers": {"docs": {"command": "${NOT_SET_ANYWHERE}"}}}')
    agent, _ = make_agent(project, ScriptedProvider())
    try:
        text = agent.mcp.describe()
    finally:
        agent.close()
    assert "No MCP server was started: the lines printed at launch say why" in text
    assert "No MCP servers are configured" not in text


def test_the_conversations_image_bytes_cap_leaves_out_what_would_pass_it():
    from evo_agent.agent.mcp_context import MAX_CONVERSATION_IMAGE_BYTES, cap_images

    def result(tool_id: str, size: int) -> dict:
        image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "A" * size}}
        return {"type": "tool_result", "tool_use_id": tool_id, "content": [{"type": "text", "text": "(1 image)"}, image]}

    held = [{"role": "user", "content": [result("a", MAX_CONVERSATION_IMAGE_BYTES - 100)]}]
    small, big = result("b", 100), result("c", 1)
    assert cap_images(held, [small]) == [small]  # exactly at the cap: still shown
    capped = cap_images(held, [small, big])
    assert capped[0] == small and capped[1]["content"][1]["type"] == "text"
    assert "already holds 2 images" in capped[1]["content"][1]["text"]
    assert cap_images([], [big]) == [big]  # after a compaction the count starts again
    plain_results = [{"type": "tool_result", "tool_use_id": "d", "content": "text"}]
    assert cap_images(held, plain_results) is plain_results
