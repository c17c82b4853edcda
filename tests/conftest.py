"""Fixtures shared by every test: temporary projects (and, below, the local model server)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A fresh project directory that is a git repository on branch `main`."""
    return make_git_project(tmp_path)


def make_git_project(parent: Path) -> Path:
    """`parent/project`: a git repository on branch `main` with one commit (the `project` fixture's)."""
    root = parent / "project"
    root.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    (root / "README.md").write_text("# a test project\n")
    subprocess.run([*git, "add", "README.md"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "init"], check=True)
    return root


@pytest.fixture
def model_server():
    """A local Anthropic Messages API (tests/fake_model_server.py), fresh for each test.

    Script answers with `model_server.script(text("hi"), tool_use("bash", {...}))`; point a
    subprocess at it with `env=model_server.env()`. Nothing global is set.
    """
    from tests.fake_model_server import FakeModelServer

    server = FakeModelServer().start()
    try:
        yield server
    finally:
        server.stop()


# The chat-completions twin of model_server, defined beside its server.
from tests.fake_openai_server import openai_server  # noqa: E402,F401
