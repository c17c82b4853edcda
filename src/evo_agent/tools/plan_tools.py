"""The Session Plan's seven tools (SPEC §11): the seed's names and parameters, over `session.PlanStore`.

`plan_create` {title, goal, approach?, steps?} → the plan's id (its directory name); `plan_task_create`
{subject, description?, blocked_by?} → the task's id; `plan_task_update` {task_id, status?, subject?,
description?, blocked_by?}; `plan_task_get` {task_id}; `plan_task_list` {}; `plan_list` {};
`plan_complete` {} (refused while a task is pending or in progress, naming them).

They act on the active plan; one plan is open at a time per project, so a second `plan_create` is
refused, naming the open plan and how to finish it. The tools know nothing of the agent: what they
need of it is a `PlanHooks` (the store, who is changing the plan, and `changed()` to record each
change as a `plan_update` record).
"""

from __future__ import annotations

import json
from collections.abc import Callable

from evo_agent.session import TASK_STATUSES, Plan, PlanError, PlanStore, Task

from .base import Tool, ToolContext, ToolFacts, ToolResult

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)
if TYPE_CHECKING:
    from typing import Any, Protocol
else:  # a Protocol is the type checker's: at run time a plain base class (typing is ~12 M instructions)
    Protocol = object


def _text_label(key: str) -> Callable[[dict[str, Any]], str | None]:
    """A call's label: one text field (`plan_create(Fix the upload retry)`), not the whole input as JSON. Not
    `label_arg`, which Ctrl+O would show alone: it shows the whole input (goal, steps) instead."""
    def label(tool_input: dict[str, Any]) -> str | None:
        value = tool_input.get(key)
        return value if isinstance(value, str) and value else None
    return label


def _task_label(tool_input: dict[str, Any]) -> str | None:
    """`#2 → completed`, `#2 Read the handler` (a new subject), `#2 Read the handler → completed`: the task and
    what the call sets on it."""
    task = tool_input.get("task_id")
    if not isinstance(task, (int, str)) or isinstance(task, bool) or task == "":
        return None
    said = [f"#{task}"]
    status, subject = tool_input.get("status"), tool_input.get("subject")
    if isinstance(subject, str) and subject:
        said.append(subject)
    if isinstance(status, str) and status:
        said.append(f"→ {status}")
    return " ".join(said)


# Their facts (tools/registry.py): they change only .evo-agent/tasks/, so they run unasked in every mode;
# read-only mode refuses the ones that write.
FACTS: tuple[ToolFacts, ...] = (
    ToolFacts("plan_create", kind="write", approval="plan", label=_text_label("title")),
    ToolFacts("plan_task_create", kind="write", approval="plan", label=_text_label("subject")),
    ToolFacts("plan_task_update", kind="write", approval="plan", label=_task_label),
    ToolFacts("plan_task_get", kind="read", approval="plan", label=_task_label),
    ToolFacts("plan_task_list", kind="read", approval="plan"),
    ToolFacts("plan_list", kind="read", approval="plan"),
    ToolFacts("plan_complete", kind="write", approval="plan"),
)
PLAN_TOOL_NAMES = tuple(f.name for f in FACTS)


class PlanHooks(Protocol):
    """What the plan tools need of whoever runs them."""

    store: PlanStore

    @property
    def session_id(self) -> str | None: ...

    def changed(self, plan: str, op: str, task: dict[str, Any] | None, **extra: object) -> None:
        """A change landed on disk: record it (`plan_update`)."""

    def consulted(self) -> None:
        """A plan tool ran (read or write): the model is keeping the plan."""


def task_line(plan: Plan, task: Task, open_ids: set[int] | None = None) -> str:
    """`#2 [in_progress] subject (blocked by #1)`: one task, one line (`open_ids`: Plan.open_blockers)."""
    line = f"#{task.id} [{task.status}] {task.subject}"
    blockers = plan.open_blockers(task, open_ids)
    if blockers:
        line += " (blocked by " + ", ".join(f"#{i}" for i in blockers) + ")"
    return line


