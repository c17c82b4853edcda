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

_collector_paused = False  # print mode's start-up runs without the cyclic garbage collector: `prints`

HELP_WIDTH = 80  # the width help_static.py was rendered at (argparse: COLUMNS or the terminal, else 80)


def main() -> None:
    from .startup_env import clean_start

    open_closed_streams()
    clean_start()  # nothing a project could steer in the environment (LD_LIBRARY_PATH `/opt/x:`, BASH_ENV, ...)
    if sys.argv[1:] in (["--help"], ["-h"]) and _columns() >= HELP_WIDTH:
        from .help_static import HELP

        try:
            sys.stdout.write(HELP)
            sys.stdout.flush()
        except BrokenPipeError:  # `evo-agent --help | head`: as cli/main.py ends it
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(141)
        sys.exit(0)
    words = sys.argv[1:]
    if words[:2] == ["sessions", "list"]:  # its plain forms, read without argparse or cli/main.py
        from .sessions.command import list_arguments, run_list

        args = list_arguments(words[2:])
        if args is not None:
            import gc

            # A listing makes no cyclic garbage and exits when done: the collector's passes over what the imports
            # and 10,000 scanned transcripts leave alive were ~3% of `--limit 20` (docs/benchmarks.md).
            gc.disable()
            sys.exit(run_list(args))
    if not (app_likely(words) and not asks_first(words)):
        if prints(words):
            import gc

            # The imports and set-up before `-p`'s first request make little cyclic garbage but enough allocations
            # for ~40 collector passes over all they leave alive: ~5% of its instructions (docs/benchmarks.md).
            # cli/main.py's step 4 turns the collector back on (collector_on) before the turn starts.
            global _collector_paused
            _collector_paused = True
            gc.disable()
        from .main import main as run

        run()
        return
    from evo_agent.ui import early_input  # before the command line module and its imports

    try:
        # Inside the try: Ctrl+C twice read the moment the key thread starts interrupts the main thread while
        # start() still waits for that thread, and a traceback was printed instead of the quiet exit (130).
        early_input.start()
        from .main import main as run

        run()
    except KeyboardInterrupt:  # Ctrl+C twice before cli/main.py took over: as the app quits (130)
        from evo_agent.exit_codes import EXIT_INTERRUPTED

        early_input.stop()
        sys.exit(EXIT_INTERRUPTED)


def open_closed_streams() -> None:
    """/dev/null in each standard descriptor the launch found closed (`evo-agent <&-`, `-p … >&-`).

    Python leaves `sys.stdin` (or stdout, stderr) None then, and every use of it was a traceback; worse, the
    next file opened takes the free descriptor, so a child inheriting "its stderr" would write into that file.
    A closed stdin then reads as an empty one, a closed stdout or stderr discards."""
    for fd, name in enumerate(("stdin", "stdout", "stderr")):
        try:
            os.fstat(fd)
            continue
        except OSError:
            pass
        opened = os.open(os.devnull, os.O_RDONLY if fd == 0 else os.O_WRONLY)
        if opened != fd:  # a lower slot was free too: cannot happen, since they are filled in order
            os.dup2(opened, fd)
            os.close(opened)
        os.set_inheritable(fd, True)  # as a standard stream is: a child (and the clean restart) gets it too
        setattr(sys, name, open(fd, "r" if fd == 0 else "w", encoding="utf-8", errors="replace",  # noqa: SIM115
                                closefd=False))


# The subcommands cli/main.py runs without a model (its MODEL_FREE; tests/cli/test_entry.py keeps them equal).
MODEL_FREE_NAMES = ("plan", "memory", "sync", "mcp")
_NOT_APP = ("-p", "--print", "--plain", "-h", "--help", "--version", "sessions", "trust")


def app_likely(words: list[str]) -> bool:
    """A cheap look at the arguments, before parsing: will this run start the interactive app?"""
    if (words[:1] and words[0] in MODEL_FREE_NAMES) or any(w in _NOT_APP or w.startswith("--print=") for w in words):
        return False
    return _isatty(sys.stdin) and _isatty(sys.stdout)


def prints(words: list[str]) -> bool:
    """Whether the arguments likely ask for print mode (`-p`, `--print`): its start-up runs without the collector."""
    return any(w in ("-p", "--print") or w.startswith("--print=") for w in words)


def collector_on() -> None:
    """The cyclic garbage collector back on if start-up paused it (print mode's, `prints`); else nothing."""
    global _collector_paused
    if _collector_paused:
        import gc

        _collector_paused = False
        gc.freeze()  # what start-up made stays for the run: later full passes need not walk it again
        gc.enable()


def asks_first(words: list[str]) -> bool:
    """Whether the launch may ask something or open the picker before the app (a resume, a rewind).

    Any spelling argparse may accept counts (`--res`, `-c`, `-nc`): then keys typed meanwhile are only
    held for the app (ui/typeahead.py), not echoed early, so nothing reads the terminal beside a question.
    """
    return any(w.startswith(("--r", "--c", "--at")) or (w[:1] == "-" and w[1:2] != "-" and "c" in w) for w in words)


def _isatty(stream) -> bool:  # noqa: ANN001 - a text stream or None
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def _columns() -> int:
    """The width argparse would format for: $COLUMNS, else the terminal's, else 80 (as shutil decides)."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns > 0:
        return columns
    try:
        stdout = sys.__stdout__
        if stdout is None:
            return HELP_WIDTH
        return os.get_terminal_size(stdout.fileno()).columns or HELP_WIDTH
    except (AttributeError, ValueError, OSError):
        return HELP_WIDTH
