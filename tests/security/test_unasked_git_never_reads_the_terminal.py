"""The git evo-agent runs to judge an unasked git command never reads evo-agent's stdin (the user's terminal).

Before an unasked `git status` runs, evo-agent asks git which filter drivers the repository's configuration
defines (to switch each off). That git inherited evo-agent's stdin: an unpacked archive's `.git/config` (a clone
brings none; an archive keeps it) with `[include] path = /dev/stdin` made it read the terminal, taking the keys
the user typed meanwhile, until its 10 s timeout. It now reads /dev/null, as evo-agent's own git always did.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from .hostile import unpack_archive_of, upstream

TYPED = "what the user typed meanwhile\n"
CHILD = """
import sys
from evo_agent.tools.shell_readonly import ReadOnlyPlan, plan_read_only
plan = plan_read_only(sys.argv[1], sys.argv[2])
# stdin (here a pipe) is no regular file: the command asks (test_git_never_reads_a_terminal_its_config_includes.py)
assert not isinstance(plan, ReadOnlyPlan) and "configuration includes" in plan, plan
sys.stdout.write(sys.stdin.read())
"""


@pytest.mark.parametrize("include", ["/dev/stdin", "/proc/self/fd/0", "/dev/fd/0"])
@pytest.mark.parametrize("command", ["git status", "git diff", "git log --oneline"])
def test_judging_unasked_git_leaves_stdin_alone(tmp_path, include, command):
    origin = upstream(tmp_path, {"notes.txt": "a note\n"})
    with (origin / ".git" / "config").open("a") as config:
        config.write(f"[include]\n\tpath = {include}\n")
    project = unpack_archive_of(origin, tmp_path / "unpacked")
    assert f"path = {include}" in (project / ".git" / "config").read_text()

    child = subprocess.run([sys.executable, "-c", CHILD, command, str(project)], input=TYPED, capture_output=True,
                           text=True, timeout=60)
    assert child.returncode == 0, child.stderr
    assert child.stdout == TYPED  # every key is still there for the prompt


def test_control_git_config_reads_an_included_stdin(tmp_path):
    origin = upstream(tmp_path, {"notes.txt": "a note\n"})
    with (origin / ".git" / "config").open("a") as config:
        config.write("[include]\n\tpath = /dev/stdin\n")
    read = subprocess.run(["git", "config", "--get", "x.y"], cwd=origin, input="[x]\n\ty = from-stdin\n",
                          capture_output=True, text=True, timeout=60)
    assert read.stdout.strip() == "from-stdin"
