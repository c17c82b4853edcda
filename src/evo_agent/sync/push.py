"""Pushing a session's new complete lines to the store, exactly once by construction.

Each line is a row keyed by (session id, file, byte offset) under a unique
key, inserted with `ON CONFLICT DO NOTHING`. A push starts from where the
store says the file ends (`next_offset` of its last row), never from a local
belief, and sends only complete lines (ending in `\\n`). So a retry, a push
killed halfway, a server killed mid-transaction or two processes pushing the
same session can neither duplicate nor reorder nor skip a line: whatever was
committed is a prefix of the file, and the next push continues it.

Only what is on disk is read — the transcript as the recorder wrote it,
already redacted — and the local file is only ever read. A session the local
trust check calls foreign (planted by a clone, tracked by git, fetched from a
teammate) is never pushed: it would go out under this user's name.

Who pushed is not the client's to say: the server records the role
(`author`, schema version 3) and refuses a line appended to a session that
role did not write (`PushRefused`).
"""

from __future__ import annotations

import json
import os
import stat
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from evo_agent.session import (
    FILE_MODE,
    MESSAGES_NAME,
    META_NAME,
    SessionStore,
    is_session_id,
    is_sidechain_path,
    sidechain_paths,
)

from .identity import Identity

BATCH_BYTES = 4 << 20  # one transaction per ~4 MB of lines
BATCH_LINES = 5000
READ_BLOCK = 1 << 20
HINT_NAME = ".pushed.json"  # <session>/.pushed.json: what this machine last pushed (a hint, never trusted for offsets)


@dataclass
class PushReport:
    session_id: str
    lines: int = 0
    bytes: int = 0
    files: dict[str, int] = field(default_factory=dict)  # file -> lines pushed
    skipped: str | None = None  # why it was not pushed (foreign: the local trust check's reason)


class PushRefused(Exception):
    """The store refused this role's rows for the session (it belongs to another author): one line."""


def session_files(session_dir: Path) -> list[str]:
    """The files of a session that replicate: the main transcript and every sidechain (relative paths)."""
    files = [MESSAGES_NAME] if _regular(session_dir / MESSAGES_NAME) else []
    files += [rel for rel in sidechain_paths(session_dir) if is_sidechain_path(rel) and _regular(session_dir / rel)]
    return files


def _regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def complete_lines(path: Path, start: int) -> Iterator[tuple[int, bytes]]:
    """(offset, line without its `\\n`) of every complete line from byte `start`; a torn tail is left for later."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        offset = start
        pending = b""
        while True:
            block = os.pread(fd, READ_BLOCK, offset + len(pending))
            if not block:
                return
            data = pending + block
            pos = 0
            while True:
                nl = data.find(b"\n", pos)
                if nl < 0:
                    break
                yield offset, data[pos:nl]
                offset += nl + 1 - pos
                pos = nl + 1
            pending = data[pos:]
    finally:
        os.close(fd)


def remote_offsets(conn, session_id: str, files: list[str]) -> dict[str, int]:  # noqa: ANN001
    """How far each of the session's files is in the store: {file: end of its last line}; one index probe each."""
    rows = conn.execute(
        "SELECT f, (SELECT next_offset FROM evo_agent_lines WHERE session_id = %s AND file = f "
        "ORDER BY byte_offset DESC LIMIT 1) FROM unnest(%s::text[]) AS f", (session_id, files)).fetchall()
    return {file: int(end) for file, end in rows if end is not None}


def _insert(conn, session_id: str, file: str, batch: list[tuple[int, bytes]]) -> None:  # noqa: ANN001
    texts: tuple[list[int], list[int], list[str]] = ([], [], [])
    raws: list[tuple[str, str, int, int, bytes]] = []
    for offset, data in batch:
        end = offset + len(data) + 1
        text = None
        if b"\x00" not in data:
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                pass
        if text is None:
            raws.append((session_id, file, offset, end, data))
        else:
            texts[0].append(offset)
            texts[1].append(end)
            texts[2].append(text)
    with conn.transaction():
        if texts[0]:
            conn.execute(
                "INSERT INTO evo_agent_lines (session_id, file, byte_offset, next_offset, line) "
                "SELECT %s, %s, o, n, l FROM unnest(%b::bigint[], %b::bigint[], %b::text[]) AS t(o, n, l) "
                "ON CONFLICT DO NOTHING", (session_id, file, *texts))
        if raws:
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO evo_agent_lines (session_id, file, byte_offset, next_offset, raw) "
                    "VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING", raws)


