"""The Session Plan inside a conversation: its tools' hooks, and when the model is reminded of it.

The plan's state never enters the system prompt (fixed at session start so the prompt cache holds,
SPEC §12). It reaches the model as a `reminder` (`Agent.queue_reminder`, carried inside the next
user message) at these moments, and only while a plan is open — a completed plan is never
announced again:

| reason         | when                                                                         |
|----------------|------------------------------------------------------------------------------|
| `session_start`| the first message of a new session (or a subagent's task)                    |
| `resume`       | the first message after `--resume`, `-c`, the picker, `/resume`, a rewind     |
| `compaction`   | the first request after every compaction (the summary is never the plan's source) |
| `plan_changed` | a turn starts and the plan's files differ from what the model last saw (a person, another agent) |
| `plan_nudge`   | a task has been in progress for NUDGE_TURNS turns in which no plan tool ran  |
| `plan_closed`  | a turn starts, no plan is open, and the model last knew one open (its history says so: a |
|                | person or another agent completed it): told once, so it never comes back from old messages |

The text is built from disk when the message is built, never from memory, so it is what the files
say at that moment. Each change a plan tool makes is recorded as a `plan_update` record.
"""

from __future__ import annotations

import time

from evo_agent.session import (
    REMINDER_OPEN,
    PlanError,
    PlanStore,
    blocks,
    is_reminder_block,
    tool_result_text,
    tool_uses,
)
from evo_agent.tools import Tool
from evo_agent.tools.plan_tools import make_plan_tools, plan_checklist, plan_summary

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)
if TYPE_CHECKING:
    from typing import Any

    from .loop import Agent

NUDGE_TURNS = 5  # the seed's: turns with a task in progress and no plan tool used before a nudge

_OPENINGS = {
    "session_start": "A Session Plan is open in this project. Continue it, keeping it up to date with the plan_* "
                     "tools (mark a task in_progress when you start it and completed when it is done):",
    "resume": "This session was resumed. The open Session Plan as it is on disk now (the source of truth for the "
              "work, not anything said earlier):",
    "compaction": "The conversation was compacted. The open Session Plan as it is on disk (the source of truth for "
                  "what is done and what is left, not the summary):",
    "plan_changed": "The Session Plan's files changed since you last saw them (edited by a person or another agent). "
                    "Its current state, which replaces what you knew:",
    "subagent": "The Session Plan of this project, for context. If your task is one of its tasks, update that task "
                "(plan_task_update) as you finish it:",
}

_CLOSED = "There is no open Session Plan in this project now"
_NUDGE = "The plan's task "


def _closed_text(named: str) -> str:
    return (f"{_CLOSED}: {named} was completed or removed outside this conversation (by a person or another "
            "agent). Do not go on with it from what earlier messages said; make a new plan only if the work needs "
            "one.")


def known_open_plan(history: list[dict[str, Any]]) -> str | None:
    """The id of the plan the model last knew open, from what `history` told it; None when it knows none.

    Told open: a plan reminder ("Plan <id>: …"), or its own plan_create's result; told closed: its own
    plan_complete's result, or a plan_closed reminder. A compaction's summary tells nothing (the plan is
    announced after it anyway).
    """
    names: dict[str, str] = {}
    known: str | None = None
    for message in history:
        if message.get("role") == "assistant":
            names.update({str(u.get("id")): str(u.get("name")) for u in tool_uses(message)
                          if str(u.get("name", "")).startswith("plan_")})
            continue
        for block in blocks(message):
            if is_reminder_block(block):
                text = block["text"].removeprefix(REMINDER_OPEN).lstrip("\n")
                if text.startswith(_CLOSED):
                    known = None
                elif any(text.startswith(o) for o in (*_OPENINGS.values(), _NUDGE)) and "\nPlan " in text:
                    known = text.split("\nPlan ", 1)[1].split(":", 1)[0].strip() or known
            elif block.get("type") == "tool_result" and not block.get("is_error"):
                name = names.get(str(block.get("tool_use_id")))
                if name == "plan_create":
                    known = tool_result_text(block).split("\n", 1)[0].strip() or known
                elif name == "plan_complete":
                    known = None
    return known


