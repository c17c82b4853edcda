"""How tests run the `evo-agent` CLI: the installed console script as a subprocess (`Cli`), or
`evo_agent.cli.main.main(argv)` in this process with captured streams (`InProcessCli`, like click's
CliRunner). Both answer with a `Result` (exit code, stdout, stderr). The fixtures are in
tests/plugins/cli.py.
"""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.builders import read_records

_SCRIPT = Path(sys.executable).parent / "evo-agent"
COMMAND = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "evo_agent.cli.main"]
HINT_RE = re.compile(r"\AResume this session with: evo-agent --resume (\d{13}_[0-9a-f]{8})\Z")


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """This process's environment without any provider or evo-agent setting, `HOME` at `home` (the user's
    config and cache directories under it: trust answers and the listing index never touch the real ones),
    no colour.

    The state directory (prompt history, the registry of sessions made) is the test's own
    (`XDG_STATE_HOME`, set for every test by tests/plugins/projects.py), shared with the library calls
    the test makes in-process; under `home` only outside pytest's fixtures. `extra` may set another."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "OPENAI_", "EVO_AGENT_")) and k not in ("COLUMNS", "LINES")}
    env.update(HOME=str(home), NO_COLOR="1", PYTHONIOENCODING="utf-8", XDG_CONFIG_HOME=str(home / ".config"),
               XDG_STATE_HOME=os.environ.get("XDG_STATE_HOME") or str(home / ".local" / "state"),
               XDG_CACHE_HOME=str(home / ".cache"))
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
    """The real console script in `project` with `env`: what a user at a shell gets."""

    def __init__(self, project: Path, env: dict[str, str]) -> None:
        self.project = project
        self.env = env
        self.sessions_dir = project / ".evo-agent" / "sessions"

    def run(self, *args: str, input: str | None = "", timeout: float = 60, env: dict | None = None) -> Result:  # noqa: A002
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

    def kill_9_while_bash_runs(self, proc: subprocess.Popen, pid_file: Path) -> None:
        """SIGKILL `proc`'s group once its bash tool wrote its own pid to `pid_file` (`echo $$ > F; exec sleep`),
        then kill that tool's own group too (the bash tool runs it in a session of its own)."""

        def bash_running() -> None:
            deadline = time.monotonic() + 30
            while not (pid_file.exists() and pid_file.read_text().strip()):
                assert proc.poll() is None, proc.communicate()
                assert time.monotonic() < deadline, "the bash tool never started"
                time.sleep(0.05)

        try:
            self.kill_9_when(proc, bash_running)
        finally:
            if pid_file.exists() and pid_file.read_text().strip():
                try:
                    os.killpg(int(pid_file.read_text()), signal.SIGKILL)
                except ProcessLookupError:
                    pass

    def trust(self, *args: str) -> Result:
        """`evo-agent trust` here: what a user does before a project's committed settings may apply."""
        result = self.run("trust", *args)
        assert result.rc == 0, (result.out, result.err)
        return result

    def user_record(self) -> dict:
        """The user's own record of this project (trust answer, "always" rules), {} when there is none."""
        from evo_agent.session import user_record_path

        path = user_record_path(self.project, self.env)
        return json.loads(path.read_text()) if path.exists() else {}

    def session_ids(self) -> list[str]:
        if not self.sessions_dir.is_dir():
            return []
        return sorted(p.name for p in self.sessions_dir.iterdir() if p.is_dir())

    def transcript(self, sid: str) -> Path:
        return self.sessions_dir / sid / "messages.jsonl"

    def records(self, sid: str) -> list[dict]:
        return read_records(self.transcript(sid))

    def messages(self, sid: str) -> list[dict]:
        return [r["message"] for r in self.records(sid) if r["type"] in ("user", "assistant")]


class InProcessCli:
    """`main(argv)` in this process: cwd `project`, environment `env`, stdin/stdout/stderr captured.

    Only for what ends before a front end starts (argument checks, exit codes, `sessions` commands):
    no terminal, no signals, and the process-wide state it touches is restored by `monkeypatch`.
    """

    def __init__(self, project: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
        self.project = project
        self.env = env
        self._monkeypatch = monkeypatch

    def run(self, *args: str, input: str = "") -> Result:  # noqa: A002
        from evo_agent.cli.main import main

        out, err = io.StringIO(), io.StringIO()
        with self._monkeypatch.context() as patch:
            patch.chdir(self.project)
            for key in [k for k in os.environ if k not in self.env]:
                patch.delenv(key)
            for key, value in self.env.items():
                patch.setenv(key, value)
            patch.setattr(sys, "stdin", io.StringIO(input))
            patch.setattr(sys, "stdout", out)
            patch.setattr(sys, "stderr", err)
            try:
                main(list(args))
                code: int | str | None = 0
            except SystemExit as exc:
                code = exc.code
        if isinstance(code, str):  # sys.exit("message"): the message goes to stderr, the status is 1
            err.write(code + "\n")
            code = 1
        return Result(code or 0, out.getvalue(), err.getvalue())