def plan_summary(plan: Plan, *, with_description: bool = False) -> str:
    """The plan as the model and a person read it: title, goal, tasks with status, the task in progress."""
    done, total = plan.progress
    lines = [f"Plan {plan.id}: {plan.title}" + (" (done)" if plan.state == "done" else ""),
             f"Goal: {plan.goal or '(none)'}"]
    if plan.approach and with_description:
        lines.append(f"Approach: {plan.approach}")
    if plan.steps and with_description:
        lines.append("Steps: " + "; ".join(f"{i}. {s}" for i, s in enumerate(plan.steps, 1)))
    lines.append(f"Tasks ({done}/{total} completed):" if total else "Tasks: none yet")
    open_ids = plan.open_ids()
    for task in plan.live_tasks:
        lines.append("  " + task_line(plan, task, open_ids))
        if with_description and task.description:
            lines.append("      " + " ".join(task.description.split())[:300])
    current = plan.in_progress
    if current:
        lines.append("In progress: " + "; ".join(f"#{t.id} {t.subject}" for t in current))
    for problem in plan.problems:
        lines.append(f"Unreadable: {problem}")
    return "\n".join(lines)


_MARKS = {"completed": "✔", "in_progress": "▶", "pending": "○", "deleted": "✗"}


def plan_checklist(plan: Plan, limit: int = 12) -> list[str]:
    """The plan compactly, for a person (the app's Ctrl+T): a title line, then one mark per task."""
    done, total = plan.progress
    lines = [f"Plan: {plan.title} ({done}/{total})"]
    live = plan.live_tasks
    # Keep the tasks in progress and those next in line when there are too many to show.
    if len(live) > limit:
        first_open = next((i for i, t in enumerate(live) if t.is_open), len(live))
        start = max(0, min(first_open - 1, len(live) - limit))
        live = live[start:start + limit]
    open_ids = plan.open_ids()
    for task in live:
        blocked = " (blocked)" if plan.open_blockers(task, open_ids) else ""
        lines.append(f"  {_MARKS.get(task.status, '?')} #{task.id} {task.subject}{blocked}")
    return lines


_STR = {"type": "string"}
_IDS = {"type": "array", "items": {"type": "integer"}, "description": "Ids of tasks that must be completed first."}

SCHEMAS: dict[str, dict[str, Any]] = {
    "plan_create": {"type": "object", "properties": {
        "title": {"type": "string", "description": "A short title; the plan's id is the date and its slug."},
        "goal": {"type": "string", "description": "What is done when the plan is done."},
        "approach": {"type": "string", "description": "How you mean to get there."},
        "steps": {"type": "array", "items": _STR, "description": "The steps, in order (plan.md's list)."},
    }, "required": ["title", "goal"]},
    "plan_task_create": {"type": "object", "properties": {
        "subject": {"type": "string", "description": "One line: what the task does (imperative)."},
        "description": _STR, "blocked_by": _IDS,
    }, "required": ["subject"]},
    "plan_task_update": {"type": "object", "properties": {
        "task_id": {"type": "integer"},
        "status": {"type": "string", "enum": list(TASK_STATUSES)},
        "subject": _STR, "description": _STR, "blocked_by": _IDS,
    }, "required": ["task_id"]},
    "plan_task_get": {"type": "object", "properties": {"task_id": {"type": "integer"}}, "required": ["task_id"]},
    "plan_task_list": {"type": "object", "properties": {}},
    "plan_list": {"type": "object", "properties": {}},
    "plan_complete": {"type": "object", "properties": {}},
}

DESCRIPTIONS = {
    "plan_create": "Create the Session Plan for multi-step work: a plan.md (goal, approach, steps) under "
                   ".evo-agent/tasks/todo/ that survives compaction, resume and restarts. One plan is active at "
                   "a time: finish the current one with plan_complete first. Returns the plan's id.",
    "plan_task_create": "Add a task (pending) to the active plan; blocked_by names tasks that must be completed "
                        "first. Returns the task's id.",
    "plan_task_update": "Change a task of the active plan: status pending|in_progress|completed|deleted, subject, "
                        "description, blocked_by. Mark a task in_progress when you start it and completed as soon "
                        "as it is done; completing a task unblocks the tasks waiting for it.",
    "plan_task_get": "One task of the active plan, in full (JSON).",
    "plan_task_list": "The active plan: its goal and every task with its status.",
    "plan_list": "Every plan of this project, open and done, with progress.",
    "plan_complete": "Mark the active plan done (moves it to .evo-agent/tasks/done/). Refused while a task is "
                     "pending or in progress.",
}