def push_file(conn, session_id: str, file: str, path: Path, start: int) -> tuple[int, int, int]:  # noqa: ANN001
    """Push the complete lines of one file from `start`; (lines, bytes, new end)."""
    lines = size = 0
    end = start
    batch: list[tuple[int, bytes]] = []
    batch_bytes = 0
    for offset, data in complete_lines(path, start):
        batch.append((offset, data))
        batch_bytes += len(data) + 1
        if batch_bytes >= BATCH_BYTES or len(batch) >= BATCH_LINES:
            _insert(conn, session_id, file, batch)
            lines, size, end = lines + len(batch), size + batch_bytes, offset + len(data) + 1
            batch, batch_bytes = [], 0
    if batch:
        _insert(conn, session_id, file, batch)
        offset, data = batch[-1]
        lines, size, end = lines + len(batch), size + batch_bytes, offset + len(data) + 1
    return lines, size, end


def push_session(conn, identity: Identity, store: SessionStore, session_id: str) -> PushReport:  # noqa: ANN001
    """Bring the store up to date with one local session; the report says what was behind."""
    report = PushReport(session_id)
    session_dir = store.sessions_dir / session_id
    files = session_files(session_dir)
    if MESSAGES_NAME not in files:
        return report
    report.skipped = store.foreign_reason(session_id)
    if report.skipped:
        return report
    import psycopg

    try:
        _push_files(conn, identity, store, session_id, files, report)
    except psycopg.errors.InsufficientPrivilege:
        raise PushRefused(f"the team store refused session {session_id}: another author wrote it "
                          "(a session is appended to only by the role that pushed it first)") from None
    return report


def _push_files(conn, identity: Identity, store: SessionStore, session_id: str, files: list[str],  # noqa: ANN001
                report: PushReport) -> None:
    session_dir = store.sessions_dir / session_id
    sizes = {rel: _size(session_dir / rel) for rel in files}
    remote = remote_offsets(conn, session_id, files)
    ends = dict(remote)
    for rel in files:
        start = remote.get(rel, 0)
        if sizes[rel] <= start:
            continue
        if rel == MESSAGES_NAME or not remote:
            _upsert_session(conn, identity, store, session_id, sizes[MESSAGES_NAME])
        lines, size, end = push_file(conn, session_id, rel, session_dir / rel, start)
        if lines:
            report.lines += lines
            report.bytes += size
            report.files[rel] = lines
            ends[rel] = end
    if not report.lines and not remote and not _has_row(conn, session_id):
        _upsert_session(conn, identity, store, session_id, sizes[MESSAGES_NAME])  # a session whose lines are all torn
    write_hint(store, session_id, {rel: sizes[rel] for rel in files})


def _size(path: Path) -> int:
    try:
        return os.lstat(path).st_size
    except OSError:
        return 0


def _has_row(conn, session_id: str) -> bool:  # noqa: ANN001
    return conn.execute("SELECT 1 FROM evo_agent_sessions WHERE session_id = %s", (session_id,)).fetchone() is not None


def _upsert_session(conn, identity: Identity, store: SessionStore, session_id: str, messages_size: int) -> None:  # noqa: ANN001
    """The session's listing row; who pushed it first (user, host) is kept, the rest follows the transcript."""
    info = store.info(session_id, write_back=False)
    if info is None:
        return
    meta = info.meta
    meta_json = _meta_json(store.sessions_dir / session_id, messages_size)
    name = getattr(meta, "name", None)  # `session_name` records (-n, /rename) folded from the transcript
    from psycopg.types.json import Jsonb

    conn.execute(
        """INSERT INTO evo_agent_sessions (session_id, repo, subdir, user_name, host, branch, created_ms, updated_ms,
                                           message_count, first_prompt, name, meta)
           VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
           ON CONFLICT (session_id) DO UPDATE SET
               branch = EXCLUDED.branch, updated_ms = GREATEST(evo_agent_sessions.updated_ms, EXCLUDED.updated_ms),
               message_count = GREATEST(evo_agent_sessions.message_count, EXCLUDED.message_count),
               first_prompt = coalesce(EXCLUDED.first_prompt, evo_agent_sessions.first_prompt),
               name = coalesce(EXCLUDED.name, evo_agent_sessions.name),
               meta = coalesce(EXCLUDED.meta, evo_agent_sessions.meta), pushed_at = now()""",
        (session_id, identity.repo, identity.subdir, identity.user, identity.host, meta.git_branch, meta.created_ms,
         meta.updated_ms, meta.message_count, meta.first_prompt, name,
         Jsonb(meta_json) if meta_json is not None else None))


