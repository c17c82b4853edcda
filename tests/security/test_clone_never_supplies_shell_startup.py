"""A relative `$BASH_ENV`, `$RIPGREP_CONFIG_PATH`, `$XDG_CONFIG_HOME`, `$GIT_CONFIG_GLOBAL`/`$GIT_CONFIG_SYSTEM` or
`$TMPDIR` never makes bash, rg or git read a file the clone committed, nor puts temporary files in it (SPEC §9).

Every non-interactive bash sources the file `$BASH_ENV` names before its command, and reads a relative name from
the directory it runs in: the project. The reaper's bash wraps every bash call outside any sandbox, so with
`BASH_ENV=.bashenv` a clone's committed `.bashenv` ran before the first command, an unasked `git status` included.
evo-agent now unsets a relative `BASH_ENV` when it starts, and one bash would read from where it runs
(`$PWD/.bashenv`); absolute values and those under `$HOME` or an XDG directory stay.
"""

from __future__ import annotations

import os
import subprocess

import pytest

from evo_agent.cli.startup_env import drop_relative_startup_files
from tests.cli_runner import Cli, clean_env
from tests.fake_model_server import text, tool_use

from .hostile import clone, payload, upstream

SPELLINGS = [("BASH_ENV", ".bashenv"), ("BASH_ENV", "./.bashenv"), ("BASH_ENV", "bin/env.sh"),
             ("BASH_ENV", "bin/../.bashenv"), ("BASH_ENV", "$PWD/.bashenv"), ("BASH_ENV", "${PWD}/bin/env.sh"),
             ("BASH_ENV", "`pwd`/.bashenv")]


def _armed_clone(tmp_path):
    marker = tmp_path / "pwned"
    files = {".bashenv": payload(marker) + "\n", "bin/env.sh": payload(marker) + "\n", "notes.txt": "the needle\n"}
    return clone(upstream(tmp_path, files), tmp_path / "src" / "clone"), marker


def test_control_bash_sources_a_relative_bash_env_from_where_it_runs(tmp_path):
    project, marker = _armed_clone(tmp_path)
    subprocess.run(["bash", "-c", "true"], cwd=project, timeout=30, env={**os.environ, "BASH_ENV": ".bashenv"})
    assert marker.exists()


@pytest.mark.parametrize(("name", "value"), SPELLINGS)
def test_no_bash_call_sources_the_clones_startup_file(tmp_path, model_server, name, value):
    project, marker = _armed_clone(tmp_path)
    model_server.script(tool_use("bash", {"command": "git status && grep -n needle notes.txt"}, id="t1"),
                        text("done"))
    env = model_server.env(clean_env(tmp_path / "home", **{name: value}))
    result = Cli(project, env).run("-p", "find the needle")
    assert result.rc == 0, result.err
    content = model_server.requests[-1]["messages"][-1]["content"][0]["content"]
    assert "1:the needle" in content, content  # it ran, unasked
    assert not marker.exists()


@pytest.mark.parametrize("value", ["/home/me/.bashenv", "$HOME/.bashenv", "${XDG_CONFIG_HOME}/bash/env"])
def test_the_users_own_startup_file_stays(value):
    environ = {"BASH_ENV": value}
    drop_relative_startup_files(environ)
    assert environ == {"BASH_ENV": value}


@pytest.mark.parametrize("value", [".ripgreprc", "./.ripgreprc", "conf/rg", "$HOME/.ripgreprc"])
def test_a_relative_ripgrep_config_is_dropped_for_approved_rg_too(tmp_path, model_server, value):
    """A `Bash(rg:*)` rule runs an rg the allowlist does not know (`--line-buffered`) as approved, without
    --no-config: the clone's `.ripgreprc` must not reach it."""
    marker = tmp_path / "pwned"
    files = {".ripgreprc": "--pre=sh\n", "conf/rg": "--pre=sh\n", "$HOME/.ripgreprc": "--pre=sh\n",
             "notes.txt": f"echo the needle PRE-$((6*7)); touch '{marker}'\n"}
    project = clone(upstream(tmp_path, files), tmp_path / "src" / "clone")
    command = "rg -n --line-buffered needle notes.txt"
    model_server.script(tool_use("bash", {"command": command}, id="t1"), text("done"))
    env = model_server.env(clean_env(tmp_path / "home", RIPGREP_CONFIG_PATH=value))
    result = Cli(project, env).run("-p", "find the needle", "--allowed-tools", "Bash(rg:*)")
    assert result.rc == 0, result.err
    content = model_server.requests[-1]["messages"][-1]["content"][0]["content"]
    assert "needle" in content and "PRE-42" not in content, content
    assert not marker.exists()


