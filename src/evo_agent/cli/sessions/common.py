"""Small helpers shared by the `sessions` subcommands: finding a session a user named, formatting, output."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from evo_agent.session import FILE_MODE, SessionStore, resolve_session_id

from ..errors import CommandError


def fmt_ms(ms: int) -> str:
    """Local `YYYY-MM-DD HH:MM` of a time in ms, `?` outside the years datetime can say (2–9999).

    Through `time`, not `datetime` (what `datetime.fromtimestamp(ms / 1000).strftime(…)` shows, without
    importing it on the path of `sessions list`).
    """
    try:
        moment = time.localtime(ms // 1000)
    except (OverflowError, OSError, ValueError):
        return "?"
    if not 2 <= moment.tm_year <= 9999:  # datetime refuses year 1 near its start (its local time)
        return "?"
    return time.strftime("%Y-%m-%d %H:%M", moment)


def fmt_stamp(stamp: object, *, date: bool = False) -> str:
    """A record's timestamp as it was recorded (its own offset): `19:58:42`, or with the date."""
    if not isinstance(stamp, str):
        return "?"
    from datetime import datetime

    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return "?"
    return moment.strftime("%Y-%m-%d %H:%M:%S" if date else "%H:%M:%S")


def short(text: str | None, limit: int) -> str:
    line = " ".join((text or "").split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n:,} {word if n == 1 else (many or word + 's')}"


def fmt_bytes(n: int) -> str:
    value = float(n)
    for unit in ("bytes", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{int(value)} bytes" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} bytes"  # pragma: no cover


def resolve_session_dir(store: SessionStore, text: str) -> tuple[str, Path]:
    """A full id and its directory for `fsck`/`rm`, which must also handle sessions without a transcript.

    Refuses a symbolic link and anything that is not a directory directly
    inside `.evo-agent/sessions`.
    """
    sid = resolve_session_id(store.sessions_dir, text)
    path = store.sessions_dir / sid
    if path.is_symlink():
        raise CommandError(f"session {sid} is a symbolic link ({path}); refusing to touch it")
    if not path.is_dir():
        raise CommandError(f"session {sid} is not a directory ({path})")
    if Path(os.path.realpath(path)).parent != Path(os.path.realpath(store.sessions_dir)):
        raise CommandError(f"session {sid} is not inside {store.sessions_dir}; refusing to touch it")
    return sid, path


def write_output(data: bytes, target: str | None) -> None:
    """Write to stdout, or replace `target` atomically with a private (0600) file.

    Private because exports hold what transcripts hold.
    """
    if target is None or target == "-":
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    path = Path(target).expanduser()
    if path.is_dir():
        raise CommandError(f"cannot write {target}: it is a directory")
    try:
        import tempfile  # only when writing a file: not on the listing's path

        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent if str(path.parent) else ".")
    except OSError as exc:
        raise CommandError(f"cannot write {target}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, FILE_MODE)
        os.replace(tmp, path)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise CommandError(f"cannot write {target}: {exc.strerror or exc}") from None
