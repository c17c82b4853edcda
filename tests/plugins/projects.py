"""Fixtures for a temporary project directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.builders import make_git_project


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A fresh project directory that is a git repository on branch `main`."""
    return make_git_project(tmp_path)
