"""How a command ends: the one table of exit codes, and the exceptions that carry them.

Every code the `evo-agent` process exits with is defined here (the README's "Exit codes" table
and `--help` list the same). As in click, a failure is an exception that carries its
`exit_code`: `cli.main.run` prints it as one line starting with "evo-agent: " and exits with
`exit_code_of(exc)` — bad input (UsageError, 2), a job the command cannot do (CommandError, 1).
The libraries below the CLI cannot import it: their foreseeable failures (LIBRARY_FAILURES) exit 1.
Signals end a session with 128 + the signal's number, as a shell reports a process killed by it
(`Terminated` in runtime.py, `SignalExit` in ui/signals.py carry theirs).

To add an exit code: a constant in evo_agent/exit_codes.py and a row of EXIT_CODES here, an exception class with that
`exit_code` (here, or anywhere the CLI can raise it from), and the README's table.
"""

from __future__ import annotations

import sys

from evo_agent.exit_codes import (
    EXIT_BROKEN_PIPE,
    EXIT_FAILURE,
    EXIT_HANGUP,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_TERMINATED,
    EXIT_USAGE,
)

EXIT_CODES: tuple[tuple[int, str], ...] = (
    (EXIT_OK, "success"),
    (EXIT_FAILURE, "error: the command could not do its job (API error, …)"),
    (EXIT_USAGE, "usage error: a bad argument or environment variable"),
    (EXIT_HANGUP, "SIGHUP: the terminal went away"),
    (EXIT_INTERRUPTED, "Ctrl+C (SIGINT)"),
    (EXIT_BROKEN_PIPE, "the reader of stdout went away (SIGPIPE: `... | head`)"),
    (EXIT_TERMINATED, "SIGTERM"),
)

# Failures of the libraries below the CLI, by their public home: (package, class). Looked up in
# sys.modules, never imported: an exception of a package that was never loaded cannot be raised.
LIBRARY_FAILURES: tuple[tuple[str, str], ...] = (
    ("evo_agent.session", "SessionError"),  # a bad or unknown id, a missing or refused session
    ("evo_agent.session", "PlanError"),  # a plan operation refused (an open task, a bad plan id)
    ("evo_agent.providers", "ProviderError"),  # the API refused, the network is down
)


class CliError(Exception):
    """A foreseeable failure of the command: one line on stderr, then exit `exit_code`."""

    exit_code = EXIT_FAILURE


class UsageError(CliError):
    """Bad command line or environment variable: one line, exit 2."""

    exit_code = EXIT_USAGE


class CommandError(CliError):
    """The command cannot do its job: one line, exit 1."""

    exit_code = EXIT_FAILURE


def exit_code_of(exc: BaseException) -> int | None:
    """The exit code a foreseeable failure ends the process with; None for anything else (a bug)."""
    code = getattr(exc, "exit_code", None)
    if isinstance(code, int):
        return code
    if isinstance(exc, KeyboardInterrupt):
        return EXIT_INTERRUPTED
    for package, name in LIBRARY_FAILURES:
        failure = getattr(sys.modules.get(package), name, None)
        if isinstance(failure, type) and isinstance(exc, failure):
            return EXIT_FAILURE
    return None


def failure_line(exc: BaseException) -> str:
    """The one line on stderr for a failure that ends the command, made terminal-safe: it may quote what the
    command read (an API's error message, a file's name, a transcript's field)."""
    from evo_agent.safe_text import terminal_line

    return "evo-agent: interrupted" if isinstance(exc, KeyboardInterrupt) else terminal_line(f"evo-agent: {exc}")
