"""An unasked command never reads outside the project through `/proc/self/cwd` (or `/dev/fd/..`, `/proc/thread-self`).

The check resolves each path with `realpath` in evo-agent's own process, and `/proc/self/cwd` there is evo-agent's
directory; the command runs in the session's start directory. A resumed session keeps its recorded start directory
(the project root) while evo-agent itself runs where the user typed `evo-agent -c` (`src/deep`): the check saw
`/proc/self/cwd/../../.ssh/id_rsa` inside the project, the command read `~/.ssh/id_rsa`. The read-only sandbox
hides `/proc`; where bubblewrap cannot run (a container), the file reached the model. Now a path whose resolution
passes through `/proc` (a link in the clone included) asks, wherever evo-agent runs.
"""

from __future__ import annotations

import os
import shutil

import pytest

from evo_agent.tools.shell_readonly import ReadOnlyPlan, plan_read_only
from tests.cli_runner import Cli, clean_env
from tests.fake_model_server import text, tool_use

from .hostile import clone, upstream

SECRET = "-----BEGIN OPENSSH PRIVATE KEY----- the-victims-own-key"
SPELLINGS = ["/proc/self/cwd/../.ssh/id_rsa", "/proc/thread-self/cwd/../.ssh/id_rsa", "/dev/fd/../cwd/../.ssh/id_rsa",
             "linked-key"]


def _setup(tmp_path):
    """The victim's key at `home/.ssh/id_rsa`, the clone at `home/tool` with `src/deep/`, and a committed link
    `linked-key -> /proc/self/cwd/../.ssh/id_rsa`."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(SECRET + "\n")
    origin = upstream(tmp_path, {"src/deep/app.py": "print(1)\n"}, {"linked-key": "/proc/self/cwd/../.ssh/id_rsa"})
    project = clone(origin, home / "tool")
    return project


def _command(spelling: str, project) -> str:
    return f"cat {spelling.format(project=project)}"


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_a_path_through_proc_asks_wherever_evo_agent_runs(tmp_path, monkeypatch, spelling):
    project = _setup(tmp_path)
    for here in (project, project / "src", project / "src" / "deep"):
        monkeypatch.chdir(here)  # evo-agent's own directory; the command runs in the project root
        plan = plan_read_only(_command(spelling, project), project, cwd=project)
        assert isinstance(plan, str), (here, plan)  # it asks


def test_the_control_ordinary_paths_still_run_unasked(tmp_path, monkeypatch):
    project = _setup(tmp_path)
    monkeypatch.chdir(project / "src" / "deep")
    for command in ("cat src/deep/app.py", "ls -la", "head -3 src/deep/app.py", "cat /dev/null"):
        assert isinstance(plan_read_only(command, project, cwd=project), ReadOnlyPlan), command


def test_through_a_resumed_session_the_key_never_reaches_the_model(tmp_path, model_server):
    """The path a user meets: a session begun at the root, continued from `src/deep`, bubblewrap unavailable."""
    project = _setup(tmp_path)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for program in ("git", "bash", "setpriv", "cat"):
        if shutil.which(program):
            os.symlink(shutil.which(program), bin_dir / program)
    env = model_server.env(clean_env(tmp_path / "agent-home", PATH=str(bin_dir)))
    model_server.script(text("Hello."))
    assert Cli(project, env).run("-p", "hi").rc == 0
    model_server.script(tool_use("bash", {"command": "cat /proc/self/cwd/../.ssh/id_rsa"}, id="t1"),
                        tool_use("bash", {"command": "cat linked-key"}, id="t2"), text("done"))
    result = Cli(project / "src" / "deep", env).run("-c", "-p", "read it")
    assert result.rc == 0, result.err
    assert "the-victims-own-key" not in repr(model_server.requests)
    assert result.err.count("needs approval") == 2, result.err