def make_plan_tools(hooks: PlanHooks) -> list[Tool]:
    """The seven tools over `hooks`; a refusal is an `is_error` result of one line, never an exception."""
    def wrap(name: str, fn: Callable[[PlanHooks, dict[str, Any]], str]) -> Tool:
        def run(tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
            h = hooks
            try:
                h.consulted()
                return ToolResult(fn(h, tool_input))
            except PlanError as exc:
                return ToolResult(f"{name} refused: {exc}", is_error=True)
            except OSError as exc:
                return ToolResult(f"{name} failed: {exc.strerror or exc} ({h.store.root})", is_error=True)
        return Tool(name, DESCRIPTIONS[name], SCHEMAS[name], run, facts=next(f for f in FACTS if f.name == name))

    return [wrap(name, fn) for name, fn in _RUNNERS.items()]


def _create(h: PlanHooks, i: dict[str, Any]) -> str:
    steps = i.get("steps")
    if steps is not None and not (isinstance(steps, list) and all(isinstance(s, str) for s in steps)):
        raise PlanError("steps must be a list of strings")
    plan = h.store.create(i.get("title", ""), i.get("goal", ""), i.get("approach") or "", steps,
                          session_id=h.session_id)
    h.changed(plan.id, "plan_create", None, title=plan.title, goal=plan.goal)
    return (f"{plan.id}\nCreated plan {plan.id} ({plan.path.relative_to(h.store.project_dir)}/plan.md). "
            "Add its tasks with plan_task_create.")


def _task_create(h: PlanHooks, i: dict[str, Any]) -> str:
    task = h.store.add_task(i.get("subject", ""), i.get("description") or "", i.get("blocked_by"),
                            session_id=h.session_id)
    plan = h.store.get()
    h.changed(plan.id, "task_create", task.to_json())
    return f"{task.id}\nCreated task #{task.id}: {task.subject}" + (
        f" (blocked by {', '.join(f'#{b}' for b in task.blocked_by)})" if task.blocked_by else "")


def _task_update(h: PlanHooks, i: dict[str, Any]) -> str:
    fields = {k: i[k] for k in ("status", "subject", "description", "blocked_by") if k in i and i[k] is not None}
    if not fields:
        raise PlanError("give at least one of status, subject, description, blocked_by")
    task, unblocked, previous = h.store.update_task(i.get("task_id"), session_id=h.session_id, **fields)
    plan = h.store.get()
    h.changed(plan.id, "task_update", task.to_json(), previous=previous)
    text = f"Updated task {task_line(plan, task)}"
    if unblocked:
        by_id = {t.id: t for t in plan.tasks}
        text += "\nUnblocked: " + ", ".join(f"#{i} {by_id[i].subject}" for i in unblocked if i in by_id)
    if plan.live_tasks and not plan.open_tasks:
        text += "\nEvery task is completed: call plan_complete when the goal is met."
    return text


def _task_get(h: PlanHooks, i: dict[str, Any]) -> str:
    plan = h.store.get()
    task_id = i.get("task_id")
    task = plan.task(task_id) if isinstance(task_id, int) else None
    if task is None:
        raise PlanError(f"plan {plan.id} has no task {task_id}")
    data = task.to_json()
    data["blocked_by_open"] = plan.open_blockers(task)
    return json.dumps(data, ensure_ascii=False, indent=2)


def _task_list(h: PlanHooks, i: dict[str, Any]) -> str:
    return plan_summary(h.store.get(), with_description=True)


def _plan_list(h: PlanHooks, i: dict[str, Any]) -> str:
    plans = h.store.plans()
    if not plans:
        return "No plans in this project."
    lines = []
    for plan in plans:
        done, total = plan.progress
        lines.append(f"{plan.id} [{'active' if plan.state == 'todo' else 'done'}] {plan.title} ({done}/{total})")
    return "\n".join(lines)


def _complete(h: PlanHooks, i: dict[str, Any]) -> str:
    plan = h.store.complete()
    h.changed(plan.id, "plan_complete", None)
    done, total = plan.progress
    return f"Plan {plan.id} is done ({done}/{total} tasks completed); moved to {plan.path.parent}."


_RUNNERS: dict[str, Callable[[PlanHooks, dict[str, Any]], str]] = {
    "plan_create": _create, "plan_task_create": _task_create, "plan_task_update": _task_update,
    "plan_task_get": _task_get, "plan_task_list": _task_list, "plan_list": _plan_list, "plan_complete": _complete,
}

__all__ = ["FACTS", "PLAN_TOOL_NAMES", "PlanHooks", "make_plan_tools", "plan_checklist", "plan_summary",
           "task_line"]
