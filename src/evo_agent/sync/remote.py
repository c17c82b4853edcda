"""Reading the team store: list, resolve, fetch, search, prune — always within one repository.

Who wrote a session is the server's word, not the client's: `author` is the
database role that pushed it (schema version 3). When the connected role is
bound by row-level security (one role per person, README "Team store"), the
author is verified; the tables' owner or a superuser — the one shared role of
a small team — is not bound, and then every author is "not verified".

A fetched session is foreign (session/trust.py) unless the store vouches that
the user wrote it: its directory gets a `fetched` file saying whose it is and
its transcript is read-only, so `--resume` asks (or refuses in print mode)
exactly as for a session planted locally. What the question quotes (the first prompt) is read from the
fetched transcript, and a foreign copy gets no meta.json from the store (listing rebuilds it): the row's
`first_prompt`, `name` and `meta` are whatever the pusher's client sent, and its author may UPDATE them.

A fetched session is written as a local session directory (0700, files
0600) whose files are byte-identical to what the store holds: its chunks,
reassembled in order, each checked against its sha256 and its offsets (a
chunk that fails either ends that file: only a verified, contiguous prefix is
written). It is assembled in a hidden staging directory and renamed into
place, so a crash or a failure mid-fetch leaves nothing to list or resume,
and two processes fetching at once end with one complete copy; the staging
directory of a fetch that was killed (no live process holds its flock) is
removed by the next fetch into that directory. Chunks come
in pages of at most 4 MB of bodies (one statement each, in binary, no
transaction held open): memory and every wait stay bounded whatever the
session's size. A copy fetched earlier (a teammate's session
still growing) is refreshed from where it ends: only the new chunks travel,
appended under a lock; a copy that no longer lines up with the store (the
store was rolled back, an append was torn) is fetched again whole. File
names from the store are checked like any name from outside.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import shutil
import stat
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evo_agent.safe_text import terminal_safe
from evo_agent.session import (
    DIR_MODE,
    FETCHED_NAME,
    FILE_MODE,
    MESSAGES_NAME,
    META_NAME,
    SUBAGENT_DIR,
    AmbiguousSessionId,
    SessionNotFound,
    first_records,
    is_session_id,
    is_sidechain_path,
    prompt_text,
)

from .identity import Identity
from .schema import CHUNK_BYTES

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from psycopg import Connection


@dataclass
class RemoteSession:
    id: str
    user: str
    host: str
    branch: str | None
    created_ms: int
    updated_ms: int
    message_count: int
    first_prompt: str | None
    name: str | None
    subdir: str
    author: str | None = None  # the pushing database role (the server's current_user); None before schema 3
    verified: bool = False  # the store binds roles to their own rows: `author` names a person

    @property
    def who(self) -> str:
        """The author when the store vouches for it, else what the client said (user@host)."""
        if self.verified and self.author:
            return self.author
        return f"{self.user}@{self.host}"

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "user": self.user, "host": self.host, "git_branch": self.branch,
                "created_ms": self.created_ms, "updated_ms": self.updated_ms, "message_count": self.message_count,
                "first_prompt": self.first_prompt, "name": self.name, "subdir": self.subdir,
                "author": self.author, "author_verified": self.verified}


TEXT_CAP = 200  # characters of a row's free text read from the store (first_prompt is at most 200 anyway)


def _columns(table: str = "") -> str:
    """The listing columns, each free text cut on the server: a row's strings are the pusher's word, and a
    member may UPDATE their own row to 1 GB per field; read whole, 100 such rows (500 in the picker's team
    view) were shipped to every teammate's `list --remote`."""
    t = table
    return (f"left({t}session_id, 64), left({t}user_name, {TEXT_CAP}), left({t}host, {TEXT_CAP}), "
            f"left({t}branch, {TEXT_CAP}), {t}created_ms, {t}updated_ms, {t}message_count, "
            f"left({t}first_prompt, {TEXT_CAP}), left({t}name, {TEXT_CAP}), left({t}subdir, 4 * {TEXT_CAP}), "
            f"left({t}author, {TEXT_CAP})")


_COLUMNS = _columns()
DEFAULT_LIMIT = 100  # rows `list --remote` prints unless --limit says otherwise


@dataclass(frozen=True)
class StoreTrust:
    role: str  # the role this connection pushes as
    verified: bool  # bound by row-level security: one role per person, authors proven by the server


