"""Fixtures for the tool tests: a ToolContext rooted in a temporary directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from evo_agent.tools import ToolContext


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    root = tmp_path / "proj"
    root.mkdir()
    return ToolContext(project_dir=root)
