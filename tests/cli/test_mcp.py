"""MCP servers through the command line (SPEC §13): `evo-agent mcp …`, calls and their approval in print mode,
secrets kept off disk, resumes when the server is gone, the trust gate of a cloned `.mcp.json`, and a
`kill -9` of the agent with a call in flight. The servers are real (tests/tools/mcp_test_server.py)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.fake_model_server import reply, text, tool_use

SERVER = str(Path(__file__).parents[1] / "tools" / "mcp_test_server.py")


@pytest.fixture(autouse=True)
def _generous_start(cli):
    """A server's start is bounded, not timed: a loaded machine gets as long as it needs (within reason)."""
    cli.env["EVO_AGENT_MCP_TIMEOUT"] = "120"


def _user_config(cli) -> Path:
    return Path(cli.env["XDG_CONFIG_HOME"]) / "evo-agent" / "mcp.json"


def _configure(cli, **servers: dict) -> None:
    path = _user_config(cli)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers}))


def _test_server(**env: str) -> dict:
    return {"command": sys.executable, "args": [SERVER], "env": env}


def _tool_names(request: dict) -> list[str]:
    return [t["name"] for t in request["tools"]]


def _results(message: dict) -> list[dict]:
    return [b for b in message["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]


# ---------------------------------------------------------------- evo-agent mcp


def test_add_list_get_remove_like_claude_mcp(cli):
    added = cli.run("mcp", "add", "-e", "TOKEN=${GH_TOKEN}", "gh", "--", "npx", "-y", "server-github")
    assert added.rc == 0, added.err
    data = json.loads(_user_config(cli).read_text())
    assert data == {"mcpServers": {"gh": {"command": "npx", "args": ["-y", "server-github"],
                                          "env": {"TOKEN": "${GH_TOKEN}"}}}}
    assert oct(_user_config(cli).stat().st_mode & 0o777) == "0o600"
    web = cli.run("mcp", "add", "--transport", "http", "--scope", "project", "-H", "Authorization: Bearer x",
                  "web", "http://127.0.0.1:9/mcp")
    assert web.rc == 0, web.err
    assert json.loads((cli.project / ".mcp.json").read_text())["mcpServers"]["web"]["type"] == "http"
    listed = cli.run("mcp", "list")
    assert listed.rc == 0
    assert "gh: npx -y server-github (stdio, user)" in listed.out
    assert "web: http://127.0.0.1:9/mcp (http, project)" in listed.out and "not trusted" in listed.out
    got = cli.run("mcp", "get", "web")
    assert "Headers: Authorization (values hidden)" in got.out and "Bearer" not in got.out
    assert cli.run("mcp", "remove", "gh").rc == 0
    assert json.loads(_user_config(cli).read_text()) == {"mcpServers": {}}
    missing = cli.run("mcp", "get", "gh")
    assert missing.rc == 1 and missing.err_lines == ["evo-agent: mcp: no server named 'gh' (see evo-agent mcp list)"]


def test_a_bad_config_is_one_line_and_a_non_zero_exit(cli):
    _user_config(cli).parent.mkdir(parents=True)
    _user_config(cli).write_text("{broken")
    result = cli.run("mcp", "list")
    assert result.rc == 1 and len(result.err_lines) == 1 and "not valid JSON" in result.err
    usage = cli.run("mcp", "add", "x")
    assert usage.rc == 2 and len(usage.err_lines) == 1


def test_a_bad_server_in_a_session_is_one_line_and_the_session_goes_on(cli, model_server):
    _configure(cli, broken={"command": "/nonexistent/mcp-server"}, unset={"command": "${NOT_SET_ANYWHERE}"})
    model_server.script(reply(text("fine")))
    result = cli.run("-p", "hi")
    assert result.rc == 0 and result.out == "fine\n", result.err
    assert any("NOT_SET_ANYWHERE" in line and "not started" in line for line in result.err_lines)
    assert any(line.startswith("evo-agent: MCP server broken failed:") for line in result.err_lines)
    assert "Traceback" not in result.err


def test_a_server_that_never_answers_is_one_line_and_the_request_goes_out(cli, model_server):
    """SPEC §13: a server that fails is one line. One that never answers its handshake fails at the start
    timeout; the first request waits for that, and the user reads why once (not 'still starting', then 'failed').
    It reads what it is sent and never answers, and exits when its stdin closes (one that slept instead made
    every run wait out the 2 s stop grace at exit, which nothing here asserts)."""
    _configure(cli, mute={"command": sys.executable, "args": ["-c", "import sys; sys.stdin.read()"]})
    model_server.script(reply(text("fine")))
    result = cli.run("-p", "hi", env={**cli.env, "EVO_AGENT_MCP_TIMEOUT": "1"})
    assert result.rc == 0 and result.out == "fine\n", result.err
    said = [line for line in result.err_lines if "MCP server mute" in line]
    assert said == ["evo-agent: MCP server mute failed: did not start within 1 s (EVO_AGENT_MCP_TIMEOUT); "
                    "/mcp shows it and reconnects"], result.err


# ---------------------------------------------------------------- calls


def test_a_call_asks_like_bash_refused_in_print_mode_unless_a_rule_allows_it(cli, model_server):
    _configure(cli, t=_test_server())
    model_server.script(reply(tool_use("mcp__t__echo", {"text": "hi"})), reply(text("could not")))
    refused = cli.run("-p", "echo hi")
    assert refused.rc == 0, refused.err
    (result,) = _results(model_server.valid_requests[1]["messages"][-1])
    assert result["is_error"] is True and "needs the user's approval" in result["content"]
    assert any('--allowed-tools mcp__t__echo' in line for line in refused.err_lines)

    model_server.reset()
    model_server.script(reply(tool_use("mcp__t__echo", {"text": "hi"})), reply(text("done")))
    allowed = cli.run("-p", "echo hi", "--allowed-tools", "mcp__t__*")
    assert allowed.rc == 0 and allowed.out == "done\n", allowed.err
    first, second = model_server.valid_requests
    assert {"mcp__t__echo", "mcp__t__add", "mcp__t__hang"} <= set(_tool_names(first))
    (result,) = _results(second["messages"][-1])
    assert result["content"] == "echo: hi" and "is_error" not in result
    permission = [r for r in cli.records(allowed.hint_id()) if r["type"] == "permission"]
    assert permission[0]["rule"] == "rule mcp__t__*"


def test_read_only_hint_runs_unasked_only_when_the_user_trusts_it(cli, model_server):
    for trusted, expected in ((False, True), (True, False)):
        server = _test_server()
        if trusted:
            server["trustReadOnlyHint"] = True
        _configure(cli, t=server)
        model_server.reset()
        model_server.script(reply(tool_use("mcp__t__add", {"a": 2, "b": 3})), reply(text("ok")))
        result = cli.run("-p", "add", "--permission-mode", "read-only")
        assert result.rc == 0, result.err
        (block,) = _results(model_server.valid_requests[1]["messages"][-1])
        assert block.get("is_error", False) is expected, block
        if not expected:
            assert block["content"] == "5"


def test_expanded_values_never_reach_the_transcript(cli, model_server):
    secret = "ghp_" + "Zx81" * 9
    _configure(cli, t=_test_server(GITHUB_TOKEN="${MY_GH_TOKEN}"))
    model_server.script(reply(tool_use("mcp__t__env", {"name": "GITHUB_TOKEN"})), reply(text("seen")))
    result = cli.run("-p", "show the token", "--allowed-tools", "mcp__t__env", env={**cli.env, "MY_GH_TOKEN": secret})
    assert result.rc == 0, result.err
    session_dir = cli.sessions_dir / result.hint_id()
    for path in session_dir.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path
    (block,) = _results(model_server.valid_requests[1]["messages"][-1])
    assert secret not in json.dumps(block)


def test_a_resume_after_the_server_was_removed_sends_the_same_tools_and_the_call_fails_cleanly(cli, model_server):
    _configure(cli, t=_test_server())
    model_server.script(reply(tool_use("mcp__t__echo", {"text": "one"})), reply(text("first done")))
    first = cli.run("-p", "first", "--allowed-tools", "mcp__t__*")
    assert first.rc == 0, first.err
    tools_then = model_server.valid_requests[0]["tools"]
    system_then = model_server.valid_requests[0]["system"]

    assert cli.run("mcp", "remove", "t").rc == 0
    model_server.reset()
    model_server.script(reply(tool_use("mcp__t__echo", {"text": "two"})), reply(text("it is gone")))
    again = cli.run("--resume", first.hint_id(), "-p", "again", "--allowed-tools", "mcp__t__*")
    assert again.rc == 0 and again.out == "it is gone\n", again.err
    resumed = model_server.valid_requests[0]
    assert resumed["tools"] == tools_then and resumed["system"] == system_then  # the same prefix bytes
    (block,) = _results(model_server.valid_requests[1]["messages"][-1])
    assert block["is_error"] is True and "not configured any more" in block["content"]

    model_server.reset()
    model_server.script(reply(text("still fine")))
    third = cli.run("--resume", again.hint_id(), "-p", "and again")
    assert third.rc == 0, third.err
    assert model_server.valid_requests[0]["tools"] == tools_then
    model_server.reset()  # a rewind of the first session, the server still gone: its tools again
    model_server.script(reply(text("rewound")))
    rewound = cli.run("--resume", first.hint_id(), "--at", "1", "-p", "from the start")
    assert rewound.rc == 0, rewound.err
    assert model_server.valid_requests[0]["tools"] == tools_then

    model_server.reset()  # compacted on the way in (a tiny threshold): the summary, then the same tools
    model_server.script(reply(text("the summary")), reply(text("compacted")))
    compacted = cli.run("--resume", again.hint_id(), "-p", "after compaction",
                        env={**cli.env, "EVO_AGENT_COMPACT_CHARS": "200"})
    assert compacted.rc == 0 and compacted.out == "compacted\n", compacted.err
    assert model_server.valid_requests[-1]["tools"] == tools_then
    for fmt in ("md", "jsonl"):
        exported = cli.run("sessions", "export", again.hint_id(), "--format", fmt)
        assert exported.rc == 0 and "mcp__t__echo" in exported.out, exported.err


def test_a_resume_with_its_server_still_configured_says_nothing_false_and_the_call_waits_for_it(cli, model_server):
    """The resumed session offers its source's tools at once and its server connects meanwhile: a call waits
    for it. Nothing may tell the user its tools need a new session (/clear): they are this session's."""
    _configure(cli, t=_test_server())
    model_server.script(reply(text("first done")))
    first = cli.run("-p", "first")
    assert first.rc == 0, first.err
    model_server.script(reply(tool_use("mcp__t__echo", {"text": "again"})), reply(text("echoed")))
    again = cli.run("-c", "-p", "again", "--allowed-tools", "mcp__t__*")
    assert again.rc == 0 and again.out == "echoed\n", again.err
    (block,) = _results(model_server.valid_requests[-1]["messages"][-1])
    assert block["content"] == "echo: again" and "is_error" not in block
    assert not any("/clear" in line for line in again.err_lines), again.err


def test_stream_json_init_lists_the_sessions_tools_with_its_mcp_tools(cli, model_server):
    """The init event says which tools the session has: the very names its requests offer, `mcp__t__…` included."""
    _configure(cli, t=_test_server())
    model_server.script(reply(text("hi")))
    result = cli.run("-p", "x", "--output-format", "stream-json")
    assert result.rc == 0, result.err
    init = json.loads(result.out_lines[0])
    assert init["subtype"] == "init" and init["tools"] == _tool_names(model_server.valid_requests[0])
    assert "mcp__t__echo" in init["tools"]


def test_a_resume_of_a_session_without_servers_keeps_its_tools_when_a_server_was_added_since(cli, model_server):
    """SPEC §12: a resumed session's first request repeats its source's prefix byte for byte (the tools
    were fixed at the source's start), so a server added since does not change them; a new session gets it."""
    model_server.script(reply(text("first done")))
    first = cli.run("-p", "first")
    assert first.rc == 0, first.err
    tools_then, system_then = model_server.valid_requests[0]["tools"], model_server.valid_requests[0]["system"]
    assert not any(name.startswith("mcp__") for name in _tool_names(model_server.valid_requests[0]))

    _configure(cli, t=_test_server())
    model_server.reset()
    model_server.script(reply(text("resumed")))
    again = cli.run("--resume", first.hint_id(), "-p", "again")
    assert again.rc == 0 and again.out == "resumed\n", again.err
    resumed = model_server.valid_requests[0]
    assert resumed["tools"] == tools_then and resumed["system"] == system_then
    assert any(line.startswith("evo-agent: MCP server t is not among this resumed conversation's tools")
               for line in again.err_lines), again.err
    model_server.reset()  # and so does a resume of the resumed session
    model_server.script(reply(text("resumed twice")))
    third = cli.run("--resume", again.hint_id(), "-p", "and again")
    assert third.rc == 0, third.err
    assert model_server.valid_requests[0]["tools"] == tools_then

    model_server.reset()
    model_server.script(reply(text("new")))
    fresh = cli.run("-p", "a new session")
    assert fresh.rc == 0, fresh.err
    assert "mcp__t__echo" in _tool_names(model_server.valid_requests[0])


# ---------------------------------------------------------------- trust


def test_a_cloned_mcp_json_starts_nothing_until_the_user_trusts_it(cli, model_server, tmp_path):
    marker = tmp_path / "server-ran"
    origin = tmp_path / "origin"
    origin.mkdir()
    (origin / ".mcp.json").write_text(json.dumps({"mcpServers": {"evil": {
        "command": sys.executable, "args": [SERVER], "env": {"MCP_TEST_MARKER": str(marker)}}}}))
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]
    subprocess.run([*git, "init", "-q"], cwd=origin, check=True)
    subprocess.run([*git, "add", ".mcp.json"], cwd=origin, check=True)
    subprocess.run([*git, "commit", "-qm", "servers"], cwd=origin, check=True)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(origin), str(clone)], check=True)
    cli.project = clone
    cli.sessions_dir = clone / ".evo-agent" / "sessions"

    for args in (("-p", "hi"), ("mcp", "list"), ("--plain",)):
        model_server.script(reply(text("hello")))
        result = cli.run(*args, input="hi\n")
        assert result.rc == 0, result.err
        assert not marker.exists(), f"{args}: a server of an untrusted .mcp.json ran"
    assert all(not n.startswith("mcp__") for r in model_server.valid_requests for n in _tool_names(r))
    assert "not trusted" in cli.run("mcp", "list").out

    cli.trust()
    model_server.reset()
    model_server.script(reply(text("hello")))
    result = cli.run("-p", "hi")
    assert result.rc == 0, result.err
    assert marker.exists()
    assert "mcp__evil__echo" in _tool_names(model_server.valid_requests[0])


