"""The parser every model-less subcommand starts from (`plan`, `memory`, `mcp`, `sync`).

Why one: each built the same argparse subclass (a bad argument is a UsageError, one line, exit 2,
named after the command), the same `--project-dir` and the same subparsers; a change to how they
fail or which project they act on is now made once.
"""

from __future__ import annotations

import argparse
from typing import Any, NoReturn

from .errors import UsageError
from .help_text import PROJECT_DIR_HELP


class CommandParser(argparse.ArgumentParser):
    """argparse that raises UsageError("<command>: <message>") instead of printing usage and exiting."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog.split()[1]}: {message}")  # prog: "evo-agent NAME [SUBCOMMAND]"


def command_parser(name: str, description: str, *, project_dir: bool = True,
                   required: bool = False) -> tuple[CommandParser, Any]:
    """`evo-agent NAME`'s parser (with `--project-dir` unless told not) and its subparsers (`args.NAME_command`)."""
    parser = CommandParser(prog=f"evo-agent {name}", description=description)
    if project_dir:
        parser.add_argument("--project-dir", metavar="DIR", help=PROJECT_DIR_HELP)
    sub = parser.add_subparsers(dest=f"{name}_command", parser_class=CommandParser, required=required)
    return parser, sub
