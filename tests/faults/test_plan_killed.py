"""`kill -9` (of the agent's process group) while `plan_create` writes the plan.

A plan.md of this user's is vouched for by a line in the registry `plans-made` (an unpacked archive's
0600 plan.md is not the user's). The line was appended after plan.md landed: a kill between the two
left the user's own plan unvouched for ever, so no resume, compaction or later session showed it to the
model again, while `evo-agent plan` showed it to the user as the open plan. The moment is held, not
guessed: the test holds the registry's lock and kills the agent once it waits for it (/proc/locks).
"""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from evo_agent.session.origin import start_registry
from tests.cli_runner import COMMAND
from tests.fake_model_server import text, tool_use

from ..cli.test_plan import reminders

pytestmark = pytest.mark.faults


def _waits_for_lock(path: Path) -> bool:
    """Whether some process waits for a lock on `path` (a `->` line of /proc/locks naming its inode)."""
    inode = os.stat(path).st_ino
    with open("/proc/locks") as locks:
        return any("->" in line and line.split("->", 1)[1].split()[4].endswith(f":{inode}") for line in locks)


def _wait_until(condition, proc: subprocess.Popen, what: str, timeout: float = 60.0) -> None:
    """Poll (not sleep for a guess) until `condition()` holds; the process must still be running."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert proc.poll() is None, f"the agent ended before {what}: {proc.communicate()}"
        assert time.monotonic() < deadline, f"no {what} within {timeout}s"
        time.sleep(0.005)


@pytest.mark.skipif(not os.path.exists("/proc/locks"), reason="needs /proc/locks to see the agent wait")
def test_a_plan_create_killed_while_vouching_for_its_plan_leaves_the_model_told_what_is_on_disk(
        cli, model_server, project):
    registry = Path(cli.env["XDG_STATE_HOME"]) / "evo-agent" / "plans-made"
    assert start_registry(registry)  # an earlier plan of this user's started the count (a process start ago)
    model_server.script(tool_use("plan_create", {"title": "Port to Rust", "goal": "a Rust parser"}))
    fd = os.open(registry, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # the agent's append of the plan's line waits here
        proc = subprocess.Popen([*COMMAND, "-p", "plan the port"], cwd=project, env=cli.env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
        try:
            _wait_until(lambda: _waits_for_lock(registry), proc, "wait for the registry's lock")
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate(timeout=30)
    finally:
        os.close(fd)
    assert proc.returncode == -signal.SIGKILL

    todo = project / ".evo-agent" / "tasks" / "todo"
    left = sorted(p.name for p in todo.iterdir()) if todo.is_dir() else []
    shown = cli.run("plan")
    model_server.script(text("Resumed."))
    resumed = cli.run("-c", "-p", "go on")
    assert resumed.rc == 0 and resumed.out == "Resumed.\n", resumed.err
    told = reminders(model_server.requests[-1]["messages"][-1])
    if left:  # the plan was made: the model is told of it, as the user is
        assert [p.name for p in (todo / left[0]).iterdir()] == ["plan.md"], left
        assert "Port to Rust" in shown.out and "Not shown to the model" not in shown.out, shown.out
        assert len(told) == 1 and "This session was resumed" in told[0] and "Port to Rust" in told[0], told
    else:  # killed before it was made: no plan anywhere, none told
        assert "Port to Rust" not in shown.out and told == [], (shown.out, told)
    model_server.assert_all_valid()
