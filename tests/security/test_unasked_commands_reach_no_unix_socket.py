"""What runs unasked reaches no Unix socket (SPEC §9: "a read-only sandbox without network").

The read-only sandbox hides the sockets under `/tmp` and `/run` behind private mounts, but connect() needs no
write permission: a socket anywhere else stayed reachable from a command the allowlist misjudged. Docker Desktop
for Linux listens on `~/.docker/desktop/docker.sock`, LXD on `/var/snap/lxd/common/lxd/unix.socket`, gpg-agent
on `~/.gnupg/S.gpg-agent` where there is no `/run/user`, a dev server on a socket in the project: one request to
dockerd runs a container with `/` mounted writable, which is no read-only sandbox. The read-only sandbox now
refuses to create a Unix socket (`socket(AF_UNIX, …)`, and io_uring, which could make one unseen) by a seccomp
filter; none of the allowlist's programs needs one (NSS falls back to files). `--sandbox`'s writable sandbox, where
approved builds and test suites talk over local sockets, still reaches them (README: "Not covered").
"""

from __future__ import annotations

import os
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from evo_agent.tools import ToolContext
from evo_agent.tools.bash import run_bash
from evo_agent.tools.confine import real
from evo_agent.tools.sandbox import SandboxError, check_sandbox, no_unix_socket_filter, read_only_sandbox
from evo_agent.tools.shell_readonly import ReadOnlyPlan, plan_read_only, safe_search_path

PROBES = {
    "python": "python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); "
              "s.sendall(b\"GET / HTTP/1.0\\r\\n\\r\\n\"); print(\"CONNECTED\", s.recv(64))' {path}",
    "perl": "perl -MIO::Socket::UNIX -e 'IO::Socket::UNIX->new(Peer => shift) and print \"CONNECTED\\n\"' {path}",
    "curl": "curl -s -m 5 --unix-socket {path} http://docker/containers/json && echo CONNECTED",
    "io_uring, which can make a socket unseen": "python3 -c 'import ctypes; "
        "n = ctypes.CDLL(None).syscall(425, 8, ctypes.create_string_buffer(120)); print(\"CONNECTED\" * (n >= 0))'",
}


@pytest.fixture
def bwrap(project: Path) -> None:
    try:
        check_sandbox(project)
    except SandboxError as exc:
        pytest.skip(f"bubblewrap cannot run here: {exc}")


def _serve(path: Path) -> tuple[socket.socket, threading.Thread]:
    """A daemon listening on `path`, answering each client one HTTP response."""
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen(5)

    def answer() -> None:
        while True:
            try:
                client, _ = server.accept()
            except OSError:
                return  # closed
            with client:
                client.settimeout(5)
                try:
                    client.recv(1024)
                    client.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n[]")
                except OSError:
                    pass

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    return server, thread


@pytest.fixture(params=["in the project", "outside /tmp and /run"])
def daemon_socket(request, project: Path) -> Iterator[Path]:
    """A daemon's socket where the sandbox's private /tmp and /run do not hide it, answering each client."""
    if request.param == "in the project":
        directory = project / "run"
        directory.mkdir()
    else:
        base = Path("/var/tmp")
        if not os.access(base, os.W_OK) or real(base).is_relative_to("/tmp"):
            pytest.skip("no writable directory outside /tmp and /run")
        directory = base / f"evo-agent-test-socket-{os.getpid()}"
        directory.mkdir(exist_ok=True)
    path = directory / "docker.sock"
    server, thread = _serve(path)
    try:
        yield path
    finally:
        server.shutdown(socket.SHUT_RDWR)
        server.close()
        thread.join(10)
        path.unlink(missing_ok=True)
        directory.rmdir()


def _misjudged(project: Path, command: str) -> str:
    """`command` run as the allowlist runs what it lets through (the backstop for a command it misjudged)."""
    plan = ReadOnlyPlan(command, safe_search_path(os.environ["PATH"], real(project)))
    return run_bash({"command": "ignored: the plan runs"}, ToolContext(project_dir=project, read_only=plan)).content


@pytest.mark.parametrize("probe", sorted(PROBES))
def test_the_read_only_sandbox_reaches_no_unix_socket(project, bwrap, daemon_socket, probe):
    output = _misjudged(project, PROBES[probe].format(path=daemon_socket))
    assert "CONNECTED" not in output, output


def test_control_the_socket_answers_in_the_writable_sandbox(project, bwrap, daemon_socket):
    """The payload is real: the same probe, approved under `--sandbox`, connects (approved builds keep local IPC)."""
    probe = PROBES["python"].format(path=daemon_socket)
    output = run_bash({"command": probe}, ToolContext(project_dir=project, sandbox=check_sandbox(project))).content
    assert "CONNECTED" in output, output


@pytest.mark.parametrize("command", ["ls -l", "ls -ln src", "whoami", "stat README.md", "find . -user root -o -print",
                                     "git status --short", "rg -n test", "sort README.md"])
