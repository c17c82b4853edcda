"""The exit codes a signal ends the process with are 128 + that signal's number (exit_codes.py spells them as numbers)."""

from __future__ import annotations

import signal

from evo_agent import exit_codes


def test_signal_exit_codes_are_128_plus_the_signals_number():
    assert exit_codes.EXIT_HANGUP == 128 + signal.SIGHUP
    assert exit_codes.EXIT_INTERRUPTED == 128 + signal.SIGINT
    assert exit_codes.EXIT_BROKEN_PIPE == 128 + signal.SIGPIPE
    assert exit_codes.EXIT_TERMINATED == 128 + signal.SIGTERM


def test_the_exit_codes_are_plain_ints():
    codes = [value for name, value in vars(exit_codes).items() if name.startswith("EXIT_")]
    assert codes and all(type(code) is int for code in codes)
