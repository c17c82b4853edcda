"""Knowing whether a session is being written right now, so nothing deletes it under a running agent.

A running evo-agent holds an exclusive `flock` on `<session>/.lock` for as
long as the session is its current one, with its pid written inside for
the messages. The kernel drops the lock when the process ends — `exit`,
a crash or `kill -9` alike — so there is no stale pid to guess about: a
session is live exactly when somebody holds its lock.

Why a lock and not "the transcript changed in the last few minutes": an
agent waiting at its prompt writes nothing for hours and is still live,
while a session whose writer was killed a minute ago is not.

The file is hidden, holds nothing else, and readers of the format never
look at it; SPEC §1's layout is unchanged. The plain `SessionStore` does
not lock (a library user may open thousands of recorders); the CLI uses
`LiveSessionStore`, which does.
"""

from __future__ import annotations

import errno
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from .ids import new_session_id
from .layout import FILE_MODE, LOCK_NAME
from .plaincontext import plain_contextmanager
from .plaindata import plain_dataclass as dataclass
from .recorder import Recorder
from .store import SessionStore

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)
if TYPE_CHECKING:
    from typing import Any

_FLAGS = os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)


@dataclass(frozen=True)
class Liveness:
    """Whether a session is in use: `live`, the holder's `pid` when known, `error` when it cannot be told."""

    live: bool
    pid: int | None = None
    error: str | None = None

    @property
    def reason(self) -> str:
        """Why a session is left alone, without its id: `in use by a running evo-agent (pid 42)`."""
        if self.error:
            return f"cannot tell whether it is in use ({self.error})"
        return "in use by a running evo-agent" + (f" (pid {self.pid})" if self.pid else "")

    def describe(self, session_id: str) -> str:
        if self.error:
            return f"cannot tell whether session {session_id} is in use ({self.error})"
        holder = f" (pid {self.pid})" if self.pid else ""
        return f"session {session_id} is in use by a running evo-agent{holder}"


class LiveLock:
    """The lock a process holds on the session it is writing; released on `release()` or exit."""

    def __init__(self, fd: int, session_dir: Path) -> None:
        self._fd = fd
        self.session_dir = session_dir

    @classmethod
    def acquire(cls, session_dir: Path | str) -> LiveLock | None:
        """Take the session's lock, or None (it is held, or the file cannot be made: best effort)."""
        path = os.path.join(session_dir, LOCK_NAME)
        try:
            # Held through a read-only descriptor: an open writable file would keep the file
            # system from being remounted read-only under a running agent (the fault suite does).
            fd = os.open(path, os.O_RDONLY | os.O_CREAT | _FLAGS, FILE_MODE)
        except OSError:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return None
        try:  # the holder's pid, for the message of `sessions rm`; the flock lives on `fd` regardless
            writer = os.open(path, os.O_WRONLY | os.O_TRUNC | _FLAGS)
            try:
                os.write(writer, f"{os.getpid()}\n".encode())
            finally:
                os.close(writer)
        except OSError:
            pass
        return cls(fd, Path(session_dir))

    def release(self) -> None:
        if self._fd >= 0:
            fd, self._fd = self._fd, -1
            try:
                os.close(fd)  # closing the only descriptor drops the flock
            except OSError:
                pass

    def __del__(self) -> None:
        self.release()


def _holder_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def probe_live(session_dir: Path | str) -> Liveness:
    """Whether a running process holds the session's lock. Never creates or changes anything."""
    try:
        fd = os.open(os.path.join(session_dir, LOCK_NAME), os.O_RDONLY | _FLAGS)
    except FileNotFoundError:
        return Liveness(False)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return Liveness(False, error=".lock is a symbolic link")
        return Liveness(False, error=f".lock: {exc.strerror or exc}")
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return Liveness(True, _holder_pid(fd))
    except OSError as exc:
        return Liveness(False, error=f".lock: {exc.strerror or exc}")
    finally:
        os.close(fd)
    return Liveness(False)


class SessionInUse(Exception):
    """Raised by `held_for_removal` when a running process holds the session."""

    def __init__(self, liveness: Liveness) -> None:
        super().__init__(liveness)
        self.liveness = liveness


@plain_contextmanager
def held_for_removal(session_dir: Path | str) -> Iterator[None]:
    """Hold the session's lock exclusively while it is deleted; SessionInUse when a process has it.

    Holding it closes the gap between "checked" and "deleted". A session
    without a lock file was never written by a locking process, and no
    process takes the lock of an existing session later (a resume writes a
    new one), so there is nothing to hold then.
    """
    try:
        fd = os.open(os.path.join(session_dir, LOCK_NAME), os.O_RDONLY | _FLAGS)
    except FileNotFoundError:
        yield
        return
    except OSError as exc:
        raise SessionInUse(Liveness(False, error=f".lock: {exc.strerror or exc}")) from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SessionInUse(Liveness(True, _holder_pid(fd))) from None
        except OSError as exc:
            raise SessionInUse(Liveness(False, error=f".lock: {exc.strerror or exc}")) from None
        yield
    finally:
        os.close(fd)


class LiveSessionStore(SessionStore):
    """A SessionStore whose process holds the lock of the session it created last.

    Why a second class: only a process that writes a session (the agent: print mode, the REPL,
    the app) should lock one; a SessionStore that lists, shows or removes sessions must not.

    One process, one live session: creating (or resuming into) a new session
    releases the previous one's lock, which is what `/clear` and `/resume ID`
    mean. The lock is taken before `session_start` is written, so no record
    of the session exists on disk unguarded.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.live_lock: LiveLock | None = None

    def create(self, **kwargs: Any) -> Recorder:
        """A new live session; the previous one's lock is released. Deferred: locked when it begins on disk."""
        sid = kwargs.pop("session_id", None) or new_session_id()
        previous, self.live_lock = self.live_lock, None
        if previous is not None:
            previous.release()
        return super().create(session_id=sid, **kwargs)

    def _make_session_dir(self, session_id: str) -> int | None:
        """The directory, then its lock, before any record of the session is written."""
        fd = super()._make_session_dir(session_id)
        if fd is not None:
            try:
                self.live_lock = LiveLock.acquire(self.sessions_dir / session_id)
            except OSError:
                pass  # the recorder reports the unwritable directory once
        return fd

    def release(self) -> None:
        if self.live_lock is not None:
            self.live_lock.release()
            self.live_lock = None
