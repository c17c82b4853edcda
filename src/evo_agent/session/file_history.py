"""What the file tools changed, kept so a rewind can put files back (issue #19).

Before `write_file` or `edit_file` changes a file, the previous content is copied into the session
directory (`file-history/<unix ms>_<4 hex>`, 0600) and a `file_backup` record names it; after the
change a `file_written` record holds the hash of what the tool wrote. A rewind to before user turn
N restores, for every file changed since, the earliest backup taken after N — but only where the
file still holds what evo-agent last wrote: a file someone changed since is left alone unless the
user says otherwise. Changes made through `bash` leave no record and cannot be restored.

Both records carry `tool_use_id`; readers that do not know them skip them (SPEC §2).
"""

from __future__ import annotations

import errno
import os
import stat
import time
from collections.abc import Callable
from pathlib import Path

from .layout import BACKUP_NAME_RE, FILE_HISTORY_DIR, FILE_MODE
from .plaindata import plain_dataclass as dataclass
from .writer import make_private_dir

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)
if TYPE_CHECKING:
    from typing import Any

MAX_BACKUP_BYTES = 10 << 20  # a bigger file is noted as too big to keep, never copied
BACKUP, WRITTEN = "file_backup", "file_written"


def file_sha256(path: Path | str) -> str | None:
    """The hash of a regular file's bytes, or None when there is none (missing, a directory, unreadable)."""
    import hashlib  # here, not at the top: start-up does not pay for it (SPEC §8)

    try:
        # O_NONBLOCK: a FIFO swapped in for the file would otherwise block the open until a writer comes
        with os.fdopen(os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC), "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                return None
            digest = hashlib.sha256()
            for chunk in iter(lambda: f.read(1 << 20), b""):
                digest.update(chunk)
            return digest.hexdigest()
    except OSError:
        return None


class FileHistory:
    """The file tools' hook into a session: `before_change` and `after_change` around each write.

    `append(rtype, **fields)` is the session recorder's append (thread safe, never raises);
    `session_dir` is where backups go. Every method is best effort: a failure to keep a backup is
    recorded as such and never stops the tool.
    """

    def __init__(self, session_dir: Path, append: Callable[..., bool]) -> None:
        self.session_dir = Path(session_dir)
        self._append = append

    def before_change(self, path: Path, tool_use_id: str) -> None:
        path = Path(path)
        fields: dict[str, Any] = {"tool_use_id": tool_use_id, "path": str(path), "existed": False}
        try:
            st = os.stat(path)
        except OSError:
            self._append(BACKUP, **fields)
            return
        if not stat.S_ISREG(st.st_mode):
            self._append(BACKUP, **fields)
            return
        fields.update(existed=True, size=st.st_size, mode=stat.S_IMODE(st.st_mode))
        if st.st_size > MAX_BACKUP_BYTES:
            fields.update(too_big=True, sha256=file_sha256(path))
            self._append(BACKUP, **fields)
            return
        try:
            data = path.read_bytes()
            name = f"{FILE_HISTORY_DIR}/{int(time.time() * 1000):013d}_{os.urandom(2).hex()}"
            make_private_dir(self.session_dir / FILE_HISTORY_DIR)
            fd = os.open(self.session_dir / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0),
                         FILE_MODE)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            import hashlib

            fields.update(backup=name, sha256=hashlib.sha256(data).hexdigest())
        except OSError as exc:
            fields.update(error=exc.strerror or str(exc))
        self._append(BACKUP, **fields)

    def after_change(self, path: Path, tool_use_id: str) -> None:
        self._append(WRITTEN, tool_use_id=tool_use_id, path=str(path), sha256=file_sha256(path))


@dataclass
class FileChange:
    """One file changed by the file tools since a point in the conversation."""

    path: str
    existed: bool                  # whether the file existed before the first change
    backup: Path | None            # its content before the first change (None: did not exist, or not kept)
    before_sha256: str | None
    mode: int | None
    last_written_sha256: str | None  # what evo-agent's tools last left in it
    not_kept: str = ""             # why the previous content cannot be restored ("" when it can)

    def state(self) -> str:
        """`restorable`, `unchanged` (already as before), or `changed-since` (someone else changed it)."""
        now = file_sha256(self.path)
        if (now is None and not self.existed) or (now is not None and now == self.before_sha256):
            return "unchanged"
        if now != self.last_written_sha256:
            return "changed-since"
        return "restorable"


def collect_changes(events: list[tuple[Path, dict[str, Any]]]) -> list[FileChange]:
    """Fold `(session_dir, record)` file records, oldest first, into one FileChange per path."""
    changes: dict[str, FileChange] = {}
    for session_dir, record in events:
        path = record.get("path")
        if not isinstance(path, str):
            continue
        if record.get("type") == BACKUP and path not in changes:
            backup = record.get("backup")
            kept = backup if isinstance(backup, str) and BACKUP_NAME_RE.match(backup) is not None else None
            existed = record.get("existed") is True
            reason = ""
            if existed and kept is None:
                reason = "too big to keep" if record.get("too_big") else "its previous content was not kept"
            changes[path] = FileChange(
                path=path, existed=existed, backup=Path(session_dir) / kept if kept is not None else None,
                before_sha256=record.get("sha256") if existed else None,
                mode=record.get("mode") if isinstance(record.get("mode"), int) else None,
                last_written_sha256=None, not_kept=reason)
        elif record.get("type") == WRITTEN and path in changes:
            sha = record.get("sha256")
            changes[path].last_written_sha256 = sha if isinstance(sha, str) else None
    return list(changes.values())


def read_backup(backup: Path | str) -> bytes:
    """The bytes of a backup; OSError when it is missing, a link or anything but a regular file.

    Never through a link, never blocking: an archive's planted session can hold a FIFO where a backup should be,
    and an open of it waits for a writer forever. (The one reader of a backup: restore and the agent's `/rewind`.)
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(backup, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OSError(0, "the backup is not a regular file") from None
        raise
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise OSError(0, "the backup is not a regular file")
        return f.read()


def permission_bits(mode: int | None) -> int:
    """The mode a restored file gets from its record: the permission bits alone (0o644 when none was kept).

    A record can be planted (an adopted session): its set-user-ID, set-group-ID or sticky bit would make the
    restored file a program any local user runs as its owner — root in a container."""
    return mode & 0o777 if isinstance(mode, int) else 0o644


def restore_change(change: FileChange) -> None:
    """Put one file back as it was before its first change (atomic: temp file + rename). Raises OSError."""
    target = Path(change.path)
    if not change.existed:
        try:
            target.unlink()
        except FileNotFoundError:
            pass
        return
    if change.backup is None:
        raise OSError(0, change.not_kept or "no backup")
    data = read_backup(change.backup)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.evo-restore-{os.urandom(3).hex()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, permission_bits(change.mode))
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
