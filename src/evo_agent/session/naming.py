"""Naming a session that is not running: `evo-agent sessions rename ID NAME` (issue #19).

The name lives in the transcript (a `session_name` record) so meta.json stays a cache that can be
rebuilt. A running session is renamed from inside it (`/rename`): appending from a second process
would leave the live recorder's meta.json saying otherwise, so a live session is refused here.
"""

from __future__ import annotations

import os

from .ids import SessionError
from .inspect import first_records
from .layout import MESSAGES_NAME
from .live import SessionInUse, held_for_removal
from .meta import clean_name
from .recorder import _TranscriptRecorder, package_version
from .store import SessionStore


def rename_session(store: SessionStore, session_id: str, name: str) -> str:
    """Append a `session_name` record to a finished session; returns the name as stored.

    Raises SessionError (one printable line) for an empty name, a live session or a failed write.
    """
    cleaned = clean_name(name)
    if not cleaned:
        raise SessionError("a session name needs at least one visible character")
    session_dir = store.session_dir(session_id)
    transcript = session_dir / MESSAGES_NAME
    try:
        with held_for_removal(session_dir):
            start = next((r for r in first_records(transcript, 1) if r.get("type") == "session_start"), {})
            cwd, branch = start.get("cwd"), start.get("git_branch")
            said: list[str] = []  # the writer's warning speaks of a running conversation: the error says it here
            recorder = _TranscriptRecorder(
                transcript, session_id=session_id,
                cwd=cwd if isinstance(cwd, str) else str(store.project_dir),
                agent_version=package_version(),
                git_branch=branch if isinstance(branch, str) else None,
                label=f"session {session_id}", warn=said.append, redact=True,
            )
            size = _size(transcript)
            recorder.writer._torn = not _ends_with_newline(transcript)  # never merge with a torn last line
            if not recorder.append("session_name", name=cleaned):
                _cut_back(transcript, size)
                reason = said[0].split(": ", 2)[-1].split("; this conversation", 1)[0] if said else "a failed write"
                raise SessionError(f"cannot rename session {session_id}: {reason}; its transcript is as it was")
    except SessionInUse as exc:
        pid = exc.liveness.pid
        raise SessionError(f"session {session_id} is in use" + (f" by pid {pid}" if pid else "")
                           + "; rename it there with /rename") from None
    store.info(session_id, write_back=True)  # refresh meta.json from the transcript
    return cleaned


def _size(path: os.PathLike[str]) -> int | None:
    try:
        return os.stat(path, follow_symlinks=False).st_size
    except OSError:
        return None


def _cut_back(path: os.PathLike[str], size: int | None) -> None:
    """Take off what a failed append left after `size` bytes (a torn fragment): the session is held, no one else
    writes it, and those bytes are only the refused record's. Best effort."""
    if size is None:
        return
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return
    try:
        if os.fstat(fd).st_size > size:
            os.ftruncate(fd, size)
    except OSError:
        pass
    finally:
        os.close(fd)


def _ends_with_newline(path: os.PathLike[str]) -> bool:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            if f.tell() == 0:
                return True
            f.seek(-1, os.SEEK_END)
            return f.read(1) == b"\n"
    except OSError:
        return True
