"""A full disk while `plan_create` writes the plan, then space coming back (root: a small tmpfs).

The plan's directory was made before plan.md: when plan.md could not be written, an empty directory
stayed in todo/ and counted as the open plan, so once space was back every `plan_create` was refused
("plan … is still active (0/0 tasks completed)") by a plan that had never been made.
"""

from __future__ import annotations

import subprocess

import pytest

from tests.fake_model_server import text, tool_use
from tests.helpers import fill_disk, mount_tmpfs, needs_root, unmount

pytestmark = pytest.mark.faults


def _results(body: dict) -> list[dict]:
    return [b for b in body["messages"][-1]["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]


def _text(result: dict) -> str:
    content = result["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


@needs_root
def test_a_plan_create_on_a_full_disk_leaves_no_plan_and_succeeds_once_space_is_back(cli, model_server, project):
    tasks = project / ".evo-agent" / "tasks"
    try:
        mount_tmpfs(tasks, "256k")
    except subprocess.CalledProcessError as exc:
        pytest.skip(f"cannot mount a tmpfs here: {exc.stderr.decode(errors='replace').strip()}")
    try:
        filler = fill_disk(tasks, leave=0)
        plan = {"title": "Port to Rust", "goal": "a Rust parser " + "g" * 8000}
        model_server.script(tool_use("plan_create", plan), text("Could not plan."))
        full = cli.run("-p", "plan the port")
        assert full.rc == 0 and full.out == "Could not plan.\n", full.err
        (failed,) = _results(model_server.requests[-1])
        assert failed.get("is_error") and "No space left on device" in _text(failed), failed
        assert "\n" not in _text(failed).strip()
        assert "Traceback" not in full.err
        todo = tasks / "todo"
        assert not todo.is_dir() or not list(todo.iterdir()), list(todo.iterdir())  # no plan, no leftover

        filler.unlink()  # space is back
        model_server.script(tool_use("plan_create", plan), text("Planned."))
        again = cli.run("-c", "-p", "try again")
        assert again.rc == 0 and again.out == "Planned.\n", again.err
        (made,) = _results(model_server.requests[-1])
        assert not made.get("is_error"), _text(made)
        (plan_dir,) = (tasks / "todo").iterdir()
        assert sorted(p.name for p in plan_dir.iterdir()) == ["plan.md"]
        assert cli.run("plan").out.count("Port to Rust") >= 1
        model_server.assert_all_valid()
    finally:
        unmount(tasks)


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