def _meta_json(session_dir: Path, messages_size: int) -> dict | None:
    """meta.json as it is, when it describes no more of the transcript than this push can send."""
    try:
        data = json.loads((session_dir / META_NAME).read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("messages_bytes"), int):
        return None
    return data if data["messages_bytes"] <= messages_size else None


# Hints: what this machine last pushed, for `sessions list` (never for offsets) ----------------------------


def _hint_path(store: SessionStore, session_id: str) -> Path:
    return store.sessions_dir / session_id / HINT_NAME


def write_hint(store: SessionStore, session_id: str, sizes: dict[str, int]) -> None:
    """Remember the file sizes the store has caught up with (best effort, atomic)."""
    path = _hint_path(store, session_id)
    try:
        tmp = path.with_name(f".pushed.{os.getpid()}.{threading.get_ident()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
        with os.fdopen(fd, "w") as f:
            json.dump(sizes, f)
        os.replace(tmp, path)
    except OSError:
        pass


def read_hint(store: SessionStore, session_id: str) -> dict[str, int]:
    try:
        data = json.loads(_hint_path(store, session_id).read_bytes())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, int)}


def behind_in_store(conn, store: SessionStore, session_ids: list[str]) -> list[str]:  # noqa: ANN001
    """Which of `session_ids` the store lacks complete lines of, by the store's own offsets: one query for all.

    What a catch-up starts from, never the `.pushed.json` hints: a store restored from a backup (rolled back)
    or pruned behind this machine's back is caught up all the same.
    """
    pairs: list[tuple[str, str, int]] = []
    for sid in session_ids:
        session_dir = store.sessions_dir / sid
        for rel in session_files(session_dir):
            end = complete_end(session_dir / rel)
            if end:
                pairs.append((sid, rel, end))
    if not pairs:
        return []
    rows = conn.execute(
        "SELECT s, f, (SELECT next_offset FROM evo_agent_lines WHERE session_id = s AND file = f "
        "ORDER BY byte_offset DESC LIMIT 1) FROM unnest(%s::text[], %s::text[]) AS t(s, f)",
        ([p[0] for p in pairs], [p[1] for p in pairs])).fetchall()
    ends = {(s, f): int(e or 0) for s, f, e in rows}
    return sorted({sid for sid, rel, end in pairs if end > ends.get((sid, rel), 0)})


def complete_end(path: Path) -> int:
    """Where the last complete line of `path` ends (0 when there is none): a torn tail is not "behind"."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return 0
    try:
        end = os.fstat(fd).st_size
        while end > 0:
            start = max(0, end - READ_BLOCK)
            block = os.pread(fd, end - start, start)
            nl = block.rfind(b"\n")
            if nl >= 0:
                return start + nl + 1
            end = start
        return 0
    finally:
        os.close(fd)


def behind(store: SessionStore, session_id: str) -> bool:
    """Whether a session has bytes this machine has not pushed (as far as the hint knows)."""
    session_dir = store.sessions_dir / session_id
    hint = read_hint(store, session_id)
    return any(_size(session_dir / rel) > hint.get(rel, 0) for rel in session_files(session_dir))


def local_session_ids(store: SessionStore) -> list[str]:
    try:
        names = os.listdir(store.sessions_dir)
    except OSError:
        return []
    base = store.sessions_dir
    return sorted(n for n in names
                  if is_session_id(n) and not os.path.islink(base / n) and _regular(base / n / MESSAGES_NAME))
