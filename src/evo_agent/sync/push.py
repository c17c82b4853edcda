"""Pushing a session's new complete lines to the store as chunks, exactly once by construction.

One push appends, per file, one chunk row (start, end, sha256, body) — or a
few when there is more than CHUNK_BYTES or BATCH_LINES behind — starting at
the file's end *in the store* (the last chunk's end, read in one query for
all files, with the checksum of the store's bytes where the local file meets
them: a file that differs there, appended on two machines, is refused as
`Diverged`), never at a local belief. The database takes a chunk only when
its start is the file's current end there (an expected-version append:
schema.py's trigger and the primary key on (session, file, start)). So a
retry, a push killed halfway, a server killed mid-transaction or two
processes pushing the same session at once can neither duplicate nor reorder
nor skip a byte: of two racing appends one commits, the other is refused
(`AppendConflict`), reports it and continues from the store's new end. Only
complete lines leave (a chunk ends at `\n`); a line longer than CHUNK_BYTES
goes as several rows in one transaction, so a line of any size replicates
and the store still only ever holds a prefix of complete lines.

Only what is on disk is read — the transcript as the recorder wrote it,
already redacted — and the local file is only ever read. A session the local
trust check calls foreign (planted by a clone, tracked by git, fetched from a
teammate) is never pushed: it would go out under this user's name. A session
pruned from the store (a tombstone there) is not pushed again.

Who pushed is not the client's to say: the server records the role
(`author`) and refuses a chunk appended to a session that role did not write
(`PushRefused`).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
from .schema import APPEND_CONFLICT, CHUNK_BYTES, TOMBSTONED

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from psycopg import Connection

BATCH_LINES = 5000  # at most this many lines in one chunk row (one transaction)
READ_BLOCK = 1 << 20
MAX_CONFLICTS = 20  # appends refused in a row before a push gives up on a file (another pusher keeps winning)
HINT_NAME = ".pushed.json"  # <session>/.pushed.json: what this machine last pushed (for `sessions list` only)


@dataclass
class PushReport:
    session_id: str
    lines: int = 0
    bytes: int = 0
    files: dict[str, int] = field(default_factory=dict)  # file -> lines pushed
    skipped: str | None = None  # why it was not pushed (foreign: the local trust check's reason)
    pruned: str | None = None  # when the store pruned it (a tombstone): not pushed again
    conflicts: list[str] = field(default_factory=list)  # appends another push won, each caught up from the store


class PushRefused(Exception):
    """The store refused this role's rows for the session (it belongs to another author): one line."""


class AppendConflict(Exception):
    """The store's end of a file is not where this append started (another push got there first)."""


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


class Diverged(PushRefused):
    """This machine's copy of a file is not the store's: appending at the store's end would splice two histories."""


_VERIFIED_ENDS = """
SELECT t.f, e.end_offset, c.start_offset, c.upto,
       CASE WHEN c.upto = c.end_offset THEN c.checksum
            ELSE sha256(substring(c.body FROM 1 FOR (c.upto - c.start_offset)::integer)) END
FROM unnest(%s::text[], %s::bigint[]) AS t(f, here)
LEFT JOIN LATERAL (SELECT end_offset FROM evo_agent_chunks WHERE session_id = %s AND file = t.f
                   ORDER BY start_offset DESC LIMIT 1) e ON true
LEFT JOIN LATERAL (SELECT start_offset, end_offset, checksum, body, least(t.here, e.end_offset) AS upto
                   FROM evo_agent_chunks WHERE session_id = %s AND file = t.f
                     AND start_offset < least(t.here, e.end_offset)
                   ORDER BY start_offset DESC LIMIT 1) c ON true"""


def verified_offsets(conn: Connection, session_id: str, session_dir: Path, ends: dict[str, int]) -> dict[str, int]:
    """How far each file is in the store ({file: end of its last chunk}), once the store's bytes where this
    machine's copy and the store's meet are checked to be the same (one query: the last chunk's checksum, or
    the sha256 of the part of a chunk the local file covers; `ends`: each local file's complete end).

    Two machines can append to one session (a session fetched to a laptop and renamed there and at the desk): the
    store's end is then not a line boundary of the local file, and appending from it spliced the tail of one
    machine's line onto the other's history (a torn record every teammate then fetched), the rest of its lines
    lost without a word. Such a file is refused (Diverged), never appended to."""
    files = list(ends)
    rows = conn.execute(_VERIFIED_ENDS, (files, [ends[f] for f in files], session_id, session_id)).fetchall()
    found: dict[str, int] = {}
    for file, end, start, upto, digest in rows:
        if end is None:
            continue
        found[file] = int(end)
        if start is not None and _local_digest(session_dir / file, int(start), int(upto)) != bytes(digest):
            raise Diverged(f"session {session_id} not pushed: its {file} here differs from the team store's copy "
                           f"within bytes {int(start):,}-{int(upto):,} (written on two machines?); the store keeps "
                           "its own, this machine keeps this one")
    return found