class PlanContext:
    """One agent's view of the project's plan: the tools' hooks and the reminders' state machine."""

    def __init__(self, agent: Agent) -> None:
        self._agent = agent
        self.store = PlanStore(agent.project_dir, redact=getattr(agent.store, "redact", True))
        self._announce: str | None = None  # a reason the next user message carries the plan
        self._seen: str | None = None  # fingerprint of the files the model last heard of (or changed itself)
        self._idle_turns = 0  # turns with a task in progress and no plan tool used
        self._consulted = False  # a plan tool ran during this turn
        self._progress: tuple[float, tuple[int, int] | None] = (-1.0, None)  # (when read, (done, total))
        self._known: str | None = None  # the plan the model knows open (its id); read from the history when due
        self._derive = True  # the history changed under us (a start, a resume, a compaction): read it again

    # ---- the tools' hooks (tools.plan_tools.PlanHooks)
    @property
    def session_id(self) -> str | None:
        return self._agent.session_id

    def tools(self) -> list[Tool]:
        return make_plan_tools(self)

    def consulted(self) -> None:
        self._consulted = True

    def changed(self, plan: str, op: str, task: dict[str, Any] | None, **extra: object) -> None:
        """Record the change (`plan_update`), and note the files as seen: our own change is no news."""
        self._agent.recorder.append("plan_update", plan=plan, op=op, task=task, **extra)
        self._seen = self._fingerprint()
        self._known, self._derive = (None if op == "plan_complete" else plan), False

    # ---- the moments
    def announce(self, reason: str) -> None:
        """The next user message carries the plan's state (when a plan is open then)."""
        self._announce = reason
        self._derive = True

    def at_turn_start(self) -> list[tuple[str, str]]:
        """The plan reminders of a turn's prompt: an announcement, a change by someone else, or a nudge."""
        reason = self._announce
        fingerprint = self._fingerprint()
        if fingerprint is None:  # no open plan: never a completed one, only that the one it knew is closed
            self._announce, self._seen, self._idle_turns = None, None, 0
            return self._closed()
        if reason is None and fingerprint != self._seen:
            reason = "plan_changed"
        if reason is not None:
            return self._state(reason)
        if self._idle_turns >= NUDGE_TURNS:
            self._idle_turns = 0
            return self._nudge()
        return []

    def mid_turn_due(self) -> bool:
        """Whether an announcement waits (the request after a compaction must carry the plan)."""
        return self._announce is not None

    def mid_turn(self) -> list[tuple[str, str]]:
        """Before a model call inside a turn: only an announcement (after a compaction)."""
        if self._announce is None:
            return []
        if self._fingerprint() is None:
            self._announce = None
            return []
        return self._state(self._announce)

    def at_turn_end(self) -> None:
        """Count a turn with a task in progress in which no plan tool ran (the nudge's clock)."""
        if self._consulted:
            self._idle_turns = 0
        else:
            try:
                plan = self.store.active()
            except (OSError, PlanError):
                plan = None
            self._idle_turns = self._idle_turns + 1 if plan is not None and plan.in_progress else 0
        self._consulted = False

    # ---- what a person sees
    def view(self, *, compact: bool = False) -> str:
        """`/plan` (the whole plan) or the app's Ctrl+T panel (a checklist); a line when there is none."""
        try:
            plan = self.store.active()
        except (OSError, PlanError) as exc:
            return f"The plan cannot be read: {exc}"
        if plan is None:
            return "No active plan in this project (evo-agent plan list shows the done ones)."
        foreign = "" if plan.private else (
            "\nNot shown to the model: plan.md is not yours (committed to the repository, another user's, or "
            "unpacked from an archive: your evo-agent did not make it); the model sees it only through the plan "
            "tools.")
        if compact:
            return "\n".join(plan_checklist(plan)) + foreign
        return f"{plan_summary(plan, with_description=True)}\nFiles: {plan.path}{foreign}"

    def progress(self, max_age: float = 1.0) -> tuple[int, int] | None:
        """(completed, total) of the open plan for the status line, read at most once per `max_age` seconds."""
        read_at, value = self._progress
        now = time.monotonic()
        if now - read_at >= max_age:
            try:
                plan = self.store.active()
                value = plan.progress if plan is not None else None
            except (OSError, PlanError):
                value = None
            self._progress = (now, value)
        return value

    # ---- inside
    def _fingerprint(self) -> str | None:
        try:
            return self.store.fingerprint()
        except OSError:
            return None

    def _state(self, reason: str) -> list[tuple[str, str]]:
        self._announce = None
        try:
            plan = self.store.active()
        except (OSError, PlanError):
            return []
        if plan is None:
            self._seen = None
            return []
        self._seen = self._fingerprint()
        if not plan.private:  # a cloned or unpacked repository's plan (or another user's): content, not this agent's
            return []
        self._known, self._derive = plan.id, False
        opening = _OPENINGS.get(reason, _OPENINGS["session_start"])
        return [(f"{opening}\n{plan_summary(plan)}", reason)]

    def _closed(self) -> list[tuple[str, str]]:
        """The plan the model knows open was closed by someone else: say so once (reason plan_closed)."""
        if self._derive:
            self._known, self._derive = known_open_plan(self._agent.history), False
        known, self._known = self._known, None
        if known is None:
            return []
        try:
            plan = self.store.get(known)  # named only when it is a plan of this project (the id is checked)
            named = f"plan {plan.id} ({plan.title})"
        except (OSError, PlanError):
            named = "the plan it knew of"
        return [(_closed_text(named), "plan_closed")]

    def _nudge(self) -> list[tuple[str, str]]:
        try:
            plan = self.store.active()
        except (OSError, PlanError):
            return []
        if plan is None or not plan.in_progress or not plan.private:
            return []
        current = "; ".join(f"#{t.id} {t.subject}" for t in plan.in_progress)
        text = (f"The plan's task {current} has been in progress for {NUDGE_TURNS} turns without a plan tool. "
                "If it is done, mark it completed with plan_task_update and start the next one; if the plan "
                "changed, update it. Do not mention this reminder to the user.\n" + plan_summary(plan))
        return [(text, "plan_nudge")]


__all__ = ["NUDGE_TURNS", "PlanContext"]
