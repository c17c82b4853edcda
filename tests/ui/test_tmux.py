"""The real console script in a real terminal (tmux): start → prompt → /exit → the exit hint."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
EVO = str(Path(sys.executable).with_name("evo-agent"))


def _screen(session: str) -> str:
    return subprocess.run(["tmux", "capture-pane", "-t", session, "-p"], capture_output=True, text=True).stdout


def _wait_for(session: str, pattern: str, timeout: float = 30) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        screen = _screen(session)
        if re.search(pattern, screen):
            return screen
        time.sleep(0.2)
    raise AssertionError(f"{pattern!r} never appeared on screen:\n{_screen(session)}")


def _start(session: str, project: Path, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "EVO_AGENT_"))}
    env["EVO_AGENT_PROVIDER"] = "demo"
    command = " ".join([EVO, *args]) + "; echo EXITED-$?; sleep 60"
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "110", "-y", "30", "-c", str(project),
                    command], check=True, env=env)


def test_tui_in_tmux_prompt_answer_exit_hint(project):
    session = f"evo-{os.getpid()}-{time.monotonic_ns()}"
    _start(session, project)
    try:
        _wait_for(session, r"session \d{13}_[0-9a-f]{8}")
        subprocess.run(["tmux", "send-keys", "-t", session, "list the files", "Enter"], check=True)
        _wait_for(session, r"README\.md")
        subprocess.run(["tmux", "send-keys", "-t", session, "/exit", "Enter"], check=True)
        screen = _wait_for(session, r"EXITED-0")
        hint = re.search(r"Resume this session with: evo-agent --resume (\d{13}_[0-9a-f]{8})", screen)
        assert hint, screen
        lines = [x for x in screen.splitlines() if x.strip()]
        assert lines[-1] == "EXITED-0" and lines[-2].startswith("Resume this session with")
        transcript = project / ".evo-agent" / "sessions" / hint.group(1) / "messages.jsonl"
        assert b"list the files" in transcript.read_bytes()
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)


def test_resume_without_id_opens_the_picker_in_a_terminal(project):
    subprocess.run([EVO, "-p", "list the files"], cwd=project, capture_output=True, check=True,
                   env={**os.environ, "EVO_AGENT_PROVIDER": "demo"})
    session = f"evo-{os.getpid()}-{time.monotonic_ns()}"
    _start(session, project, "--resume")
    try:
        _wait_for(session, r"\"list the files\"")  # a picker row
        subprocess.run(["tmux", "send-keys", "-t", session, "Enter"], check=True)
        _wait_for(session, r"messages restored")
        _wait_for(session, r"demo\s+·\s+session \d{13}_[0-9a-f]{8}")  # the app's status line: it reads keys now
        subprocess.run(["tmux", "send-keys", "-t", session, "/exit", "Enter"], check=True)
        _wait_for(session, r"Resume this session with: evo-agent --resume \d{13}_[0-9a-f]{8}\s+EXITED-0")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)


def _start_with_pid(session: str, project: Path, pid_file: Path) -> int:
    """Start the app in tmux through `exec`, so the pid written is the app's own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "EVO_AGENT_"))}
    env["EVO_AGENT_PROVIDER"] = "demo"
    command = f"sh -c 'echo $$ > {pid_file}; exec {EVO}'; echo EXITED-$?; sleep 60"
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "110", "-y", "30", "-c", str(project),
                    command], check=True, env=env)
    _wait_for(session, r"session \d{13}_[0-9a-f]{8}")
    return int(pid_file.read_text())


def _gone(pid: int, timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


def test_sigterm_ends_the_app_with_the_exit_hint_and_no_traceback(project, tmp_path):
    session = f"evo-{os.getpid()}-{time.monotonic_ns()}"
    pid = _start_with_pid(session, project, tmp_path / "pid")
    try:
        os.kill(pid, signal.SIGTERM)
        screen = _wait_for(session, r"EXITED-\d+")
        lines = [x for x in screen.splitlines() if x.strip()]
        assert lines[-1] == "EXITED-143", screen
        assert re.fullmatch(r"Resume this session with: evo-agent --resume \d{13}_[0-9a-f]{8}", lines[-2]), screen
        assert "Traceback" not in screen
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)


def test_closing_the_terminal_ends_the_app_instead_of_leaving_it_spinning(project, tmp_path):
    session = f"evo-{os.getpid()}-{time.monotonic_ns()}"
    pid = _start_with_pid(session, project, tmp_path / "pid")
    subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)  # SIGHUP, the tty is gone
    try:
        assert _gone(pid), "evo-agent kept running after its terminal went away"
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_sigterm_in_the_startup_picker_restores_the_terminal_and_says_so(project, tmp_path):
    subprocess.run([EVO, "-p", "list the files"], cwd=project, capture_output=True, check=True,
                   env={**os.environ, "EVO_AGENT_PROVIDER": "demo"})
    session = f"evo-{os.getpid()}-{time.monotonic_ns()}"
    pid_file = tmp_path / "pid"
    command = f"sh -c 'echo $$ > {pid_file}; exec {EVO} --resume'; echo EXITED-$?; sleep 60"
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "110", "-y", "30", "-c", str(project), command],
                   check=True, env={**os.environ, "EVO_AGENT_PROVIDER": "demo"})
    try:
        _wait_for(session, r"\"list the files\"")  # a picker row
        os.kill(int(pid_file.read_text()), signal.SIGTERM)
        screen = _wait_for(session, r"EXITED-\d+")
        lines = [x for x in screen.splitlines() if x.strip()]
        assert lines[-2:] == ["evo-agent: terminated", "EXITED-143"], screen
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
