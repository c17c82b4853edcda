"""bubblewrap sandboxes for bash (Debian's `bubblewrap`, the `bwrap` binary).

Two kinds, one `Sandbox`:

- `--sandbox` (writable): the whole file system read-only, the project writable except its
  `.git/` and `.evo-agent/` and every nested `.git/` or `.git` file (bound read-only over it: no hook,
  `core.fsmonitor` or rule can be planted for a later run outside the sandbox to obey; a `.git`
  a command creates is reported, `new_git_dirs_notice`), a private `/tmp`, fresh pid/ipc/uts
  namespaces, no network unless `--sandbox-network`. `check_sandbox` runs bwrap once at
  start-up: where it cannot run the agent stops with one line, never runs unconfined.
- the read-only sandbox (`read_only_sandbox`): where a command the allowlist let run unasked
  runs (SPEC §9, "what runs unasked cannot write"): the same, with the project read-only too and
  never a network. Probed once per process at the first such command; where bwrap cannot run,
  `backstop_missing()` turns true and the command runs unconfined (the allowlist still applies).

In both, the command has no capability (`--cap-drop ALL`) but, run by root, its file access
(`_root_file_access`): started by root, bwrap makes no user namespace and keeps them all, and the
command could remount or unmount what the sandbox makes read-only or hides. And Unix sockets under
`/tmp` and `/run` are unreachable: `/run` (and `/var/run`,
`$XDG_RUNTIME_DIR` when they are elsewhere) get private empty mounts, and without network the
network namespace hides abstract sockets. A socket connect() needs no write permission on a
read-only mount, hence the private mounts; a socket elsewhere (under `$HOME`) stays reachable from
the writable sandbox, while the read-only one makes no Unix socket at all (its seccomp filter, below).
"""

from __future__ import annotations

import os
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

from .confine import AGENT_DIR, SENSITIVE_DIRS, is_within, real

READ_ONLY_DIRS = (*SENSITIVE_DIRS, AGENT_DIR)  # read-only inside every sandbox


class SandboxError(RuntimeError):
    """The sandbox cannot be used here; one printable line."""


def socket_dirs(environ: dict[str, str] | None = None) -> list[str]:
    """The directories whose sockets a sandbox hides: /run, /var/run, $XDG_RUNTIME_DIR (real, deduplicated)."""
    source = os.environ if environ is None else environ
    out: list[str] = []
    for path in ("/run", "/var/run", source.get("XDG_RUNTIME_DIR", "")):
        if not path or not os.path.isdir(path):
            continue
        resolved = real(path)
        if any(is_within(resolved, Path(o)) for o in out) or str(resolved) in ("/", "/tmp"):
            continue
        out.append(str(resolved))
    return out


# What an approved command gets: bwrap's own small /dev (null, zero, urandom, tty, ...) and a /proc of its pid
# namespace (compilers, package managers and test runners read both).
_DEVICES = ("--dev", "/dev", "--proc", "/proc")
# What a command run unasked gets: /dev holding only /dev/null, and an empty /proc. A repository can commit
# `.ignore -> /dev/zero` (or `/proc/self/root/dev/urandom`) and ripgrep reads every ignore file it meets: with
# no device to reach, the link dangles and is skipped. None of the allowlist's programs needs more (bash, git,
# rg, grep, find, sort, ls, ...: tests/tools/test_sandbox.py runs each); `find -fstype` reads the mount table
# from /proc, so the allowlist asks for it.
_NO_DEVICES = ("--tmpfs", "/dev", "--dev-bind", "/dev/null", "/dev/null", "--remount-ro", "/dev",
               "--tmpfs", "/proc", "--remount-ro", "/proc")


