"""The append path: open, one write of the whole line, close — best effort.

No handle stays open and nothing is buffered in the process, so a record that
was written survives `kill -9`. A failure never raises into the agent: it is
reported once per kind on stderr and the conversation goes on unsaved.
"""

from __future__ import annotations

import _thread  # threading's Lock without importing threading: `sessions list` loads this module for DirHandle
import errno
import os
import sys
from collections.abc import Callable
from pathlib import Path

from .layout import DIR_MODE, FILE_MODE

_OPEN_FLAGS = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)

_locks: dict[str, _thread.LockType] = {}
_locks_guard = _thread.allocate_lock()


def lock_for(path: Path) -> _thread.LockType:
    """One lock per file for the whole process, however many writers name it."""
    key = os.path.abspath(path)
    with _locks_guard:
        lock = _locks.get(key)
        if lock is None:
            lock = _locks[key] = _thread.allocate_lock()
        return lock


def stderr_warning(line: str) -> None:
    """A warning as one terminal-safe line on stderr: it names paths (the project's directory is anyone's name)."""
    from evo_agent.safe_text import terminal_line

    try:
        print(terminal_line(line), file=sys.stderr, flush=True)
    except Exception:  # noqa: BLE001 — stderr closed: nothing left to tell
        pass


def new_private_temp_dir(prefix: str) -> str:
    """A new empty 0700 directory `<prefix>-<pid>-<random>` under $TMPDIR (when absolute) or /tmp: tempfile.mkdtemp
    without importing tempfile (random, shutil...: not before -p's first request, issue #30)."""
    base = os.environ.get("TMPDIR", "")
    if not (os.path.isabs(base) and os.path.isdir(base)):
        base = "/tmp"
    while True:
        path = os.path.join(base, f"{prefix}-{os.getpid()}-{os.urandom(6).hex()}")
        try:
            os.mkdir(path, DIR_MODE)
            return path
        except FileExistsError:
            continue


def make_private_dir(path: Path) -> None:
    """Create `path` (and missing parents) 0700, whatever the umask."""
    missing = []
    p = path
    while not p.exists():
        missing.append(p)
        if p.parent == p:
            break
        p = p.parent
    for d in reversed(missing):
        try:
            os.mkdir(d, DIR_MODE)
        except FileExistsError:
            continue
        os.chmod(d, DIR_MODE)


class DirHandle:
    """A directory opened once (`O_DIRECTORY|O_NOFOLLOW`) that files are then opened relative to (`dir_fd=`).

    Once open, the directory that is written is the one that was opened: a
    directory renamed away and replaced by a symbolic link between two turns
    cannot redirect a single record. Opening is lazy and retried while it
    fails (the directory may not exist yet), and never follows a symbolic
    link in the last component; a `parent` handle makes the whole chain so.
    """

    def __init__(self, path: Path | str, *, parent: DirHandle | None = None, fd: int | None = None,
                 follow: bool = False) -> None:
        """`follow=True` for the root of a chain only (a project reached through a link is still the project)."""
        self.path = Path(path)
        self.parent = parent
        self._fd = fd
        self._flags = _DIR_FLAGS & ~getattr(os, "O_NOFOLLOW", 0) if follow else _DIR_FLAGS
        self._guard = _thread.allocate_lock()

    def fileno(self) -> int:
        """The open directory's descriptor; raises OSError (ELOOP for a symbolic link) when it cannot be opened."""
        fd = self._fd
        if fd is not None:
            return fd
        with self._guard:
            if self._fd is None:
                if self.parent is not None:
                    self._fd = os.open(self.path.name, self._flags, dir_fd=self.parent.fileno())
                else:
                    self._fd = os.open(self.path, self._flags)
            return self._fd

    def make_subdir(self, name: str) -> DirHandle:
        """Create `name` (0700) inside this directory if missing, and a handle on it (opened lazily)."""
        try:
            os.mkdir(name, DIR_MODE, dir_fd=self.fileno())
        except FileExistsError:
            pass
        return DirHandle(self.path / name, parent=self)

    def close(self) -> None:
        with self._guard:
            fd, self._fd = self._fd, None
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 — interpreter shutdown
            pass


