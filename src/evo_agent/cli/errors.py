"""How a command ends: the one table of exit codes, and the two ways a command fails.

Every code the `evo-agent` process exits with is defined here (the README's
"Exit codes" table lists the same). A failure is printed by `cli.main.run` as
one line starting with "evo-agent: ": bad input (UsageError, exit 2) or a job
the command cannot do (CommandError, exit 1). Signals end a session with
128 + the signal's number, as a shell reports a process killed by it.
"""

from __future__ import annotations

import signal

EXIT_OK = 0
EXIT_FAILURE = 1  # the command could not do its job (an API error, a missing session, …)
EXIT_USAGE = 2  # bad command line or environment variable
EXIT_HANGUP = 128 + signal.SIGHUP  # 129: the terminal went away
EXIT_INTERRUPTED = 128 + signal.SIGINT  # 130: Ctrl+C
EXIT_BROKEN_PIPE = 128 + signal.SIGPIPE  # 141: the reader of stdout went away (`sessions show ID | head`)
EXIT_TERMINATED = 128 + signal.SIGTERM  # 143: SIGTERM

EXIT_CODES: tuple[tuple[int, str], ...] = (
    (EXIT_OK, "success"),
    (EXIT_FAILURE, "error: the command could not do its job (API error, …)"),
    (EXIT_USAGE, "usage error: a bad argument or environment variable"),
    (EXIT_HANGUP, "SIGHUP: the terminal went away"),
    (EXIT_INTERRUPTED, "Ctrl+C (SIGINT)"),
    (EXIT_TERMINATED, "SIGTERM"),
)


def exit_code_for_signal(signum: int) -> int:
    """128 + the signal's number: what the shell shows for a process the signal ended."""
    return 128 + int(signum)


class UsageError(Exception):
    """Bad command line: one line, exit 2."""


class CommandError(Exception):
    """The command cannot do its job: one line, exit 1."""
