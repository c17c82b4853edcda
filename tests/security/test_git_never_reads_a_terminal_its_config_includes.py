"""evo-agent's own git never reads the user's terminal through an `[include]` of the repository's configuration.

A clone brings no `.git/config`; an unpacked archive does. git opens an included path as more configuration
whatever it is, and evo-agent's git (the door, session/git.py, and the git that judges an unasked `git status`,
tools/shell_readonly.py) runs on the user's terminal: `[include] path = /dev/tty` made it read the keys the user
typed, as configuration, until its 10 s timeout (the trust question waited 10 s to show, and what was typed
meanwhile was gone). stdin being /dev/null does not help: /dev/tty is the controlling terminal, and
`/dev/pts/0` … `/dev/pts/255` reach the terminal from any session. The typed keys here are themselves a
configuration (`evil.stolen = yes`), so git's answer shows whether it read them.

Each spelling: git's own ways of naming the file (a condition, quotes, an upper-case header with the key on its
line, a value continued over a backslash-newline, a link in `.git/`, an include of an include, `%(prefix)/`,
every pts number); the repository is then not one evo-agent's git reads, and the unasked command asks.
"""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time

import pytest

from .hostile import unpack_archive_of, upstream

TYPED = b"[evil]\n\tstolen = yes\n\x04after\n"  # a configuration, an end of file, then more
# An attacker lists every number (git skips the missing ones); the test names only its own terminal among
# numbers nobody has, so that a failing run never reads another terminal of this machine.
BRUTE = "".join(f"\tpath = /dev/pts/{n}\n" for n in (99990, 99991, "{pts}", 99992))
SPELLINGS = {
    "include": "[include]\n\tpath = /dev/tty\n",
    "includeIf gitdir": '[includeIf "gitdir:/"]\n\tpath = /dev/tty\n',
    "includeIf onbranch, quoted": '[includeIf "onbranch:main"]\n\tpath = "/dev/tty"\n',
    "upper case, key on the header's line": "[INCLUDE] PATH=/dev/tty ; a comment\n",
    "continued value": "[include]\n\tpath = /dev/\\\ntty\n",
    "quotes in the middle": '[include]\n\tpath = "/dev/t"ty # trailing\n',
    "a link in .git": "[include]\n\tpath = terminal\n",
    "an include of an include": "[include]\n\tpath = ../docs/shared.gitconfig\n",
    "prefix": "[include]\n\tpath = %(prefix)/../../../../../dev/tty\n",
    "pts numbers": "[include]\n" + BRUTE,
    "after an escaped backslash at a line's end": "[core]\n\tx = a\\\\\n[include]\n\tpath = /dev/tty\n",
    "a no-break space in the name (no whitespace to git)": "[include]\n\tpath = ../t\u00a0ty\n",
    "a tab in the name": '[include]\n\tpath = ../t"\t"ty\n',
    "a backslash at the end of the file": "[include]\n\tpath = /dev/tty\\",
    "a NUL after the name (git's path ends there)": "[include]\n\tpath = /dev/tty\0.not-a-file\n",
    # a file including itself by 60 names (git gives up at depth 10): judged once each, not 60**10 times
    "after self-includes": "[include]\n" + "".join(f"\tpath = {'./' * n}config\n" for n in range(60))
                           + "\tpath = /dev/tty\n",
}

DOOR = """
import sys
from evo_agent.session import run_git
print("GIT=" + repr(run_git(sys.argv[1], "config", "--get", "evil.stolen")), flush=True)
print("LEFT=" + repr(sys.stdin.readline()), flush=True)
"""
JUDGE = """
import sys
from evo_agent.tools.shell_readonly import ReadOnlyPlan, plan_read_only
plan = plan_read_only(sys.argv[2], sys.argv[1])
print("PLAN=" + (type(plan).__name__ if isinstance(plan, ReadOnlyPlan) else "ask: " + plan), flush=True)
print("LEFT=" + repr(sys.stdin.readline()), flush=True)
"""
PLAIN = """
import subprocess, sys
out = subprocess.run(["git", "config", "--get", "evil.stolen"], cwd=sys.argv[1], stdin=subprocess.DEVNULL,
                     capture_output=True, text=True, timeout=30).stdout
print("GIT=" + repr(out or None), flush=True)
print("LEFT=" + repr(sys.stdin.readline()), flush=True)
"""


def _archive(tmp_path, config: str, pts: str):
    config = config.replace("{pts}", pts)
    origin = upstream(tmp_path, {"notes.txt": "a note\n",
                                 "docs/shared.gitconfig": "[include]\n\tpath = /dev/tty\n"})
    with (origin / ".git" / "config").open("a") as file:
        file.write(config)
    if "path = terminal" in config:
        (origin / ".git" / "terminal").symlink_to("/dev/tty")
    for name in ("t\u00a0ty", "t\tty"):  # links to the terminal in the work tree, named with git's non-space
        if name in config.replace('"', ""):
            (origin / name).symlink_to("/dev/tty")
    return unpack_archive_of(origin, tmp_path / "unpacked")


