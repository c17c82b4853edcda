"""The real console script in a real terminal (tmux): start → prompt → /exit → the exit hint."""

from __future__ import annotations

import os
import re
import shutil
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
        _wait_for(session, r"tokens=[\d,]+\s+「list the files")
        subprocess.run(["tmux", "send-keys", "-t", session, "Enter"], check=True)
        _wait_for(session, r"messages restored")
        subprocess.run(["tmux", "send-keys", "-t", session, "/exit", "Enter"], check=True)
        _wait_for(session, r"Resume this session with: evo-agent --resume \d{13}_[0-9a-f]{8}\s+EXITED-0")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
