"""A killed agent leaves no tool running: each bash call runs under a small group-leading shell.

    setpriv --pdeathsig TERM -- bash -c REAPER evo-agent-tool AGENT_PID bash -c COMMAND

`setpriv` (util-linux) arms a parent-death signal and execs the reaper shell, which leads the
tool's process group (the bash tool starts it in a new session, so Ctrl+C and timeouts still
kill the whole group with one `killpg`). When the agent dies — even by `kill -9` — the kernel
sends the reaper SIGTERM, and its trap SIGKILLs the group: the command and everything it
started. A parent-death signal on bash itself would reach bash only, not `npm test`'s
grandchildren. The reaper also checks the agent is still its parent (it may have died before
the signal was armed).

The command runs as a background job so that `wait` can be interrupted by the trap; its
subshell restores SIGINT/SIGQUIT (a non-interactive bash ignores them for background jobs,
which would change how the command's own programs behave). A command killed by a signal
makes the reaper end by the same signal, so the tool still reports "killed by signal".

A shell, not a Python shim: it starts in a few milliseconds (a Python interpreter costs
30-60 ms per call). Without `setpriv` (not Linux) commands run as plain `bash -c`.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

REAPER_SCRIPT = r"""
trap 'trap - TERM HUP; kill -KILL 0' TERM HUP
[ "$PPID" = "$1" ] || kill -KILL 0
shift
( trap - INT QUIT; exec "$@" ) &
{ wait $!; } 2>/dev/null
status=$?
if [ "$status" -gt 128 ]; then
  trap - TERM HUP
  kill -s "$((status - 128))" $$ 2>/dev/null
fi
exit "$status"
"""


@cache
def _program(name: str, project: str, path: str | None) -> str | None:
    """`name` from the PATH entries that count (session.absolute_program): never a relative entry nor one inside
    the project (a hostile clone's `bin/setpriv` or `.venv/bin/bash` would lead every bash call and every MCP
    server). Cached per project and PATH: a walk of PATH at the first tool run, not at each."""
    from evo_agent.session import absolute_program

    return absolute_program(name, outside=project, environ={} if path is None else {"PATH": path})


def _lookup(name: str, project: Path | str) -> str | None:
    return _program(name, os.path.realpath(project), os.environ.get("PATH"))


def system_bash(project: Path | str) -> str:
    """The shell every bash call (and the reaper) runs in, by its absolute path: never a `bash` in a relative
    or in-project PATH entry, and setpriv would look a bare `bash` up in the child's PATH."""
    return _lookup("bash", project) or "/bin/bash"


# The same, for a program that talks on its stdin (an MCP server): a background job of a non-interactive
# shell reads /dev/null unless its stdin is redirected explicitly, so it is (`<&0`).
_KEEP_STDIN = REAPER_SCRIPT.replace('( trap - INT QUIT; exec "$@" ) &', '( trap - INT QUIT; exec "$@" ) <&0 &')


def with_reaper(argv: list[str], project: Path | str, *, keep_stdin: bool = False) -> list[str]:
    """`argv` run under the reaper when this system can arm a parent-death signal; `setpriv` and the reaper's
    `bash` come from PATH entries outside `project`.

    The signal follows the thread that starts the process: start it from one that lives as long as the agent.
    """
    setpriv = _lookup("setpriv", project)
    if setpriv is None:
        return argv
    script = _KEEP_STDIN if keep_stdin else REAPER_SCRIPT
    return [setpriv, "--pdeathsig", "TERM", "--", system_bash(project), "-c", script, "evo-agent-tool",
            str(os.getpid()), *argv]


__all__ = ["REAPER_SCRIPT", "system_bash", "with_reaper"]