def test_programs_that_look_up_users_still_run_alike(project, bwrap, command):
    """NSS (user and group names) tries sockets first and falls back to /etc/passwd: the same output as outside."""
    (project / "src").mkdir(exist_ok=True)
    plan = plan_read_only(command, project)
    assert isinstance(plan, ReadOnlyPlan), plan
    assert read_only_sandbox(project) is not None
    inside = run_bash({"command": command}, ToolContext(project_dir=project, read_only=plan))
    outside = subprocess.run(["bash", "-c", plan.command], cwd=project, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, timeout=60, env={**os.environ, "PATH": plan.path})
    assert inside.content.rsplit("\n[exit code", 1)[0].rstrip("\n") == (outside.stdout.rstrip("\n") or "(no output)")


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_the_filter_is_well_formed_on_every_machine_it_knows(machine):
    """Each jump lands inside the program, on a return; what it cannot name (riscv64) gets no filter, not a wrong one."""
    import struct

    program = no_unix_socket_filter(machine)
    assert program is not None and len(program) % 8 == 0
    code = [struct.unpack("=HBBI", program[i:i + 8]) for i in range(0, len(program), 8)]
    assert [op for op, *_ in code[-3:]] == [0x06, 0x06, 0x06]  # allow, deny with EACCES, kill
    assert code[-2][3] == 0x00050000 | 13
    for index, (op, jt, jf, _) in enumerate(code):
        if op & 0x07 == 0x05:  # BPF_JMP
            assert index + 1 + max(jt, jf) < len(code)
    assert no_unix_socket_filter("riscv64") is None


def test_commands_still_run_unasked_after_the_temporary_directory_is_cleaned(project, bwrap):
    """The filter lives in a file under $TMPDIR for the session: a cleaner (systemd-tmpfiles' 10 days, an approved
    `rm -rf /tmp/*`) may remove it, and every later unasked command then failed (exit 126) until a restart."""
    import glob
    import shutil

    (project / "README.md").write_text("hello\n")
    plan = plan_read_only("cat README.md", project)
    assert isinstance(plan, ReadOnlyPlan), plan
    first = run_bash({"command": "cat README.md"}, ToolContext(project_dir=project, read_only=plan)).content
    assert "hello" in first, first
    base = os.environ.get("TMPDIR", "")
    base = base if os.path.isabs(base) and os.path.isdir(base) else "/tmp"
    removed = glob.glob(os.path.join(base, f"evo-agent-seccomp-{os.getpid()}-*"))
    assert removed
    for directory in removed:
        shutil.rmtree(directory)
    again = run_bash({"command": "cat README.md"}, ToolContext(project_dir=project, read_only=plan)).content
    assert "hello" in again and "exit code 126" not in again, again


# A kernel that refuses seccomp filters (no CONFIG_SECCOMP_FILTER, or a container's own filter refusing them),
# made real: a filter of its own answers EINVAL to seccomp() and prctl(PR_SET_SECCOMP), then the bash tool runs.
_NO_SECCOMP = r'''
import ctypes, os, struct, sys
arch, seccomp_nr, prctl_nr = {"x86_64": (0xC000003E, 317, 157), "aarch64": (0xC00000B7, 277, 167)}[os.uname().machine]
einval, allow = 0x00050000 | 22, 0x7FFF0000
code = [(0x20, 0, 0, 4), (0x15, 0, 6, arch), (0x20, 0, 0, 0), (0x15, 3, 0, seccomp_nr), (0x15, 0, 3, prctl_nr),
        (0x20, 0, 0, 16), (0x15, 0, 1, 22), (0x06, 0, 0, einval), (0x06, 0, 0, allow)]
program = ctypes.create_string_buffer(b"".join(struct.pack("=HBBI", *op) for op in code))
class Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
libc = ctypes.CDLL(None, use_errno=True)
assert libc.prctl(38, 1, 0, 0, 0) == 0  # PR_SET_NO_NEW_PRIVS
assert libc.prctl(22, 2, ctypes.byref(Prog(len(code), ctypes.addressof(program))), 0, 0) == 0
assert libc.prctl(22, 2, 0, 0, 0) == -1 and ctypes.get_errno() == 22  # seccomp is refused from here on
from pathlib import Path
from evo_agent.tools import ToolContext
from evo_agent.tools.bash import run_bash
from evo_agent.tools.shell_readonly import ReadOnlyPlan
project = Path(sys.argv[1])
plan = ReadOnlyPlan("touch marker", os.environ["PATH"])
print(run_bash({"command": "ignored"}, ToolContext(project_dir=project, read_only=plan)).content)
'''


def test_a_misjudged_command_still_cannot_write_where_the_kernel_refuses_seccomp(project, bwrap):
    """bwrap runs, but the socket filter cannot be loaded: the read-only sandbox must go on without the filter,
    not be given up whole (the command then ran unconfined, with the notice that bubblewrap cannot run)."""
    import sys

    if os.uname().machine not in ("x86_64", "aarch64"):
        pytest.skip("no syscall numbers for this machine")
    run = subprocess.run([sys.executable, "-c", _NO_SECCOMP, str(project)], capture_output=True, text=True,
                         timeout=60, cwd=project)
    assert run.returncode == 0, run.stderr
    assert not (project / "marker").exists(), run.stdout
