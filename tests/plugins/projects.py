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


@pytest.fixture(autouse=True)
def user_state_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh `$XDG_STATE_HOME` for every test, so no test reads or writes the real user's state
    (prompt history, the registry of sessions made: session/origin.py) or sees another test's.

    The console script gets the same one (tests/cli_runner.clean_env), so a session the test writes
    through the library and one the console script writes are made by one "user". Outside `tmp_path`,
    so a test that checks what was written there sees only its own files.
    """
    state = tmp_path_factory.mktemp("state")
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    return state
