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


@pytest.mark.parametrize(("words", "printing"), [(["-p", "hi"], True), (["--print"], True), (["--print=hi"], True),
                                                 (["--model", "x", "-p", "hi"], True), ([], False),
                                                 (["--plain"], False), (["fix -p"], False), (["--printer"], False)])
def test_print_mode_is_seen_before_parsing(words, printing):
    assert entry.prints(words) is printing


def test_the_collector_paused_by_start_up_comes_back_on(monkeypatch):
    import gc

    monkeypatch.setattr(entry, "_collector_paused", True)
    gc.disable()
    try:
        entry.collector_on()
        assert gc.isenabled()
        assert not entry._collector_paused
    finally:
        gc.unfreeze()
        gc.enable()


def test_a_collector_start_up_did_not_pause_is_left_alone():
    import gc

    gc.disable()  # as a caller that paused it for its own reasons (session/resume.py)
    try:
        entry.collector_on()
        assert not gc.isenabled()
    finally:
        gc.enable()
