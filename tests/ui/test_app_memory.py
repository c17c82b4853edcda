"""Auto Memory in the app: `/remember TEXT` saves at once (no model turn), `/memory` shows both indexes."""

from __future__ import annotations

from evo_agent.session import MemoryStore
from tests.builders import make_agent
from tests.scripted_provider import ScriptedProvider

from .test_app import ENTER, running


async def test_remember_and_memory_commands(project, tmp_path):
    memory = MemoryStore(project, user_dir=tmp_path / "user-memory")
    agent, _ = make_agent(project, ScriptedProvider(), memory=memory)
    async with running(agent) as run:
        run.type("/remember Always use pnpm, not npm" + ENTER)
        await run.until(lambda: "Saved to /memories/project/always-use-pnpm-not-npm.md" in run.printed)
        run.type("/remember" + ENTER)
        await run.until(lambda: "Usage: /remember [--user] TEXT" in run.printed)
        run.type("/memory" + ENTER)
        await run.until(lambda: "- [Always use pnpm, not npm](always-use-pnpm-not-npm.md)" in run.printed)
        assert "user memory (" in " ".join(run.printed.split())  # a notice wraps between words
        run.type("/memory always-use-pnpm-not-npm" + ENTER)
        await run.until(lambda: "type: feedback" in run.printed)
        assert agent.history == []  # nothing reached the model: it hears of it in its next message's reminder