@dataclass(frozen=True)
class Sandbox:
    project_dir: Path
    network: bool = False
    bwrap: str = "bwrap"
    writable: bool = True  # False: the read-only sandbox of commands run unasked
    socket_filter: bool = True  # read-only: the seccomp filter (False where the kernel refuses one)

    def wrap(self, argv: list[str], cwd: Path | str | None = None, git_dirs: list[Path] | None = None) -> list[str]:
        """`argv` as run inside the sandbox, in `cwd` (the start directory) when it lies in the project.

        Writable: every `.git` below the project (`git_dirs`, else found now: `find_git_dirs`) is bound read-only."""
        project = str(real(self.project_dir))
        start = str(real(cwd)) if cwd is not None and is_within(real(cwd), Path(project)) else project
        args = [self.bwrap, "--ro-bind", "/", "/", *(_DEVICES if self.writable else _NO_DEVICES), "--tmpfs", "/tmp"]
        masked = socket_dirs()
        for path in masked:
            args += ["--tmpfs", path]
        if self.network:
            resolv = real("/etc/resolv.conf")
            if resolv.is_file() and any(is_within(resolv, Path(m)) for m in masked):
                args += ["--ro-bind", str(resolv), str(resolv)]  # DNS still works under a masked /run
        # The project again, after the private /tmp and /run (it may lie under them): writable or not.
        args += ["--bind" if self.writable else "--ro-bind", project, project]
        if self.writable:
            for name in READ_ONLY_DIRS:
                inner = Path(project) / name
                target = real(inner)  # a symlinked `.git` pointing inside the project: its target
                if inner.exists() and is_within(target, Path(project)):
                    args += ["--ro-bind", str(target), str(target)]
            for inner in git_dirs if git_dirs is not None else find_git_dirs(Path(project)):
                target = real(inner)
                # Every nested repository's too, and every `.git` file (a submodule's or linked worktree's `gitdir:`):
                # rewritten, or removed for a `.git/` of the command's own, the path stays the same and no notice
                # tells; the user's next `git status` in the superproject looks into the submodule.
                if (target.is_dir() or target.is_file()) and is_within(target, Path(project)):
                    args += ["--ro-bind", str(target), str(target)]
        config = _user_config_dir()
        if config is not None:  # the user's evo-agent config (the team store's password, trust, rules): hidden
            args += ["--tmpfs", str(config)]
        # No capability, whoever runs evo-agent: bwrap started by root makes no user namespace and keeps them all,
        # and the command, root with CAP_SYS_ADMIN, remounted the project (or `.git/`) read-write, unmounted the
        # empty directory over the user's config, or `/tmp`. As another user the user namespace locks the mounts.
        args += ["--cap-drop", "ALL", *_root_file_access(self.writable)]
        args += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--die-with-parent", "--chdir", start]
        if not self.network:
            args.append("--unshare-net")
        if not self.writable and self.socket_filter:
            shim = _no_unix_sockets(self.project_dir)
            if shim is not None:  # (bwrap reads the filter from a descriptor: the shim opens it as fd 3)
                return [*shim, *args, "--seccomp", "3", "--", *argv]
        return args + ["--", *argv]


def _root_file_access(writable: bool) -> list[str]:
    """What root keeps of its capabilities in a sandbox: the file permission checks it skips outside, and nothing
    that mounts. A container's root works in a project owned by another user (`docker run -v $PWD:/work`, files
    of uid 1000): without them it could not read a 0600 `.env` there, nor `--sandbox` write a file (the read-only
    mounts still refuse every write: they are not a permission check)."""
    if os.geteuid() != 0:
        return []  # (another user has none to keep: bwrap's user namespace gives the command none outside it)
    keep = ["CAP_DAC_OVERRIDE", "CAP_FOWNER"] if writable else ["CAP_DAC_READ_SEARCH"]
    return [word for cap in keep for word in ("--cap-add", cap)]


# The read-only sandbox's seccomp filter: no Unix socket is made (`socket(AF_UNIX, …)` fails with EACCES), nor an
# io_uring (whose IORING_OP_SOCKET makes one past the filter), and a syscall of another ABI (x32, i386, arm32: other
# numbers, `socketcall`) kills the process. connect() needs no write permission on a read-only mount, so a socket
# outside the private /tmp and /run (`~/.docker/desktop/docker.sock`, LXD's, a gpg-agent's under `~`) was reachable.
# Per machine: (AUDIT_ARCH_*, socket's number, io_uring_setup's number, whether numbers with bit 30 are x32's).
_SECCOMP_ARCH = {"x86_64": (0xC000003E, 41, 425, True), "aarch64": (0xC00000B7, 198, 425, False)}
_AF_UNIX = 1
_EACCES = 13
_filter_files: dict[bytes, str] = {}
_filter_lock = threading.Lock()


