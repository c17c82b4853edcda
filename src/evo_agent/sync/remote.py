"""Reading the team store: list, resolve, fetch, search, prune — always within one repository.

Who wrote a session is the server's word, not the client's: `author` is the
database role that pushed it (schema version 3). When the connected role is
bound by row-level security (one role per person, README "Team store"), the
author is verified; the tables' owner or a superuser — the one shared role of
a small team — is not bound, and then every author is "not verified".

A fetched session is foreign (session/trust.py) unless the store vouches that
the user wrote it: its directory gets a `fetched` file saying whose it is and
its transcript is read-only, so `--resume` asks (or refuses in print mode)
exactly as for a session planted locally.

A fetched session is written as a local session directory (0700, files
0600) whose files are byte-identical to the lines the store holds. It is
assembled in a hidden staging directory and renamed into place, so a crash
or a failure mid-fetch leaves nothing to list or resume, and two processes
fetching at once end with one complete copy. Only a contiguous prefix of each
file is written (a line is never placed at the wrong offset), and file names
from the store are checked like any name from outside.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
from dataclasses import dataclass
from pathlib import Path

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
    is_session_id,
    is_sidechain_path,
)

from .identity import Identity
from .schema import SEARCH_CAP


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

    def to_json(self) -> dict:
        return {"id": self.id, "user": self.user, "host": self.host, "git_branch": self.branch,
                "created_ms": self.created_ms, "updated_ms": self.updated_ms, "message_count": self.message_count,
                "first_prompt": self.first_prompt, "name": self.name, "subdir": self.subdir,
                "author": self.author, "author_verified": self.verified}


_COLUMNS = ("session_id, user_name, host, branch, created_ms, updated_ms, message_count, first_prompt, name, subdir, "
            "author")
DEFAULT_LIMIT = 100  # rows `list --remote` prints unless --limit says otherwise


@dataclass(frozen=True)
class StoreTrust:
    role: str  # the role this connection pushes as
    verified: bool  # bound by row-level security: one role per person, authors proven by the server


def store_trust(conn) -> StoreTrust:  # noqa: ANN001
    row = conn.execute("SELECT current_user::text, row_security_active('evo_agent_sessions')").fetchone()
    return StoreTrust(str(row[0]), bool(row[1]))


def _sessions(conn, rows) -> list[RemoteSession]:  # noqa: ANN001
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


def list_remote(conn, identity: Identity, *, user: str | None = None, branch: str | None = None,  # noqa: ANN001
                limit: int | None = None) -> list[RemoteSession]:
    """This project's sessions in the store (everyone's), most recently updated first."""
    sql = f"SELECT {_COLUMNS} FROM evo_agent_sessions WHERE repo = %s AND subdir = %s"
    params: list = [identity.repo, identity.subdir]
    if user:
        sql += " AND (author = %s OR user_name = %s OR user_name || '@' || host = %s)"
        params += [user, user, user]
    if branch:
        sql += " AND branch = %s"
        params.append(branch)
    sql += " ORDER BY updated_ms DESC, session_id DESC LIMIT %s"
    params.append(limit or DEFAULT_LIMIT)
    return _sessions(conn, conn.execute(sql, params).fetchall())


def resolve_remote(conn, identity: Identity, text: str) -> RemoteSession:  # noqa: ANN001
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


def fetch_session(conn, session_id: str, sessions_dir: Path) -> Path:  # noqa: ANN001
    """Copy a session from the store into `sessions_dir/<id>`; its directory.

    Unless the store vouches that this user wrote it, the copy is foreign (a `fetched` file, a 0400 transcript).
    An existing copy is kept, except a foreign one the store has more of (a teammate's session still growing):
    that one is fetched again and swapped in whole. Rows stream to disk (a server-side cursor): memory stays
    bounded whatever the session's size.
    """
    if not is_session_id(session_id):
        raise SessionNotFound(f"the team store named a session {terminal_safe(session_id[:40])!r} that is not an id")
    target = sessions_dir / session_id
    if (target / MESSAGES_NAME).exists() and not _stale_copy(conn, target, session_id):
        return target
    _make_dir(sessions_dir)
    staging = sessions_dir / f".fetch-{session_id}-{secrets.token_hex(4)}"
    _make_dir(staging)
    try:
        sizes = _stream_files(conn, session_id, staging)
        if MESSAGES_NAME not in sizes:
            raise SessionNotFound(f"session {session_id} has no transcript in the team store")
        meta = conn.execute("SELECT meta FROM evo_agent_sessions WHERE session_id = %s", (session_id,)).fetchone()
        if meta and isinstance(meta[0], dict) and meta[0].get("messages_bytes") == sizes[MESSAGES_NAME]:
            _write_file(staging / META_NAME, json.dumps(meta[0], ensure_ascii=False).encode("utf-8"))
        whose = foreign_note(conn, session_id)
        if whose is not None:
            _write_file(staging / FETCHED_NAME, whose.encode("utf-8"))
            os.chmod(staging / MESSAGES_NAME, 0o400)
        _swap_in(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _stale_copy(conn, target: Path, session_id: str) -> bool:  # noqa: ANN001
    """A foreign copy (we made it: it has the `fetched` file) whose transcript the store now holds more of."""
    if not (target / FETCHED_NAME).is_file():
        return False  # ours: never overwritten (it may be this user's live session)
    row = conn.execute("SELECT next_offset FROM evo_agent_lines WHERE session_id = %s AND file = %s "
                       "ORDER BY byte_offset DESC LIMIT 1", (session_id, MESSAGES_NAME)).fetchone()
    try:
        return row is not None and int(row[0]) > os.lstat(target / MESSAGES_NAME).st_size
    except OSError:
        return False


def _swap_in(staging: Path, target: Path) -> None:
    """Rename the complete copy into place; a stale foreign copy is moved aside first and removed."""
    try:
        os.rename(staging, target)
        return
    except OSError:
        if not (target / FETCHED_NAME).is_file():
            if (target / MESSAGES_NAME).exists():
                return  # another process fetched it meanwhile
            raise
    old = target.with_name(f".stale-{target.name}-{secrets.token_hex(4)}")
    os.rename(target, old)
    try:
        os.rename(staging, target)
    finally:
        shutil.rmtree(old, ignore_errors=True)


def _stream_files(conn, session_id: str, staging: Path) -> dict[str, int]:  # noqa: ANN001
    """Write each file's contiguous prefix into `staging` as rows arrive; {file: bytes written}.

    Files with names that are not a session's are ignored; a gap ends a file (only a prefix is ever written).
    """
    sizes: dict[str, int] = {}
    broken: set[str] = set()
    current: tuple[str, int] | None = None  # (file, fd)
    try:
        with conn.transaction(), conn.cursor(name=f"evo_fetch_{secrets.token_hex(4)}") as cur:
            cur.itersize = 500
            cur.execute("SELECT file, byte_offset, next_offset, line, raw FROM evo_agent_lines "
                        "WHERE session_id = %s ORDER BY file, byte_offset", (session_id,))
            for file, offset, end, line, raw in cur:
                if file in broken or not (file == MESSAGES_NAME or is_sidechain_path(file)):
                    continue
                if current is None or current[0] != file:
                    if current is not None:
                        os.close(current[1])
                    if file != MESSAGES_NAME:
                        _make_dir(staging / SUBAGENT_DIR)
                    current = (file, _create(staging / file))
                    sizes[file] = 0
                data = line.encode("utf-8") if line is not None else bytes(raw)
                if offset != sizes[file] or end != offset + len(data) + 1:
                    broken.add(file)  # a gap (or a row that does not fit): keep the prefix before it
                    continue
                _write_all(current[1], data + b"\n")
                sizes[file] = end
    finally:
        if current is not None:
            os.close(current[1])
    return sizes


def foreign_note(conn, session_id: str) -> str | None:  # noqa: ANN001
    """Whose a fetched session is (one safe line) unless the store vouches this user wrote it; None then."""
    trust = store_trust(conn)
    row = conn.execute("SELECT author, user_name, host, first_prompt FROM evo_agent_sessions WHERE session_id = %s",
                       (session_id,)).fetchone()
    author, user, host, first_prompt = row if row else (None, "?", "?", None)
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


def prune_remote(conn, identity: Identity, cutoff_ms: int, *,  # noqa: ANN001
                 dry_run: bool) -> tuple[list[RemoteSession], list[RemoteSession]]:
    """Delete this project's sessions last updated before `cutoff_ms` that this role may delete; (deleted, kept).

    Where authors are verified a role deletes only its own sessions (the server refuses the others: pruning
    a teammate's sessions is an admin's job); `kept` are the others', left in place.
    """
    trust = store_trust(conn)
    with conn.transaction():
        rows = _sessions(conn, conn.execute(
            f"SELECT {_COLUMNS} FROM evo_agent_sessions WHERE repo = %s AND subdir = %s AND updated_ms < %s "
            "ORDER BY updated_ms", (identity.repo, identity.subdir, cutoff_ms)).fetchall())
        mine = [r for r in rows if not trust.verified or r.author == trust.role]
        others = [r for r in rows if r not in mine]
        if mine and not dry_run:
            ids = [r.id for r in mine]
            conn.execute("DELETE FROM evo_agent_lines WHERE session_id = ANY(%s)", (ids,))
            deleted = {r[0] for r in conn.execute(
                "DELETE FROM evo_agent_sessions WHERE session_id = ANY(%s) RETURNING session_id", (ids,)).fetchall()}
            mine = [r for r in mine if r.id in deleted]
    return mine, others


@dataclass
class SearchHit:
    session: RemoteSession
    file: str
    snippet: str


def search_remote(conn, identity: Identity, text: str, *, limit: int = 20) -> list[SearchHit]:  # noqa: ANN001
    """Lines of this repository's sessions that match `text` (PostgreSQL full-text search, `simple` config)."""
    rows = conn.execute(
        f"""SELECT {', '.join('s.' + c for c in _COLUMNS.split(', '))}, l.file,
                   ts_headline('simple', l.line, q, 'StartSel=«,StopSel=»,MaxWords=18,MinWords=6')
            FROM evo_agent_lines l JOIN evo_agent_sessions s USING (session_id),
                 plainto_tsquery('simple', %s) q
            WHERE s.repo = %s AND to_tsvector('simple', left(coalesce(l.line, ''), {SEARCH_CAP})) @@ q
            ORDER BY s.updated_ms DESC, l.byte_offset LIMIT %s""", (text, identity.repo, limit)).fetchall()
    sessions = {s.id: s for s in _sessions(conn, [r[:11] for r in rows])}
    return [SearchHit(sessions[r[0]], r[11], r[12]) for r in rows if r[0] in sessions]
