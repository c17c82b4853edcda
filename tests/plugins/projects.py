"""Fixtures for a temporary project directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.builders import make_git_project


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh project directory that is a git repository on branch `main`.

    The user's cache dir goes under `tmp_path` too: listings of many sessions keep their index there.
    """
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    return make_git_project(tmp_path)