_TRUST = """
SELECT current_user::text,
       pg_catalog.row_security_active(c.oid)
       AND NOT pg_catalog.pg_has_role(current_user, c.relowner, 'MEMBER'::text)
FROM pg_catalog.pg_class c WHERE c.oid = pg_catalog.to_regclass('evo_agent_sessions'::text)"""


def store_trust(conn: Connection) -> StoreTrust:
    """Who this connection pushes as, and whether the server proves authors: row-level security binds the role
    and the role is not (a member of) the tables' owner. The owner may `ALTER TABLE … FORCE ROW LEVEL SECURITY`,
    after which the policies bind it too and row_security_active() says yes; a small team's one shared role is
    that owner, so any teammate holding it made every session in the store, all pushed as that role, "yours"
    (resumed without a question) and every listing "verified". The owner can also disable the author trigger."""
    row = conn.execute(_TRUST).fetchone()
    if row is None:  # no sessions table: nothing to vouch for
        return StoreTrust(str(conn.execute("SELECT current_user::text").fetchone()[0]), False)  # type: ignore[index]
    return StoreTrust(str(row[0]), bool(row[1]))


def _sessions(conn: Connection, rows: Sequence[tuple[Any, ...]]) -> list[RemoteSession]:
    """Rows as RemoteSessions; rows whose id is not a session id (written by hand, by a hostile client) are dropped."""
    trust = store_trust(conn) if rows else None
    out = []
    for row in rows:
        if not isinstance(row[0], str) or not is_session_id(row[0]):
            continue
        session = RemoteSession(*row[:11])
        session.verified = bool(trust and trust.verified)
        out.append(session)
    return out


CLOCK_SKEW_MS = 24 * 3600 * 1000  # how far ahead of this machine's clock a teammate's `updated_ms` may be


def list_remote(conn: Connection, identity: Identity, *, user: str | None = None, branch: str | None = None,
                limit: int | None = None) -> list[RemoteSession]:
    """This project's sessions in the store (everyone's), most recently updated first.

    `updated_ms` is the pusher's word: a row that claims a time more than a day ahead of this clock (a member's
    `UPDATE … SET updated_ms = 9223372036854775807`) comes after every other instead of first, so no one's rows
    can push the team's real sessions out of the listing's first screen and the picker's team view for good."""
    import time

    sql = f"SELECT {_COLUMNS} FROM evo_agent_sessions WHERE repo = %s AND subdir = %s"
    params: list[Any] = [identity.repo, identity.subdir]
    if user:
        sql += " AND (author = %s OR user_name = %s OR user_name || '@' || host = %s)"
        params += [user, user, user]
    if branch:
        sql += " AND branch = %s"
        params.append(branch)
    want = limit or DEFAULT_LIMIT
    latest = int(time.time() * 1000) + CLOCK_SKEW_MS
    rows = conn.execute(sql + " AND updated_ms <= %s ORDER BY updated_ms DESC, session_id DESC LIMIT %s",
                        [*params, latest, want]).fetchall()
    if len(rows) < want:  # sessions that claim to be updated in the future: after every other, newest id first
        rows += conn.execute(sql + " AND updated_ms > %s ORDER BY session_id DESC LIMIT %s",
                             [*params, latest, want - len(rows)]).fetchall()
    return _sessions(conn, rows)


def resolve_remote(conn: Connection, identity: Identity, text: str) -> RemoteSession:
    """The repository's session whose id is `text` or starts with it (checked id-shaped by the caller)."""
    rows = conn.execute(f"SELECT {_COLUMNS} FROM evo_agent_sessions WHERE repo = %s AND starts_with(session_id, %s) "
                        "ORDER BY session_id LIMIT 6", (identity.repo, text)).fetchall()
    sessions = _sessions(conn, rows)
    if not sessions:
        raise SessionNotFound(f"no session {text} here or in the team store")
    exact = [r for r in sessions if r.id == text]
    if len(sessions) > 1 and not exact:
        shown = ", ".join(r.id for r in sessions[:5]) + (", ..." if len(sessions) > 5 else "")
        raise AmbiguousSessionId(f"session id prefix {text} is ambiguous in the team store ({shown})")
    return (exact or sessions)[0]


