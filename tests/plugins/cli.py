"""Fixtures that run the `evo-agent` CLI: as a subprocess in a project (`cli`, `demo_cli`), in-process (`cli_main`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_runner import Cli, InProcessCli, clean_env


@pytest.fixture
def cli(project: Path, model_server, tmp_path: Path) -> Cli:
    """`evo-agent` in `project`, talking to the local fake Messages API only."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return Cli(project, model_server.env(clean_env(home)))


@pytest.fixture
def demo_cli(project: Path, tmp_path: Path) -> Cli:
    """`evo-agent` with the offline demo provider and no route to any API."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return Cli(project, clean_env(home, EVO_AGENT_PROVIDER="demo", ANTHROPIC_BASE_URL="http://127.0.0.1:9"))


@pytest.fixture
def cli_main(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> InProcessCli:
    """`evo_agent.cli.main.main(argv)` called in this process, in `project`, with std streams captured.

    For argument parsing and exit codes (fast, no interpreter start-up); what needs a real terminal,
    signals or a provider stays with `cli`.
    """
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = clean_env(home, EVO_AGENT_PROVIDER="demo", ANTHROPIC_BASE_URL="http://127.0.0.1:9")
    return InProcessCli(project, env, monkeypatch)
