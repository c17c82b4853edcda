"""A hostile or broken MCP server the user trusted cannot break evo-agent (SPEC §7, §9, §13).

The servers are real processes speaking raw JSON-RPC over stdio (tests/security/mcp_raw_server.py), for what
the SDK's own server will not do: malformed notifications, lines that are not JSON, answers to requests never
made, requests evo-agent never offered to serve, each carrying terminal escapes; a result far larger than any
result is kept. Whatever it sends, evo-agent prints no traceback and no escape, answers no request on its
behalf, keeps its memory bounded, and the session goes on; the honest server is the control.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.cli_runner import Cli, clean_env
from tests.fake_model_server import text, tool_use

RAW = str(Path(__file__).with_name("mcp_raw_server.py"))


def _cli(tmp_path: Path, model_server, *args: str, **env: str) -> Cli:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    cli = Cli(project, model_server.env(clean_env(home)))
    config = Path(cli.env["XDG_CONFIG_HOME"]) / "evo-agent" / "mcp.json"
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps({"mcpServers": {"raw": {"command": sys.executable, "args": [RAW, *args],
                                                         "env": env}}}))
    cli.env["EVO_AGENT_MCP_TIMEOUT"] = "120"  # upper bounds for a loaded machine, never measurements
    cli.env["EVO_AGENT_MCP_TOOL_TIMEOUT"] = "120"
    return cli


def _call_echo(cli: Cli, model_server) -> tuple[object, str]:
    model_server.script(tool_use("mcp__raw__echo", {"text": "hello"}, id="t1"), text("done"))
    result = cli.run("-p", "--allowed-tools", "mcp__raw__echo", "say hello", timeout=300)
    sent = [b for b in model_server.requests[-1]["messages"][-1]["content"] if b.get("type") == "tool_result"]
    return result, json.dumps(sent)


@pytest.mark.parametrize("mode", ["honest", "garbage"])
def test_a_server_that_sends_garbage_prints_no_traceback_and_no_escape(tmp_path, model_server, mode):
    log = tmp_path / "client-said.jsonl"
    cli = _cli(tmp_path, model_server, mode, MCP_RAW_LOG=str(log))
    result, sent = _call_echo(cli, model_server)
    assert result.rc == 0, result.err
    assert "echo: hello" in sent, "the control: the call's answer reaches the model"
    assert "Traceback" not in result.err and "\x1b" not in result.err + result.out, result.err
    said = [json.loads(line) for line in log.read_text().splitlines()]
    answers = [m for m in said if m.get("id") in (777, 778, 779)]
    assert all("error" in m for m in answers), answers  # nothing is done on the server's behalf


@pytest.fixture
def raw_manager(tmp_path):
    from evo_agent.tools.mcp_client import McpManager
    from evo_agent.tools.mcp_config import expand_server, parse_server

    made: list[McpManager] = []

    def make(*args: str, **env: str) -> McpManager:
        config = parse_server("raw", {"command": sys.executable, "args": [RAW, *args], "env": env}, "user")
        manager = McpManager([expand_server(config, {})], tmp_path, start_timeout=120, call_timeout=120)
        made.append(manager)
        manager.wait(150)  # upper bounds for a loaded machine, never measurements
        assert manager.status("raw").state == "connected", manager.status("raw").detail
        return manager

    yield make
    for manager in made:
        manager.close()


@pytest.mark.parametrize("mode", ["huge", "endless"])
def test_a_message_past_the_cap_ends_the_connection_and_says_why(raw_manager, monkeypatch, mode):
    """A 2 GB answer (one line, or no newline ever) would be held whole in memory, and was read by copying the
    line so far at every chunk (quadratic: 32 MB took longer than a call may). Past the cap (lowered here to
    1 MB, the server sending 3) the connection ends at once, saying why; the session goes on."""
    from evo_agent.tools import mcp_stdio
    from evo_agent.tools.mcp_client import McpCallError

    monkeypatch.setattr(mcp_stdio, "MAX_MESSAGE_BYTES", 1 << 20)
    manager = raw_manager(mode, "3072")
    with pytest.raises(McpCallError, match="larger than 1 MB") as caught:
        manager.call("raw", "echo", {"text": "hi"})
    assert "\n" not in str(caught.value) and "did not answer" not in str(caught.value)
    status = manager.status("raw")
    assert status.state == "failed" and "larger than 1 MB" in status.detail, status


def test_a_large_answer_under_the_cap_is_kept_head_and_tail(raw_manager, monkeypatch):
    """The control: an answer under the cap, in many chunks, is read whole and cut like bash output."""
    from evo_agent.tools import mcp_stdio
    from evo_agent.tools.mcp_tools import result_of

    monkeypatch.setattr(mcp_stdio, "MAX_MESSAGE_BYTES", 1 << 20)
    manager = raw_manager("huge", "900")
    result = result_of(manager.call("raw", "echo", {"text": "hi"}))
    assert result.content.startswith("xxx") and "characters cut from the middle" in result.content
    assert manager.status("raw").state == "connected"


SECRETS = {"github": "ghp_" + "a1B2c3D4e5" * 3 + "abcdef", "anthropic": "sk-ant-api03-" + "Zx9" * 30 + "AA",
           "aws": "AKIA" + "Q7RT2XKZ" * 2}


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_a_dying_servers_stderr_reaches_neither_transcript_nor_model(tmp_path, model_server, kind):
    secret = SECRETS[kind]
    cli = _cli(tmp_path, model_server, "dies", MCP_RAW_LAST_WORDS=f"fatal: login with {secret} failed \x1b]0;x\x07")
    result, sent = _call_echo(cli, model_server)
    assert result.rc == 0, result.err
    assert "failed during the call" in sent and secret not in sent, sent
    transcript = "".join(p.read_text() for p in cli.sessions_dir.glob("*/messages.jsonl"))
    assert "failed during the call" in transcript and secret not in transcript
    assert "fatal: login with" in result.err, "the control: the user is told the server's last words"
    assert "\x1b" not in result.err


@pytest.mark.parametrize("spelling", ["arrays", "objects", "schema"])
def test_a_kept_tool_list_nested_past_any_limit_is_one_line_not_a_traceback(tmp_path, model_server, spelling):
    """A session's mcp_tools.json is a file anyone could have edited (a planted session the user chose to
    resume): nesting deeper than Python's recursion limit made the resume's first request die in a traceback."""
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    cli = Cli(project, model_server.env(clean_env(home)))
    model_server.script(text("first"))
    first = cli.run("-p", "hi")
    assert first.rc == 0, first.err
    session = first.hint_id()
    deep = {"arrays": "[" * 50_000 + "]" * 50_000, "objects": '{"a":' * 50_000 + "1" + "}" * 50_000,
            "schema": '{"type": "object", "properties": {"q": ' + '{"items":' * 990 + "{}" + "}" * 990 + "}}"}[spelling]
    kept = '{"tools": [{"name": "mcp__gh__search", "server": "gh", "tool": "search", "description": "d", ' \
           f'"input_schema": {deep}}}, {{"name": "mcp__gh__other", "server": "gh", "tool": "other", ' \
           '"description": "d", "input_schema": {"type": "object"}}]}'
    (cli.sessions_dir / session / "mcp_tools.json").write_text(kept)
    model_server.script(text("second"))
    result = cli.run("--resume", session, "-p", "again")
    assert "Traceback" not in result.err and "RecursionError" not in result.err, result.err
    assert result.rc == 0 and result.out.strip() == "second", result.err


@pytest.mark.parametrize("count, kib", [(3000, 0), (1, 2048), (400, 8)])
def test_a_listing_past_the_budget_leaves_tools_out_and_the_session_goes_on(tmp_path, model_server, count, kib):
    """Thousands of tools, or schemas of megabytes, were all given to the model in every request: a request
    the API refuses (too long), for every request of the session and of its resumes (the list is kept). Past
    the budget a server's tools are left out, the user is told, and what fits is offered."""
    from evo_agent.tools.mcp_tools import MAX_SERVER_DEFINITIONS

    cli = _cli(tmp_path, model_server, "many", str(count), str(kib))
    result, sent = _call_echo(cli, model_server)
    assert result.rc == 0, result.err
    assert "echo: hello" in sent, "the control: the server's first tool is offered and answers"
    tools = [t for t in model_server.requests[-1]["tools"] if t["name"].startswith("mcp__raw__")]
    assert len(json.dumps(tools)) <= MAX_SERVER_DEFINITIONS + 4096
    assert "left out" in result.err and "raw" in result.err, result.err