def fetch_session(conn: Connection, session_id: str, sessions_dir: Path,
                  wrote: Callable[[bool], object] | None = None) -> Path:
    """Copy a session from the store into `sessions_dir/<id>`; its directory.

    Unless the store vouches that this user wrote it, the copy is foreign (a `fetched` file, a 0400 transcript).
    An existing copy of our own is kept as it is; a foreign one (we made it) is brought up to date with the
    store: appended from where it ends, or fetched again whole when it no longer lines up. `wrote(foreign)` is
    called only when this call put a new copy in place: the caller registers that copy (its own, or its
    `fetched` note), never a directory that was there already — an archive can plant one under the id of a
    session the store vouches this user wrote.
    """
    if not is_session_id(session_id):
        raise SessionNotFound(f"the team store named a session {terminal_safe(session_id[:40])!r} that is not an id")
    target = sessions_dir / session_id
    if (target / MESSAGES_NAME).exists() and (not (target / FETCHED_NAME).is_file()
                                              or _refresh(conn, target, session_id)):
        return target  # ours (never overwritten: it may be this user's live session), or now up to date
    _make_dir(sessions_dir)
    _sweep_abandoned(sessions_dir)
    staging, held = _new_staging(sessions_dir, session_id)
    try:
        sizes = _copy_chunks(conn, session_id, staging, {})
        if MESSAGES_NAME not in sizes:
            raise SessionNotFound(f"session {session_id} has no transcript in the team store")
        whose = foreign_note(conn, session_id, first_prompt(staging / MESSAGES_NAME))
        if whose is None:  # the store's meta.json is the pusher's word: kept only for this user's own sessions
            _write_meta(conn, session_id, staging, sizes[MESSAGES_NAME])
        else:
            _write_file(staging / FETCHED_NAME, whose.encode("utf-8"))
            os.chmod(staging / MESSAGES_NAME, 0o400)
        if _swap_in(staging, target) and wrote is not None:
            wrote(whose is not None)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        os.close(held)
    return target


def _open_dir(path: Path) -> int:
    return os.open(path, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))


def _new_staging(sessions_dir: Path, session_id: str) -> tuple[Path, int]:
    """A fresh staging directory for a fetch and an open descriptor holding an exclusive flock on it, released
    when the process ends however it ends. It is made and locked under a name no sweep looks at, then renamed:
    a staging directory under its own name is held from the moment it has it."""
    import fcntl

    name = f".fetch-{session_id}-{secrets.token_hex(4)}"
    making = sessions_dir / f"{name}.new"
    _make_dir(making)
    fd = _open_dir(making)
    try:
        with contextlib.suppress(OSError):  # a file system without locks: no lock, and no sweep removes it either
            fcntl.flock(fd, fcntl.LOCK_EX)
        os.rename(making, sessions_dir / name)
    except BaseException:
        os.close(fd)
        shutil.rmtree(making, ignore_errors=True)
        raise
    return sessions_dir / name, fd


def _sweep_abandoned(sessions_dir: Path) -> None:
    """Remove what fetches killed mid-way left in the sessions directory: a staging directory no live fetch holds
    (its flock is free) and a stale copy that was being removed.

    A fetch assembles its copy in `.fetch-<id>-<hex>` and removes it in a `finally` that `kill -9`, a closed
    terminal's SIGHUP or a power cut never runs: each such pull left a partial copy of up to the session's size
    there, hidden and kept for ever, however many later fetches succeeded."""
    import fcntl
    import re

    from evo_agent.session import layout

    try:
        names = os.listdir(sessions_dir)
    except OSError:
        return
    for name in names:
        staging = layout.FETCH_STAGING_RE.match(name) is not None
        if not staging and re.match(r"\A\.stale-[0-9]{13}_[0-9a-f]{8}-[0-9a-f]{8}\Z", name) is None:
            continue
        path = sessions_dir / name
        try:
            fd = _open_dir(path)
        except OSError:
            continue  # gone, or not a directory (a link is never followed)
        try:
            if staging:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held: a fetch still at work
            shutil.rmtree(path, ignore_errors=True)
        except OSError:
            continue
        finally:
            os.close(fd)


def store_ends(conn: Connection, session_id: str) -> dict[str, int]:
    """{file: end of its last chunk} of one session in the store (of at most MAX_SIDECHAINS + 2 files): one query."""
    rows = conn.execute("SELECT DISTINCT ON (file) file, end_offset FROM evo_agent_chunks WHERE session_id = %s "
                        "ORDER BY file, start_offset DESC LIMIT %s", (session_id, MAX_SIDECHAINS + 2)).fetchall()
    return {str(f): int(e) for f, e in rows}


