"""Permissions through the real `evo-agent` script (issue #15): the REPL's ask on a real pty,
print-mode refusals, rules from flags and settings, the stripped environment, parent death."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import signal
import socket
import stat
import subprocess
import termios
import time

import pytest

from tests.cli_runner import COMMAND
from tests.fake_model_server import text, tool_use
from tests.helpers import process_alive, wait_for
from tests.prompt_cache import last_text


class Pty:
    """The console script on a real terminal (its own session, the pty as controlling terminal)."""

    def __init__(self, cli, *args: str) -> None:
        master, slave = pty.openpty()

        def controlling_terminal():
            os.setsid()
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        self.proc = subprocess.Popen([*COMMAND, *args], cwd=cli.project, env=cli.env, stdin=slave, stdout=slave,
                                     stderr=slave, preexec_fn=controlling_terminal)
        os.close(slave)
        self.master = master
        self.screen = b""
        self.seen = 0

    def read_until(self, needle: bytes, timeout: float = 20.0) -> bytes:
        deadline = time.monotonic() + timeout
        while needle not in self.screen[self.seen:]:
            assert time.monotonic() < deadline, f"never saw {needle!r} in {self.screen[self.seen:]!r}"
            ready, _, _ = select.select([self.master], [], [], 0.05)
            if ready:
                try:
                    self.screen += os.read(self.master, 65536)
                except OSError:
                    break
        start = self.seen
        self.seen = self.screen.index(needle, self.seen) + len(needle)
        return self.screen[start:self.seen]

    def type(self, data: bytes) -> None:
        os.write(self.master, data)

    def close(self) -> int:
        try:
            return self.proc.wait(10)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            os.close(self.master)


def test_the_repl_asks_on_a_terminal_and_always_in_this_project_is_honoured_next_run(cli, model_server, project):
    model_server.script(
        tool_use("bash", {"command": "touch yes_file"}, id="t_yes"), text("made it"),
        tool_use("bash", {"command": "touch no_file"}, id="t_no"), text("did not"),
        tool_use("bash", {"command": "touch p_file"}, id="t_p"), text("made p"),
        tool_use("bash", {"command": "touch c_file"}, id="t_c"), text("after ctrl-c"),
    )
    term = Pty(cli, "--plain")
    try:
        assert b"permissions: ask" in term.read_until(b"> ")
        term.type(b"first\r")
        asked = term.read_until(b"Allow? ")
        assert b"bash wants to run: touch yes_file" in asked and b"[Bash(touch yes_file)]" in asked
        term.type(b"y\r")  # a letter is not an answer: the question is asked again
        term.read_until(b"answer yes, no [reason], always or project")
        term.read_until(b"Allow? ")
        term.type(b"yes\r")
        term.read_until(b"made it")
        term.read_until(b"> ")
        term.type(b"second\r")
        term.read_until(b"Allow? ")
        term.type(b"n too risky today\r")
        term.read_until(b"did not")
        term.read_until(b"> ")
        term.type(b"third\r")
        term.read_until(b"Allow? ")
        term.type(b"project\r")
        term.read_until(b"made p")
        term.read_until(b"> ")
        term.type(b"fourth\r")
        term.read_until(b"Allow? ")
        term.type(b"\x03")  # Ctrl+C at the question means no; the turn goes on
        term.read_until(b"after ctrl-c")
        term.read_until(b"> ")
        term.type(b"/permissions\r")
        assert b"Bash(touch p_file)" in term.read_until(b"> ")
        term.type(b"\x04")
        term.read_until(b"Resume this session with: ")
        assert term.close() == 0
    finally:
        if term.proc.poll() is None:
            term.proc.kill()
            term.proc.wait()
    assert (project / "yes_file").exists() and (project / "p_file").exists()
    assert not (project / "no_file").exists() and not (project / "c_file").exists()
    refused = model_server.requests[3]["messages"][-1]["content"][0]
    assert refused["is_error"] and refused["tool_use_id"] == "t_no" and "Their reason: too risky today" in refused["content"]
    ctrl_c = model_server.requests[7]["messages"][-1]["content"][0]
    assert ctrl_c["is_error"] and ctrl_c["tool_use_id"] == "t_c" and "refused" in ctrl_c["content"]
    # "always in this project" is kept in the user's own config, where no repository can put or widen it
    assert not (project / ".evo-agent" / "settings.json").exists()
    assert cli.user_record()["allow"] == ["Bash(touch p_file)"]
    from evo_agent.session import user_record_path

    kept = user_record_path(project, cli.env)
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600 and stat.S_IMODE(kept.parent.stat().st_mode) == 0o700
    (sid,) = cli.session_ids()
    decisions = [(r["tool_use_id"], r["decision"]) for r in cli.records(sid) if r["type"] == "permission"]
    assert decisions == [("t_yes", "allowed"), ("t_no", "refused"), ("t_p", "allowed"), ("t_c", "refused")]

    # The next run, in print mode (which cannot ask), runs what the project rule allows.
    (project / "p_file").unlink()
    model_server.script(tool_use("bash", {"command": "touch p_file"}), text("made again"))
    again = cli.run("-p", "once more")
    assert again.rc == 0 and again.out == "made again\n" and (project / "p_file").exists(), again.err
    model_server.assert_all_valid()


def test_the_repl_shows_every_line_and_never_takes_typed_ahead_text_as_the_answer(cli, model_server, project):
    command = "\n".join(f"echo step {i:03d}" for i in range(1, 200)) + "\ntouch LAST\x1b]0;owned\x07"
    model_server.script(tool_use("bash", {"command": command}, id="t_long"), text("refused, fine"),
                        text("second prompt seen"))
    term = Pty(cli, "--plain")
    try:
        term.read_until(b"> ")
        term.type(b"go\ryes\r")  # "yes" typed ahead, meant as the next prompt
        asked = term.read_until(b"Allow? ")
        assert b"200 \xe2\x94\x82 touch LAST^[]0;owned^G" in asked  # the last line, numbered, made harmless
        assert all(f"{i:>3} │ echo step {i:03d}".encode() in asked for i in range(1, 200))
        assert b"\x1b]0;owned" not in asked
        assert b"typed before this question, not taken as its answer; sent after the turn: yes" in asked
        term.type(b"no\r")
        term.read_until(b"refused, fine")
        term.read_until(b"> yes")  # the set-aside line is the next prompt
        term.read_until(b"second prompt seen")
        term.read_until(b"> ")
        term.type(b"\x04")
        term.read_until(b"Resume this session with: ")
        assert term.close() == 0
    finally:
        if term.proc.poll() is None:
            term.proc.kill()
            term.proc.wait()
    assert not (project / "LAST\x1b]0;owned\x07").exists()
    assert last_text(model_server.requests[2]) == "yes"
    model_server.assert_all_valid()


def test_print_mode_refuses_tells_the_model_and_says_how_to_allow(cli, model_server, project):
    model_server.script(tool_use("write_file", {"path": "notes.txt", "content": "hi\n"}, id="t_w"), text("I was not allowed."))
    result = cli.run("-p", "write a note")
    assert result.rc == 0 and result.out == "I was not allowed.\n" and not (project / "notes.txt").exists()
    refusal = model_server.requests[1]["messages"][-1]["content"][0]
    assert refusal["is_error"] and "needs the user's approval" in refusal["content"]
    hints = [line for line in result.err_lines if "not run" in line]
    assert hints == ['evo-agent: not run (needs approval): write_file (write notes.txt); allow it with '
                     "--permission-mode accept-edits, --allowed-tools 'Edit(notes.txt)' or a rule in "
                     '.evo-agent/settings.json']

    # Already in accept-edits, a write it does not cover (inside .git/) names the mode that would allow it.
    model_server.script(tool_use("write_file", {"path": ".git/notes", "content": "hi\n"}), text("No."))
    again = cli.run("-p", "write a git note", "--permission-mode", "accept-edits")
    (hint,) = [line for line in again.err_lines if "not run" in line]
    assert "--permission-mode bypass" in hint and "accept-edits" not in hint

    # The same call, allowed for one run, then by the mode.
    for args in (["--allowed-tools", "Bash(npm test),Edit"], ["--permission-mode", "accept-edits"]):
        (project / "notes.txt").unlink(missing_ok=True)
        model_server.script(tool_use("write_file", {"path": "notes.txt", "content": "hi\n"}), text("Written."))
        allowed = cli.run("-p", "write a note", *args)
        assert allowed.rc == 0 and allowed.out == "Written.\n" and (project / "notes.txt").read_text() == "hi\n"
    env = {**cli.env, "EVO_AGENT_PERMISSION_MODE": "read-only"}
    model_server.script(tool_use("write_file", {"path": "plan.txt", "content": "x"}), text("Planned."))
    planned = cli.run("-p", "plan", env=env)
    assert planned.rc == 0 and not (project / "plan.txt").exists()
    assert "read-only mode" in model_server.requests[-1]["messages"][-1]["content"][0]["content"]
    model_server.assert_all_valid()


def test_print_modes_not_run_line_never_carries_the_models_escape_sequences(cli, model_server, project):
    command = "printf done \x1b]0;evo-owned\x07\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J"
    model_server.script(tool_use("bash", {"command": command}), text("Not allowed."))
    result = cli.run("-p", "go")
    assert result.rc == 0 and result.out == "Not allowed.\n"
    (line,) = [x for x in result.err_lines if "not run (needs approval)" in x]
    assert "printf done ^[]0;evo-owned^G^[]52;c;cm0gLXJmIH4=^G^[[2J" in line
    assert "\x1b" not in result.err and "\x07" not in result.err


def test_refused_calls_keep_sessions_show_fsck_and_resume_working(cli, model_server):
    model_server.script(tool_use("bash", {"command": "touch x"}), text("Refused."))
    first = cli.run("-p", "try")
    sid = first.hint_id()
    shown = cli.run("sessions", "show", sid)
    assert shown.rc == 0 and "Refused." in shown.out, shown.err
    checked = cli.run("sessions", "fsck", sid)
    assert checked.rc == 0, checked.out + checked.err
    model_server.script(text("Resumed fine."))
    resumed = cli.run("--resume", sid, "-p", "and now?")
    assert resumed.rc == 0 and resumed.out == "Resumed fine.\n"
    model_server.assert_all_valid()


@pytest.mark.parametrize("args, env, message", [
    (["--permission-mode", "yolo"], {}, "--permission-mode must be one of ask, accept-edits, read-only, bypass"),
    ([], {"EVO_AGENT_PERMISSION_MODE": "sometimes"}, "EVO_AGENT_PERMISSION_MODE must be one of"),
    (["--allowed-tools", "Delete(*)"], {}, "bad permission rule"),
    (["--sandbox-network"], {}, "--sandbox-network only makes sense with --sandbox"),
])
def test_bad_permission_settings_are_usage_errors(cli, args, env, message):
    result = cli.run("-p", "hi", *args, env={**cli.env, **env})
    assert result.rc == 2 and result.out == "" and len(result.err_lines) == 1
    assert result.err_lines[0].startswith("evo-agent: ") and message in result.err_lines[0]


def test_bypass_warns_once_and_tools_never_see_the_agents_credentials(cli, model_server):
    command = "printenv ANTHROPIC_API_KEY OPENAI_API_KEY EVO_AGENT_SYNC_URL EVO_AGENT_TEAM_TOKEN; echo visible=$VISIBLE"
    model_server.script(tool_use("bash", {"command": command}), text("Nothing."))
    env = {**cli.env, "OPENAI_API_KEY": "sk-openai-secret", "EVO_AGENT_SYNC_URL": "postgresql://u:pw@127.0.0.1/x",
           "EVO_AGENT_TEAM_TOKEN": "tok-secret", "VISIBLE": "yes"}
    assert env["ANTHROPIC_API_KEY"]
    result = cli.run("-p", "show me the keys", "--permission-mode", "bypass", env=env)
    assert result.rc == 0, result.err
    assert result.err_lines[0].startswith("evo-agent: permission mode bypass")
    output = model_server.requests[1]["messages"][-1]["content"][0]["content"]
    assert "visible=yes" in output
    for secret in (env["ANTHROPIC_API_KEY"], "sk-openai-secret", "pw@", "tok-secret"):
        assert secret not in output


def test_a_killed_agent_leaves_no_tool_running(cli, model_server, tmp_path):
    pids = tmp_path / "pids"
    command = f"sleep 300 & echo $! >> {pids}; (sleep 301; true) & echo $! >> {pids}; echo $$ >> {pids}; wait"
    model_server.script(tool_use("bash", {"command": command}))
    proc = cli.popen("-p", "run it", "--permission-mode", "bypass", start_new_session=True, stdin=subprocess.DEVNULL)

    def three_pids():
        wait_for(lambda: pids.exists() and len(pids.read_text().split()) == 3, 30, "the tool's processes")

    cli.kill_9_when(proc, three_pids)  # SIGKILL of the agent's process group, not the tool's
    started = [int(p) for p in pids.read_text().split()]
    try:
        wait_for(lambda: not any(process_alive(p) for p in started), 10, "the tool's processes to die with the agent")
    finally:
        for pid in started:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_without_bwrap_the_sandbox_is_a_clear_error_not_a_fallback(cli):
    result = cli.run("-p", "hi", "--sandbox", env={**cli.env, "PATH": "/nonexistent"})
    assert result.rc == 1 and result.out == "" and len(result.err_lines) == 1
    assert result.err_lines[0].startswith("evo-agent: --sandbox needs bubblewrap")


def test_sandboxed_bash_cannot_write_outside_or_reach_the_network(cli, model_server, project, tmp_path):
    from evo_agent.tools.sandbox import SandboxError, check_sandbox

    try:
        check_sandbox(project)
    except SandboxError as exc:
        pytest.skip(str(exc))
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(5)
    port = listener.getsockname()[1]
    outside = f"/var/tmp/evo-agent-sandbox-test-{os.getpid()}"  # on the read-only root
    private = tmp_path / "private.txt"  # /tmp inside is a private tmpfs: the real one is untouched
    command = (f"touch {outside}; echo outside=$?; touch {private}; touch inside.txt; echo inside=$?; "
               f"python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), 5)' 2>/dev/null; "
               "echo net=$?")
    try:
        for args, net in ((["--sandbox"], "net=1"), (["--sandbox", "--sandbox-network"], "net=0")):
            model_server.script(tool_use("bash", {"command": command}), text("Tried."))
            result = cli.run("-p", "try", "--permission-mode", "bypass", *args)
            assert result.rc == 0, result.err
            output = model_server.requests[-1]["messages"][-1]["content"][0]["content"]
            assert "outside=1" in output and "inside=0" in output and net in output, output
            assert not os.path.exists(outside) and not private.exists() and (project / "inside.txt").exists()
    finally:
        listener.close()


def test_settings_give_the_mode_and_the_sandbox_and_a_broken_file_is_one_line(cli, model_server, project):
    settings = project / ".evo-agent" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"permission_mode": "accept-edits", "sandbox": true}')
    os.chmod(settings, 0o644)
    cli.trust()  # a project's settings apply once the user trusts it
    model_server.script(tool_use("write_file", {"path": "a.txt", "content": "a"}), text("Wrote."))
    from evo_agent.tools.sandbox import SandboxError, check_sandbox

    try:
        check_sandbox(project)
        usable = True
    except SandboxError:
        usable = False
    result = cli.run("-p", "write")
    if usable:
        assert result.rc == 0 and (project / "a.txt").read_text() == "a", result.err
    else:
        assert result.rc == 1 and "bubblewrap" in result.err_lines[0]
    no_bwrap = cli.run("-p", "write", env={**cli.env, "PATH": "/nonexistent"})  # the setting is no silent fallback
    assert no_bwrap.rc == 1 and no_bwrap.err_lines[0].startswith("evo-agent: --sandbox needs bubblewrap")
    settings.write_text("{not json")
    cli.trust()  # a changed file asks again
    broken = cli.run("-p", "hi")
    assert broken.rc == 1 and len(broken.err_lines) == 1 and "settings.json is not valid JSON" in broken.err_lines[0]
