"""The tool's process-group leader: runs the command, and kills the whole group if the agent dies.

    python -I -S reaper.py AGENT_PID -- bash -c COMMAND

The bash tool starts this script in a new session (so Ctrl+C and timeouts still kill the
group with one `killpg`). It first arms a parent-death signal (`PR_SET_PDEATHSIG`, SIGTERM),
then checks that the agent is still its parent (it may have died in between). A `kill -9` of
the agent delivers that SIGTERM here, and this process SIGKILLs its group — the command and
everything it started — instead of leaving them under init. A parent-death signal set on bash
itself would reach only bash, not `npm test`'s grandchildren. (Arming it here rather than in
`preexec_fn` keeps the agent's fork free of Python code, which is unsafe with threads.)

Stdlib only, no evo_agent import: it starts in a few milliseconds (`-I -S`).
"""

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1


def _kill_group(signum, frame):  # noqa: ANN001
    os.killpg(os.getpgrp(), signal.SIGKILL)  # this process too


def main(argv: list) -> int:
    signal.signal(signal.SIGTERM, _kill_group)
    signal.signal(signal.SIGHUP, _kill_group)
    agent_pid = int(argv[1])
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: the group is still killed on Ctrl+C and timeouts
        pass
    if os.getppid() != agent_pid:  # the agent died before the parent-death signal was armed
        _kill_group(None, None)
    command = argv[argv.index("--") + 1:]
    pid = os.fork()
    if pid == 0:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGHUP, signal.SIG_DFL)
        try:
            os.execvp(command[0], command)
        except OSError as exc:
            os.write(2, f"evo-agent: cannot run {command[0]}: {exc.strerror}\n".encode())
            os._exit(127)
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    return os.WEXITSTATUS(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