def _refresh(conn: Connection, target: Path, session_id: str) -> bool:
    """Append to a foreign copy what the store has beyond it; False when it must be fetched again whole."""
    _refuse_links(target, session_id)
    fd = os.open(target / MESSAGES_NAME, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
                 | getattr(os, "O_CLOEXEC", 0))
    try:
        _refuse_special(fd, target / MESSAGES_NAME, session_id)
        _lock_within(fd, target, session_id)  # two refreshes at once would append twice
        ends = {rel: end for rel, end in store_ends(conn, session_id).items()
                if rel == MESSAGES_NAME or is_sidechain_path(rel)}
        if len(ends) > MAX_SIDECHAINS + 1:
            raise _too_many_files(session_id)
        for rel in ends:
            if rel != MESSAGES_NAME and os.path.lexists(target / rel) and not os.path.isfile(target / rel):
                raise SessionNotFound(f"the copy of session {session_id} here has {rel} as something other than a "
                                      "file; not refreshed from the team store")
        local = {rel: _size(target / rel) for rel in ends if os.path.lexists(target / rel)}
        if any(local[rel] > ends[rel] for rel in local) or MESSAGES_NAME not in ends:
            return False  # the store holds less than the copy (rolled back, pruned): a fresh copy says what it has
        if all(local.get(rel) == ends[rel] for rel in ends):
            return True
        os.chmod(target / MESSAGES_NAME, FILE_MODE)
        try:
            sizes = _copy_chunks(conn, session_id, target, local)
        except BaseException:
            _cut_back(target, local, ends)
            raise
        finally:
            os.chmod(target / MESSAGES_NAME, 0o400)
        if any(sizes.get(rel, 0) != ends[rel] for rel in ends):
            return False  # the copy did not line up with a chunk boundary (a torn append): fetch it whole
        with contextlib.suppress(OSError):
            os.unlink(target / META_NAME)  # stale now (and a teammate's own word): listing rebuilds it
        return True
    finally:
        os.close(fd)


def _lock_within(fd: int, target: Path, session_id: str) -> None:
    """The copy's refresh lock, waited for at most one idle window (EVO_AGENT_SYNC_TIMEOUT); SessionNotFound after
    it (the caller resumes the copy as it is). Another evo-agent suspended mid-refresh (Ctrl+Z) holds the lock for
    as long as it stays stopped: a blocking flock kept every other `--resume` of the session waiting, silently."""
    import fcntl
    import time

    from .db import idle_timeout

    deadline = time.monotonic() + idle_timeout()
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise SessionNotFound(f"another process is bringing the copy of session {session_id} in "
                                      f"{target.parent} up to date (it holds its lock); not refreshed") from None
            time.sleep(0.05)


def _cut_back(target: Path, local: dict[str, int], ends: dict[str, int]) -> None:
    """Put a copy back as it was before a refresh that failed halfway (a full disk cut a chunk short, the
    store went away): each file at its old size, a file the refresh created gone. A torn tail left there was
    resumed as it stood, and shown to the user as the teammate's last words."""
    for rel in ends:
        path = target / rel
        with contextlib.suppress(OSError):
            if rel not in local:
                os.unlink(path)
                continue
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
            try:
                if stat.S_ISREG(os.fstat(fd).st_mode):
                    os.ftruncate(fd, local[rel])
            finally:
                os.close(fd)


def _refuse_links(target: Path, session_id: str) -> None:
    """A copy to refresh must be plain directories: a repository (or an archive) can commit a "fetched copy"
    whose `subagent` is a symbolic link, and the chunks appended or created below it would land wherever it
    points (files are opened O_NOFOLLOW, but that guards only the last component of a path)."""
    for directory in (target, target / SUBAGENT_DIR):
        try:
            st = os.lstat(directory)
        except FileNotFoundError:
            continue
        if not stat.S_ISDIR(st.st_mode):
            raise SessionNotFound(f"the copy of session {session_id} here has {directory.name} as something other "
                                  "than a directory (a symbolic link?); not refreshed from the team store")