@pytest.fixture
def terminal():
    """A new pseudo-terminal: (master, slave, the slave's /dev/pts number)."""
    master, slave = pty.openpty()
    yield master, slave, os.ttyname(slave).rsplit("/", 1)[-1]
    for fd in (master, slave):
        try:
            os.close(fd)
        except OSError:
            pass


def _on_a_terminal(terminal, script: str, *args: str) -> dict[str, str]:
    """Run `python -c script args` on `terminal` (its controlling terminal, stdin to stderr) whose input queue
    already holds TYPED; what it printed, `NAME=value` lines as a dict."""
    master, slave, _ = terminal
    os.write(master, TYPED)

    def controlling_terminal() -> None:
        import fcntl
        import termios

        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    proc = subprocess.Popen([sys.executable, "-c", script, *args], stdin=slave, stdout=slave, stderr=slave,
                            preexec_fn=controlling_terminal)
    out = b""
    deadline = time.monotonic() + 60
    try:
        while b"LEFT=" not in out or not out.endswith(b"\n"):
            assert time.monotonic() < deadline, out
            if select.select([master], [], [], 0.1)[0]:
                try:
                    out += os.read(master, 65536)
                except OSError:
                    break
    finally:
        proc.kill()
        proc.wait()
    lines = out.decode("utf-8", "replace").replace("\r\n", "\n").splitlines()
    return dict(line.split("=", 1) for line in lines if line.startswith(("GIT=", "LEFT=", "PLAN=")))


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_the_door_never_reads_the_terminal(tmp_path, terminal, spelling):
    project = _archive(tmp_path, SPELLINGS[spelling], terminal[2])
    seen = _on_a_terminal(terminal, DOOR, str(project))
    assert seen["GIT"] == "None", seen  # no configuration came from the terminal
    assert seen["LEFT"] == repr("[evil]\n"), seen  # the keys are still there for evo-agent


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
@pytest.mark.parametrize("command", ["git status", "git log --oneline"])
def test_judging_an_unasked_git_never_reads_the_terminal_and_asks(tmp_path, terminal, spelling, command):
    project = _archive(tmp_path, SPELLINGS[spelling], terminal[2])
    seen = _on_a_terminal(terminal, JUDGE, str(project), command)
    assert seen["LEFT"] == repr("[evil]\n"), seen
    assert seen["PLAN"].startswith("ask: runs git on a repository"), seen


def test_control_plain_git_reads_the_terminal_it_includes(tmp_path, terminal):
    project = _archive(tmp_path, SPELLINGS["include"], terminal[2])
    seen = _on_a_terminal(terminal, PLAIN, str(project))
    assert seen["GIT"] == repr("yes\n") and seen["LEFT"] == repr("after\n"), seen


def test_control_an_include_of_a_regular_file_is_still_read(tmp_path, terminal):
    project = _archive(tmp_path, "[include]\n\tpath = ../docs/plain.gitconfig\n", terminal[2])
    (project / "docs" / "plain.gitconfig").write_text("[evil]\n\tstolen = from-a-file\n")
    seen = _on_a_terminal(terminal, DOOR, str(project))
    assert seen["GIT"] == repr("from-a-file\n") and seen["LEFT"] == repr("[evil]\n"), seen


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the included file another owner")
def test_an_include_of_another_users_file_is_refused_since_they_may_change_it(tmp_path, terminal):
    """A regular file another user owns (`/tmp/theirs.gitconfig` on a shared machine) passes the check, then
    becomes `[include] path = /dev/pts/N` once the door has looked: it counts as a terminal already."""
    theirs = tmp_path / "theirs.gitconfig"
    theirs.write_text("[evil]\n\tstolen = from-their-file\n")
    project = _archive(tmp_path, f"[include]\n\tpath = {theirs}\n", terminal[2])
    seen = _on_a_terminal(terminal, DOOR, str(project))
    assert seen["GIT"] == repr("from-their-file\n"), seen  # the control: while it is ours, it is read
    os.chown(theirs, 65534, 65534)
    seen = _on_a_terminal(terminal, DOOR, str(project))
    assert seen["GIT"] == "None", seen
    seen = _on_a_terminal(terminal, JUDGE, str(project), "git status")
    assert seen["PLAN"] == f"ask: runs git on a repository whose configuration includes {theirs}, which is another " \
                           "user's file: git would wait on it forever", seen
