"""The Session Plan in the app: `/plan` prints it, the status line shows `plan 2/5`, Ctrl+T toggles a checklist."""

from __future__ import annotations

from evo_agent.session import PlanStore
from tests.builders import make_agent
from tests.scripted_provider import ScriptedProvider

from .test_app import ENTER, running

CTRL_T = "\x14"


def plan_in(project) -> PlanStore:
    store = PlanStore(project)
    store.create("Ship the release", "tag 2.0")
    for subject in ("Write the changelog", "Bump the version", "Tag it"):
        store.add_task(subject)
    store.update_task(1, status="completed")
    store.update_task(2, status="in_progress")
    return store


async def test_plan_command_status_line_and_ctrl_t(project):
    agent, _ = make_agent(project, ScriptedProvider())
    async with running(agent) as run:
        assert "plan" not in run.status().split("session")[0]  # no plan yet: nothing in the status line
        store = plan_in(project)
        agent.plan._progress = (-1.0, None)  # the status line rereads at most once a second; don't wait for it
        assert "plan 1/3" in run.status()
        run.type("/plan" + ENTER)
        await run.until(lambda: "Goal: tag 2.0" in run.printed)
        assert "#2 [in_progress] Bump the version" in run.printed and "In progress: #2 Bump the version" in run.printed
        panel = lambda: "".join(t for _, t in run.app._plan_text())  # noqa: E731
        assert not run.app._show_plan
        run.type(CTRL_T)
        await run.until(lambda: run.app._show_plan)
        assert [line.strip() for line in panel().splitlines()] == [
            "Plan: Ship the release (1/3)", "✔ #1 Write the changelog", "▶ #2 Bump the version", "○ #3 Tag it"]
        store.update_task(2, status="completed")
        run.type(CTRL_T + CTRL_T)  # hide and show again: read afresh
        await run.until(lambda: "✔ #2 Bump the version" in panel())
        assert agent.history == []  # nothing of it reached the model


def test_a_restored_conversation_never_shows_a_reminder_as_what_the_person_typed():
    import io

    from rich.console import Console

    from evo_agent.session import reminder_block
    from evo_agent.ui.transcript_view import history_renderables, split_exchanges

    messages = [{"role": "user", "content": [reminder_block("PLAN STATE"), {"type": "text", "text": "hello"}]},
                {"role": "assistant", "content": [{"type": "text", "text": "hi"}]},
                {"role": "user", "content": [reminder_block("after a compaction")]},
                {"role": "assistant", "content": [{"type": "text", "text": "again"}]}]
    console = Console(file=io.StringIO(), width=80)
    for item in history_renderables(messages):
        console.print(item)
    shown = console.file.getvalue()
    assert "hello" in shown and "again" in shown and "PLAN STATE" not in shown and "after a compaction" not in shown
    assert len(split_exchanges(messages)) == 1  # a reminder alone is not a prompt
