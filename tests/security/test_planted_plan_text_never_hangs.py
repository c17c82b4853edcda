"""A cloned repository's plan.md cannot hang evo-agent (SPEC §9, §11).

The plan store reads the open plan at every session's start (to know whether it is the user's own), at every
turn, for the status line, and for `evo-agent plan`. plan.md's lines were matched with patterns that backtrack
over a run of spaces: a step `1.` followed by spaces and nothing else, or a `## ` heading whose spaces are
followed by more text, took time in the square of the run's length — a committed plan.md of a few hundred
KB (within the 1 MiB the store reads) kept `evo-agent -p hi` busy for hours before its first request, with no
line said. Built as every hostile repository is: git init, the planted plan committed, the victim's clone.
"""

from __future__ import annotations

import pytest

from tests.cli_runner import Cli, clean_env
from tests.fake_model_server import text
from tests.security.hostile import clone, upstream

PLAN = ".evo-agent/tasks/todo/2026-12-01-setup/plan.md"
RUN = 600_000  # characters of one line: hours of backtracking before the fix, milliseconds after

SPELLINGS = {
    "numbered step, then spaces": "## Steps\n\n1." + " " * RUN + "\n",
    "bullet step, then tabs": "## Steps\n\n-" + "\t" * RUN + "\n",
    "step with a closing parenthesis": "## Steps\n\n7)" + " " * RUN + "\n",
    "heading whose spaces end in text": "## a" + " " * RUN + "b\n",
    "approach heading, then spaces and a word": "## Approach" + " " * RUN + "now\n",
}


def _victim(tmp_path, model_server, plan_md: str) -> Cli:
    project = clone(upstream(tmp_path, {PLAN: "# Setup\n\n## Goal\n\nset it up\n\n" + plan_md,
                                        ".evo-agent/tasks/todo/2026-12-01-setup/task_1.json":
                                        '{"subject": "Read the README"}\n'}), tmp_path / "clone")
    home = tmp_path / "home"
    home.mkdir()
    return Cli(project, model_server.env(clean_env(home)))


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_a_planted_plan_md_never_hangs_a_run_nor_the_plan_command(tmp_path, model_server, spelling):
    cli = _victim(tmp_path, model_server, SPELLINGS[spelling])
    model_server.script(text("Hello."))
    result = cli.run("-p", "hi", timeout=120)  # before the fix: killed here, hours from its first request
    assert result.rc == 0 and result.out.strip() == "Hello.", result.err
    shown = cli.run("plan", "show", timeout=120)
    assert shown.rc == 0 and "Setup" in shown.out and "Read the README" in shown.out, shown.err
    listed = cli.run("plan", "list", timeout=120)
    assert listed.rc == 0 and "2026-12-01-setup" in listed.out, listed.err


def test_the_control_a_planted_plans_steps_and_headings_still_read(tmp_path, model_server):
    """The same plan.md with ordinary lines: its steps and sections are read as before."""
    from evo_agent.session.plan_store import parse_plan_markdown

    plan_md = ("# Setup  \n\n##   Goal  \n\n ship it \n\n## Steps\n\n1.  tag the release  \n- write notes\n"
               "3) publish\n4.\n5.    \n-\n## Approach \t\n\ncarefully\n")
    assert parse_plan_markdown(plan_md) == ("Setup", "ship it", "carefully",
                                            ["tag the release", "write notes", "publish"])
    cli = _victim(tmp_path, model_server, "## Steps\n\n1. tag the release\n")
    shown = cli.run("plan", "show", timeout=120)
    assert shown.rc == 0 and "tag the release" in shown.out, shown.err
