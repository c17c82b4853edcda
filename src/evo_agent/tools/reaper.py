"""A killed agent leaves no tool running: each bash call runs under a small group-leading shell.

    setpriv --pdeathsig TERM -- bash -c REAPER evo-agent-tool AGENT_PID bash -c COMMAND

`setpriv` (util-linux) arms a parent-death signal and execs the reaper shell, which leads the
tool's process group (the bash tool starts it in a new session, so Ctrl+C and timeouts still
kill the whole group with one `killpg`). When the agent dies — even by `kill -9` — the kernel
sends the reaper SIGTERM, and its trap SIGKILLs the group: the command and everything it
started. A parent-death signal on bash itself would reach bash only, not `npm test`'s
grandchildren. The reaper also checks the agent is still its parent (it may have died before
the signal was armed).

The trap ignores TERM and HUP before it kills (`trap "" …`, never `trap - …`): a dying agent's threads exit one
by one and each exit that leaves the reaper to another parent sends the parent-death signal again, so a second
TERM could land between a reset to the default action and the `kill`, and end the reaper alone, its group
left running (an MCP server outlived a `kill -9`'d agent, 1 in 200 with two TERMs under load).

The command runs as a background job so that `wait` can be interrupted by the trap; its
subshell restores SIGINT/SIGQUIT (a non-interactive bash ignores them for background jobs,
which would change how the command's own programs behave). A command killed by a signal
makes the reaper end by the same signal, so the tool still reports "killed by signal".

A shell, not a Python shim: it starts in a few milliseconds (a Python interpreter costs
30-60 ms per call). Without `setpriv` (not Linux) commands run as plain `bash -c`.

A bash call's reaper (`reaped_call`) also outlives its command while its group has members: a job
the command put in the background (`npm run dev &`, `nohup … &`) keeps running while the agent
lives, as a user who asked for a dev server wants. The reaper tells the tool the command's status
on a pipe (it cannot exit to say so), then looks every 2 s whether it is alone in its group, and
kills the group once the agent is gone. The parent-death signal cannot tell that (it follows the
thread that started the reaper, and a turn's thread ends), so a lifeline does: a pipe whose write
end only the agent holds, for its whole life; the kernel closes it when the agent ends however it
ends (`kill -9`, a crash, a normal exit), and the reaper's `read` on it returns. A job that leaves
the group and the session (`setsid`, a double fork into a new session) is not followed: that would
need a child subreaper (`prctl(PR_SET_CHILD_SUBREAPER)`), which bash cannot call: a Python reaper
(`python3 -I -S` starts in 13 ms where bash takes 1.5 ms, on every call) for a job that means to
escape, and such a job has other doors anyway (`systemd-run --user`, `at`, a crontab).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from functools import cache
from pathlib import Path

REAPER_SCRIPT = r"""
trap 'trap "" TERM HUP; kill -KILL 0' TERM HUP
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


# The bash tool's reaper: REAPER_SCRIPT's start, then it writes the command's status to fd $2 and closes its
# output, and stays while its group has other live members (`_others`: a scan of /proc, off the call's path),
# reading the lifeline (fd $3) every 2 s: end of file means the agent is gone, so it kills the group. Once the
# status is written a SIGTERM (the parent-death signal: the call's thread ended) is caught and does nothing: the
# lifeline alone says the agent is gone (its end of file wakes the read at once). The trap reads nothing: a
# `read` run inside a trap that interrupted `read -t 2` cancels that read's timeout (bash 5.2), and the reaper
# then waited for the agent's end instead of looking again, one idle shell per such call for the whole session.
# A scan lists /proc once and then reads each process: a member that forks and exits between the two (the
# subshell of `( npm start & ) &`) leaves a child the list never held, and the reaper left a live job behind
# (about 1 call in 80 on a loaded machine). So a scan that finds no one counts only if no process was started
# while it ran (the newest pid in /proc/loadavg unchanged) or the scan before it found no one either: the
# missed child is alive when the next scan lists /proc, so only a chain of such forks timed into two scans
# in a row could still slip by.
LINGERING_SCRIPT = r"""
trap 'trap "" TERM HUP; kill -KILL 0' TERM HUP
[ "$PPID" = "$1" ] || kill -KILL 0
status_fd=$2 life_fd=$3
shift 3
( trap - INT QUIT; exec {status_fd}>&- {life_fd}<&-; exec "$@" ) &
{ wait $!; } 2>/dev/null
status=$?
trap : TERM HUP
echo "$status" >&"$status_fd"
exec {status_fd}>&- >/dev/null 2>&1 </dev/null
_others() {
  local f s last now empty=
  while :; do
    read -r f f f f last < /proc/loadavg
    for f in /proc/[0-9]*/stat; do
      [ "$f" = "/proc/$$/stat" ] && continue
      read -r s < "$f" || continue
      set -- ${s##*) }
      [ "$3" = "$$" ] && [ "$1" != Z ] && return 0
    done 2>/dev/null
    read -r f f f f now < /proc/loadavg
    [ "$now" = "$last" ] || [ -n "$empty" ] && return 1
    empty=1
  done
}
while _others; do
  read -t 2 -u "$life_fd"
  [ $? -gt 128 ] || { trap '' TERM HUP; kill -KILL 0; }
done
"""

_lifeline_lock = threading.Lock()
_lifeline_fds: list[int] = []  # [read end, write end], made once, never closed: the kernel closes them at exit


def _lifeline() -> int:
    """The read end of the agent's lifeline (see the module docstring): its write end stays open for the whole
    life of this process and is inherited by no child (non-inheritable, and never in `pass_fds`)."""
    with _lifeline_lock:
        if not _lifeline_fds:
            _lifeline_fds.extend(os.pipe())
        return _lifeline_fds[0]


@dataclass
class ReapedCall:
    """A bash call under the lingering reaper: start `argv` with `pass_fds`, then call `started()`.

    `status_fd` (None without a reaper) is where the command's exit status arrives, as a line, while the
    reaper itself may stay: the status pipe's end of file without a line means the reaper was killed."""

    argv: list[str]
    pass_fds: tuple[int, ...] = ()
    status_fd: int | None = None

    def started(self) -> None:
        """Close this process's copy of the status pipe's write end (the reaper holds its own)."""
        for fd in self.pass_fds[:1]:
            os.close(fd)

    def close(self) -> None:
        if self.status_fd is not None:
            os.close(self.status_fd)
            self.status_fd = None


def reaped_call(argv: list[str], project: Path | str) -> ReapedCall:
    """`argv` under the lingering reaper when this system can arm a parent-death signal (as `with_reaper`)."""
    setpriv = _lookup("setpriv", project)
    if setpriv is None:
        return ReapedCall(argv)
    life = _lifeline()
    status_read, status_write = os.pipe()
    return ReapedCall([setpriv, "--pdeathsig", "TERM", "--", system_bash(project), "-c", LINGERING_SCRIPT,
                       "evo-agent-tool", str(os.getpid()), str(status_write), str(life), *argv],
                      (status_write, life), status_read)


__all__ = ["LINGERING_SCRIPT", "REAPER_SCRIPT", "ReapedCall", "reaped_call", "system_bash", "with_reaper"]
