"""The piped REPL: every way out ends with the exit hint; Ctrl+C cancels a turn, not the session."""

from __future__ import annotations

import signal
import subprocess
import time

import pytest

from evo_agent.agent import INTERRUPTED_MARKER
from evo_agent.session import load_for_resume
from tests.api_rules import check_request
from tests.fake_model_server import hang, text
from tests.helpers import wait_for
from tests.prompt_cache import plain


def finish(proc, input=None, timeout=30):
    out, err = proc.communicate(input, timeout=timeout)
    return proc.returncode, out, err


def last_line(text_):
    lines = text_.splitlines()
    return lines[-1] if lines else ""


def hint_for(sid):
    return f"Resume this session with: evo-agent --resume {sid}"


def assert_resumable(cli, sid):
    loaded = load_for_resume(cli.transcript(sid))
    assert loaded.repairs == 0 and loaded.skipped_lines == 0
    check_request(loaded.messages + [{"role": "user", "content": "next"}])
    return loaded.messages


def test_eof_and_exit_end_with_the_hint_and_nothing_after_exit_runs(demo_cli):
    eof = demo_cli.run(input="run echo from-the-repl\n")
    assert eof.rc == 0 and "from-the-repl" in eof.out
    sid = eof.hint_id("err")
    assert "⏺ bash(echo from-the-repl)" in eof.out

    exited = demo_cli.run(input="/rename quiet\n/help\n/compact\n/nonsense\n/exit\nrun echo never\n")
    assert exited.rc == 0
    assert "/resume [ID|NAME]" in exited.out and "/clear" in exited.out and "numbered list" in exited.out
    assert "evo-agent: cannot compact: there is nothing to compact yet" in exited.err_lines
    assert any("unknown command /nonsense" in line for line in exited.err_lines)
    sid2 = exited.hint_id("err")
    assert sid2 != sid
    assert [r["type"] for r in demo_cli.records(sid2)] == ["session_start", "memory_index", "system_prompt", "session_name"]  # "never"
    # was not run
    assert "never" not in exited.out