def no_unix_socket_filter(machine: str | None = None) -> bytes | None:
    """The compiled classic-BPF program (struct sock_filter[]) bwrap's `--seccomp` loads, for `machine` (default:
    this one's); None on a machine this module has no syscall numbers for (the sandbox then goes without)."""
    import struct

    found = _SECCOMP_ARCH.get(machine or os.uname().machine)
    if found is None:
        return None
    arch, socket_nr, io_uring_nr, x32 = found
    load, jeq, jset, ret = 0x20, 0x15, 0x45, 0x06  # BPF_LD|W|ABS, BPF_JMP|JEQ|K, BPF_JMP|JSET|K, BPF_RET|K
    allow, deny, kill = 0x7FFF0000, 0x00050000 | _EACCES, 0x80000000  # SECCOMP_RET_ALLOW, _ERRNO|errno, _KILL_PROCESS
    # (code, jump if true, jump if false, k): jumps name the label of their target.
    program: list[tuple[int, str | None, str | None, int]] = [
        (load, None, None, 4), (jeq, None, "kill", arch), (load, None, None, 0),
        *([(jset, "kill", None, 0x40000000)] if x32 else []),
        (jeq, "deny", None, io_uring_nr), (jeq, None, "allow", socket_nr), (load, None, None, 16),
        (jeq, "deny", "allow", _AF_UNIX)]
    labels = {"allow": len(program), "deny": len(program) + 1, "kill": len(program) + 2}
    program += [(ret, None, None, allow), (ret, None, None, deny), (ret, None, None, kill)]
    out = b""
    for index, (code, if_true, if_false, k) in enumerate(program):
        jt = labels[if_true] - index - 1 if if_true else 0
        jf = labels[if_false] - index - 1 if if_false else 0
        out += struct.pack("=HBBI", code, jt, jf, k)
    return out


def _no_unix_sockets(project_dir: Path) -> list[str] | None:
    """The words that start bwrap with `no_unix_socket_filter` open as its fd 3 (None: no filter for this machine):
    a bash found as every bash call's (`reaper.system_bash`), reading the filter from a private file written once."""
    program = no_unix_socket_filter()
    if program is None:
        return None
    from .reaper import system_bash

    with _filter_lock:
        # written again when gone: a cleaner of $TMPDIR (systemd-tmpfiles, an approved `rm -rf /tmp/*`) made every
        # later unasked command fail (exit 126) until a restart
        if program not in _filter_files or not os.path.isfile(_filter_files[program]):
            _filter_files[program] = _write_private(program)
    return [system_bash(project_dir), "-c", 'exec 3<"$1" || exit 126; shift; exec "$@"', "evo-agent-seccomp",
            _filter_files[program]]


def _write_private(data: bytes) -> str:
    """`data` in a new file of a new 0700 directory under $TMPDIR (when absolute) or /tmp, both removed at exit."""
    import atexit

    from evo_agent.session import FILE_MODE, new_private_temp_dir

    directory = new_private_temp_dir("evo-agent-seccomp")
    path = os.path.join(directory, "no-unix-sockets.bpf")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE)
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    atexit.register(_remove, path, directory)
    return path


def _remove(path: str, directory: str) -> None:
    for remove, name in ((os.unlink, path), (os.rmdir, directory)):
        try:
            remove(name)
        except OSError:
            pass


BARE_REPOSITORY = frozenset({"HEAD", "objects", "refs"})  # git's own test for a git directory (setup.c)


def find_git_dirs(project: Path) -> list[Path]:
    """Every entry named `.git` below `project` (directory, file or symlink), in walk order, none entered, and
    every directory that looks like a bare repository (it holds `HEAD`, `objects` and `refs`).

    A nested checkout's `.git/` is as good a place for a hook or a `core.fsmonitor` as the top one's: the user's
    next `git status` there runs it. Symlinked directories are not followed (what they lead to outside the
    project is read-only anyway). os.scandir's d_type answers "is it a directory" without a stat per entry:
    about 1 ms per 1,000 directories (benchmarks: README, "The sandbox").
    """
    found: list[Path] = []
    root = str(project)
    stack = [root]
    while stack:
        directory = stack.pop()
        try:
            entries = os.scandir(directory)
        except OSError:
            continue
        bare = 0
        with entries:
            for entry in entries:
                name = entry.name
                if name == ".git":
                    found.append(Path(entry.path))
                    continue
                if name in BARE_REPOSITORY:
                    bare += 1
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
        if bare == len(BARE_REPOSITORY) and directory != root:
            found.append(Path(directory))  # what git takes for a bare repository when run inside it
    return found


