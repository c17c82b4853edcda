"""The exit codes of the `evo-agent` process, said once: a leaf every front end may import.

The CLI (cli/errors.py) turns them into its table and exceptions; the app and the picker
(ui/) end with the signal codes, and the UI may not import the CLI. Signals end a session
with 128 + the signal's number, as a shell reports a process killed by it: written out as numbers (the
signal numbers Linux and macOS share; tests/test_exit_codes.py checks them against `signal`), since importing
`signal` builds its enums, a measurable share of `sessions list` (docs/benchmarks.md).
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILURE = 1  # the command could not do its job (an API error, a missing session, …)
EXIT_USAGE = 2  # bad command line or environment variable
EXIT_HANGUP = 129  # 128 + SIGHUP: the terminal went away
EXIT_INTERRUPTED = 130  # 128 + SIGINT: Ctrl+C
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE: the reader of stdout went away (`sessions show ID | head`)
EXIT_TERMINATED = 143  # 128 + SIGTERM: SIGTERM

# At an idle prompt (the app, the REPL on a terminal, keys typed while the app starts) the first Ctrl+C clears
# what was typed and arms; a second within this many seconds leaves with EXIT_INTERRUPTED. A Ctrl+C that
# interrupts a running turn does not arm: the next one at the prompt is a first one again.
DOUBLE_CTRL_C_SECONDS = 2.0