def test_a_server_that_exits_under_a_call_leaving_its_stdout_open_fails_the_call(raw_manager, tmp_path, monkeypatch):
    """The server starts a process of its own session that holds its stdout, and exits: no end of the stream
    ever comes, so the call waited out the whole call timeout (120 s) with the server "connected". (The grace a
    call has to read an answer sent before the exit is cut from 5 s to 1 s here: none is sent, it is only waited.)"""
    import os
    import signal

    from evo_agent.tools import mcp_client
    from evo_agent.tools.mcp_client import McpCallError

    monkeypatch.setattr(mcp_client, "_EXIT_GRACE_S", 1.0)
    pids = tmp_path / "kept-alive.pids"
    manager = raw_manager("forks", MCP_RAW_PIDS=str(pids))
    try:
        with pytest.raises(McpCallError, match="failed during the call") as caught:
            manager.call("raw", "echo", {"text": "hi"})
        assert "did not answer" not in str(caught.value)
        status = manager.status("raw")
        assert status.state == "failed" and "exited under a call" in status.detail, status
    finally:
        for pid in pids.read_text().split() if pids.exists() else []:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass


@pytest.fixture
def raw_http(tmp_path):
    """A raw streamable-HTTP server in `mode` on 127.0.0.1, and a manager connected to it."""
    import socket
    import subprocess
    import time

    from evo_agent.tools.mcp_client import McpManager
    from evo_agent.tools.mcp_config import expand_server, parse_server

    started: list[subprocess.Popen] = []
    made: list[McpManager] = []

    def make(mode: str, kib: int = 0) -> McpManager:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        proc = subprocess.Popen([sys.executable, str(Path(RAW).with_name("mcp_raw_http_server.py")), str(port), mode,
                                 str(kib)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        started.append(proc)
        deadline = time.monotonic() + 60  # until it accepts connections: an upper bound, not a measurement
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, "the HTTP server did not start"
                time.sleep(0.05)
        config = parse_server("web", {"type": "http", "url": f"http://127.0.0.1:{port}/mcp"}, "user")
        manager = McpManager([expand_server(config, {})], tmp_path, start_timeout=120, call_timeout=120)
        made.append(manager)
        manager.wait(150)
        assert manager.status("web").state == "connected", manager.status("web").detail
        return manager

    yield make
    for manager in made:
        manager.close()
    for proc in started:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("mode", ["huge", "bomb"])
def test_an_http_servers_answer_is_bounded_as_sent(raw_http, monkeypatch, mode):
    """The SDK read an HTTP server's JSON answer whole, and httpx decoded a gzip body whatever was asked: 300 KB
    of gzip became 1.5 GB of evo-agent's memory. A body past the cap (lowered here to 1 MB) fails, and a
    compressed one is not decoded: the call fails with one line either way, and the server stays usable."""
    from evo_agent.tools import mcp_stdio
    from evo_agent.tools.mcp_client import McpCallError

    monkeypatch.setattr(mcp_stdio, "MAX_MESSAGE_BYTES", 1 << 20)
    manager = raw_http(mode, 3072)
    with pytest.raises(McpCallError, match="refused the call") as caught:
        manager.call("web", "echo", {"text": "hi"})
    assert "\n" not in str(caught.value) and "xxxx" not in str(caught.value)
    if mode == "huge":
        assert "larger than 1 MB" in str(caught.value)
    assert manager.status("web").state == "connected"


def test_an_honest_http_servers_answer_arrives(raw_http):
    from evo_agent.tools.mcp_tools import result_of

    manager = raw_http("honest")
    assert result_of(manager.call("web", "echo", {"text": "hi"})).content == "echo: hi"


def _deleted_files_held() -> list[int]:
    """The sizes of the unlinked files this process holds open (a server's stderr is one)."""
    import os

    sizes = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}").endswith("(deleted)"):
                sizes.append(os.fstat(int(fd)).st_size)
        except OSError:
            pass
    return sizes


def test_a_chatty_servers_stderr_cannot_fill_the_disk(raw_manager, monkeypatch):
    """A server's stderr went to a temporary file kept for its whole life, of which only the end is ever read:
    a server logging without end filled the disk. Past the cap (lowered here to 256 KB, the server writing
    2 MB) the file is cut back to its end, and its last line still says why it would fail."""
    from evo_agent.tools import mcp_client
    from evo_agent.tools.mcp_tools import result_of

    monkeypatch.setattr(mcp_client, "MAX_STDERR_BYTES", 256 << 10)
    manager = raw_manager("chatty", "2048")
    assert result_of(manager.call("raw", "echo", {"text": "hi"})).content == "echo: hi"
    held = _deleted_files_held()
    assert held and max(held) <= (256 << 10) + 4096, held
    assert mcp_client._last_stderr_line(manager._servers["raw"].stderr) == "the last line"


@pytest.mark.parametrize("mode", ["deep", "not-utf8", "id-last"])
def test_an_answer_that_cannot_be_read_fails_its_call_at_once(raw_manager, mode):
    """An answer naming the call's id that no parser takes (nested past pydantic's limit, not UTF-8, a trailing
    comma) was dropped as an unreadable line: the call waited out the whole call timeout (120 s). It is that
    call's error answer now, and the server stays connected."""
    from evo_agent.tools.mcp_client import McpCallError

    manager = raw_manager(mode)
    with pytest.raises(McpCallError, match="could not be read") as caught:
        manager.call("raw", "echo", {"text": "hi"})
    assert "did not answer" not in str(caught.value) and "\n" not in str(caught.value)
    assert manager.status("raw").state == "connected"


@pytest.mark.parametrize("mode", ["bad-shape", "not-a-list"])
def test_an_answer_that_is_no_tool_result_fails_its_call_not_the_server(raw_manager, mode):
    """JSON that is no CallToolResult was taken for a broken connection: the server was disconnected until the
    user reconnected it, and the line the model got was pydantic's dump of the server's values (escapes and
    all). The call fails with one short line; the server stays connected."""
    from evo_agent.tools.mcp_client import McpCallError

    manager = raw_manager(mode)
    with pytest.raises(McpCallError, match="not a tool result") as caught:
        manager.call("raw", "echo", {"text": "hi"})
    line = str(caught.value)
    assert "\n" not in line and "\x1b" not in line and "input_value" not in line and len(line) < 400, line
    assert manager.status("raw").state == "connected"


def test_a_server_asking_for_the_model_the_user_or_the_roots_is_refused(tmp_path, model_server):
    """Server-to-client requests (sampling/createMessage, elicitation/create, roots/list) are refused: no request
    reaches the user's model on a server's behalf, the user is never asked, no path is disclosed. A ping is
    answered (it discloses nothing). A guard: evo-agent offers none of these capabilities."""
    log = tmp_path / "client-said.jsonl"
    cli = _cli(tmp_path, model_server, "asks", MCP_RAW_LOG=str(log))
    result, sent = _call_echo(cli, model_server)
    assert result.rc == 0, result.err
    assert "echo: hello" in sent, "the control: the call's answer reaches the model"
    assert len(model_server.requests) == 2, "a request reached the model on the server's behalf"
    said = [json.loads(line) for line in log.read_text().splitlines()]
    initialize = next(m for m in said if m.get("method") == "initialize")
    assert not {"sampling", "elicitation", "roots"} & set(initialize["params"].get("capabilities") or {})
    answers = {m["id"]: m for m in said if m.get("id") in (901, 902, 903, 904)}
    assert all("error" in answers[i] and "result" not in answers[i] for i in (901, 902, 903)), answers
    assert "result" in answers[904]
    assert str(tmp_path) not in json.dumps([answers[i] for i in (901, 902, 903)])