# ---------------------------------------------------------------- kill -9


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def test_kill_9_of_the_agent_with_a_call_in_flight_leaves_no_server_running(cli, model_server, tmp_path):
    where = tmp_path / "mcp"
    where.mkdir()
    _configure(cli, t=_test_server(MCP_TEST_DIR=str(where)))
    model_server.script(reply(tool_use("mcp__t__hang", {})))
    proc = cli.popen("-p", "hang", "--allowed-tools", "mcp__t__hang", start_new_session=True,
                     stdin=subprocess.DEVNULL)

    def call_in_flight() -> None:
        deadline = time.monotonic() + 180  # an upper bound (the server may take up to EVO_AGENT_MCP_TIMEOUT)
        while not list(where.glob("hang.*")):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the call never reached the server"
            time.sleep(0.05)

    cli.kill_9_when(proc, call_in_flight)
    (hang_file,) = where.glob("hang.*")
    server_pid = int(hang_file.name.split(".")[1])
    deadline = time.monotonic() + 30  # an upper bound: the parent-death signal acts at once
    while not _gone(server_pid):
        assert time.monotonic() < deadline, f"the MCP server {server_pid} outlived the agent"
        time.sleep(0.05)
    for started in where.glob("started.*"):
        assert _gone(int(started.name.split(".")[1]))


