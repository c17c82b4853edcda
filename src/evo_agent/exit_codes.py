"""The exit codes of the `evo-agent` process, said once: a leaf every front end may import.

The CLI (cli/errors.py) turns them into its table and exceptions; the app and the picker
(ui/) end with the signal codes, and the UI may not import the CLI. Signals end a session
with 128 + the signal's number, as a shell reports a process killed by it.
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