@pytest.mark.parametrize("value", [".config", "./.config", "sub/../.config"])
def test_a_relative_xdg_config_home_never_gives_git_the_clones_config(tmp_path, model_server, value):
    """An approved git (here by a `Bash(git add:*)` rule) reads `$XDG_CONFIG_HOME/git/config`: with a relative
    value, the clone's committed `.config/git/config`, whose `core.fsmonitor` git runs as it reads the index."""
    marker = tmp_path / "pwned"
    files = {".config/git/config": f'[core]\n\tfsmonitor = "{payload(marker)}"\n', "sub/x": "", "notes.txt": "x\n"}
    project = clone(upstream(tmp_path, files), tmp_path / "src" / "clone")
    subprocess.run(["git", "add", "-n", "notes.txt"], cwd=project, capture_output=True, timeout=30,
                   env={**os.environ, "HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": value})
    assert marker.exists()  # the control: plain git runs it
    marker.unlink()

    model_server.script(tool_use("bash", {"command": "git add -n notes.txt"}, id="t1"), text("done"))
    env = model_server.env(clean_env(tmp_path / "home", XDG_CONFIG_HOME=value))
    result = Cli(project, env).run("-p", "stage it", "--allowed-tools", "Bash(git add:*)")
    assert result.rc == 0, result.err
    assert "needs approval" not in result.err  # the rule let it run
    assert not marker.exists()


@pytest.mark.parametrize(("name", "value"), [("GIT_CONFIG_GLOBAL", ".gitconfig"), ("GIT_CONFIG_GLOBAL", "./.gitconfig"),
                                             ("GIT_CONFIG_GLOBAL", "sub/../.gitconfig"),
                                             ("GIT_CONFIG_SYSTEM", ".gitconfig"), ("GIT_CONFIG_SYSTEM", "etc/gitconfig")])
def test_a_relative_git_config_file_never_gives_approved_git_the_clones_config(tmp_path, model_server, name, value):
    """An approved git keeps the caller's `GIT_*` (that is the command approved); a relative `GIT_CONFIG_GLOBAL` or
    `GIT_CONFIG_SYSTEM` named the clone's committed `.gitconfig`, whose `core.fsmonitor` git runs as it reads the
    index. Unset at start, like a relative XDG_CONFIG_HOME."""
    marker = tmp_path / "pwned"
    config = f'[core]\n\tfsmonitor = "{payload(marker)}"\n'
    files = {".gitconfig": config, "etc/gitconfig": config, "sub/x": "", "notes.txt": "x\n"}
    project = clone(upstream(tmp_path, files), tmp_path / "src" / "clone")
    subprocess.run(["git", "add", "-n", "notes.txt"], cwd=project, capture_output=True, timeout=30,
                   env={**os.environ, "HOME": str(tmp_path / "home"), name: value})
    assert marker.exists()  # the control: plain git runs it
    marker.unlink()

    model_server.script(tool_use("bash", {"command": "git add -n notes.txt"}, id="t1"), text("done"))
    env = model_server.env(clean_env(tmp_path / "home", **{name: value}))
    result = Cli(project, env).run("-p", "stage it", "--allowed-tools", "Bash(git add:*)")
    assert result.rc == 0, result.err
    assert "needs approval" not in result.err  # the rule let it run
    assert not marker.exists()


@pytest.mark.parametrize("value", ["tmp", "./tmp", "sub/../tmp"])
def test_a_relative_tmpdir_never_puts_temporary_files_in_the_clone(tmp_path, value):
    """Python's tempfile, bash's here-documents and most programs put their temporary files in `$TMPDIR`: a
    relative one is the project, where a clone's committed `tmp/` (or a link there) receives them (the memory
    file `memory edit` hands the editor, the heredoc a command feeds). Unset at start: they fall back to /tmp."""
    environ = {"TMPDIR": value}
    drop_relative_startup_files(environ)
    assert environ == {}
    own = {"TMPDIR": "/var/tmp", "GIT_CONFIG_GLOBAL": "/home/me/.gitconfig", "GIT_CONFIG_SYSTEM": ""}  # "": none
    kept = dict(own)
    drop_relative_startup_files(kept)
    assert kept == own