def test_slash_mcp_in_the_repl_shows_each_server(cli, model_server):
    _configure(cli, broken={"command": "/nonexistent/mcp-server"})
    result = cli.run("--plain", input="/mcp\n/mcp frob\n")
    assert result.rc == 0, result.err
    assert "broken (user, stdio) — not started" in result.out
    assert "The tool list is fixed at this session's first request." in result.out
    assert "usage: /mcp [reconnect NAME]" in result.out + result.err


def test_an_image_result_reaches_the_model_and_every_reader(cli, model_server):
    _configure(cli, t=_test_server())
    model_server.script(reply(tool_use("mcp__t__picture", {})), reply(text("a red dot")))
    result = cli.run("-p", "look", "--allowed-tools", "mcp__t__picture")
    assert result.rc == 0, result.err
    (block,) = _results(model_server.valid_requests[1]["messages"][-1])
    assert [part["type"] for part in block["content"]] == ["text", "image"]
    assert block["content"][1]["source"]["media_type"] == "image/png"
    sid = result.hint_id()
    for args in (("show", sid), ("export", sid, "--format", "md"), ("export", sid, "--format", "html"),
                 ("show", sid, "--json")):
        shown = cli.run("sessions", *args)
        assert shown.rc == 0 and "Traceback" not in shown.err, (args, shown.err)
    model_server.reset()
    model_server.script(reply(text("still a red dot")))
    assert cli.run("--resume", sid, "-p", "and now?").rc == 0
    assert model_server.valid_requests[0]["messages"][2]["content"][0]["content"][1]["type"] == "image"


