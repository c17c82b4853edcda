"""Run the installed `evo-agent` script as a user would: a subprocess in a temporary git repo."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

_SCRIPT = Path(sys.executable).parent / "evo-agent"
COMMAND = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "evo_agent.cli.main"]
HINT_RE = re.compile(r"\AResume this session with: evo-agent --resume (\d{13}_[0-9a-f]{8})\Z")


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "EVO_AGENT_"))}
    env.update(HOME=str(home), NO_COLOR="1", PYTHONIOENCODING="utf-8")
    env.update(extra)
    return env


@dataclass
class Result:
    rc: int
    out: str
    err: str

    @property
    def err_lines(self) -> list[str]:
        return self.err.splitlines()

    @property
    def out_lines(self) -> list[str]:
        return self.out.splitlines()

    def hint_id(self, stream: str = "err") -> str:
        """The session named by the exit hint, which must be the last line of `stream`."""
        lines = self.err_lines if stream == "err" else self.out_lines
        assert lines, f"nothing on std{stream}; out={self.out!r} err={self.err!r}"
        match = HINT_RE.match(lines[-1])
        assert match, f"last line of std{stream} is not the exit hint: {lines[-1]!r}\nout={self.out!r}\nerr={self.err!r}"
        return match.group(1)


class Cli:
    def __init__(self, project: Path, env: dict[str, str]) -> None:
        self.project = project
        self.env = env
        self.sessions_dir = project / ".evo-agent" / "sessions"

    def run(self, *args: str, input: str | None = "", timeout: float = 60, env: dict | None = None) -> Result:
        proc = subprocess.run(
            [*COMMAND, *args], cwd=self.project, env=env or self.env, input=input,
            capture_output=True, text=True, timeout=timeout,
        )
        return Result(proc.returncode, proc.stdout, proc.stderr)

    def popen(self, *args: str, **kw) -> subprocess.Popen:
        return subprocess.Popen(
            [*COMMAND, *args], cwd=self.project, env=kw.pop("env", None) or self.env,
            stdin=kw.pop("stdin", subprocess.PIPE), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, **kw,
        )

    def kill_9_when(self, proc: subprocess.Popen, ready) -> None:
        """Wait for `ready()` (the moment to strike), SIGKILL the process group, reap, close pipes."""
        try:
            ready()
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
        finally:
            if proc.poll() is None:
                proc.kill()
            for stream in (proc.stdin, proc.stdout, proc.stderr):
                if stream is not None:
                    stream.close()

    def session_ids(self) -> list[str]:
        if not self.sessions_dir.is_dir():
            return []
        return sorted(p.name for p in self.sessions_dir.iterdir() if p.is_dir())

    def transcript(self, sid: str) -> Path:
        return self.sessions_dir / sid / "messages.jsonl"

    def records(self, sid: str) -> list[dict]:
        return [json.loads(line) for line in self.transcript(sid).read_bytes().splitlines() if line.strip()]

    def messages(self, sid: str) -> list[dict]:
        return [r["message"] for r in self.records(sid) if r["type"] in ("user", "assistant")]


@pytest.fixture
def cli(project, model_server, tmp_path) -> Cli:
    """`evo-agent` in `project`, talking to the local fake Messages API only."""
    home = tmp_path / "home"
    home.mkdir()
    return Cli(project, model_server.env(clean_env(home)))


@pytest.fixture
def demo_cli(project, tmp_path) -> Cli:
    """`evo-agent` with the offline demo provider and no route to any API."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return Cli(project, clean_env(home, EVO_AGENT_PROVIDER="demo", ANTHROPIC_BASE_URL="http://127.0.0.1:9"))


def seed_session(project: Path, *turns: tuple[str, str], tokens: tuple[int, int] = (100, 10)) -> str:
    """A finished session written by the session library, as the agent writes one (no CLI run needed)."""
    from evo_agent.session import SessionStore

    store = SessionStore(project, warn=lambda line: None)
    recorder = store.create(model="claude-sonnet-4-5", provider="anthropic")
    for prompt, answer in turns:
        recorder.user({"role": "user", "content": prompt})
        recorder.assistant({"role": "assistant", "content": [{"type": "text", "text": answer}]},
                           input_tokens=tokens[0], output_tokens=tokens[1])
    recorder.checkpoint()
    return recorder.session_id


def history_of(*turns: tuple[str, str]) -> list[dict]:
    out: list[dict] = []
    for prompt, answer in turns:
        out += [{"role": "user", "content": prompt}, {"role": "assistant", "content": [{"type": "text", "text": answer}]}]
    return out
