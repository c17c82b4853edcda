"""The bash tool with real processes: exit codes, killing, caps, decoding."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from evo_agent.tools import BASIC_TOOLS, ToolContext, run_tool
from evo_agent.tools.bash import MAX_OUTPUT_CHARS
from tests.helpers import process_alive


def bash(ctx: ToolContext, command: str, **extra) -> object:
    return run_tool(BASIC_TOOLS, "bash", {"command": command, **extra}, ctx)


def _wait_dead(pid: int, within: float = 2.0) -> bool:
    end = time.monotonic() + within
    while time.monotonic() < end:
        if not process_alive(pid):
            return True
        time.sleep(0.02)
    return False


def test_success_reports_output_and_exit_code(ctx):
    r = bash(ctx, "echo hello; echo oops >&2")
    assert not r.is_error
    assert "hello\n" in r.content and "oops\n" in r.content
    assert r.content.endswith("[exit code 0]")


def test_nonzero_exit_is_error(ctx):
    r = bash(ctx, "echo failing; exit 3")
    assert r.is_error
    assert r.content == "failing\n[exit code 3]"


@pytest.mark.parametrize("code", [129, 192, 193, 200, 255])
def test_an_exit_code_past_the_signals_is_an_exit_code(ctx, code):
    """The reaper reports the command's status as a number; 128 + N reads as "killed by signal N" only for a signal
    Linux has (N <= 64): `exit 255` (a failed ssh, xargs) read as "killed by signal 127"."""
    r = bash(ctx, f"exit {code}")
    if code <= 192:  # ambiguous in any shell: read as the signal, as before
        assert r.is_error and "[killed by signal " in r.content, r.content
    else:
        assert r.is_error and r.content.endswith(f"[exit code {code}]"), r.content


def test_a_background_job_that_writes_output_keeps_running_after_the_call(ctx, tmp_path: Path):
    """`npm run dev &` with its output not redirected: the call returns, and the job goes on writing. The pipe it
    writes to was closed with the call, so its next line killed it (SIGPIPE), the dev server with it."""
    mark = tmp_path / "mark"
    r = bash(ctx, f"(for i in 1 2 3; do sleep 0.3; echo tick; echo $i >> {mark}; done) & echo started")
    assert r.content.startswith("started"), r.content
    deadline = time.monotonic() + 60
    while not (mark.exists() and mark.read_text().split() == ["1", "2", "3"]):
        assert time.monotonic() < deadline, f"the job died: {mark.read_text() if mark.exists() else 'no mark'}"
        time.sleep(0.05)


def test_runs_in_project_dir(ctx):
    (ctx.project_dir / "marker.txt").write_text("x")
    r = bash(ctx, "pwd; ls")
    assert str(ctx.project_dir.resolve()) in r.content
    assert "marker.txt" in r.content


def test_stdin_is_empty(ctx):
    r = bash(ctx, "cat; echo done")
    assert r.content == "done\n[exit code 0]"


def test_no_output(ctx):
    r = bash(ctx, "true")
    assert r.content == "(no output)\n[exit code 0]"


def test_timeout_kills_whole_process_group(ctx, tmp_path: Path):
    pidfile = tmp_path / "child.pid"
    start = time.monotonic()
    r = bash(ctx, f"sleep 30 & echo $! > {pidfile}; echo started; wait", timeout=0.5)
    elapsed = time.monotonic() - start
    assert r.is_error
    assert "timed out after 0.5 s" in r.content
    assert "started" in r.content  # partial output is kept
    assert elapsed < 15  # the timeout ended it, not the 30 s child (a margin for a loaded machine)
    assert _wait_dead(int(pidfile.read_text())), "background child survived the timeout"


def test_cancel_from_another_thread_returns_promptly(ctx, tmp_path: Path):
    pidfile = tmp_path / "child.pid"
    timer = threading.Timer(0.3, ctx.cancel.set)
    timer.start()
    start = time.monotonic()
    try:
        r = bash(ctx, f"sleep 30 & echo $! > {pidfile}; wait")
    finally:
        timer.cancel()
    elapsed = time.monotonic() - start
    assert r.is_error
    assert "interrupted" in r.content
    assert elapsed < 15  # the cancel ended it, not the 30 s child (a margin for a loaded machine)
    assert _wait_dead(int(pidfile.read_text()))


def test_already_cancelled_does_not_run(ctx):
    ctx.cancel.set()
    r = bash(ctx, "touch ran")
    assert r.is_error and "interrupted" in r.content
    assert not (ctx.project_dir / "ran").exists()


def test_huge_output_keeps_head_and_tail(ctx):
    # seq 1 1500000 writes about 10.9 MB.
    start = time.monotonic()
    r = bash(ctx, "seq 1 1500000")
    assert time.monotonic() - start < 10
    assert not r.is_error
    assert len(r.content) <= MAX_OUTPUT_CHARS
    assert r.content.startswith("1\n2\n3\n")
    assert r.content.endswith("1499999\n1500000\n[exit code 0]")
    assert "characters cut" in r.content
    full = "".join(f"{i}\n" for i in range(1, 1500001))
    notice_start = r.content.index("[... ")
    notice_end = r.content.index("...]\n") + len("...]\n")
    cut = int(r.content[notice_start:].split()[1])
    head = r.content[:notice_start]
    if not full.startswith(head):  # the notice got a line of its own
        head = head[:-1]
    tail = r.content[notice_end : -len("[exit code 0]")]
    assert full.startswith(head) and full.endswith(tail)
    assert len(head) + cut + len(tail) == len(full)


def test_output_just_under_cap_is_not_cut(ctx):
    r = bash(ctx, "head -c 40000 /dev/zero | tr '\\0' a")
    assert "cut" not in r.content
    assert r.content == "a" * 40000 + "\n[exit code 0]"


def test_invalid_utf8_is_replaced(ctx):
    r = bash(ctx, r"printf 'ok \xff\xfe end\n'")
    assert not r.is_error
    assert "ok \ufffd\ufffd end" in r.content


def test_multibyte_split_across_reads_survives(ctx):
    # 70,000 'é' (2 bytes each) crosses many 64 KiB read boundaries.
    r = bash(ctx, "python3 -c \"import sys; sys.stdout.write('é'*20000)\"")
    assert "\ufffd" not in r.content
    assert r.content.startswith("é" * 20000)


def test_background_child_holding_pipe_does_not_block(ctx, tmp_path: Path):
    pidfile = tmp_path / "bg.pid"
    start = time.monotonic()
    r = bash(ctx, f"sleep 5 & echo $! > {pidfile}; echo done")
    assert time.monotonic() - start < 2.5
    assert r.content.startswith("done\n") and r.content.endswith("[exit code 0]")
    os.kill(int(pidfile.read_text()), 9)


def test_timeout_is_capped_and_validated(ctx):
    assert bash(ctx, "true", timeout=10_000).content.endswith("[exit code 0]")
    r = bash(ctx, "true", timeout=0)
    assert r.is_error and "timeout" in r.content
    r = bash(ctx, "true", timeout="5")
    assert r.is_error and "timeout" in r.content
