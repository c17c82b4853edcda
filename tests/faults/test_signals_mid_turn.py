"""SIGTERM and SIGHUP (the terminal closed) in the middle of a turn's newer parts: while a tool runs and
while a compaction's summary call streams, in print mode and in the REPL.

What a user must get: the signal's exit code, the exit hint as the last line, no traceback, no tool left
running, and a resume whose first request is exactly what the model last saw (plus the interrupted
tool's result), which the API accepts.
"""

from __future__ import annotations

import signal
import subprocess
import time

import pytest

from evo_agent.session import load_for_resume
from tests.builders import history_of, seed_session
from tests.cli_runner import COMMAND
from tests.fake_model_server import hang, text, tool_use
from tests.helpers import process_alive
from tests.prompt_cache import plain

pytestmark = pytest.mark.faults

CODES = {signal.SIGTERM: 143, signal.SIGHUP: 129}


def _signalled(proc: subprocess.Popen, sig: int) -> str:
    """Send `sig` to the agent and wait for its end: the session its last line names, checked as a user sees it:
    the signal's exit code, no traceback, the resume command last."""
    proc.send_signal(sig)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == CODES[sig] and "Traceback" not in err, err
    last = err.splitlines()[-1]
    sid = last.rsplit(" ", 1)[1]
    assert last == f"Resume this session with: evo-agent --resume {sid}", err
    return sid


def _wait_until(condition, proc, what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert proc.poll() is None, f"the agent ended before {what}: {proc.communicate()}"
        assert time.monotonic() < deadline, f"no {what} within {timeout}s"
        time.sleep(0.005)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["sigterm", "sighup"])
@pytest.mark.parametrize("mode", ["print", "repl"])
def test_a_signal_while_a_tool_runs_leaves_a_resumable_session_and_no_tool(cli, model_server, tmp_path, sig, mode):
    pidfile = tmp_path / "tool.pid"
    model_server.script([text("Running it."), tool_use("bash", {"command": f"echo $$ > {pidfile}; exec sleep 60"})])
    args = ("-p", "run it", "--permission-mode", "bypass") if mode == "print" else ("--permission-mode", "bypass")
    proc = cli.popen(*args, stdin=subprocess.DEVNULL if mode == "print" else subprocess.PIPE)
    try:
        if mode == "repl":
            proc.stdin.write("run it\n")
            proc.stdin.flush()
        _wait_until(lambda: pidfile.exists() and pidfile.read_text().strip(), proc, "tool start")
        tool_pid = int(pidfile.read_text())
        sid = _signalled(proc, sig)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert cli.session_ids() == [sid]
    deadline = time.monotonic() + 30
    while process_alive(tool_pid):
        assert time.monotonic() < deadline, "the tool outlived the agent"
        time.sleep(0.01)
    seen = model_server.requests[-1]["messages"]
    loaded = load_for_resume(cli.transcript(sid))
    assert loaded.skipped_lines == 0
    assert plain(loaded.messages[:len(seen) + 1]) == plain(seen + [loaded.messages[len(seen)]])
    model_server.script(text("Resumed."))
    resumed = cli.run("-c", "-p", "go on")
    assert resumed.rc == 0 and resumed.out == "Resumed.\n", resumed.err
    sent = model_server.requests[-1]["messages"]
    assert plain(sent[:len(seen)]) == plain(seen)
    model_server.assert_all_valid()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["sigterm", "sighup"])
def test_a_signal_while_a_compaction_summarises_keeps_the_history_the_model_last_saw(cli, model_server, sig):
    turns = [(f"question {n} " + "q" * 300, f"Answer {n}. " + "a" * 300) for n in range(6)]
    seed_session(cli.project, *turns)
    model_server.script(text("Before."), hang(60, text("never finished"), partial="Summary so far"))
    env = {**cli.env, "EVO_AGENT_COMPACT_CHARS": "100000"}
    proc = subprocess.Popen([*COMMAND, "-c", "--permission-mode", "bypass"], cwd=cli.project, env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        proc.stdin.write("one more\n/compact\n")
        proc.stdin.flush()
        _wait_until(model_server.hanging.is_set, proc, "the summary call")
        seen = model_server.requests[0]["messages"]
        sid = _signalled(proc, sig)
    finally:
        if proc.poll() is None:
            proc.kill()
    loaded = load_for_resume(cli.transcript(sid))
    expected = seen + [{"role": "assistant", "content": [{"type": "text", "text": "Before."}]}]
    assert plain(loaded.messages) == plain(expected)
    model_server.script(text("Resumed."))
    resumed = cli.run("-c", "-p", "go on")
    assert resumed.rc == 0 and resumed.out == "Resumed.\n", resumed.err
    assert plain(model_server.requests[-1]["messages"]) == plain(expected + [{"role": "user", "content": "go on"}])
    assert plain(expected[:12]) == plain(history_of(*turns))  # the seeded turns are the start of it
    model_server.assert_all_valid()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["sigterm", "sighup"])
def test_a_signal_while_an_mcp_call_is_in_flight_leaves_no_server_and_a_resumable_session(
        cli, model_server, tmp_path, sig):
    import json
    import sys
    from pathlib import Path

    where = tmp_path / "mcp"
    where.mkdir()
    config = Path(cli.env["XDG_CONFIG_HOME"]) / "evo-agent" / "mcp.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    server = str(Path(__file__).parents[1] / "tools" / "mcp_test_server.py")
    config.write_text(json.dumps({"mcpServers": {"t": {"command": sys.executable, "args": [server],
                                                       "env": {"MCP_TEST_DIR": str(where)}}}}))
    env = {**cli.env, "EVO_AGENT_MCP_TIMEOUT": "120"}
    model_server.script([text("Calling."), tool_use("mcp__t__hang", {})])
    proc = subprocess.Popen([*COMMAND, "-p", "hang", "--allowed-tools", "mcp__t__hang"], cwd=cli.project, env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_until(lambda: list(where.glob("hang.*")), proc, "the call reaching the server", timeout=180)
        sid = _signalled(proc, sig)
    finally:
        if proc.poll() is None:
            proc.kill()
    for started in where.glob("started.*"):
        pid = int(started.name.split(".")[1])
        deadline = time.monotonic() + 30
        while process_alive(pid):
            assert time.monotonic() < deadline, f"the MCP server {pid} outlived the agent"
            time.sleep(0.01)
    seen = model_server.requests[-1]["messages"]
    loaded = load_for_resume(cli.transcript(sid))
    assert plain(loaded.messages[:len(seen)]) == plain(seen) and len(loaded.messages) == len(seen) + 2
    config.unlink()  # the server is gone by the resume: the history still resumes
    model_server.script(text("Resumed."))
    resumed = cli.run("-c", "-p", "go on")
    assert resumed.rc == 0 and resumed.out == "Resumed.\n", resumed.err
    assert plain(model_server.requests[-1]["messages"][:len(seen)]) == plain(seen)
    model_server.assert_all_valid()
