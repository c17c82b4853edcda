"""cli/entry.py's look at the arguments before anything is parsed: which launches start the app."""

from __future__ import annotations

import pytest

from evo_agent.cli import entry
from evo_agent.cli.main import MODEL_FREE


def test_the_model_free_commands_are_the_ones_main_runs():
    assert set(entry.MODEL_FREE_NAMES) == set(MODEL_FREE)


@pytest.mark.parametrize("words", [["--resume"], ["--resume", "abc"], ["--res"], ["-c"], ["--continue"], ["--cont"],
                                   ["-nc"], ["-c", "--at", "2"], ["--at=2", "-c"], ["--restore-files"]])
def test_a_launch_that_may_ask_or_pick_first_is_seen(words):
    assert entry.asks_first(words)


@pytest.mark.parametrize("words", [[], ["fix the tests"], ["--model", "x"], ["-n", "name"], ["--sandbox"],
                                   ["--permission-mode", "ask"], ["--provider", "demo"]])
def test_a_new_session_does_not_ask_first(words):
    assert not entry.asks_first(words)


@pytest.mark.parametrize("words", [["-p", "hi"], ["--print=hi"], ["--plain"], ["--help"], ["sessions", "list"],
                                   ["trust"], ["mcp", "list"], ["plan"], ["--version"]])
def test_no_app_is_expected_for_commands_and_print_mode(words):
    assert not entry.app_likely(words)
