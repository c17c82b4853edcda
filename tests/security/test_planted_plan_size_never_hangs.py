"""A cloned repository's plan of many tasks cannot hang evo-agent (SPEC §9, §11).

Each task is one small file, so the 1 MiB bound on a file bounds nothing of a plan: a repository commits forty
thousand `task_<n>.json` (one blob, cloned in seconds). Showing the plan looked up each task's open blockers by
building a table of every task, once per task, and deriving `blocks` searched a growing list once per edge:
time in the square of the number of tasks. `evo-agent plan show`, `/plan`, and the model's `plan_task_list` and
`plan_task_update` (unasked in every mode but read-only; completing the first task unblocks all the others)
then ran for many minutes. Built as every hostile repository is: git init, the
planted plan committed (straight into git's index: one blob, forty thousand paths), the victim's clone.
"""

from __future__ import annotations

import json

from tests.cli_runner import Cli, clean_env
from tests.fake_model_server import reply, text, tool_use
from tests.security.hostile import clone, upstream_of_many

PLAN = ".evo-agent/tasks/todo/2026-12-01-setup"
TASKS = 40_000


def test_a_planted_plan_of_many_tasks_never_hangs_the_plan_command_nor_the_tools(tmp_path, model_server):
    files = {f"{PLAN}/plan.md": "# Setup\n\n## Goal\n\nset it up\n", f"{PLAN}/task_1.json": '{"subject": "first"}\n'}
    every = json.dumps({"subject": "then this", "blocked_by": [1]}) + "\n"  # all blocked by the first: one blob
    files.update({f"{PLAN}/task_{n}.json": every for n in range(2, TASKS + 1)})
    project = clone(upstream_of_many(tmp_path, files), tmp_path / "clone")
    home = tmp_path / "home"
    home.mkdir()
    cli = Cli(project, model_server.env(clean_env(home)))

    shown = cli.run("plan", "show", timeout=120)  # before the fix: killed here, minutes from an answer
    assert shown.rc == 0, shown.err
    assert f"Tasks (0/{TASKS} completed):" in shown.out and f"#{TASKS} [pending] then this (blocked by #1)" in shown.out

    model_server.script(reply(tool_use("plan_task_list", {})), reply(text("done")))
    result = cli.run("-p", "what is the plan?", "--permission-mode", "read-only", timeout=120)
    assert result.rc == 0 and result.out.strip() == "done", result.err
    assert f"#{TASKS} [pending] then this (blocked by #1)" in json.dumps(model_server.requests[-1])

    model_server.script(reply(tool_use("plan_task_update", {"task_id": 1, "status": "completed"})),
                        reply(text("done")))
    result = cli.run("-p", "finish the first task", timeout=120)  # it unblocks every other one
    assert result.rc == 0 and result.out.strip() == "done", result.err
    assert f"#{TASKS} then this" in json.dumps(model_server.requests[-1])