def test_ctrl_c_at_the_prompt_exits_with_the_hint(demo_cli):
    proc = demo_cli.popen()
    try:
        proc.stdin.write("/rename interrupted\n")  # something said: the session is on disk
        proc.stdin.flush()
        wait_for(lambda: any(demo_cli.sessions_dir.glob("*/messages.jsonl")), what="the session to start")
        time.sleep(0.3)
        proc.send_signal(signal.SIGINT)
        rc, out, err = finish(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
    (sid,) = demo_cli.session_ids()
    assert rc == 130 and "Traceback" not in err
    assert last_line(err) == hint_for(sid)  # stdout is a pipe: the hint goes to stderr


def test_ctrl_c_during_a_turn_cancels_it_and_the_session_goes_on(cli, model_server):
    model_server.script(hang(30, text("never sent")), text("Second answer."))
    proc = cli.popen()
    try:
        proc.stdin.write("think for a long time\n")
        proc.stdin.flush()
        assert model_server.hanging.wait(20)
        proc.send_signal(signal.SIGINT)
        rc, out, err = finish(proc, "next question\n")
    finally:
        if proc.poll() is None:
            proc.kill()
    assert rc == 0, err
    assert "(interrupted)" in out and "Second answer." in out
    assert "Traceback" not in err
    (sid,) = cli.session_ids()
    assert last_line(err) == hint_for(sid)  # stdout is a pipe: the hint goes to stderr
    model_server.assert_all_valid()
    assert plain(model_server.requests[1]["messages"]) == plain([
        {"role": "user", "content": "think for a long time"},
        {"role": "user", "content": INTERRUPTED_MARKER},
        {"role": "user", "content": "next question"},
    ])
    history = assert_resumable(cli, sid)
    assert plain(history) == plain(model_server.requests[1]["messages"] + [
        {"role": "assistant", "content": [{"type": "text", "text": "Second answer."}]}])


def test_a_second_ctrl_c_exits_and_the_transcript_stays_valid(cli, model_server):
    model_server.script(hang(30, text("never sent")))
    proc = cli.popen()
    try:
        proc.stdin.write("think\n")
        proc.stdin.flush()
        assert model_server.hanging.wait(20)
        proc.send_signal(signal.SIGINT)
        time.sleep(0.3)
        proc.send_signal(signal.SIGINT)
        rc, out, err = finish(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
    (sid,) = cli.session_ids()
    assert rc == 130 and "Traceback" not in err
    assert last_line(err) == hint_for(sid)  # stdout is a pipe: the hint goes to stderr
    assert assert_resumable(cli, sid) == [
        {"role": "user", "content": "think"}, {"role": "user", "content": INTERRUPTED_MARKER}]


def test_sigterm_during_a_turn_exits_cleanly_with_the_hint(cli, model_server):
    model_server.script(hang(30, text("never sent")))
    proc = cli.popen()
    try:
        proc.stdin.write("think\n")
        proc.stdin.flush()
        assert model_server.hanging.wait(20)
        proc.send_signal(signal.SIGTERM)
        rc, out, err = finish(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
    (sid,) = cli.session_ids()
    assert rc == 143 and "Traceback" not in err
    assert last_line(err) == hint_for(sid)  # stdout is a pipe: the hint goes to stderr
    assert assert_resumable(cli, sid) == [
        {"role": "user", "content": "think"}, {"role": "user", "content": INTERRUPTED_MARKER}]


@pytest.mark.parametrize("mode", [(), ("-p", "think")], ids=["repl", "print"])
def test_sighup_during_a_turn_exits_129_with_the_hint_on_stderr(cli, model_server, mode):
    model_server.script(hang(30, text("never sent")))
    proc = cli.popen(*mode, **({"stdin": subprocess.DEVNULL} if mode else {}))  # -p reads piped stdin to EOF
    try:
        if not mode:
            proc.stdin.write("think\n")
            proc.stdin.flush()
        assert model_server.hanging.wait(20)
        proc.send_signal(signal.SIGHUP)
        rc, out, err = finish(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
    (sid,) = cli.session_ids()
    assert rc == 129 and "Traceback" not in err
    assert "Resume this session" not in out and last_line(err) == hint_for(sid)
    assert assert_resumable(cli, sid) == [
        {"role": "user", "content": "think"}, {"role": "user", "content": INTERRUPTED_MARKER}]


def test_ctrl_c_in_print_mode_stops_with_the_hint_on_stderr(cli, model_server):
    model_server.script(hang(30, text("never sent")))
    proc = cli.popen("-p", "think", stdin=subprocess.DEVNULL)  # -p reads piped stdin to its end first
    try:
        assert model_server.hanging.wait(20)
        proc.send_signal(signal.SIGINT)
        rc, out, err = finish(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
    (sid,) = cli.session_ids()
    assert rc == 130 and out == "" and "Traceback" not in err
    assert last_line(err) == hint_for(sid)
    assert_resumable(cli, sid)


def test_on_a_terminal_ctrl_c_interrupts_a_tool_and_ctrl_d_leaves(demo_cli):
    """A real pty (the line REPL, by --plain): the terminal's ^C goes to the agent's process group, not to the tool's own session."""
    import fcntl
    import os
    import pty
    import select
    import subprocess
    import termios

    from tests.cli_runner import COMMAND

    (demo_cli.project / "AGENTS.md").write_text("Run the tests with make test.\n")  # named by the welcome
    master, slave = pty.openpty()

    def controlling_terminal():
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    proc = subprocess.Popen([*COMMAND, "--plain"], cwd=demo_cli.project, env=demo_cli.env, stdin=slave, stdout=slave,
                            stderr=slave, preexec_fn=controlling_terminal)
    os.close(slave)
    screen = b""

    seen = 0  # what earlier waits consumed: each wait looks for a new occurrence

    def read_until(needle: bytes, timeout: float = 20.0) -> None:
        nonlocal screen, seen
        deadline = time.monotonic() + timeout
        while needle not in screen[seen:]:
            assert time.monotonic() < deadline, f"never saw {needle!r} in {screen!r}"
            ready, _, _ = select.select([master], [], [], 0.05)
            if ready:
                try:
                    screen += os.read(master, 65536)
                except OSError:
                    return
        seen = screen.index(needle, seen) + len(needle)

    try:
        read_until(b"> ")
        assert b"/help for commands" in screen and b"instructions: AGENTS.md" in screen
        started = time.monotonic()
        os.write(master, b"run sleep 30\r")
        read_until(b"bash(sleep 30)")
        time.sleep(0.3)
        os.write(master, b"\x03")
        read_until(b"(interrupted)")
        assert time.monotonic() - started < 15
        read_until(b"> ")
        os.write(master, b"\x04")
        read_until(b"Resume this session with: ")
        read_until(b"\n")
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    (sid,) = demo_cli.session_ids()
    lines = [line.strip() for line in screen.decode("utf-8", "replace").splitlines() if line.strip()]
    assert lines[-1] == hint_for(sid)
    history = assert_resumable(demo_cli, sid)
    result = history[2]["content"][0]
    assert result["is_error"] is True and "interrupted" in result["content"]
    assert history[2]["content"][-1] == {"type": "text", "text": INTERRUPTED_MARKER}


def test_on_a_terminal_ctrl_c_after_an_interrupt_clears_the_prompt_and_only_a_second_leaves(demo_cli):
    """As the app: the Ctrl+C that interrupts a turn does not arm; at the idle prompt the first Ctrl+C clears the
    line (what was typed is not sent) and arms, the second leaves with 130 and the resume line."""
    from tests.pty_terminal import on_a_terminal, waiting

    rc, screen = on_a_terminal(demo_cli, "--plain", before_keys=waiting, steps=[
        (b"> ", b"run sleep 30\r"),
        (b"bash(sleep 30)", b"\x03"),
        (b"(interrupted)", b""),
        (b"> ", b"run echo half-typed"),
        (b"half-typed", b"\x03"),
        (b"(Press Ctrl+C again to exit)", b""),
        (b"> ", b"/rename still-here\r"),
        (b"is now named", b"\x03"),
        (b"(Press Ctrl+C again to exit)", b""),
        (b"> ", b"\x03"),
    ])
    (sid,) = demo_cli.session_ids()
    lines = [line.strip() for line in screen.splitlines() if line.strip()]
    assert rc == 130 and "Traceback" not in screen
    assert lines[-1] == hint_for(sid)
    assert "⏺ bash(echo half-typed" not in screen  # the cleared line was not sent
    assert "still-here" in screen


def test_a_line_starting_with_a_path_is_a_prompt_not_a_command(demo_cli):
    ran = demo_cli.run(input="/etc/hostname what is this?\n /help\n")
    assert ran.rc == 0
    assert "unknown command" not in ran.err
    prompts = [r["message"]["content"] for r in demo_cli.records(ran.hint_id("err")) if r["type"] == "user"
               and isinstance(r["message"]["content"], str)]
    assert prompts == ["/etc/hostname what is this?", " /help"]


def test_a_launch_where_nothing_is_said_leaves_no_session_and_no_hint(demo_cli):
    quiet = demo_cli.run(input="/help\n/cost\n/clear\n/exit\n")
    assert quiet.rc == 0
    assert "Resume this session with" not in quiet.err
    sessions = demo_cli.project / ".evo-agent" / "sessions"
    assert not sessions.exists() or [p.name for p in sessions.iterdir() if not p.name.startswith(".")] == []

    spoke = demo_cli.run(input="run echo hello\n")
    sid = spoke.hint_id("err")
    records = demo_cli.records(sid)
    assert [r["type"] for r in records[:4]] == ["session_start", "memory_index", "system_prompt", "user"]  # held, then written in order
    assert records[0]["timestamp"] <= records[1]["timestamp"] <= records[2]["timestamp"]


def test_a_piped_repl_names_itself_on_stderr_and_keeps_stdout_the_answers(demo_cli):
    """Like `codex exec`'s header: a script reading stdout gets the answers only; whoever watches stderr learns
    which version, model, session and permissions it is talking to, as the terminal's welcome says."""
    (demo_cli.project / "AGENTS.md").write_text("Run the tests with make test.\n")
    piped = demo_cli.run(input="say hi\n")
    assert piped.rc == 0, piped.err
    sid = piped.hint_id("err")
    welcome = piped.err_lines[0]
    assert welcome.startswith("evo-agent ") and f"session {sid}" in welcome and "permissions: ask" in welcome
    assert "AGENTS.md" in piped.err_lines[1]
    assert "evo-agent " not in piped.out and "/help for commands" not in piped.out
