"""A full disk while `plan_create` writes the plan, then space coming back (root: a small tmpfs).

The plan's directory was made before plan.md: when plan.md could not be written, an empty directory
stayed in todo/ and counted as the open plan, so once space was back every `plan_create` was refused
("plan … is still active (0/0 tasks completed)") by a plan that had never been made.
"""

from __future__ import annotations

import json

import pytest

from tests.fake_model_server import text, tool_use
from tests.helpers import fill_disk, last_tool_results, needs_root, result_text, tmpfs_or_skip

pytestmark = pytest.mark.faults




@needs_root
def test_a_plan_create_on_a_full_disk_leaves_no_plan_and_succeeds_once_space_is_back(cli, model_server, project):
    tasks = project / ".evo-agent" / "tasks"
    with tmpfs_or_skip(tasks, "256k"):
        filler = fill_disk(tasks, leave=0)
        plan = {"title": "Port to Rust", "goal": "a Rust parser " + "g" * 8000}
        model_server.script(tool_use("plan_create", plan), text("Could not plan."))
        full = cli.run("-p", "plan the port")
        assert full.rc == 0 and full.out == "Could not plan.\n", full.err
        (failed,) = last_tool_results(model_server.requests[-1])
        assert failed.get("is_error") and "No space left on device" in result_text(failed), failed
        assert "\n" not in result_text(failed).strip()
        assert "Traceback" not in full.err
        todo = tasks / "todo"
        assert not todo.is_dir() or not list(todo.iterdir()), list(todo.iterdir())  # no plan, no leftover

        filler.unlink()  # space is back
        model_server.script(tool_use("plan_create", plan), text("Planned."))
        again = cli.run("-c", "-p", "try again")
        assert again.rc == 0 and again.out == "Planned.\n", again.err
        (made,) = last_tool_results(model_server.requests[-1])
        assert not made.get("is_error"), result_text(made)
        (plan_dir,) = (tasks / "todo").iterdir()
        assert sorted(p.name for p in plan_dir.iterdir()) == ["plan.md"]
        assert cli.run("plan").out.count("Port to Rust") >= 1
        model_server.assert_all_valid()


def test_a_half_made_plan_a_killed_writer_left_is_never_listed_and_the_next_writer_removes_it(project):
    from evo_agent.session import PlanStore

    todo = project / ".evo-agent" / "tasks" / "todo"
    leftover = todo / ".2026-12-05-half-made.4242.0badcafe.tmp"
    leftover.mkdir(parents=True)
    (leftover / "plan.md").write_text("# Half made\n")
    store = PlanStore(project)
    assert store.active() is None and store.plans() == []
    made = store.create("Whole", "a goal")
    assert [p.name for p in todo.iterdir()] == [made.id]


@needs_root
def test_a_task_change_that_landed_is_reported_done_when_only_the_derived_blocks_hit_a_full_disk(
        cli, model_server, project):
    """plan_task_update writes the changed task, then each other task whose derived `blocks` moved. When the
    first landed and a derived one hit a full disk, the model was told the update failed (and no
    `plan_update` was recorded) though the task had changed on disk."""
    tasks = project / ".evo-agent" / "tasks"
    with tmpfs_or_skip(tasks, "256k"):
        model_server.script(
            tool_use("plan_create", {"title": "Port", "goal": "a port"}),
            tool_use("plan_task_create", {"subject": "Tests"}),  # one page
            tool_use("plan_task_create", {"subject": "Code", "description": "d" * 6000}),  # two pages
            text("Planned."))
        made = cli.run("-p", "plan it", "--permission-mode", "bypass")
        assert made.rc == 0 and made.out == "Planned.\n", made.err
        (plan_dir,) = (tasks / "todo").iterdir()
        code_before = (plan_dir / "task_2.json").read_bytes()

        filler = fill_disk(tasks, leave=4096)  # task_1's new file fits; task_2's (2 pages) cannot
        model_server.script(tool_use("plan_task_update", {"task_id": 1, "blocked_by": [2]}), text("Updated."))
        update = cli.run("-c", "-p", "the tests wait for the code", "--permission-mode", "bypass")
        assert update.rc == 0 and update.out == "Updated.\n", update.err
        assert json.loads((plan_dir / "task_1.json").read_text())["blocked_by"] == [2]  # the change landed
        assert (plan_dir / "task_2.json").read_bytes() == code_before  # the derived side: the old file, whole
        (result,) = last_tool_results(model_server.requests[-1])
        assert not result.get("is_error"), result_text(result)
        ops = [r["op"] for r in cli.records(update.hint_id()) if r["type"] == "plan_update" and not r.get("restored")]
        assert ops == ["task_update"]

        filler.unlink()  # space back: the next change writes the derived side too
        model_server.script(tool_use("plan_task_update", {"task_id": 2, "status": "in_progress"}), text("Started."))
        start = cli.run("-c", "-p", "start the code", "--permission-mode", "bypass")
        assert start.rc == 0, start.err
        assert json.loads((plan_dir / "task_2.json").read_text())["blocks"] == [1]
        model_server.assert_all_valid()


def test_an_empty_plan_directory_an_older_version_left_does_not_block_plan_create(project):
    from evo_agent.session import PlanStore

    todo = project / ".evo-agent" / "tasks" / "todo"
    (todo / "2026-12-01-cut-short").mkdir(parents=True)  # what a cut plan_create left before plans were staged
    made = PlanStore(project).create("Whole", "a goal")
    assert [p.name for p in todo.iterdir()] == [made.id]
