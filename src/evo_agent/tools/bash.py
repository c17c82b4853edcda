"""The `bash` tool: run a shell command in the project, bounded in time and output.

The command runs in its own session/process group so that a timeout or a
cancel (Ctrl+C in the agent) can kill everything it started, including
background children, with one SIGKILL to the group. Output is read in the
calling thread with select() so a 10 MB flood neither deadlocks the pipe nor
fills memory: only a head and a rolling tail are kept.
"""

from __future__ import annotations

import codecs
import os
import time
from collections import deque

from ._common import error, guarded
from .base import Tool, ToolContext, ToolFacts, ToolResult

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)
if TYPE_CHECKING:
    import subprocess
    from pathlib import Path
    from typing import Any

DEFAULT_TIMEOUT_S = 120.0
MAX_TIMEOUT_S = 600.0
MAX_OUTPUT_CHARS = 50_000
# Room kept for the cut notice and the status line, so the whole result
# stays within MAX_OUTPUT_CHARS.
_RESERVED_CHARS = 200
_HEAD_CHARS = (MAX_OUTPUT_CHARS - _RESERVED_CHARS) // 2
_TAIL_CHARS = MAX_OUTPUT_CHARS - _RESERVED_CHARS - _HEAD_CHARS
_POLL_S = 0.05
_CHUNK_BYTES = 65536
# After the shell exits (or is killed), how long to keep draining output that
# processes outside our control may still hold open.
_DRAIN_GRACE_S = 0.5
_LAST_SIGNAL = 64  # SIGRTMAX on Linux


class _OutputCapture:
    """Keeps the first and last characters of a byte stream, counting the rest.

    Decoding is incremental with errors="replace", so a multi-byte character
    split across reads is decoded correctly and invalid bytes become U+FFFD.
    """

    def __init__(self, head_chars: int = _HEAD_CHARS, tail_chars: int = _TAIL_CHARS) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._head_limit = head_chars
        self._tail_limit = tail_chars
        self._head: list[str] = []
        self._head_len = 0
        self._tail: deque[str] = deque()
        self._tail_len = 0
        self.total_chars = 0

    def feed(self, data: bytes, final: bool = False) -> None:
        text = self._decoder.decode(data, final)
        if not text:
            return
        self.total_chars += len(text)
        room = self._head_limit - self._head_len
        if room > 0:
            self._head.append(text[:room])
            self._head_len += len(text[:room])
            text = text[room:]
        if text:
            self._tail.append(text)
            self._tail_len += len(text)
            # Drop whole chunks that lie entirely before the tail window.
            while self._tail and self._tail_len - len(self._tail[0]) >= self._tail_limit:
                self._tail_len -= len(self._tail.popleft())

    def text(self) -> str:
        self.feed(b"", final=True)
        head = "".join(self._head)
        tail = "".join(self._tail)
        if len(tail) > self._tail_limit:
            tail = tail[-self._tail_limit :]
        cut = self.total_chars - len(head) - len(tail)
        if cut <= 0:
            return head + tail
        sep = "" if head.endswith("\n") else "\n"
        return f"{head}{sep}[... {cut} characters cut from the middle of the output ...]\n{tail}"


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the command's whole process group (its pgid is its pid)."""
    import signal  # here, as subprocess: a launch's first request needs neither (start-up, SPEC §8)

    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class _Status:
    """How the command ended: the status line its lingering reaper writes, else the process's own exit.

    A status above 128 is the shell's spelling of "killed by signal N", which the tool reports as such."""

    def __init__(self, proc: subprocess.Popen[bytes], call: Any) -> None:
        self._proc, self._call = proc, call
        self._piped = call.status_fd is not None
        self._text = b""
        self.code: int | None = None

    def read(self) -> None:
        """Read what the status pipe holds; at its end, the code (the reaper's own if it wrote none)."""
        chunk = os.read(self._call.status_fd, 64)
        if chunk:
            self._text += chunk
            return
        text = self._text.strip()
        if text.isdigit():
            number = int(text)
            # 128 + N is the shell's "killed by signal N" (Linux has 64); `exit 200` or `exit 255` is an exit code
            self.code = -(number - 128) if 128 < number <= 128 + _LAST_SIGNAL else number
        else:  # killed before it could write: its own exit tells
            self.code = self._proc.wait()

    def poll(self) -> int | None:
        """The code once the command ended, else None."""
        if not self._piped:
            return self._proc.poll()
        return self.code