def _local_digest(path: Path, start: int, end: int) -> bytes:
    """sha256 of the bytes [start, end) of a local file, read in blocks (b'' when it is shorter: no match)."""
    digest = hashlib.sha256()
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        pos = start
        while pos < end:
            block = os.pread(fd, min(READ_BLOCK, end - pos), pos)
            if not block:
                return b""
            digest.update(block)
            pos += len(block)
    finally:
        os.close(fd)
    return digest.digest()


def _append(conn: Connection, session_id: str, file: str, start: int, body: bytes) -> None:
    """One chunk row; AppendConflict when the store's end of the file is not `start`."""
    import psycopg

    try:
        conn.execute("INSERT INTO evo_agent_chunks (session_id, file, start_offset, end_offset, checksum, body) "
                     "VALUES (%s, %s, %s, %s, %b, %b)",
                     (session_id, file, start, start + len(body), hashlib.sha256(body).digest(), body))
    except psycopg.errors.UniqueViolation:
        raise AppendConflict(f"{file}: another push appended at offset {start} first") from None
    except psycopg.Error as exc:
        if getattr(exc, "sqlstate", None) != APPEND_CONFLICT:
            raise
        raise AppendConflict(f"{file}: the store ends at {getattr(exc.diag, 'message_detail', '?')}, "
                             f"this push started at {start}") from None


def _cut(block: bytes, max_lines: int) -> int:
    """Where a chunk taken from `block` ends: after its last `\\n`, or its `max_lines`-th; 0 when it has none."""
    end = pos = 0
    for _ in range(max_lines):
        nl = block.find(b"\n", pos)
        if nl < 0:
            break
        end = pos = nl + 1
    return end


