"""A killed agent leaves no tool running (SPEC §9): not even a job an approved command put in the background.

The reaper (tools/reaper.py) leads each bash call's process group. A job the command puts in the background
(`npm run dev &`, `nohup … &`) keeps running after the call, as a user who asked for a dev server wants; the
reaper stays as long as its group has members, and kills the group when the agent is gone: killed (`kill -9`
included) or exited normally (as Claude Code kills its background shells at exit). A job that leaves the group
and the session (`setsid`) is not followed (reaper.py says why).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cli_runner import Cli, clean_env
from tests.fake_model_server import text, tool_use
from tests.helpers import process_alive

BACKGROUND = ["sleep 600 & echo $! > {job}",
              "nohup sleep 600 >/dev/null 2>&1 & echo $! > {job}",
              "( sleep 600 & echo $! > {job} ) &"]


def _wait_for_pid(path: Path, proc: subprocess.Popen) -> int:
    deadline = time.monotonic() + 60
    while not (path.exists() and path.read_text().strip()):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the bash tool never started"
        time.sleep(0.05)
    return int(path.read_text())


def _gone(pid: int) -> bool:
    deadline = time.monotonic() + 30  # generous: a loaded machine; the reaper looks every 2 s at most
    while process_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not process_alive(pid)


def _kill(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.mark.parametrize("background", BACKGROUND)
def test_a_background_job_dies_with_the_killed_agent(tmp_path, project, model_server, background):
    job, running = tmp_path / "job.pid", tmp_path / "running.pid"
    model_server.script(tool_use("bash", {"command": background.format(job=job)}, id="t1"),
                        tool_use("bash", {"command": f"echo $$ > {running}; exec sleep 300"}, id="t2"))
    cli = Cli(project, model_server.env(clean_env(tmp_path / "home")))
    proc = cli.popen("-p", "start the server, then test", "--permission-mode", "bypass", start_new_session=True,
                     stdin=subprocess.DEVNULL)
    pids: list[int] = []
    try:
        pids.append(_wait_for_pid(running, proc))
        pids.append(int(job.read_text()))
        assert process_alive(pids[1]), "the control: the background job runs while the agent lives"
        os.kill(proc.pid, signal.SIGKILL)  # the agent alone, as `kill -9 <pid>` does
        proc.wait(10)
        assert _gone(pids[0])  # the control: the call that was running dies with the agent (the reaper)
        assert _gone(pids[1]), "the background job outlived the killed agent"
    finally:
        _kill(pids)
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


def test_a_background_job_ends_with_the_agents_normal_exit_and_nothing_is_said(tmp_path, project, model_server):
    job = tmp_path / "job.pid"
    model_server.script(tool_use("bash", {"command": f"sleep 600 & echo $! > {job}"}, id="t1"), text("started"))
    cli = Cli(project, model_server.env(clean_env(tmp_path / "home")))
    result = cli.run("-p", "start the server", "--permission-mode", "bypass")
    pid = int(job.read_text())
    try:
        assert result.rc == 0, result.err
        assert "started" in result.out
        assert _gone(pid), "the background job outlived the agent's normal exit"
        assert "kill" not in result.err.lower() and "Traceback" not in result.err
    finally:
        _kill([pid])


# The real bash tool in a child process whose calls ran in threads that have ended (as a turn's thread does):
# the job must live on after its call's thread ended, and die with the process.
_CHILD = r"""
import sys, threading
from pathlib import Path
from evo_agent.tools.base import ToolContext
from evo_agent.tools.bash import run_bash

ctx = ToolContext(project_dir=Path(sys.argv[1]))
results = []
def call(command):
    thread = threading.Thread(target=lambda: results.append(run_bash({"command": command}, ctx)))
    thread.start()
    thread.join()
    return results[-1]

call(sys.argv[2])
print(call("sleep 1; kill -0 $(cat " + sys.argv[3] + ") && echo job-alive").content, flush=True)
sys.stdin.read()
"""


@pytest.mark.parametrize("background", BACKGROUND[:2])
def test_the_job_outlives_its_calls_thread_and_dies_with_the_process(tmp_path, background):
    job = tmp_path / "job.pid"
    child = subprocess.Popen([sys.executable, "-c", _CHILD, str(tmp_path), background.format(job=job), str(job)],
                             cwd=tmp_path, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                             start_new_session=True)
    pids: list[int] = []
    try:
        assert child.stdout is not None
        line = child.stdout.readline()
        pids.append(int(job.read_text()))
        assert "job-alive" in line, line  # the control: the call's thread ended, the job did not
        assert process_alive(pids[0])
        os.killpg(child.pid, signal.SIGKILL)  # the agent's own process group, as a terminal's kill does
        child.wait(10)
        assert _gone(pids[0]), "the background job outlived the killed process"
    finally:
        _kill(pids)
        if child.poll() is None:
            child.kill()
        child.communicate()



# A job that ends on its own (`make &` done) leaves no reaper behind: the reaper ends at its next look, even
# when its call's thread ended while it waited (the parent-death signal then ran its trap in the middle of the
# 2-second read of the lifeline, and a `read` inside that trap made the outer one wait for the agent's end).
_SHORT_JOB = r"""
import os, sys, threading
from pathlib import Path
from evo_agent.tools.base import ToolContext
from evo_agent.tools.bash import run_bash

ctx = ToolContext(project_dir=Path(sys.argv[1]))
for n in range(3):
    thread = threading.Thread(target=run_bash, args=({"command": f"sleep 1 & echo $! > {sys.argv[2]}.{n}"}, ctx))
    thread.start()
    thread.join()
    job = int(Path(f"{sys.argv[2]}.{n}").read_text())
    with open(f"/proc/{job}/stat") as stat:
        print(stat.read().rsplit(")", 1)[1].split()[2], flush=True)  # its group: the reaper leads it
sys.stdin.read()
"""


def test_a_reaper_ends_soon_after_its_job_while_the_agent_lives(tmp_path):
    child = subprocess.Popen([sys.executable, "-c", _SHORT_JOB, str(tmp_path), str(tmp_path / "job")], cwd=tmp_path,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert child.stdout is not None
        reapers = [int(child.stdout.readline()) for _ in range(3)]
        for reaper in reapers:
            assert _gone(reaper), "a reaper stayed after its job ended, while the agent lives"
        assert child.poll() is None
    finally:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait(10)
        child.communicate()
