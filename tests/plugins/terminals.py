"""The `terminals` fixture: the tmux terminals a test opened (tests/tmux_terminal.py), closed after it."""

from __future__ import annotations

import pytest

from tests.tmux_terminal import Terminal


@pytest.fixture
def terminals():
    opened: list[Terminal] = []
    yield opened
    for t in opened:
        t.close()
