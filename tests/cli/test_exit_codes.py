"""Exit codes are carried by the exceptions (cli/errors.py) and read in one place, in-process.

The end-to-end runs of the console script are in test_errors.py and test_scripting.py; these hold
the mapping itself: which failure ends the process with which code, and that the UI (which cannot
import the CLI) ends with the same codes after a signal.
"""

from __future__ import annotations

import signal

import pytest

from evo_agent.cli import errors
from evo_agent.cli.errors import CommandError, UsageError, exit_code_of, failure_line


def test_each_failure_carries_its_exit_code():
    from evo_agent.cli.runtime import Terminated
    from evo_agent.providers import ProviderError
    from evo_agent.session import SessionError
    from evo_agent.ui.signals import SignalExit

    assert exit_code_of(UsageError("bad flag")) == 2
    assert exit_code_of(CommandError("no session")) == 1
    assert exit_code_of(SessionError("unknown id")) == 1
    assert exit_code_of(ProviderError("API refused")) == 1
    assert exit_code_of(KeyboardInterrupt()) == 130
    assert exit_code_of(Terminated()) == 143
    assert exit_code_of(Terminated(errors.EXIT_HANGUP, "hangup")) == 129
    assert exit_code_of(SignalExit(129)) == 129


@pytest.mark.parametrize("bug", [ValueError("x"), KeyError("k"), RuntimeError("boom")])
def test_an_unforeseen_exception_has_no_exit_code_so_its_traceback_is_shown(bug):
    assert exit_code_of(bug) is None


def test_a_new_failure_class_needs_nothing_but_its_exit_code():
    class Conflict(errors.CliError):
        exit_code = 3

    assert exit_code_of(Conflict("two writers")) == 3
    assert failure_line(Conflict("two writers")) == "evo-agent: two writers"
    assert failure_line(KeyboardInterrupt()) == "evo-agent: interrupted"


def test_the_ui_ends_with_the_codes_of_the_cli_table():
    from evo_agent.ui import signals

    table = dict(errors.EXIT_CODES)
    assert errors.EXIT_HANGUP == 128 + signal.SIGHUP and errors.EXIT_HANGUP in table
    assert errors.EXIT_INTERRUPTED == 130 and errors.EXIT_INTERRUPTED in table
    assert {128 + s for s in signals.EXIT_SIGNALS} <= set(table)


def test_run_prints_one_line_and_returns_the_carried_code(tmp_path, capsys, monkeypatch):
    from evo_agent.cli.main import run

    for name in ("EVO_AGENT_SYNC_URL", "EVO_AGENT_PERMISSION_MODE", "EVO_AGENT_COMPACT_CHARS", "EVO_AGENT_REDACT"):
        monkeypatch.delenv(name, raising=False)
    assert run(["--resume", "x", "--continue", "--project-dir", str(tmp_path)]) == 2
    assert capsys.readouterr().err == "evo-agent: --resume and --continue cannot be used together\n"
    assert run(["-p", "hi", "--continue", "--project-dir", str(tmp_path), "--provider", "demo"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[-1].startswith(f"evo-agent: no session to continue in {tmp_path}")
