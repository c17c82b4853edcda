"""MCP (SPEC §13) below the agent: configuration, names, results, and real servers on the official SDK
(tests/tools/mcp_test_server.py) over stdio and streamable HTTP on 127.0.0.1."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evo_agent.tools.mcp_client import McpCallError, McpManager, server_environment
from evo_agent.tools.mcp_config import McpConfigError, expand_server, load_servers, parse_server
from evo_agent.tools.mcp_tools import defs_of_server, result_of, tool_name

SERVER = str(Path(__file__).with_name("mcp_test_server.py"))


def _stdio(name: str = "t", **env: str):
    return expand_server(parse_server(name, {"command": sys.executable, "args": [SERVER], "env": env}, "user"), {})


# ---------------------------------------------------------------- configuration


def test_both_files_are_read_and_the_users_server_wins_a_name_clash(tmp_path):
    environ = {"XDG_CONFIG_HOME": str(tmp_path / "cfg"), "HOME": str(tmp_path)}
    user = tmp_path / "cfg" / "evo-agent" / "mcp.json"
    user.parent.mkdir(parents=True)
    user.write_text(json.dumps({"mcpServers": {"gh": {"command": "mine"}}}))
    project = tmp_path / "p"
    project.mkdir()
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {
        "gh": {"command": "theirs"}, "web": {"type": "http", "url": "http://127.0.0.1:9/mcp"}}}))
    loaded = load_servers(project, trusted=True, environ=environ)
    assert [(s.name, s.scope, s.command or s.url) for s in loaded.servers] == [
        ("gh", "user", "mine"), ("web", "project", "http://127.0.0.1:9/mcp")]
    untrusted = load_servers(project, trusted=False, environ=environ)
    assert [s.name for s in untrusted.servers] == ["gh"] and [s.name for s in untrusted.held] == ["web"]


@pytest.mark.parametrize("text, problem", [
    ("{not json", "not valid JSON"),
    ('["a"]', "not a JSON object"),
    ('{"mcpServers": []}', "mcpServers must be an object"),
])
def test_a_broken_file_is_one_line_and_nothing_raises(tmp_path, text, problem):
    (tmp_path / ".mcp.json").write_text(text)
    loaded = load_servers(tmp_path, trusted=True, environ={"XDG_CONFIG_HOME": str(tmp_path / "none")})
    assert loaded.servers == [] and len(loaded.problems) == 1 and problem in loaded.problems[0]


@pytest.mark.parametrize("entry, problem", [
    ({"args": ["x"]}, "needs a command"),
    ({"type": "http"}, "needs a url"),
    ({"type": "sse", "url": "http://x"}, "not supported"),
    ({"command": "x", "args": "not a list"}, "args must be a list"),
    ({"command": "x", "env": {"A": 1}}, "env must be an object of strings"),
])
def test_a_bad_entry_names_its_server(entry, problem):
    with pytest.raises(McpConfigError, match=problem) as caught:
        parse_server("srv", entry, "user")
    assert "'srv'" in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize("name", ["github__evil", "github_", "github.", "github._evil", "a/_b"])
def test_a_server_whose_tools_would_read_as_another_servers_is_refused(name):
    with pytest.raises(McpConfigError, match="may not contain `__`"):
        parse_server(name, {"command": "x"}, "user")
    assert not tool_name(name, "t").startswith("mcp__github__")


def test_variables_expand_with_defaults_and_become_secrets():
    config = parse_server("s", {"command": "${BIN:-node}", "args": ["--token=${TOK}"],
                                "env": {"API_KEY": "${TOK}", "MODE": "plain-value"}}, "user")
    expanded = expand_server(config, {"TOK": "t0ken-value-123"})
    assert expanded.command == "node" and expanded.args == ["--token=t0ken-value-123"]
    assert expanded.env == {"API_KEY": "t0ken-value-123", "MODE": "plain-value"}
    assert "t0ken-value-123" in expanded.secrets and "plain-value" not in expanded.secrets
    http = expand_server(parse_server("h", {"type": "http", "url": "http://x/${P:-mcp}",
                                            "headers": {"Authorization": "Bearer ${TOK}"}}, "user"),
                         {"TOK": "t0ken-value-123"})
    assert http.url == "http://x/mcp" and "Bearer t0ken-value-123" in http.secrets
    plain = expand_server(parse_server("p", {"type": "http", "url": "http://x/", "headers": {
        "X-Trace": "${HOME}", "X-Api-Key": "short", "Authorization": "Bearer ${GH_PAT}"}}, "user"),
        {"HOME": "/home/alice", "GH_PAT": "ghp_0123456789"})
    assert set(plain.secrets) == {"Bearer ghp_0123456789", "ghp_0123456789"}
    with pytest.raises(McpConfigError, match=r"\$\{MISSING\} is not set"):
        expand_server(parse_server("s", {"command": "${MISSING}"}, "user"), {})


@pytest.mark.parametrize("spelling", ["${ANTHROPIC_API_KEY}", "${OPENAI_API_KEY:-x}", "pre${EVO_AGENT_SYNC_URL}"])
def test_a_projects_file_cannot_hand_the_agents_credentials_to_a_server(spelling):
    config = parse_server("s", {"command": "x", "env": {"K": spelling}}, "project")
    with pytest.raises(McpConfigError, match="agent's own credentials"):
        expand_server(config, {"ANTHROPIC_API_KEY": "sk-ant-x", "OPENAI_API_KEY": "sk-x", "EVO_AGENT_SYNC_URL": "pg"})


def test_a_server_starts_in_home_or_the_trusted_project_or_its_cwd_and_finds_nothing_through_relative_path(tmp_path):
    from evo_agent.tools.mcp_client import server_directory

    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    environ = {"HOME": str(home)}
    assert server_directory("user", project, environ) == str(home)
    assert server_directory("user", project, {}) == "/"
    assert server_directory("user", tmp_path, environ) == "/"  # a project that holds the home directory
    assert server_directory("project", project, environ) == str(project)
    assert server_directory("user", project, environ, "srv") == str(home / "srv")
    assert server_directory("user", project, environ, "/opt/x") == "/opt/x"
    assert parse_server("s", {"command": "x", "cwd": "/opt/x"}, "user").as_json()["cwd"] == "/opt/x"
    path = f".::/usr/bin:bin:{project}/node_modules/.bin:/bin:"
    assert server_environment({}, {"PATH": path}, project=project)["PATH"] == "/usr/bin:/bin"


def test_a_server_gets_a_minimal_environment():
    env = server_environment({"MINE": "1"}, {"PATH": "/bin", "HOME": "/h", "ANTHROPIC_API_KEY": "sk",
                                             "AWS_SECRET_ACCESS_KEY": "x", "RANDOM_THING": "y"})
    assert env == {"PATH": "/bin", "HOME": "/h", "MINE": "1"}


# ---------------------------------------------------------------- names and results


@pytest.mark.parametrize("server, tool", [("git hub", "get.issue"), ("ü" * 40, "t" * 80), ("a", "b/c:d")])
def test_names_fit_the_api(server, tool):
    import re

    name = tool_name(server, tool)
    assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", name) and name.startswith("mcp__")


def test_a_kept_definition_is_its_own_name_and_keeps_no_read_only_mark():
    from evo_agent.tools.mcp_tools import McpToolDef

    kept = {"name": tool_name("gh", "get_issue"), "description": "d", "server": "gh", "tool": "get_issue",
            "input_schema": {"type": "object"}, "read_only": True}
    definition = McpToolDef.from_json(kept)
    assert definition is not None and definition.tool == "get_issue" and not definition.read_only
    assert McpToolDef.from_json({**kept, "tool": "delete_repo"}) is None


def test_a_result_keeps_text_images_and_is_error():
    png = "iVBORw0KGgo="
    result = result_of({"content": [{"type": "text", "text": "a"}, {"type": "image", "data": png, "mimeType": "image/png"},
                                    {"type": "image", "data": "x", "mimeType": "image/tiff"}], "isError": True})
    assert result.is_error and result.content.startswith("a\n[an image of type image/tiff")
    assert result.blocks == [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}}]


def test_a_long_result_keeps_its_head_and_tail():
    text = "HEAD" + "x" * 200_000 + "TAIL"
    result = result_of({"content": [{"type": "text", "text": text}]})
    assert result.content.startswith("HEAD") and result.content.endswith("TAIL") and len(result.content) <= 50_000
    assert "characters cut from the middle" in result.content


# ---------------------------------------------------------------- real servers


@pytest.fixture
def manager(tmp_path):
    made: list[McpManager] = []

    def make(*servers, **kw) -> McpManager:
        kw.setdefault("start_timeout", 120)  # an upper bound for a loaded machine, never a measurement
        m = McpManager(list(servers), tmp_path, environ={"PATH": os.environ["PATH"], "MCP_TEST_DIR": str(tmp_path)},
                       **kw)
        made.append(m)
        return m

    yield make
    for m in made:
        m.close()


def test_stdio_discovery_and_calls(manager, tmp_path):
    m = manager(_stdio(MCP_TEST_DIR=str(tmp_path), GIVEN="yes"))
    m.wait(150)
    (status,) = m.statuses()
    assert status.state == "connected", status.detail
    defs = {d.name: d for d in defs_of_server("t", status.tools)}
    assert {"mcp__t__echo", "mcp__t__add", "mcp__t__picture"} <= set(defs)
    assert defs["mcp__t__add"].read_only and not defs["mcp__t__echo"].read_only
    assert defs["mcp__t__echo"].input_schema["required"] == ["text"]
    assert result_of(m.call("t", "echo", {"text": "hi"})).content == "echo: hi"
    picture = result_of(m.call("t", "picture", {}))
    assert picture.blocks and picture.blocks[0]["source"]["media_type"] == "image/png"
    failed = result_of(m.call("t", "fail", {}))
    assert failed.is_error
    assert result_of(m.call("t", "env", {"name": "GIVEN"})).content == "yes"
    assert result_of(m.call("t", "env", {"name": "MCP_TEST_DIR"})).content == str(tmp_path)


def test_the_agents_credentials_never_reach_a_server(manager, tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-never-there")
    m = McpManager([_stdio()], tmp_path, start_timeout=120)  # the agent's own environment, credentials and all
    try:
        m.wait(150)
        assert result_of(m.call("t", "env", {"name": "ANTHROPIC_API_KEY"})).content == "(unset)"
    finally:
        m.close()


def test_a_server_that_crashes_mid_call_is_one_line_and_can_reconnect(manager):
    m = manager(_stdio())
    m.wait(150)
    with pytest.raises(McpCallError, match="failed during the call"):
        m.call("t", "crash", {})
    assert m.status("t").state == "failed" and "\n" not in m.status("t").detail
    with pytest.raises(McpCallError, match="not connected"):
        m.call("t", "echo", {"text": "x"})
    m.reconnect("t")
    m.wait(150)
    assert m.status("t").state == "connected"
    assert result_of(m.call("t", "echo", {"text": "back"})).content == "echo: back"


def test_a_server_that_dies_while_idle_is_shown_failed_at_once_and_can_reconnect(manager, tmp_path):
    import signal
    import threading

    changed = threading.Event()
    m = manager(_stdio(MCP_TEST_DIR=str(tmp_path)), on_change=lambda status: changed.set())
    m.wait(150)
    assert m.status("t").state == "connected"
    changed.clear()
    (started,) = tmp_path.glob("started.*")
    group = os.getpgid(int(started.name.split(".")[1]))
    assert group != os.getpgid(0)
    os.killpg(group, signal.SIGKILL)  # the server's own process group, nothing else
    assert changed.wait(120)  # an upper bound for a loaded machine, never a measurement
    status = m.status("t")
    assert status.state == "failed", status  # before: "connected" until the model's next call to it failed
    assert "exited while idle" in status.detail and "\n" not in status.detail
    with pytest.raises(McpCallError, match=r"not connected.*/mcp"):
        m.call("t", "echo", {"text": "x"})
    m.reconnect("t")
    m.wait(150)
    assert result_of(m.call("t", "echo", {"text": "back"})).content == "echo: back"


def test_a_call_that_never_answers_is_bounded_by_the_timeout(manager, tmp_path):
    m = manager(_stdio(MCP_TEST_DIR=str(tmp_path)), call_timeout=2)
    m.wait(150)
    with pytest.raises(McpCallError, match=r"did not answer within 2 s"):
        m.call("t", "hang", {})
    assert m.status("t").state == "connected"  # a slow call is not a dead server


def test_a_call_is_interrupted_by_the_cancel_event(manager, tmp_path):
    import threading

    m = manager(_stdio(MCP_TEST_DIR=str(tmp_path)))
    m.wait(150)
    cancel = threading.Event()

    def cancel_when_running() -> None:
        deadline = time.monotonic() + 60
        while not list(tmp_path.glob("hang.*")) and time.monotonic() < deadline:
            time.sleep(0.05)
        cancel.set()

    threading.Thread(target=cancel_when_running, daemon=True).start()
    with pytest.raises(McpCallError, match="interrupted"):
        m.call("t", "hang", {}, cancel=cancel)


def test_a_server_that_cannot_start_is_one_line(manager):
    bad = expand_server(parse_server("nope", {"command": "/nonexistent/mcp-server"}, "user"), {})
    good = _stdio("ok")
    m = manager(bad, good)
    m.wait(150)
    states = {s.name: s for s in m.statuses()}
    assert states["nope"].state == "failed" and states["nope"].detail and "\n" not in states["nope"].detail
    assert states["ok"].state == "connected"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def http_server(tmp_path):
    port = _free_port()
    proc = subprocess.Popen([sys.executable, SERVER, "--http", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env={**os.environ, "MCP_TEST_DIR": str(tmp_path)})
    deadline = time.monotonic() + 60
    while True:  # until it accepts connections (an upper bound, not a timing assertion)
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            assert proc.poll() is None and time.monotonic() < deadline, "the HTTP server did not start"
            time.sleep(0.1)
    yield f"http://127.0.0.1:{port}/mcp"
    proc.kill()
    proc.wait()


def test_streamable_http_discovery_and_a_call(manager, http_server):
    config = parse_server("web", {"type": "http", "url": http_server, "headers": {"X-Test": "${V:-1}"}}, "user")
    m = manager(expand_server(config, {}))
    m.wait(150)
    assert m.status("web").state == "connected", m.status("web").detail
    assert any(t["name"] == "echo" for t in m.status("web").tools)
    assert result_of(m.call("web", "echo", {"text": "over http"})).content == "echo: over http"


def test_a_server_that_exits_under_a_call_that_then_ends_well_is_shown_failed():
    """The process exits while a call is in flight, and the call ends without failing (its answer had arrived,
    or it was cancelled): no failing call stops the connection, so the hold itself must say the server exited."""
    import asyncio

    from evo_agent.tools.mcp_client import ServerExited, _hold

    async def scenario() -> None:
        proc = await asyncio.create_subprocess_exec(sys.executable, "-c", "pass")
        await proc.wait()  # the server is gone
        server = type("Server", (), {})()  # what _hold reads of a _Server
        server.stop, server.running, server.calls, server.stderr = asyncio.Event(), proc, 1, None
        hold = asyncio.ensure_future(_hold(server))
        for _ in range(50):  # let the hold see the exit with the call in flight
            await asyncio.sleep(0)
        server.calls -= 1  # the call ends well (what _call's `finally` does)
        with pytest.raises(ServerExited, match="exited while idle"):
            await asyncio.wait_for(hold, 60)  # an upper bound, never a measurement

    asyncio.run(scenario())
