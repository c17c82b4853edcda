"""A `Bash(git <subcommand>:*)` rule never covers an option that makes git run a program (SPEC §9).

Such a rule covers the subcommand with its arguments, but not a writing or executing option: `--upload-pack`
and `--exec` asked. Their short spellings and a few more did not: `git clone -u "sh tools/up.sh" . ../copy`
(`-u` is `--upload-pack`), `git clone --template=tools/tmpl . ../copy` (whose `hooks/post-checkout` runs at
the end of the clone), `git clone -c core.hooksPath=…` (the new repository's configuration, hooks run the same
way), `git rebase -x "sh tools/run.sh" --root` (`-x` is `--exec`) and `git difftool -x` (`--extcmd`) each ran
the clone's script unasked. The short letters count only for the subcommand they belong to: `git add -u` and
`git commit -c HEAD` are as harmless as they were.

The controls: the same rules still run a plain clone or rebase, and each payload is live when run by hand.
"""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.cli_runner import Cli, clean_env
from tests.fake_model_server import text, tool_use

from .hostile import GIT, clone, commit_change, upstream

IDENTITY = {"GIT_AUTHOR_NAME": "you", "GIT_AUTHOR_EMAIL": "you@example.invalid", "GIT_COMMITTER_NAME": "you",
            "GIT_COMMITTER_EMAIL": "you@example.invalid"}
RUNS = [("Bash(git clone:*)", 'git clone -u "sh tools/up.sh" . ../copy'),
        ("Bash(git clone:*)", 'git clone "-ush tools/up.sh" . ../copy'),
        ("Bash(git clone:*)", "git clone --template=tools/tmpl . ../copy"),
        ("Bash(git clone:*)", "git clone --templ tools/tmpl . ../copy"),
        ("Bash(git clone:*)", "git clone -c core.hooksPath=../clone/tools/tmpl/hooks . ../copy"),
        ("Bash(git clone:*)", "git clone --config=core.hooksPath=../clone/tools/tmpl/hooks . ../copy"),
        ("Bash(git clone:*)", "git clone -qc core.hooksPath=../clone/tools/tmpl/hooks . ../copy"),
        ("Bash(git rebase:*)", 'git rebase -x "sh tools/run.sh" --root'),
        ("Bash(git rebase:*)", 'git rebase -qx "sh tools/run.sh" --root'),
        ("Bash(git rebase:*)", 'git rebase --exe "sh tools/run.sh" --root'),
        ("Bash(git difftool:*)", 'git difftool -y -x "sh tools/run.sh" HEAD~1')]


def _victim(tmp_path):
    marker = tmp_path / "PWNED"
    script = f"#!/bin/sh\ntouch {marker}\n"
    origin = upstream(tmp_path, {"tools/run.sh": script, "tools/up.sh": script + 'exec git-upload-pack "$@"\n',
                                 "tools/tmpl/hooks/post-checkout": script, "notes.txt": "one\n"})
    commit_change(origin, {"notes.txt": "two\n"})
    os.chmod(origin / "tools" / "tmpl" / "hooks" / "post-checkout", 0o755)
    subprocess.run([*GIT, "-C", str(origin), "add", "--chmod=+x", "tools/tmpl/hooks/post-checkout"], check=True)
    subprocess.run([*GIT, "-C", str(origin), "commit", "-q", "-m", "x"], check=True)
    project = clone(origin, tmp_path / "clone")
    return project, marker, clean_env(tmp_path / "home", **IDENTITY)


def _run(model_server, project, env, rule: str, command: str):
    model_server.script(tool_use("bash", {"command": command, "timeout": 60}, id="t1"), text("done"))
    return Cli(project, model_server.env(env)).run("-p", "set it up", "--allowed-tools", rule, timeout=120)


@pytest.mark.parametrize(("rule", "command"), RUNS)
def test_a_git_rule_never_runs_a_program_an_option_names(tmp_path, model_server, rule, command):
    project, marker, env = _victim(tmp_path)
    result = _run(model_server, project, env, rule, command)
    assert "not run (needs approval)" in result.err, result.err
    assert not marker.exists()


@pytest.mark.parametrize(("rule", "command"), RUNS)
def test_the_control_each_payload_is_live_when_run_by_hand(tmp_path, rule, command):
    project, marker, env = _victim(tmp_path)
    subprocess.run(["bash", "-c", command], cwd=project, env=env, capture_output=True, timeout=60)
    assert marker.exists()


@pytest.mark.parametrize(("rule", "command"), [("Bash(git clone:*)", "git clone -q . ../copy"),
                                               ("Bash(git rebase:*)", "git rebase -q --root"),
                                               ("Bash(git add:*)", "git add -u"),
                                               ("Bash(git commit:*)", "git commit -q -c HEAD --allow-empty")])
def test_the_control_the_rules_still_run_their_subcommand(tmp_path, model_server, rule, command):
    project, _, env = _victim(tmp_path)
    # `commit -c` opens the editor on the message: the user's own editor setting, so that it does not wait
    subprocess.run([*GIT, "-C", str(project), "config", "core.editor", "true"], check=True)
    result = _run(model_server, project, env, rule, command)
    assert result.rc == 0 and "needs approval" not in result.err, result.err