def push_file(conn: Connection, session_id: str, file: str, path: Path, start: int, end: int) -> tuple[int, int]:
    """Append the complete lines of `path` in [start, end) as chunks, one transaction each; (lines, bytes).

    Memory holds one chunk (at most CHUNK_BYTES). A line longer than that goes as several rows of one
    transaction, so what commits always ends at a line's end.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    lines = sent = 0
    try:
        pos = start
        while pos < end:
            block = os.pread(fd, min(CHUNK_BYTES, end - pos), pos)
            if not block:
                break  # the file shrank under us: the rest waits for the next push
            cut = _cut(block, BATCH_LINES)
            if cut:  # one INSERT: its own transaction (autocommit), no BEGIN/COMMIT round trips
                _append(conn, session_id, file, pos, block[:cut])
                n = block.count(b"\n", 0, cut)
            else:
                with conn.transaction():  # one line longer than a chunk: its pieces, then the piece that ends it
                    n, cut = 1, 0
                    while True:
                        nl = block.find(b"\n")
                        piece = block if nl < 0 else block[:nl + 1]
                        _append(conn, session_id, file, pos + cut, piece)
                        cut += len(piece)
                        if nl >= 0:
                            break
                        block = os.pread(fd, min(CHUNK_BYTES, end - pos - cut), pos + cut)
                        if not block:
                            raise OSError(f"{file} shrank while it was pushed")
            lines, sent, pos = lines + n, sent + cut, pos + cut
    finally:
        os.close(fd)
    return lines, sent


def push_session(conn: Connection, identity: Identity, store: SessionStore, session_id: str) -> PushReport:
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
        if _has_row(conn, session_id):
            raise PushRefused(f"the team store refused session {session_id}: another author wrote it "
                              "(a session is appended to only by the role that pushed it first)") from None
        from evo_agent.safe_text import terminal_line

        raise PushRefused(f"the team store refused session {session_id}: this role may not add sessions to "
                          f"{terminal_line(identity.repo)[:200]} (its admin grants it in evo_agent_access, "
                          "README \"Team store\")") from None
    except psycopg.Error as exc:
        if getattr(exc, "sqlstate", None) != TOMBSTONED:
            raise
        report.pruned = "pruned from the team store"
    return report


def pruned_at(conn: Connection, session_id: str) -> str | None:
    """When the store pruned this session (its tombstone), as text; None when it did not."""
    row = conn.execute("SELECT to_char(pruned_at, 'YYYY-MM-DD') FROM evo_agent_tombstones WHERE session_id = %s",
                       (session_id,)).fetchone()
    return None if row is None else str(row[0])


def _push_files(conn: Connection, identity: Identity, store: SessionStore, session_id: str, files: list[str],
                report: PushReport) -> None:
    session_dir = store.sessions_dir / session_id
    ends = {rel: complete_end(session_dir / rel) for rel in files}
    remote = verified_offsets(conn, session_id, session_dir, ends)
    exists = bool(remote) or _has_row(conn, session_id)
    if not exists:
        when = pruned_at(conn, session_id)
        if when is not None:
            report.pruned = f"pruned from the team store on {when}"
            return
        _upsert_session(conn, identity, store, session_id, ends[MESSAGES_NAME])  # the row chunks are checked against
    for rel in files:
        start = remote.get(rel, 0)
        for _ in range(MAX_CONFLICTS):
            if ends[rel] <= start:
                break
            try:
                lines, size = push_file(conn, session_id, rel, session_dir / rel, start, ends[rel])
            except AppendConflict as exc:  # another push won this append: say so, continue from the store's end
                report.conflicts.append(str(exc))
                start = verified_offsets(conn, session_id, session_dir, {rel: ends[rel]}).get(rel, 0)
                continue
            if lines:
                report.lines += lines
                report.bytes += size
                report.files[rel] = report.files.get(rel, 0) + lines
            break
        else:
            raise AppendConflict(f"{rel}: {MAX_CONFLICTS} appends in a row lost to another push; try again")
    if report.lines:  # after the chunks: `pushed_at` is what the search indexer compares against
        _upsert_session(conn, identity, store, session_id, ends[MESSAGES_NAME])
    write_hint(store, session_id, {rel: _size(session_dir / rel) for rel in files})


def _size(path: Path) -> int:
    try:
        return os.lstat(path).st_size
    except OSError:
        return 0


def _has_row(conn: Connection, session_id: str) -> bool:
    return conn.execute("SELECT 1 FROM evo_agent_sessions WHERE session_id = %s", (session_id,)).fetchone() is not None


def _upsert_session(
    conn: Connection, identity: Identity, store: SessionStore, session_id: str, messages_size: int
) -> None:
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


def _meta_json(session_dir: Path, messages_size: int) -> dict[str, Any] | None:
    """meta.json as it is, when it describes no more of the transcript than this push can send."""
    try:
        data = json.loads(_read_small(session_dir / META_NAME))
    except (OSError, ValueError, RecursionError):
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


def _read_small(path: Path, limit: int = 1 << 20) -> bytes:
    """A small regular file's bytes, never blocking and never through a link: a session directory an archive
    unpacked can hold a FIFO where `.pushed.json` or meta.json should be, and reading it waited for a writer
    for ever (`sessions list` of a project with a team store configured hung). OSError for anything else."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(0, f"{path.name} is not a regular file")
        return os.read(fd, limit)
    finally:
        os.close(fd)


def read_hint(store: SessionStore, session_id: str) -> dict[str, int]:
    try:
        data = json.loads(_read_small(_hint_path(store, session_id)))
    except (OSError, ValueError, RecursionError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, int)}


def behind_in_store(conn: Connection, store: SessionStore, session_ids: list[str]) -> list[str]:
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
        "SELECT s, f, (SELECT end_offset FROM evo_agent_chunks WHERE session_id = s AND file = f "
        "ORDER BY start_offset DESC LIMIT 1) FROM unnest(%s::text[], %s::text[]) AS t(s, f)",
        ([p[0] for p in pairs], [p[1] for p in pairs])).fetchall()
    ends = {(s, f): int(e or 0) for s, f, e in rows}
    behind_ids = {sid for sid, rel, end in pairs if end > ends.get((sid, rel), 0)}
    buried = {r[0] for r in conn.execute("SELECT session_id FROM evo_agent_tombstones WHERE session_id = ANY(%s)",
                                         (sorted(behind_ids),)).fetchall()}
    return sorted(behind_ids - buried)  # a session the store pruned is not pushed again


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
