"""The console script's first module: `evo-agent --help` answered before the command line loads.

Building the argument parser and importing argparse costs more than the rest of printing help
(SPEC §8, issue #30: `--help` under 40 ms), so the help of an 80-column (or wider) terminal or a
pipe is kept as text (`help_static.py`, checked against the parser by tests/cli/test_help_static.py)
and printed from here. `sessions list` with plain options is read here too (sessions/command.py's
`list_arguments`, checked against the parser by tests/cli/test_list_fast_path.py). A narrower
terminal, any other argument and every error go to cli/main.py, which formats help for the width
at hand.
"""

from __future__ import annotations

import os
import sys

HELP_WIDTH = 80  # the width help_static.py was rendered at (argparse: COLUMNS or the terminal, else 80)


def main() -> None:
    if sys.argv[1:] in (["--help"], ["-h"]) and _columns() >= HELP_WIDTH:
        from .help_static import HELP

        try:
            sys.stdout.write(HELP)
            sys.stdout.flush()
        except BrokenPipeError:  # `evo-agent --help | head`: as cli/main.py ends it
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(141)
        sys.exit(0)
    if sys.argv[1:3] == ["sessions", "list"]:  # its plain forms, read without argparse or cli/main.py
        from .sessions.command import list_arguments, run_list

        args = list_arguments(sys.argv[3:])
        if args is not None:
            sys.exit(run_list(args))
    from .main import main as run

    run()


def _columns() -> int:
    """The width argparse would format for: $COLUMNS, else the terminal's, else 80 (as shutil decides)."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns > 0:
        return columns
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or HELP_WIDTH
    except (AttributeError, ValueError, OSError):
        return HELP_WIDTH