def open_private_dirs(base: Path | str, names: list[str]) -> int:
    """Open `base/names[0]/names[1]/…`, creating what is missing 0700, never following a link below `base`.

    Returns the descriptor of the last directory (the caller closes it). Raises OSError.
    """
    try:
        fd = os.open(base, _DIR_FLAGS & ~getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:  # a library user's project that does not exist yet
        make_private_dir(Path(base))
        fd = os.open(base, _DIR_FLAGS & ~getattr(os, "O_NOFOLLOW", 0))
    try:
        for name in names:
            created = False
            try:
                os.mkdir(name, DIR_MODE, dir_fd=fd)
                created = True
            except FileExistsError:
                pass
            child = os.open(name, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = child
            if created:
                os.fchmod(fd, DIR_MODE)  # whatever the umask
    except BaseException:
        os.close(fd)
        raise
    return fd


def dir_chain(base: Path | str, names: list[str]) -> DirHandle:
    """A lazily opened handle on `base/names…` whose every step below `base` is opened `O_NOFOLLOW`."""
    handle = DirHandle(base, follow=True)
    for name in names:
        handle = DirHandle(handle.path / name, parent=handle)
    return handle


def _write_rest(fd: int, data: bytes, written: int) -> None:
    """Write what a short `os.write` left of `data`; raises OSError when nothing more goes."""
    view = memoryview(data)[written:]
    while view:
        if written <= 0:
            raise OSError(errno.EIO, "short write")
        written = os.write(fd, view)
        view = view[written:]


class AppendWriter:
    """Appends whole lines to one file; thread safe; never raises.

    After a failed or short write the next write starts with `\\n`, so a torn
    fragment can never merge with the good record that follows it.
    """

    def __init__(
        self,
        path: Path,
        *,
        label: str,
        warn: Callable[[str], None] = stderr_warning,
        directory: DirHandle | None = None,
    ) -> None:
        self.path = Path(path)
        self._name = self.path.name  # what is opened relative to `directory` (a pathlib property costs per record)
        self.directory = directory  # when set, the file is opened relative to it (see DirHandle)
        self.label = label
        self._warn = warn
        self._lock = lock_for(self.path)
        self._torn = False
        self._created = False
        self._warned: set[str] = set()
        self.failures = 0

    @property
    def lock(self) -> _thread.LockType:
        return self._lock

    def moved_to(self, path: Path) -> None:
        """The file was renamed to `path` (caller holds the lock): keep appending there, under the same lock."""
        self.path = Path(path)
        self._name = self.path.name
        with _locks_guard:
            _locks[os.path.abspath(path)] = self._lock

    def append(self, data: bytes) -> bool:
        """Append `data` (one or more complete lines). True when all of it landed."""
        with self._lock:
            return self.append_locked(data)

    def append_locked(self, data: bytes) -> bool:
        """Like append(), for a caller that already holds `self.lock`."""
        if self._torn:
            data = b"\n" + data
        directory = self.directory
        try:
            if directory is not None:
                fd = os.open(self._name, _OPEN_FLAGS, FILE_MODE, dir_fd=directory.fileno())
            else:
                fd = os.open(self.path, _OPEN_FLAGS, FILE_MODE)
        except OSError as exc:
            self._fail(exc)
            return False
        try:
            if not self._created:
                os.fchmod(fd, FILE_MODE)  # the umask may have narrowed it; never wider than 0600
                self._created = True
            written = os.write(fd, data)
            if written != len(data):  # a short write: rare, so its loop stays off the common path
                _write_rest(fd, data, written)
        except OSError as exc:
            self._torn = True  # some bytes may have landed: guard the next record
            self._fail(exc)
            return False
        finally:
            try:
                os.close(fd)
            except OSError:
                pass
        self._torn = False
        return True

    def _fail(self, exc: OSError) -> None:
        self.failures += 1
        reason = exc.strerror or str(exc)
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) and self.directory is not None:
            reason = f"{self.directory.path} is a symbolic link or not a directory; nothing is written through it"
        kind = f"{type(exc).__name__}:{exc.errno}"
        if kind in self._warned:
            return
        self._warned.add(kind)
        self._warn(f"evo-agent: cannot write {self.label}: {reason}; this conversation is not being saved")


_RECOVER_FLAGS = os.O_WRONLY | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)


class StagedWriter(AppendWriter):
    """The writer of a staged transcript (a resume's copy, an import), which must be whole before it is published.

    Why: appending after a failed write (a full disk mid-copy) leaves a hole in the middle, and the
    staged file, once published, would be a history cut short that `--continue` picks. So after a
    failure the file is `incomplete`: what failed, and every record after it, is kept in memory, and
    each later append cuts the file back to its last whole record and writes them all again. Only
    while nothing is pending may the file be published. What is kept is what came during the outage,
    at most `KEEP_BYTES` (an import's rest may be large): beyond that the file is `lost` for good
    and is never published. `release()` (after publishing) makes it an ordinary appending writer.
    """

    KEEP_BYTES = 64 << 20

    def __init__(
        self,
        path: Path,
        *,
        label: str,
        warn: Callable[[str], None] = stderr_warning,
        directory: DirHandle | None = None,
    ) -> None:
        super().__init__(path, label=label, warn=warn, directory=directory)
        self.staging = True
        self.whole = 0  # the bytes of the file that are whole records (all of it, while nothing failed)
        self.pending: list[bytes] = []
        self._pending_bytes = 0
        self.lost = False

    @property
    def incomplete(self) -> bool:
        """Whether records are missing from the file (it must not be published now)."""
        return self.lost or bool(self.pending)

    def append_locked(self, data: bytes) -> bool:
        if not self.staging:
            return super().append_locked(data)
        if not self.incomplete and super().append_locked(data):
            self.whole += len(data)
            return True
        self._keep(data)
        return not self.lost and self._recover_locked()

    def _keep(self, data: bytes) -> None:
        if self.lost:
            return
        self._pending_bytes += len(data)
        if self._pending_bytes > self.KEEP_BYTES:
            self.lost, self.pending = True, []
        else:
            self.pending.append(data)

    def _recover_locked(self) -> bool:
        """Cut the file back to its whole records and write what is pending after them (the first try included)."""
        try:
            if self.directory is not None:
                fd = os.open(self._name, _RECOVER_FLAGS, FILE_MODE, dir_fd=self.directory.fileno())
            else:
                fd = os.open(self.path, _RECOVER_FLAGS, FILE_MODE)
        except OSError as exc:
            self._fail(exc)
            return False
        data = b"".join(self.pending)
        try:
            os.fchmod(fd, FILE_MODE)
            os.ftruncate(fd, self.whole)
            os.lseek(fd, self.whole, os.SEEK_SET)
            written = os.write(fd, data)
            if written != len(data):
                _write_rest(fd, data, written)
        except OSError as exc:
            self._fail(exc)
            return False
        finally:
            try:
                os.close(fd)
            except OSError:
                pass
        self.whole += len(data)
        self.pending, self._pending_bytes, self._torn = [], 0, False
        return True

    def release(self) -> None:
        """The file was published whole (caller holds the lock): append as any writer from now on."""
        self.staging = False
