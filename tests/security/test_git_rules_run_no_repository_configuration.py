"""A `Bash(git status:*)`-like rule runs read-only git with unasked git's protection (SPEC §9).

An allowlisted `git status` runs unasked with every code-running setting off (the door's `-c` settings, filters
off, no pager): nothing an unpacked archive's `.git/config` names can run. One option the allowlist does not list
(`git status -v`, `git diff --color-moved-ws=no`) sends the command to the user's rules, and a rule covering it ran
it as the model wrote it: plain git, which ran the archive's `core.fsmonitor`, `diff.external` or textconv.
Decided: a command a rule approves whose git subcommand is a read-only one (status, log, diff, show: those the
allowlist knows) runs with the same settings and environment as unasked git (shell_readonly.plan_ruled_git);
a writing subcommand under its rule runs as written (the user approved it, hooks and all).
"""

from __future__ import annotations

import subprocess

import pytest

from tests.cli_runner import Cli, clean_env
from tests.fake_model_server import text, tool_use

from .hostile import arm_repository, clone, unpack_archive_of, upstream

RULED = [("Bash(git status:*)", "git status -v"),
         ("Bash(git status:*)", "git status --verbose --short"),
         ("Bash(git status:*)", "git status --verb"),  # an abbreviation git accepts
         ("Bash(git diff:*)", "git diff --color-moved-ws=no"),
         ("Bash(git diff:*)", "git diff --no-ext-diff --ws-error-highlight=all"),
         ("Bash(git diff:*)", "git diff --cached --ws-error-highlight=all"),
         ("Bash(git diff:*)", "git diff --ws-err=all"),
         ("Bash(git log:*)", "git log -p --ws-error-highlight=all"),
         ("Bash(git show:*)", "git show --ws-error-highlight=all HEAD"),
         ("Bash(git:*)", "git -C . status -v"),
         ("Bash(git:*)", "git --no-pager diff --color-moved-ws=no"),
         ("Bash(git:*)", "git -c color.ui=never -C . diff --cached --ws-error-highlight=all"),
         ("Bash(git:*)", "git -p log -p --ws-error-highlight=all"),
         ("Bash(git status -v)", "git status -v")]


def _archive(tmp_path):
    """An archive of a repository whose `.git/config` names a program for every way git runs one."""
    work = clone(upstream(tmp_path, {"src/app.txt": "app\n"}), tmp_path / "work")
    markers = arm_repository(work, tmp_path / "markers")
    (tmp_path / "unpacked").mkdir()
    return unpack_archive_of(work, tmp_path / "unpacked" / "project"), markers


def _run(tmp_path, model_server, project, command: str, rule: str) -> str:
    model_server.script(tool_use("bash", {"command": command}, id="t1"), text("done"))
    cli = Cli(project, model_server.env(clean_env(tmp_path / "home")))
    result = cli.run("-p", "look at the changes", "--allowed-tools", rule)
    assert result.rc == 0, result.err
    return next(m for m in model_server.requests[-1]["messages"][-1]["content"] if m["type"] == "tool_result")[
        "content"]


def _result_text(content) -> str:
    return content if isinstance(content, str) else "".join(part.get("text", "") for part in content)


@pytest.mark.parametrize(("rule", "command"), RULED)
def test_a_git_rule_runs_none_of_the_repositorys_programs(tmp_path, model_server, rule, command):
    project, markers = _archive(tmp_path)
    _run(tmp_path, model_server, project, command, rule)
    assert not [name for name, marker in markers.items() if marker.exists()]


@pytest.mark.parametrize(("rule", "command"), [("Bash(git status:*)", "git status --short"),
                                               ("Bash(git diff:*)", "git diff --stat"),
                                               ("Bash(git diff:*)", "git diff --cached")])
def test_control_the_allowlisted_spelling_runs_none(tmp_path, model_server, rule, command):
    project, markers = _archive(tmp_path)
    _run(tmp_path, model_server, project, command, rule)
    assert not any(marker.exists() for marker in markers.values())


def test_control_a_users_git_status_v_prints_what_git_prints(tmp_path, model_server):
    work = clone(upstream(tmp_path, {"src/app.txt": "app\n"}), tmp_path / "work")
    (work / "src" / "app.txt").write_text("app, changed\n")
    subprocess.run(["git", "add", "src/app.txt"], cwd=work, check=True)
    plain = subprocess.run(["git", "status", "-v"], cwd=work, capture_output=True, text=True, check=True).stdout
    output = _result_text(_run(tmp_path, model_server, work, "git status -v", "Bash(git status:*)"))
    assert "+app, changed" in plain
    assert output.startswith(plain), output


def test_control_a_writing_subcommand_under_its_rule_runs_as_written(tmp_path, model_server):
    """`Bash(git commit:*)`: the user approved commits, their hooks included (a user's own pre-commit check)."""
    work = clone(upstream(tmp_path, {"src/app.txt": "app\n"}), tmp_path / "work")
    hook, marker = work / ".git" / "hooks" / "pre-commit", tmp_path / "hook-ran"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    for key, value in (("user.name", "A User"), ("user.email", "user@example.invalid")):
        subprocess.run(["git", "config", key, value], cwd=work, check=True)
    output = _result_text(_run(tmp_path, model_server, work, "git commit -q --allow-empty -m checked",
                               "Bash(git commit:*)"))
    assert "[exit code 0]" in output, output
    assert marker.exists()