def new_git_dirs_notice(project: Path, before: list[Path], after: list[Path]) -> str | None:
    """One line naming the `.git` entries a command created (None: none), relative to the project.

    A writable project cannot keep a command from making one (`git init docs`), and its hooks and config run at
    the user's next git command there: the user is told, not silently left with it."""
    new = sorted(set(after) - set(before))
    if not new:
        return None
    names = ", ".join(os.path.relpath(p, project) for p in new[:5]) + (f" and {len(new) - 5} more" if len(new) > 5
                                                                       else "")
    return (f"evo-agent: the command made a new git repository ({names}): its hooks and config run at your next git "
            "command there; look before you use it")


def _user_config_dir() -> Path | None:
    """`$XDG_CONFIG_HOME/evo-agent` (else `~/.config/evo-agent`) when it exists, resolved."""
    import os

    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    path = Path(base) / "evo-agent"
    return real(path) if path.is_dir() else None


def check_sandbox(project_dir: Path, network: bool = False, writable: bool = True,
                  socket_filter: bool = True) -> Sandbox:
    """A usable Sandbox, or SandboxError saying why bwrap cannot run here.

    bwrap is looked up like every program evo-agent starts by itself (session.absolute_program): a `bwrap`
    planted in `.`, `node_modules/.bin` or an activated in-repo `.venv/bin` would otherwise run every
    sandboxed command.
    """
    from evo_agent.session import absolute_program

    path = absolute_program("bwrap", outside=real(project_dir))
    if path is None:
        raise SandboxError("--sandbox needs bubblewrap, which is not installed (apt-get install bubblewrap); "
                           "refusing to run commands unconfined")
    sandbox = Sandbox(Path(project_dir), network, path, writable, socket_filter)
    try:
        probe = subprocess.run(sandbox.wrap(["true"]), stdin=subprocess.DEVNULL, capture_output=True, text=True,
                               timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SandboxError(
            f"--sandbox: bubblewrap cannot run here ({exc}); refusing to run commands unconfined") from None
    if probe.returncode != 0:
        why = " ".join(probe.stderr.split())[:200] or f"exit {probe.returncode}"
        raise SandboxError(f"--sandbox: bubblewrap cannot run here ({why}); refusing to run commands unconfined")
    return sandbox


_read_only: dict[str, Sandbox | None] = {}
_read_only_lock = threading.Lock()


def read_only_sandbox(project_dir: Path | str) -> Sandbox | None:
    """The read-only sandbox for `project_dir`, or None where bubblewrap cannot run (probed once)."""
    key = str(real(project_dir))
    with _read_only_lock:
        if key not in _read_only:
            try:
                _read_only[key] = check_sandbox(Path(key), writable=False)
            except SandboxError:
                # bwrap may run where the kernel refuses the socket filter (no seccomp, a container's own filter):
                # the sandbox without it, still read-only, rather than none (the command would run unconfined)
                try:
                    _read_only[key] = check_sandbox(Path(key), writable=False, socket_filter=False)
                except SandboxError:
                    _read_only[key] = None
        return _read_only[key]


NO_BACKSTOP_NOTICE = ("evo-agent: bubblewrap cannot run here: commands that run unasked are checked by the "
                      "allowlist but not sandboxed (README, \"The sandbox\")")
_notice_given = False


def backstop_state(project_dir: Path | str) -> bool | None:
    """True: commands run unasked are sandboxed; False: bwrap cannot run here; None: not probed yet."""
    key = str(real(project_dir))
    with _read_only_lock:
        return None if key not in _read_only else _read_only[key] is not None


def claim_no_backstop_notice(project_dir: Path | str) -> bool:
    """True the first time (per process) a command runs unasked without the sandbox: say so once."""
    global _notice_given
    if read_only_sandbox(project_dir) is not None:
        return False
    with _read_only_lock:
        first, _notice_given = not _notice_given, True
    return first


__all__ = ["NO_BACKSTOP_NOTICE", "Sandbox", "SandboxError", "backstop_state", "check_sandbox",
           "claim_no_backstop_notice", "find_git_dirs", "new_git_dirs_notice", "no_unix_socket_filter",
           "read_only_sandbox", "socket_dirs"]
