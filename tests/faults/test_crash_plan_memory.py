"""SIGKILL the real `evo-agent` at random moments of a turn that writes the Session Plan and Auto Memory.

The crash harness (tests/faults/crash.py) checks the conversation of every run (nothing recorded lost,
every resume exact and accepted by the API); this moment's turn is a run of plan and memory tool calls,
so the kills land while task files, topic files and MEMORY.md are being replaced, and the plan and
memory reminders travel in the resumed requests. At the end, every chain's plan and memory files must
be whole: each task file parses, each plan directory in todo/ or done/ has its plan.md, each topic file
keeps its front matter, and MEMORY.md lists the topic files (it lags by at most the change a kill cut).
"""

from __future__ import annotations

import json
import os
import random

import pytest

from evo_agent.session import MemoryStore, PlanStore, parse_front_matter
from tests.builders import make_git_project
from tests.fake_model_server import hang, text, tool_use

from .crash import Moment, run_chains

pytestmark = pytest.mark.faults


def _topic(name: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: notes on {name}\ntype: project\n---\n{body}\n"


def _plan_memory_script(run):
    label = run.label.replace("-", "")
    return [
        [text("Planning."), tool_use("plan_create", {"title": f"Plan {label}", "goal": "ship it",
                                                     "steps": ["one", "two"]})],
        tool_use("plan_task_create", {"subject": f"first {label}", "description": "d" * 3000}),
        [tool_use("plan_task_create", {"subject": f"second {label}"}),
         tool_use("memory", {"command": "create", "path": f"/memories/project/{label}.md",
                             "file_text": _topic(label, "first line")})],
        tool_use("plan_task_update", {"task_id": 2, "blocked_by": [1]}),
        [tool_use("memory", {"command": "str_replace", "path": f"/memories/project/{label}.md",
                             "old_str": "first line", "new_str": "second line"}),
         tool_use("plan_task_update", {"task_id": 1, "status": "completed"})],
        tool_use("plan_list", {}),
        hang(30, text("never finished")),
    ]


def _request_reached(run) -> bool:
    """The moment: the server has received the n-th request of the turn (n drawn once per run, 1 to 7), so
    the kill (after a jitter shorter than a step) lands among that step's tool calls and records."""
    if not hasattr(run, "kill_after"):
        run.kill_after = run.rng.randint(1, 7)
    return run.server.requests_seen >= run.kill_after


PLAN_MEMORY = Moment("plan-memory", "print", _plan_memory_script, _request_reached, jitter=(0.0, 0.08))


def _check_files_whole(project) -> list[str]:
    problems = []
    for plan in PlanStore(project).plans():
        problems += [f"plan {plan.id}: {p}" for p in plan.problems]
        names = os.listdir(plan.path)
        for name in names:
            if name.startswith("task_") and name.endswith(".json"):
                json.loads((plan.path / name).read_text())
    for state in ("todo", "done"):
        root = project / ".evo-agent" / "tasks" / state
        for name in os.listdir(root) if root.is_dir() else []:
            if not name.startswith(".") and not (root / name / "plan.md").is_file():
                problems.append(f"{state}/{name} has no plan.md")
    store = MemoryStore(project)
    topics = store.topics("project")
    problems += [f"topic {t.file}: {t.problem}" for t in topics if t.problem]
    index = (project / ".evo-agent" / "memory" / "MEMORY.md")
    if index.exists():
        listed = index.read_text()
        missing = [t.file for t in topics if t.file not in listed]
        if len(missing) > 1:
            problems.append(f"MEMORY.md misses {missing}")
    for t in topics:
        fields, problem = parse_front_matter((project / ".evo-agent" / "memory" / t.file).read_text())
        if problem:
            problems.append(f"{t.file}: {problem}")
    return problems


def test_kills_while_the_plan_and_memory_are_written_lose_nothing_and_leave_no_half_file(tmp_path):
    seed = int(os.environ.get("EVO_AGENT_FAULT_SEED") or random.SystemRandom().randrange(1 << 31))
    tally = run_chains(8, 2, seed, tmp_path, make_git_project, [PLAN_MEMORY])
    report = f"seed {seed}: {tally.summary()}"
    print(f"\nplan-memory faults: {report}")
    assert not tally.failures, f"{report}\n" + "\n".join(tally.failures[:3])
    assert tally.records_lost == 0 and tally.resumes == tally.resumes_valid
    problems = [p for chain in range(2) for p in _check_files_whole(tmp_path / f"chain{chain}" / "project")]
    assert not problems, f"{report}\n" + "\n".join(problems)
