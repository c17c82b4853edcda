"""The slash-command table's parsing: what a submitted line means (ui/commands.py)."""

from __future__ import annotations

import pytest

from evo_agent.ui.commands import is_command


@pytest.mark.parametrize("line", ["/help", "/exit", "/compact focus on tests", "/nope", "/rename a/b", "/COST"])
def test_commands(line):
    assert is_command(line)


@pytest.mark.parametrize("line", [
    "/home/me/err.log what is this?", "/tmp/x", " /help", "\t/help", "//help", "/ help", "hello /help",
    "/etc/passwd", "/1abc", "",
])
def test_prompts(line):
    assert not is_command(line)