def _refuse_special(fd: int, path: Path, session_id: str) -> None:
    """A copy's transcript must be a regular file: an archive can unpack a FIFO there (with a `fetched` note
    beside it), and the refresh's open waited for a writer for ever (`--resume ID` hung before its question)."""
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        raise SessionNotFound(f"the copy of session {session_id} here has {path.name} as something other than a "
                              "file; not refreshed from the team store")


def _size(path: Path) -> int:
    try:
        return os.lstat(path).st_size
    except OSError:
        return 0


META_CAP = 1 << 20  # bytes of a row's meta a fetch reads (a meta.json is a few hundred)


def _write_meta(conn: Connection, session_id: str, directory: Path, messages_bytes: int) -> None:
    """The store's meta.json when it describes exactly the transcript written (else listing rebuilds it).

    Read as text and parsed here: whoever holds the owner's credentials (or runs the server) can make it any
    jsonb, and psycopg's loader raised RecursionError on one nested a few thousand deep, a traceback for the
    user's own `--resume` on another machine. A meta that is too big, too deep or no object is not kept."""
    row = conn.execute("SELECT CASE WHEN octet_length(meta::text) <= %s THEN meta::text END "
                       "FROM evo_agent_sessions WHERE session_id = %s", (META_CAP, session_id)).fetchone()
    try:
        meta = json.loads(row[0]) if row and isinstance(row[0], str) else None
    except (ValueError, RecursionError):
        meta = None
    if isinstance(meta, dict) and meta.get("messages_bytes") == messages_bytes:
        _write_file(directory / META_NAME, json.dumps(meta, ensure_ascii=False).encode("utf-8"))


FIRST_PROMPT_LOOK = 200  # records a fetched transcript's first prompt is looked for in


def first_prompt(transcript: Path) -> str | None:
    """The first thing a person typed in a fetched transcript: what the question quotes. The row's
    `first_prompt` (and its meta) is whatever the pusher's client sent, and a teammate may UPDATE it."""
    for record in first_records(transcript, FIRST_PROMPT_LOOK):
        if record.get("type") == "user" and (text := prompt_text(record.get("message"))):
            return text
    return None


def _swap_in(staging: Path, target: Path) -> bool:
    """Rename the complete copy into place (a stale foreign copy is moved aside first and removed); False when
    a copy was already there and kept (another process fetched it meanwhile)."""
    try:
        os.rename(staging, target)
        return True
    except OSError:
        if not (target / FETCHED_NAME).is_file():
            if (target / MESSAGES_NAME).exists():
                return False  # another process fetched it meanwhile
            raise
    old = target.with_name(f".stale-{target.name}-{secrets.token_hex(4)}")
    os.rename(target, old)
    try:
        os.rename(staging, target)
    finally:
        shutil.rmtree(old, ignore_errors=True)
    return True


PAGE_ROWS = 1000  # chunks one page of a fetch holds at most (and at most FETCH_BYTES of them)
# The largest chunk a fetch reads. Clients send at most CHUNK_BYTES per row (a longer line as several rows);
# only the conversion of the old one-row-per-line layout (schema 5) made bigger ones, a line plus the lines
# before it in its 4 MB window. A member's own INSERT can make a row of 1 GB, and four of them in flight, each
# twice its size as hex text on the wire, took gigabytes of a teammate's memory for one `sessions show`.
FETCH_CHUNK_CAP = 16 * CHUNK_BYTES
FETCH_BYTES = CHUNK_BYTES  # bytes of bodies one page of a fetch asks for (a single bigger chunk comes alone)


# Sidechain files one fetch writes at most: a session has one per subagent it ran. A member's own rows can name a
# million (one INSERT … SELECT of tiny chunks), and a teammate's `--resume` wrote every one of them into the
# project, for minutes, as far as the disk's inodes went (50,000 files: 12 s).
MAX_SIDECHAINS = 10_000


def _too_many_files(session_id: str) -> SessionNotFound:
    return SessionNotFound(f"session {session_id} has more than {MAX_SIDECHAINS:,} sidechain files in the team store "
                           "(a session has one per subagent it ran); not fetched")


