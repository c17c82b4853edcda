"""A standard stream closed at launch (`evo-agent <&-`, `evo-agent -p … >&-`, `2>&-`) is no crash.

A shell's `<&-` starts the program with file descriptor 0 closed: Python sets `sys.stdin` to None and the
launch died in a traceback (`'NoneType' object has no attribute 'isatty'`); `-p` with stdout closed died the
same way after the turn, and with the first file it opened taking descriptor 1 or 2, whatever a child
inherits as its stdout or stderr would have been written into that file. The console script now opens
/dev/null in a closed slot first: a closed stdin reads as an empty one, a closed stdout or stderr discards.
"""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.cli_runner import COMMAND, Cli
from tests.fake_model_server import text


def _run_closed(cli: Cli, fd: int, *args: str) -> subprocess.CompletedProcess[str]:
    """The console script with descriptor `fd` closed; the other standard streams captured."""
    streams = {"stdin": subprocess.DEVNULL, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    streams[("stdin", "stdout", "stderr")[fd]] = None  # inherited, then closed in the child before exec
    return subprocess.run([*COMMAND, *args], cwd=cli.project, env=cli.env, text=True, timeout=60,
                          preexec_fn=lambda: os.close(fd), **streams)  # type: ignore[call-overload]


@pytest.mark.parametrize("args", [(), ("--plain",)], ids=["default", "plain"])
def test_a_closed_stdin_reads_as_an_empty_one(cli, model_server, args):
    done = _run_closed(cli, 0, *args)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 0, done.stderr
    assert "evo-agent" in done.stdout + done.stderr  # the welcome line: it ran, and read end of input


def test_print_mode_with_stdout_closed_ends_cleanly_and_keeps_the_session(cli, model_server):
    model_server.script(text("the answer nobody reads"))
    done = _run_closed(cli, 1, "-p", "hello")
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 0, done.stderr
    assert "Resume this session with" in done.stderr  # the hint still reaches the user
    [session] = cli.session_ids()
    assert "the answer nobody reads" in (cli.sessions_dir / session / "messages.jsonl").read_text()


def test_print_mode_with_stderr_closed_still_answers(cli, model_server):
    model_server.script(text("the answer"))
    done = _run_closed(cli, 2, "-p", "hello")
    assert done.returncode == 0
    assert done.stdout == "the answer\n"
