"""The Session Plan on disk (SPEC §11): layout and modes, crash safety, two writers, a person's edits.

Real processes and real signals: a writer hammering the plan is `kill -9`'ed at random moments and
every file must still parse with no acknowledged update lost; two processes updating one task at
once must both land.
"""

from __future__ import annotations

import json
import os
import random
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evo_agent.session import PlanError, PlanStore

WRITER = textwrap.dedent("""
    import sys
    from evo_agent.session import PlanStore
    store = PlanStore(sys.argv[1])
    mode, count = sys.argv[2], int(sys.argv[3])
    for k in range(1, count + 1):
        if mode == "describe":      # every task's description counts up: v1, v2, ...
            task = (k - 1) % 4 + 1
            store.update_task(task, description=f"v{k}")
        elif mode == "subject":     # this writer changes only subjects of task 1
            store.update_task(1, subject=f"subject {k}")
        elif mode == "status":      # this one only statuses of task 1
            store.update_task(1, status="in_progress" if k % 2 else "pending")
        elif mode == "add":
            store.add_task(f"{sys.argv[4]} {k}")
        print(k, flush=True)        # acknowledged: the update is on disk
""")


def writer(project: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", WRITER, str(project), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def make_plan(project: Path, tasks: int = 4) -> PlanStore:
    store = PlanStore(project)
    store.create("Crash test", "survive kill -9", steps=["write", "kill"])
    for n in range(1, tasks + 1):
        store.add_task(f"task {n}")
    return store


def test_the_layout_and_modes_are_the_spec_s(project):
    store = make_plan(project, 2)
    plan = store.active()
    assert plan.path.relative_to(project).parts[:3] == (".evo-agent", "tasks", "todo")
    assert plan.id[:4].isdigit() and plan.id.endswith("-crash-test")
    assert sorted(os.listdir(plan.path)) == ["plan.md", "task_1.json", "task_2.json"]
    for path in [project / ".evo-agent" / "tasks", plan.path.parent, plan.path]:
        assert stat.S_IMODE(path.stat().st_mode) == 0o700, path
    for path in plan.path.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    text = (plan.path / "plan.md").read_text()
    assert text.startswith("# Crash test\n") and "## Goal\n\nsurvive kill -9" in text and "1. write\n2. kill" in text
    task = json.loads((plan.path / "task_1.json").read_text())
    assert set(task) == {"id", "subject", "description", "status", "blocked_by", "blocks", "created_at",
                         "updated_at", "updated_by"}
    store.update_task(2, status="deleted")
    store.update_task(1, status="completed")
    done = store.complete()
    assert done.path == project / ".evo-agent" / "tasks" / "done" / plan.id
    assert sorted(os.listdir(done.path)) == ["plan.md", "task_1.json", "task_2.json"]
    assert store.active() is None and not (project / ".evo-agent" / "tasks" / "todo" / plan.id).exists()


def test_kill_9_at_random_moments_never_leaves_half_a_file_or_loses_an_acknowledged_update(project):
    store = make_plan(project)
    rng = random.Random(os.environ.get("PYTHONHASHSEED", "27"))
    acked_total = 0
    for _ in range(6):
        proc = writer(project, "describe", "100000")
        wait_for = rng.randint(1, 40)
        last = 0
        while last < wait_for:
            line = proc.stdout.readline()
            assert line, proc.stderr.read()
            last = int(line)
        if rng.random() < 0.5:
            os.sched_yield()
        proc.kill()  # SIGKILL, mid-write or between writes
        rest = proc.stdout.read().split()
        proc.wait()
        last = int(rest[-1]) if rest else last
        acked_total += last
        plan = store.active()
        assert plan.problems == []
        for path in plan.path.iterdir():
            if path.name.endswith(".json"):
                json.loads(path.read_text())  # every task file parses
        # No acknowledged update lost: each task holds at least the last version acknowledged for it.
        for task in plan.tasks:
            acked = [k for k in range(1, last + 1) if (k - 1) % 4 + 1 == task.id]
            if acked:
                assert int(task.description[1:]) >= acked[-1], (task, last)
        store.update_task(1, subject="task 1")  # the next writer sweeps a killed writer's temp file
        assert not [n for n in os.listdir(plan.path) if n.endswith(".tmp")]
    assert acked_total >= 6


def test_two_processes_updating_one_task_at_once_lose_nothing(project):
    store = make_plan(project, 1)
    a, b = writer(project, "subject", "60"), writer(project, "status", "61")
    adds = [writer(project, "add", "30", "from A"), writer(project, "add", "30", "from B")]
    for proc in (a, b, *adds):
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    task = store.active().task(1)
    assert task.subject == "subject 60" and task.status == "in_progress"  # each writer's last word landed
    tasks = store.active().tasks
    assert [t.id for t in tasks] == list(range(1, 62))
    subjects = {t.subject for t in tasks[1:]}
    assert subjects == {f"from {w} {k}" for w in "AB" for k in range(1, 31)}


def test_a_hand_edited_task_and_plan_are_read_back_and_a_broken_file_is_named_not_overwritten(project):
    store = make_plan(project, 3)
    plan = store.active()
    (plan.path / "plan.md").write_text("# My own title\n\n## Goal\n\nship it\n\n## Steps\n\n- one\n- two\n")
    data = json.loads((plan.path / "task_2.json").read_text())
    data.update(subject="edited by hand", blocked_by=[1])
    (plan.path / "task_2.json").write_text(json.dumps(data))
    plan = store.active()
    assert (plan.title, plan.goal, plan.steps) == ("My own title", "ship it", ["one", "two"])
    assert plan.task(2).subject == "edited by hand" and plan.task(1).blocks == [2]  # `blocks` follows
    with pytest.raises(PlanError, match="blocked by open task"):
        store.update_task(2, status="in_progress")
    store.update_task(1, status="completed")
    assert json.loads((plan.path / "task_1.json").read_text())["blocks"] == [2]  # written back both ways
    (plan.path / "task_3.json").write_text("{not json")
    plan = store.active()
    assert plan.problems and "task_3.json" in plan.problems[0]
    with pytest.raises(PlanError, match="no task 3"):
        store.update_task(3, status="completed")
    assert (plan.path / "task_3.json").read_text() == "{not json"
    assert store.add_task("after the broken one").id == 4  # its id is never reused



def test_changing_one_task_leaves_a_person_s_formatting_of_the_others_as_it_is(project):
    store = make_plan(project, 3)
    plan = store.active()
    by_hand = '{"subject": "task 3",   "status": "pending", "note": "my own field"}\n'  # no `blocks`, its own shape
    (plan.path / "task_3.json").write_text(by_hand)
    store.update_task(1, status="completed")
    store.update_task(2, blocked_by=[1])  # task 1 now blocks task 2: task 1's file follows, task 3's does not
    assert (plan.path / "task_3.json").read_text() == by_hand
    assert json.loads((plan.path / "task_1.json").read_text())["blocks"] == [2]
    store.update_task(2, blocked_by=[])
    assert json.loads((plan.path / "task_1.json").read_text())["blocks"] == []
    assert store.active().task(3).subject == "task 3" and (plan.path / "task_3.json").read_text() == by_hand

def test_one_plan_at_a_time_and_done_plans_stay_done(project):
    store = make_plan(project, 1)
    with pytest.raises(PlanError, match="still active"):
        store.create("Second", "g")
    with pytest.raises(PlanError, match="open tasks: #1 task 1"):
        store.complete()
    store.update_task(1, status="completed")
    first = store.complete()
    second = store.create("Crash test", "again")
    assert second.id == f"{first.id}-2"  # same day, same title: a new directory, the done one untouched
    with pytest.raises(PlanError, match="already done"):
        store.complete(first.id)
    assert [(p.id, p.state) for p in store.plans()] == [(second.id, "todo"), (first.id, "done")]


@pytest.mark.parametrize("bad", ["../x", "2026-01-01-../../etc", "/etc/passwd", "2026-01-01-A", "", "x" * 300])
def test_a_plan_id_from_a_user_is_checked_before_any_path_is_built(project, bad):
    store = make_plan(project, 1)
    with pytest.raises(PlanError):
        store.get(bad)
    with pytest.raises(PlanError):
        store.complete(bad)


def test_a_planted_link_is_never_followed(project, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (project / ".evo-agent").mkdir()
    os.symlink(outside, project / ".evo-agent" / "tasks")
    with pytest.raises(PlanError, match="link"):
        PlanStore(project).create("t", "g")
    assert list(outside.iterdir()) == []


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["add", "status", "block"]), st.integers(1, 6),
                          st.sampled_from(["pending", "in_progress", "completed", "deleted"])), max_size=25))
def test_blocks_always_mirror_blocked_by_and_there_is_never_a_cycle(tmp_path_factory, ops):
    project = tmp_path_factory.mktemp("p")
    store = make_plan(project, 2)
    for op, n, status in ops:
        try:
            if op == "add":
                store.add_task(f"t{n}", blocked_by=[n % 2 + 1])
            elif op == "status":
                store.update_task(n, status=status)
            else:
                store.update_task(n, blocked_by=[(n + 1) % 6 + 1])
        except PlanError:
            pass
    plan = store.active()
    for task in plan.tasks:
        on_disk = json.loads((plan.path / f"task_{task.id}.json").read_text())
        assert on_disk["blocks"] == task.blocks == sorted(t.id for t in plan.tasks if task.id in t.blocked_by)
        seen, stack = set(), list(task.blocked_by)
        while stack:
            current = stack.pop()
            assert current != task.id, "a cycle"
            if current not in seen:
                seen.add(current)
                stack.extend(plan.task(current).blocked_by if plan.task(current) else [])