def _copy_chunks(conn: Connection, session_id: str, directory: Path, have: dict[str, int]) -> dict[str, int]:
    """Write each file's verified chunks into `directory` from `have[file]` (0: a new file); {file: its end}.

    Files with names that are not a session's are ignored; a gap, an overlap or a checksum that does not match
    ends that file: only a contiguous, verified prefix is ever written.
    """
    sizes: dict[str, int] = dict(have)
    broken: set[str] = set()
    current: tuple[str, int] | None = None  # (file, fd)
    try:
        for file, start, end, checksum, body in _pages(conn, session_id, have):
            if body is None:  # bigger than FETCH_CHUNK_CAP: not read, and the file ends before it
                broken.add(file)
                continue
            if file in broken or not (file == MESSAGES_NAME or is_sidechain_path(file)):
                continue
            if file not in sizes and len(sizes) > MAX_SIDECHAINS:
                raise _too_many_files(session_id)
            if current is None or current[0] != file:
                if current is not None:
                    os.close(current[1])
                    current = None
                if file != MESSAGES_NAME:
                    _make_dir(directory / SUBAGENT_DIR)
                current = (file, _append_fd(directory / file) if file in have else _create(directory / file))
                sizes.setdefault(file, 0)
            body = bytes(body)
            if start != sizes[file] or end != start + len(body) or hashlib.sha256(body).digest() != bytes(checksum):
                broken.add(file)  # keep the verified prefix before it
                continue
            _write_all(current[1], body)
            sizes[file] = end
    finally:
        if current is not None:
            os.close(current[1])
    return sizes


INDEX_ROWS = 10_000  # chunk sizes read per statement (~400 KB: a session of a million tiny chunks is many)
_SIZES = ("SELECT file, start_offset, CASE WHEN octet_length(body) <= %s THEN octet_length(body) ELSE 0 END "
          "FROM evo_agent_chunks WHERE session_id = %s AND start_offset >= coalesce((%s::jsonb ->> file)::bigint, 0) "
          "AND (file, start_offset) > (%s, %s) ORDER BY file, start_offset LIMIT %s")
_PAGE = ("SELECT file, start_offset, end_offset, checksum, CASE WHEN octet_length(body) <= %s THEN body END "
         "FROM evo_agent_chunks WHERE session_id = %s AND (file, start_offset) >= (%s, %s) "
         "AND start_offset >= coalesce((%s::jsonb ->> file)::bigint, 0) ORDER BY file, start_offset LIMIT %s")


def _pages(conn: Connection, session_id: str, have: dict[str, int]) -> Iterator[tuple[Any, ...]]:
    """The session's chunks from `have[file]` on, in (file, start) order, in pages of at most FETCH_BYTES of
    bodies (a bigger chunk alone), each page one statement answered in binary.

    Every wait on the server is capped at WAIT_CAP_WINDOWS idle windows (10 minutes by default), bytes flowing or
    not: a cursor's FETCH of four 4 MB chunks, as hex text, was 32 MB in one wait, so a teammate on a link slower
    than ~56 KB/s could never fetch a session that a long catch-up had pushed in full chunks; and the server ended
    the transaction the cursor lived in when the client took longer than idle_in_transaction_session_timeout to
    take in what it had sent. Now one wait carries at most ~4 MB (~7 KB/s is enough) and nothing is held open
    between pages. The sizes come first, INDEX_ROWS at a time, from the TOAST pointers (no body is read); a page
    found short (chunks pruned meanwhile) just ends the fetch where it is, and the copy is checked as always."""
    from psycopg.types.json import Jsonb

    after: tuple[str, int] = ("", -1)
    while True:
        index = conn.execute(_SIZES, (FETCH_CHUNK_CAP, session_id, Jsonb(have), *after, INDEX_ROWS)).fetchall()
        done = 0
        while done < len(index):
            size, n = int(index[done][2]), 1
            while n < PAGE_ROWS and done + n < len(index) and size + int(index[done + n][2]) <= FETCH_BYTES:
                size += int(index[done + n][2])
                n += 1
            file, start = index[done][0], int(index[done][1])
            rows = conn.execute(_PAGE, (FETCH_CHUNK_CAP, session_id, file, start, Jsonb(have), n),
                                binary=True).fetchall()
            yield from rows
            last = (index[done + n - 1][0], int(index[done + n - 1][1]))
            if len(rows) < n or (rows[-1][0], int(rows[-1][1])) != last:
                return  # the store changed under the fetch: what was verified is kept, the rest comes next time
            done += n
        if len(index) < INDEX_ROWS:
            return
        after = (str(index[-1][0]), int(index[-1][1]))


