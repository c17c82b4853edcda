"""Drive the real `evo-agent` line REPL turn by turn: type a line, wait for what it prints."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from pathlib import Path

from tests.cli_runner import COMMAND


class _Collector(threading.Thread):
    """Reads one pipe to its end, keeping everything, so the child never blocks on a full pipe."""

    def __init__(self, stream) -> None:  # noqa: ANN001
        super().__init__(daemon=True)
        self.stream = stream
        self.chunks: list[str] = []
        self.changed = threading.Condition()

    def run(self) -> None:
        for line in iter(self.stream.readline, ""):
            with self.changed:
                self.chunks.append(line)
                self.changed.notify_all()

    @property
    def text(self) -> str:
        with self.changed:
            return "".join(self.chunks)

    def wait_for(self, needle: str, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        with self.changed:
            while needle not in "".join(self.chunks):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"{needle!r} did not appear within {timeout}s; got {''.join(self.chunks)!r}")
                self.changed.wait(left)
            return "".join(self.chunks)


class Repl:
    """`evo-agent` (piped stdin: the line REPL) in `project`, in its own process group."""

    def __init__(self, project: Path, env: dict[str, str], *args: str) -> None:
        self.proc = subprocess.Popen(
            [*COMMAND, *args], cwd=project, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, encoding="utf-8", errors="replace", start_new_session=True,
        )
        self.out = _Collector(self.proc.stdout)
        self.err = _Collector(self.proc.stderr)
        self.out.start()
        self.err.start()

    def type(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def ask(self, line: str, answer: str, timeout: float = 30.0) -> None:
        """Type a prompt and wait until `answer` has been printed."""
        self.type(line)
        self.out.wait_for(answer, timeout)

    def close(self, timeout: float = 30.0) -> int:
        """EOF on stdin: the REPL leaves with the exit hint. Returns the exit code."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        code = self.proc.wait(timeout)
        self.out.join(5)
        self.err.join(5)
        return code

    def kill(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait(10)

    def __enter__(self) -> Repl:
        return self

    def __exit__(self, *exc) -> None:
        self.kill()
