"""Unasked git (a `git status`, `git log -p`, `git diff` the gate lets run without asking) reads the repository it
judged, with the settings it chose, and nothing the caller's `GIT_*` environment adds.

evo-agent's own git door already ran with no `GIT_*` of the caller's; the bash tool's unasked git inherited them
all. A `GIT_DIR`/`GIT_WORK_TREE`/`GIT_INDEX_FILE`/`GIT_OBJECT_DIRECTORY` (set for a hook, or by a dotfiles
setup) made it read another repository than the one judged; `GIT_CONFIG_PARAMETERS` (what `git -c` hands to
programs it runs: an alias `!evo-agent`, a hook) or `GIT_CONFIG_GLOBAL`/`GIT_CONFIG_SYSTEM` defined a filter the
read-only check never saw, so its clean command ran on `git status` in a repository whose `.gitattributes` names
it; `GIT_TRACE*` made the read write files. The decision: every `GIT_*` of the caller's is dropped for unasked
commands, as for the door (the checked command brings its own: `GIT_SAFE_ENV`, the ceiling, the filter
overrides). Nothing a user needs from them for a read-only look: asked commands keep the whole environment.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from tests.cli_runner import Cli, clean_env
from tests.fake_model_server import text, tool_use

from .hostile import GIT, arm_repository, git, payload, unpack_archive_of, upstream

SECRET = "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI-the-victims-own"


def _bin(tmp_path):
    """A PATH without bwrap: the read-only sandbox would hide some of these writes; the command alone must hold."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for program in ("git", "bash", "setpriv", "touch", "cat", "false"):
        found = shutil.which(program)
        if found and not (bin_dir / program).exists():
            os.symlink(found, bin_dir / program)
    return bin_dir


@pytest.fixture
def scene(tmp_path):
    """An armed repository (unpacked archive: its `.git/config` and `.gitattributes` name programs), the victim's
    own repository next door holding a secret, and a file the armed one modified (filters have work to do)."""
    made = upstream(tmp_path, {"src/app.py": "print('hi')\n"}, name="made")
    markers = tmp_path / "markers"
    arm_repository(made, markers)
    project = unpack_archive_of(made, tmp_path / "downloaded")
    arm_repository(project, markers)
    (project / ".gitattributes").write_text("* filter=envfilter diff=envdiff\n")
    work = tmp_path / "work"
    subprocess.run([*GIT, "init", "-q", str(work)], check=True)
    (work / "deploy.env").write_text(SECRET + "\n")
    assert git(work, "add", "-A").returncode == 0
    assert git(work, "commit", "-q", "-m", "deploy settings").returncode == 0
    (work / "deploy.env").write_text(SECRET + " changed\n")
    return project, work, markers


def _variables(tmp_path, work, markers):
    """Each spelling: the variables the caller's environment holds, and the marker it would leave."""
    m = markers
    config = tmp_path / "envconfig"
    config.write_text(f"[filter \"envfilter\"]\n\tclean = {payload(m / 'global-filter')}\n"
                      f"[diff \"envdiff\"]\n\ttextconv = {payload(m / 'global-textconv')}\n")
    return {
        "git-dir": {"GIT_DIR": str(work / ".git"), "GIT_WORK_TREE": str(work)},
        "index-file": {"GIT_INDEX_FILE": str(work / ".git" / "index")},
        "object-dir": {"GIT_OBJECT_DIRECTORY": str(work / ".git" / "objects"),
                       "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(work / ".git" / "objects")},
        "config-parameters": {"GIT_CONFIG_PARAMETERS":
                              f"'filter.envfilter.clean'='{payload(m / 'param-filter')}' "
                              f"'core.fsmonitor'='{payload(m / 'param-fsmonitor')}'"},
        "config-global": {"GIT_CONFIG_GLOBAL": str(config)},
        "config-system": {"GIT_CONFIG_SYSTEM": str(config), "GIT_CONFIG_NOSYSTEM": "0"},
        "config-file": {"GIT_CONFIG": str(config)},
        "external-diff": {"GIT_EXTERNAL_DIFF": payload(m / "ext-diff"), "GIT_PAGER": payload(m / "pager"),
                          "GIT_ASKPASS": payload(m / "askpass"), "GIT_SSH_COMMAND": payload(m / "ssh"),
                          "GIT_EDITOR": payload(m / "editor")},
        "trace": {"GIT_TRACE": str(m / "trace"), "GIT_TRACE2": str(m / "trace2"),
                  "GIT_TRACE2_EVENT": str(m / "trace2-event"), "GIT_TRACE_PERFORMANCE": str(m / "trace-perf")},
        "exec-path": {"GIT_EXEC_PATH": str(tmp_path / "downloaded" / ".hooks")},
    }


COMMANDS = ["git status", "git diff", "git log -p -1", "git show HEAD"]


@pytest.mark.parametrize("spelling", ["git-dir", "index-file", "object-dir", "config-parameters", "config-global",
                                      "config-system", "config-file", "external-diff", "trace", "exec-path"])
def test_unasked_git_uses_none_of_the_callers_git_variables(tmp_path, model_server, scene, spelling):
    project, work, markers = scene
    variables = _variables(tmp_path, work, markers)[spelling]
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = model_server.env(clean_env(home, PATH=str(_bin(tmp_path)), **variables))
    calls = [tool_use("bash", {"command": c}, id=f"t{i}") for i, c in enumerate(COMMANDS)]
    model_server.script(*calls, text("done"))
    result = Cli(project, env).run("-p", "what changed here?")
    assert result.rc == 0, result.err
    assert "needs approval" not in result.err, result.err  # they ran, unasked
    seen = repr(model_server.requests)
    assert "wJalrXUtnFEMI" not in seen  # the other repository was not read
    assert "notes.txt" in seen  # this one was
    assert sorted(p.name for p in markers.iterdir()) == [], seen[-3000:]


@pytest.mark.parametrize("spelling, fired", [("config-parameters", "param-filter"), ("config-global", "global-filter"),
                                             ("trace", "trace")])
def test_the_control_plain_git_with_the_same_variables_runs_the_payload(tmp_path, scene, spelling, fired):
    project, work, markers = scene
    env = {**os.environ, **_variables(tmp_path, work, markers)[spelling]}
    subprocess.run(["git", "-c", "core.hooksPath=/dev/null", "status"], cwd=project, env=env, capture_output=True,
                   timeout=60)
    assert (markers / fired).exists()


def test_the_control_plain_git_with_the_callers_git_dir_reads_the_other_repository(tmp_path, scene):
    project, work, markers = scene
    env = {**os.environ, **_variables(tmp_path, work, markers)["git-dir"]}
    out = subprocess.run(["git", "diff"], cwd=project, env=env, capture_output=True, text=True, timeout=60).stdout
    assert "wJalrXUtnFEMI" in out