def _append_fd(path: Path) -> int:
    """A file of a copy opened to append to, never blocking (a FIFO planted in its place is refused)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
                 | getattr(os, "O_CLOEXEC", 0))
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(0, f"{path.name} is not a regular file")
    os.set_blocking(fd, True)
    return fd


def foreign_note(conn: Connection, session_id: str, first_prompt: str | None) -> str | None:
    """Whose a fetched session is (one safe line) unless the store vouches this user wrote it; None then.

    `first_prompt` is read from the fetched transcript itself, never taken from the row."""
    trust = store_trust(conn)
    row = conn.execute(f"SELECT left(author, {TEXT_CAP}), left(user_name, {TEXT_CAP}), left(host, {TEXT_CAP}) "
                       "FROM evo_agent_sessions WHERE session_id = %s", (session_id,)).fetchone()
    author, user, host = row if row else (None, "?", "?")
    if trust.verified and author == trust.role:
        return None
    if trust.verified and author:
        whose = f"written by {author} (the team store's role for that person)"
    elif author is None and trust.verified:
        whose = f"pushed as {user}@{host} before the store recorded authors (not verified)"
    else:
        whose = f"pushed as {user}@{host}; authors not verified (everyone shares the role {trust.role})"
    prompt = " ".join((first_prompt or "").split())
    prompt = prompt if len(prompt) <= 80 else prompt[:79] + "…"
    text = f"fetched from the team store, {whose}" + (f"; its first prompt: “{prompt}”" if prompt else "")
    return terminal_safe(text, keep_newlines=False)


def _make_dir(path: Path) -> None:
    try:
        os.mkdir(path, DIR_MODE)
    except FileExistsError:
        pass
    os.chmod(path, DIR_MODE)


def _create(path: Path) -> int:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), FILE_MODE)
    os.fchmod(fd, FILE_MODE)
    return fd


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _write_file(path: Path, data: bytes) -> None:
    fd = _create(path)
    try:
        _write_all(fd, data)
    finally:
        os.close(fd)


@dataclass
class Pruned:
    deleted: list[RemoteSession]  # this role's (or, for the owner, anyone's) sessions removed
    kept: list[RemoteSession]  # other authors' sessions a verified role may not delete
    partitions: list[str]  # month partitions of chunks dropped whole instead of deleted row by row


def prune_remote(conn: Connection, identity: Identity, cutoff_ms: int, *, dry_run: bool) -> Pruned:
    """Delete this project's sessions last updated before `cutoff_ms` that this role may delete.

    Where authors are verified a role deletes only its own sessions (the server refuses the others: pruning
    a teammate's sessions is an admin's job). The tables' owner drops a month partition of chunks whole when
    every session of that month is being pruned (no big DELETE); the rest are deleted. Each deleted session
    leaves a tombstone (a trigger), so no `push --all` brings it back.
    """
    trust = store_trust(conn)
    with conn.transaction():
        rows = _sessions(conn, conn.execute(
            f"SELECT {_COLUMNS} FROM evo_agent_sessions WHERE repo = %s AND subdir = %s AND updated_ms < %s "
            "ORDER BY updated_ms", (identity.repo, identity.subdir, cutoff_ms)).fetchall())
        # one pass (`r not in mine` was a list search per row: quadratic, and 50,000 sessions outlasted the
        # server's idle_in_transaction_session_timeout, so a big repository could never be pruned)
        mine: list[RemoteSession] = []
        others: list[RemoteSession] = []
        for r in rows:
            (mine if not trust.verified or r.author == trust.role else others).append(r)
        ids = [r.id for r in mine]
        whole = _whole_partitions(conn, ids) if ids and not trust.verified else []
        if mine and not dry_run:
            for name in whole:
                conn.execute(f"ALTER TABLE evo_agent_chunks DETACH PARTITION {name}")
                conn.execute(f"DROP TABLE {name}")
            conn.execute("DELETE FROM evo_agent_chunks WHERE session_id = ANY(%s)", (ids,))
            deleted = {r[0] for r in conn.execute(
                "DELETE FROM evo_agent_sessions WHERE session_id = ANY(%s) RETURNING session_id", (ids,)).fetchall()}
            mine = [r for r in mine if r.id in deleted]
    return Pruned(mine, others, whole)


def _whole_partitions(conn: Connection, ids: list[str]) -> list[str]:
    """Month partitions of chunks holding sessions of `ids` and of no other session (the owner may drop them)."""
    from .schema import partition_bounds

    names = [r[0] for r in conn.execute(
        "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
        "WHERE i.inhparent = to_regclass('evo_agent_chunks') AND c.relname ~ '^evo_agent_chunks_p[0-9]{6}$' "
        "AND pg_has_role(current_user, c.relowner, 'USAGE') ORDER BY 1").fetchall()]
    whole = []
    for name in names:
        lo, hi = partition_bounds(int(name[-6:-2]), int(name[-2:]))
        if not any(lo <= sid < hi for sid in ids):
            continue
        others = conn.execute("SELECT 1 FROM evo_agent_sessions WHERE session_id >= %s AND session_id < %s "
                              "AND NOT (session_id = ANY(%s)) LIMIT 1", (lo, hi, ids)).fetchone()
        if others is None:
            whole.append(name)
    return whole


@dataclass
class SearchHit:
    session: RemoteSession
    file: str
    snippet: str


INDEX_BUDGET_S = 3.0  # how long a search first spends bringing the index up to date (its own transactions)


def refresh_index(conn: Connection, repo: str | None, *, budget_s: float = INDEX_BUDGET_S, batch: int = 50) -> int:
    """Index what was pushed since the last run (`evo_agent_index`, one transaction per batch of sessions).

    Derived work, never on the push path: a failure or the budget running out leaves the rest for the next
    search or `evo-agent sync index`. Returns how many sessions were indexed.
    """
    import time

    started = time.monotonic()
    done = 0
    while time.monotonic() - started < budget_s:
        with conn.transaction():
            n = conn.execute("SELECT evo_agent_index(%s, %s)", (repo, batch)).fetchone()[0]  # type: ignore[index]  # one row
        done += int(n or 0)
        if not n:
            break
    return done


def unindexed(conn: Connection, repo: str | None) -> int:
    """Sessions of `repo` (None: of every repository this role reads) pushed since the index last saw them."""
    if repo is not None:  # the read rule applied once, not per row (schema 9: a member's count scanned every row)
        row = conn.execute("SELECT evo_agent_pending(%s)", (repo,)).fetchone()
        return int(row[0] or 0)  # type: ignore[index]  # no FROM: always one row
    row = conn.execute("SELECT count(*) FROM evo_agent_sessions s LEFT JOIN evo_agent_search_state st "
                       "USING (session_id) WHERE st.session_id IS NULL OR st.indexed_at < s.pushed_at").fetchone()
    return int(row[0])  # type: ignore[index]  # count(*): always one row


def search_remote(conn: Connection, identity: Identity, text: str, *, limit: int = 20) -> list[SearchHit]:
    """Messages of this repository's sessions that match `text`, newest sessions first (the derived index).

    Newest is by id (ids begin with their creation time), and an id is the pusher's word too: sessions whose
    ids claim a time more than CLOCK_SKEW_MS ahead (`9999999999999_…`, the year 2286) come after every other,
    or a member's flood of them would be the only hits anyone's search ever showed. The hits come from the store's
    `evo_agent_search_hits` (schema 9), which applies the read rule once (under row-level security the GIN index
    could not be used: a member's search read every repository's index rows) and walks the ids up to the cutoff
    newest first, then those beyond it only if they are needed: with "ahead" as the first sort key no index gave
    the order, and a word in every line was found by sorting every line that held it."""
    import time

    cutoff = f"{int(time.time() * 1000) + CLOCK_SKEW_MS + 1:013d}"
    rows = conn.execute(
        f"""SELECT {_columns('s.')},
                   left(ts_headline('simple',
                                    coalesce(evo_agent_line_text(x.session_id, x.line_offset, x.line_bytes), ''),
                                    plainto_tsquery('simple', %s), 'StartSel=«,StopSel=»,MaxWords=18,MinWords=6'),
                        {4 * TEXT_CAP})
            FROM evo_agent_search_hits(%s, %s, %s, %s) x
            JOIN evo_agent_sessions s USING (session_id)
            ORDER BY x.ahead, x.session_id DESC, x.line_offset""",
        (text, identity.repo, text, cutoff, limit)).fetchall()
    sessions = {s.id: s for s in _sessions(conn, [r[:11] for r in rows])}
    return [SearchHit(sessions[r[0]], MESSAGES_NAME, r[11]) for r in rows if r[0] in sessions]
