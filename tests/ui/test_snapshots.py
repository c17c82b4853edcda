"""Snapshot tests (pytest-textual-snapshot) of the picker and the main screen.

Regenerate after a deliberate visual change with
`.venv/bin/python -m pytest tests/ui/test_snapshots.py --snapshot-update`.
"""

from __future__ import annotations

import time

import pytest

from evo_agent.session import SessionInfo, SessionMeta
from evo_agent.ui.app import AgentApp
from evo_agent.ui.picker import PickerApp

from .fakes import FakeAgent

pytest.importorskip("pytest_textual_snapshot")


@pytest.fixture
def utc(monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def fixed_rows() -> list[SessionInfo]:
    prompts = ["fix the flaky upload test that fails on CI every third run because of a race in the retry loop",
               "add a README section about sessions", "添加中文支持", None]
    rows = []
    for i, prompt in enumerate(prompts):
        ms = 1_780_227_556_183 - i * 86_400_000
        meta = SessionMeta(id=f"{ms}_{i:08x}", created_ms=ms, updated_ms=ms, first_prompt=prompt,
                           total_input_tokens=12_000 // (i + 1), total_output_tokens=450, message_count=2)
        rows.append(SessionInfo(meta, "/nonexistent"))
    return rows


def test_picker_snapshot(snap_compare, utc):
    assert snap_compare(PickerApp(rows=fixed_rows()), terminal_size=(90, 12), press=["down"])


def test_main_screen_snapshot(snap_compare, tmp_path):
    agent = FakeAgent(tmp_path, script=[
        ("on_text", ("Here are the files:\n\n- `a.txt`\n- `b.txt`\n",)),
        ("on_tool_start", ("tu_1", "bash", {"command": "ls"})),
        ("on_tool_end", ("tu_1", "a.txt\nb.txt", False, 0.04)),
        ("on_text", ("Done.",)),
    ])

    async def run_before(pilot) -> None:
        await pilot.press(*"list the files", "enter")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.pause(0.1)

    assert snap_compare(AgentApp(agent), terminal_size=(90, 24), run_before=run_before)
