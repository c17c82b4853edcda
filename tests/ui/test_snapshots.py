"""Snapshot tests (pytest-textual-snapshot) of the picker (the app's rendering tests are in test_render.py).

Regenerate after a deliberate visual change with
`.venv/bin/python -m pytest tests/ui/test_snapshots.py --snapshot-update`.
"""

from __future__ import annotations

import time

import pytest

from evo_agent.session import SessionInfo, SessionMeta
from evo_agent.ui.picker import PickerApp


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