# Reapers still watching a job their command put in the background: kept so that each is waited for once it
# ends (no zombie, no "still running" warning from a dropped Popen), pruned at every call.
_lingering: list[subprocess.Popen[bytes]] = []


def _keep_if_lingering(proc: subprocess.Popen[bytes]) -> None:
    _lingering[:] = [p for p in _lingering if p.poll() is None]
    if proc.poll() is None:
        _lingering.append(proc)


def _discard_until_end(stream: Any) -> None:
    """Read and drop what a job the command put in the background writes to the call's output, until it closes it.

    Closed at once, the pipe killed the job at its next line (SIGPIPE, or EPIPE: `npm run dev &` ended at its
    first log line), when it is meant to run while the session lives (reaper.py)."""
    import threading

    def discard() -> None:
        try:
            while stream.read(65536):
                pass
        except (OSError, ValueError):
            pass
        finally:
            stream.close()

    threading.Thread(target=discard, name="evo-agent-background-output", daemon=True).start()


def _drain(fd: int, capture: _OutputCapture, grace_s: float) -> None:
    """Read what is left in the pipe, giving up after `grace_s` if it stays open."""
    import select

    end = time.monotonic() + grace_s
    while (left := end - time.monotonic()) > 0:
        ready, _, _ = select.select([fd], [], [], min(_POLL_S, left))
        if ready:
            chunk = os.read(fd, _CHUNK_BYTES)
            if not chunk:
                return
            capture.feed(chunk)


def _fmt_seconds(s: float) -> str:
    return f"{s:g}"


def _parse_timeout(tool_input: dict[str, Any]) -> float | str:
    raw = tool_input.get("timeout")
    if raw is None:
        return DEFAULT_TIMEOUT_S
    if isinstance(raw, bool) or not isinstance(raw, (int, float)):
        return "timeout must be a number of seconds"
    if raw <= 0:
        return "timeout must be greater than 0 seconds"
    return min(float(raw), MAX_TIMEOUT_S)


def _command_line(command: str, ctx: ToolContext,
                  git_dirs: list[Path] | None = None) -> tuple[list[str], dict[str, str]]:
    """The argv and environment of the call.

    A call the permission gate let run unasked (`ctx.read_only`, a ReadOnlyPlan) runs the checked
    command with the checked PATH, in the read-only sandbox where bubblewrap works (sandbox.py);
    any other call runs the model's command as given, in `--sandbox`'s sandbox when there is one
    (`git_dirs`: the project's `.git` entries, bound read-only there).
    """
    # Imported by the first call (as subprocess, select and the reaper): a launch's first request needs none.
    from .reaper import system_bash
    from .tool_env import tool_environment

    env = tool_environment()
    plan = ctx.read_only
    if plan is None:
        # bash by its absolute path: a relative or in-project PATH entry (`node_modules/.bin`, `.`, an activated
        # `.venv/bin`) would run a clone's `bash`
        argv = [system_bash(ctx.project_dir), "-c", ctx.ruled_command or command]
        return (ctx.sandbox.wrap(argv, cwd=ctx.work_dir, git_dirs=git_dirs) if ctx.sandbox is not None else argv), env
    from .sandbox import read_only_sandbox
    from .shell_readonly import unasked_environment

    env = unasked_environment(env, ctx.project_dir)  # no caller's GIT_*: unasked git reads what was judged
    env["PATH"] = plan.path
    argv = [system_bash(ctx.project_dir), "-c", plan.command]
    sandbox = read_only_sandbox(ctx.project_dir)
    return (sandbox.wrap(argv, cwd=ctx.work_dir) if sandbox is not None else argv), env