def test_images_past_the_conversations_cap_reach_the_model_as_a_note(cli, model_server):
    """A conversation holds at most MAX_CONVERSATION_IMAGES images from tools: past it (here one response of
    more picture calls than that) the model gets a short line instead, and a resume restores the same."""
    from evo_agent.agent.mcp_context import MAX_CONVERSATION_IMAGES

    _configure(cli, t=_test_server())
    calls = MAX_CONVERSATION_IMAGES + 2
    model_server.script(reply(*[tool_use("mcp__t__picture", {}, id=f"toolu_{i:03d}") for i in range(calls)]),
                        reply(text("many red dots")))
    result = cli.run("-p", "look", "--allowed-tools", "mcp__t__picture")
    assert result.rc == 0, result.err
    blocks = _results(model_server.valid_requests[1]["messages"][-1])
    assert len(blocks) == calls
    kinds = [[part["type"] for part in b["content"]] for b in blocks]
    assert kinds[:MAX_CONVERSATION_IMAGES] == [["text", "image"]] * MAX_CONVERSATION_IMAGES
    for late in blocks[MAX_CONVERSATION_IMAGES:]:
        assert [part["type"] for part in late["content"]] == ["text", "text"]
        assert f"already holds {MAX_CONVERSATION_IMAGES} images" in late["content"][1]["text"]
    sid = result.hint_id()
    model_server.reset()
    model_server.script(reply(text("still many")))
    assert cli.run("--resume", sid, "-p", "and now?").rc == 0
    restored = model_server.valid_requests[0]["messages"][2]["content"]
    assert [[part["type"] for part in b["content"]] for b in _results({"content": restored})] == kinds
