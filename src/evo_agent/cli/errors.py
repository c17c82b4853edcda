"""The two ways a command fails: bad input (exit 2) or a job it cannot do (exit 1).

Either is printed by `cli.main.run` as one line starting with "evo-agent: ".
"""

from __future__ import annotations

EXIT_USAGE = 2
EXIT_FAILURE = 1


class UsageError(Exception):
    """Bad command line: one line, exit 2."""


class CommandError(Exception):
    """The command cannot do its job: one line, exit 1."""
