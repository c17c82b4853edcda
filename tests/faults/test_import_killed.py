"""`sessions import` killed with SIGKILL while it writes: nothing cut short is listed, and fsck says what it was."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import pytest

from evo_agent.session.layout import STAGING_NAME
from tests.cli_runner import COMMAND

pytestmark = pytest.mark.faults


def _claude_code_source(path, turns: int) -> None:
    """A Claude Code transcript of `turns` exchanges of 8 KB each (a parentUuid chain, as it writes one)."""
    with open(path, "w") as f:
        for n in range(turns):
            f.write(json.dumps({"type": "user", "uuid": f"{n:08d}-u", "parentUuid": f"{n - 1:08d}-a" if n else None,
                                "message": {"role": "user", "content": f"question {n} " + "x" * 4000}}) + "\n")
            f.write(json.dumps({"type": "assistant", "uuid": f"{n:08d}-a", "parentUuid": f"{n:08d}-u",
                                "message": {"id": f"msg_{n}", "role": "assistant",
                                            "content": [{"type": "text", "text": f"answer {n} " + "y" * 4000}]}}) + "\n")


def _wait_for_staged(sessions, at_least: int, proc, timeout: float = 60.0):
    """The staged transcript of the import once it holds `at_least` bytes (polled: a file, not a sleep)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the import ended before it could be killed mid-write"
        for staged in sessions.glob(f"*/{STAGING_NAME}") if sessions.is_dir() else ():
            if staged.stat().st_size >= at_least:
                return staged
        time.sleep(0.002)
    raise AssertionError(f"no staged transcript of {at_least} bytes within {timeout}s")


def test_an_import_killed_mid_write_is_never_listed_and_imports_again_whole(cli, tmp_path):
    source = tmp_path / "big.jsonl"
    _claude_code_source(source, 3000)  # ~24 MB: a write long enough to be killed in
    proc = subprocess.Popen([*COMMAND, "sessions", "import", "claude-code", str(source)], cwd=cli.project,
                            env=cli.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        staged = _wait_for_staged(cli.sessions_dir, 2 << 20, proc)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    listing = cli.run("sessions", "list", "--all")
    assert listing.rc == 0 and "No sessions" in listing.out, listing.out
    checked = cli.run("sessions", "fsck")
    (finding,) = [line for line in checked.out_lines if STAGING_NAME in line]
    assert finding.startswith(staged.parent.name) and "an import that ended before it was complete" in finding

    again = cli.run("sessions", "import", "claude-code", str(source))
    assert again.rc == 0 and " (6000 messages," in again.out, again.err
    new = again.out.split(" → ", 1)[1].split(" ", 1)[0]
    assert new != staged.parent.name
    from evo_agent.session import load_for_resume

    messages = load_for_resume(cli.transcript(new)).messages
    assert len(messages) == 6000 and messages[-1]["content"][0]["text"].startswith("answer 2999 ")
