"""The status line says when commands run unasked are not sandboxed (issue #26: the missing backstop)."""

from __future__ import annotations

from tests.ui.test_app import running

from .fakes import FakeAgent


async def test_the_status_line_shows_a_missing_backstop_and_nothing_otherwise(tmp_path):
    agent = FakeAgent(tmp_path)
    async with running(agent) as run:
        assert "unsandboxed" not in run.status()  # not probed yet (None), or sandboxed (True)
        agent.read_only_backstop = True
        run.app.app.invalidate()
        assert "unsandboxed" not in run.status()
        agent.read_only_backstop = False
        await run.until(lambda: "unsandboxed" in run.status())
