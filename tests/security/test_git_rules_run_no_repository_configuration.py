"""A `Bash(git status:*)`-like rule still runs plain git, whose repository configuration names programs (SPEC §9).

An allowlisted `git status` runs unasked with every code-running setting off (the door's `-c` settings, filters
off, no pager): nothing an unpacked archive's `.git/config` names can run. One option the allowlist does not list
(`git status -v`, `git diff --color-moved-ws=no`, `git diff --cached --ws-error-highlight=all`) sends the command to the user's rules,
and a rule covering it runs it as the model wrote it: plain git, which runs the archive's `core.fsmonitor`,
`diff.external` or textconv. The rule is the user's own grant ("git status, with any arguments"), and a user may
want their own hooks to run under `Bash(git commit:*)`, so whether read-only subcommands under a rule should get
the unasked treatment is a design decision: left open (xfail), with the allowlisted spelling as the control.
"""

from __future__ import annotations

import pytest

from tests.cli_runner import Cli, clean_env
from tests.fake_model_server import text, tool_use

from .hostile import arm_repository, clone, unpack_archive_of, upstream

RULED = [("Bash(git status:*)", "git status -v", "fsmonitor"),
         ("Bash(git status:*)", "git status --verbose --short", "fsmonitor"),
         ("Bash(git diff:*)", "git diff --color-moved-ws=no", "external_diff"),
         ("Bash(git diff:*)", "git diff --no-ext-diff --ws-error-highlight=all", "textconv"),
         ("Bash(git diff:*)", "git diff --cached --ws-error-highlight=all", "external_diff")]


def _archive(tmp_path):
    """An archive of a repository whose `.git/config` names a program for every way git runs one."""
    work = clone(upstream(tmp_path, {"src/app.txt": "app\n"}), tmp_path / "work")
    markers = arm_repository(work, tmp_path / "markers")
    (tmp_path / "unpacked").mkdir()
    return unpack_archive_of(work, tmp_path / "unpacked" / "project"), markers


def _run(tmp_path, model_server, project, command: str, rule: str) -> None:
    model_server.script(tool_use("bash", {"command": command}, id="t1"), text("done"))
    cli = Cli(project, model_server.env(clean_env(tmp_path / "home")))
    cli.run("-p", "look at the changes", "--allowed-tools", rule)


@pytest.mark.xfail(strict=True, reason="design decision: a Bash(git …:*) rule runs plain git, so a repository's "
                                      "own configuration (an unpacked archive's) runs programs under it")
@pytest.mark.parametrize(("rule", "command", "payload"), RULED)
def test_a_git_rule_runs_none_of_the_repositorys_programs(tmp_path, model_server, rule, command, payload):
    project, markers = _archive(tmp_path)
    _run(tmp_path, model_server, project, command, rule)
    assert not markers[payload].exists()


@pytest.mark.parametrize(("rule", "command", "payload"), [("Bash(git status:*)", "git status --short", "fsmonitor"),
                                                          ("Bash(git diff:*)", "git diff --stat", "external_diff"),
                                                          ("Bash(git diff:*)", "git diff --cached", "external_diff")])
def test_control_the_allowlisted_spelling_runs_none(tmp_path, model_server, rule, command, payload):
    project, markers = _archive(tmp_path)
    _run(tmp_path, model_server, project, command, rule)
    assert not any(marker.exists() for marker in markers.values())