@guarded("bash")
def run_bash(tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
    """Run `bash -c command` in the working directory (the start directory); see the module docstring."""
    command = tool_input.get("command")
    if not isinstance(command, str) or not command.strip():
        return error("command must be a non-empty string")
    timeout = _parse_timeout(tool_input)
    if isinstance(timeout, str):
        return error(timeout)
    if ctx.cancel.is_set():
        return error("interrupted before the command started")

    import select
    import subprocess  # here: a launch's first request (start-up, SPEC §8) needs no subprocess

    from .reaper import reaped_call

    git_dirs = _git_dirs(ctx)
    argv, env = _command_line(command, ctx, git_dirs)
    # The reaper leads the command's process group, stays while a job the command put in the background runs,
    # and kills the group when the agent is gone (reaper.py).
    call = reaped_call(argv, ctx.project_dir)
    try:
        proc = subprocess.Popen(
            call.argv,
            cwd=ctx.work_dir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            bufsize=0,
            pass_fds=call.pass_fds,
        )
    finally:
        call.started()
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    capture = _OutputCapture()
    status = _Status(proc, call)
    outcome = "exited"
    deadline = time.monotonic() + timeout
    eof = False
    try:
        exited_at: float | None = None
        while True:
            if ctx.cancel.is_set():
                outcome = "interrupted"
                break
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                outcome = "timeout"
                break
            wait = min(_POLL_S, remaining)
            watched = [fd] if not eof else []
            if call.status_fd is not None and status.code is None:
                watched.append(call.status_fd)
            if watched:
                ready, _, _ = select.select(watched, [], [], wait)
                if fd in ready:
                    chunk = os.read(fd, _CHUNK_BYTES)
                    if chunk:
                        capture.feed(chunk)
                    else:
                        eof = True
                if call.status_fd in ready:
                    status.read()
            else:
                try:
                    proc.wait(timeout=wait)
                except subprocess.TimeoutExpired:
                    pass
            if status.poll() is not None:
                if eof:
                    break
                # The shell is gone but a background child still holds the
                # pipe: keep reading briefly, then return without waiting on it.
                now = time.monotonic()
                if exited_at is None:
                    exited_at = now
                elif now - exited_at > _DRAIN_GRACE_S:
                    break
        if outcome != "exited":
            _kill_group(proc)
            proc.wait()
            _drain(fd, capture, _DRAIN_GRACE_S)
    finally:
        # Also reached on KeyboardInterrupt: never leave the group running, unless the command ended and its
        # reaper stays for a job it put in the background.
        if status.poll() is None:
            _kill_group(proc)
            proc.wait()
        if outcome == "exited" and not eof and status.poll() is not None:
            _discard_until_end(proc.stdout)  # a job left in the background still writes there
        else:
            proc.stdout.close()
        call.close()
    code = status.poll()
    if code is None:
        code = proc.wait()
    _keep_if_lingering(proc)

    output = capture.text()
    body = output if output else "(no output)\n"
    if not body.endswith("\n"):
        body += "\n"
    if code == 2 and ctx.read_only is not None and " --no-messages " in f" {ctx.read_only.command} ":
        body += _RG_QUIET
    notice = None
    if git_dirs is not None:
        from .sandbox import find_git_dirs, new_git_dirs_notice

        notice = new_git_dirs_notice(ctx.project_dir, git_dirs, find_git_dirs(ctx.project_dir))
        if notice is not None:
            body += f"[{notice.removeprefix('evo-agent: ')}]\n"
    result = _result(body, outcome, timeout, code)
    result.notice = notice
    return result


# Unasked rg runs with --no-messages (shell_allowlist.RG_SAFE: a committed ignore file linking to ~/.netrc had its
# lines quoted in rg's errors), so the model is told why an exit code 2 came without a word.
_RG_QUIET = "[rg ran unasked with its messages off: exit code 2 means a path it could not open or read]\n"


def _git_dirs(ctx: ToolContext) -> list[Path] | None:
    """The project's `.git` entries before a command that runs in `--sandbox`'s writable sandbox, else None."""
    if ctx.sandbox is None or ctx.read_only is not None or not ctx.sandbox.writable:
        return None
    from .sandbox import find_git_dirs

    return find_git_dirs(ctx.project_dir)


def _result(body: str, outcome: str, timeout: float, code: int) -> ToolResult:
    """The call's result: its output and how it ended."""
    if outcome == "timeout":
        return ToolResult(f"{body}[timed out after {_fmt_seconds(timeout)} s; process group killed]", is_error=True)
    if outcome == "interrupted":
        return ToolResult(f"{body}[interrupted; process group killed]", is_error=True)
    if code < 0:
        import signal

        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = str(-code)
        return ToolResult(f"{body}[killed by signal {name}]", is_error=True)
    return ToolResult(f"{body}[exit code {code}]", is_error=code != 0)


FACTS = ToolFacts("bash", kind="exec", approval="bash", label_arg="command")

BASH_TOOL = Tool(
    name=FACTS.name,
    facts=FACTS,
    description=(
        "Run a shell command with `bash -c` in the working directory. stdin is empty; "
        "stdout and stderr are merged. Output longer than 50,000 characters keeps its "
        "head and tail. Default timeout 120 s, at most 600 s; on timeout the command and "
        "everything it started are killed. The result ends with the exit code."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The command to run."},
            "timeout": {
                "type": "number",
                "description": "Seconds before the command is killed (default 120, max 600).",
            },
        },
        "required": ["command"],
    },
    run=run_bash,
)
