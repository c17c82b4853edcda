"""Reading the team store: list, resolve, fetch, search, prune — always within one repository.

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

from evo_agent.session import (
    DIR_MODE,
    FILE_MODE,
    MESSAGES_NAME,
    META_NAME,
    SUBAGENT_DIR,
    AmbiguousSessionId,
    SessionNotFound,
    is_sidechain_path,
)

from .identity import Identity


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

    @property
    def who(self) -> str:
        return f"{self.user}@{self.host}"

    def to_json(self) -> dict:
        return {"id": self.id, "user": self.user, "host": self.host, "git_branch": self.branch,
                "created_ms": self.created_ms, "updated_ms": self.updated_ms, "message_count": self.message_count,
                "first_prompt": self.first_prompt, "name": self.name, "subdir": self.subdir}


_COLUMNS = "session_id, user_name, host, branch, created_ms, updated_ms, message_count, first_prompt, name, subdir"


def list_remote(conn, identity: Identity, *, user: str | None = None, branch: str | None = None,  # noqa: ANN001
                limit: int | None = None) -> list[RemoteSession]:
    """This project's sessions in the store (everyone's), most recently updated first."""
    sql = f"SELECT {_COLUMNS} FROM evo_agent_sessions WHERE repo = %s AND subdir = %s"
    params: list = [identity.repo, identity.subdir]
    if user:
        sql += " AND (user_name = %s OR user_name || '@' || host = %s)"
        params += [user, user]
    if branch:
        sql += " AND branch = %s"
        params.append(branch)
    sql += " ORDER BY updated_ms DESC, session_id DESC"
    if limit:
        sql += " LIMIT %s"
        params.append(limit)
    return [RemoteSession(*row) for row in conn.execute(sql, params).fetchall()]


def resolve_remote(conn, identity: Identity, text: str) -> RemoteSession:  # noqa: ANN001
    """The repository's session whose id is `text` or starts with it (checked id-shaped by the caller)."""
    rows = conn.execute(f"SELECT {_COLUMNS} FROM evo_agent_sessions WHERE repo = %s AND starts_with(session_id, %s) "
                        "ORDER BY session_id LIMIT 6", (identity.repo, text)).fetchall()
    if not rows:
        raise SessionNotFound(f"no session {text} here or in the team store")
    exact = [r for r in rows if r[0] == text]
    if len(rows) > 1 and not exact:
        shown = ", ".join(r[0] for r in rows[:5]) + (", ..." if len(rows) > 5 else "")
        raise AmbiguousSessionId(f"session id prefix {text} is ambiguous in the team store ({shown})")
    return RemoteSession(*(exact or rows)[0])


def fetch_session(conn, session_id: str, sessions_dir: Path) -> Path:  # noqa: ANN001
    """Copy a session from the store into `sessions_dir/<id>`; its directory. An existing copy is kept as is."""
    target = sessions_dir / session_id
    if (target / MESSAGES_NAME).exists():
        return target
    files = _read_files(conn, session_id)
    if MESSAGES_NAME not in files:
        raise SessionNotFound(f"session {session_id} has no transcript in the team store")
    _make_dir(sessions_dir)
    staging = sessions_dir / f".fetch-{session_id}-{secrets.token_hex(4)}"
    _make_dir(staging)
    try:
        for rel, data in files.items():
            if rel != MESSAGES_NAME:
                _make_dir(staging / SUBAGENT_DIR)
            _write_file(staging / rel, data)
        meta = conn.execute("SELECT meta FROM evo_agent_sessions WHERE session_id = %s", (session_id,)).fetchone()
        if meta and isinstance(meta[0], dict) and meta[0].get("messages_bytes") == len(files[MESSAGES_NAME]):
            _write_file(staging / META_NAME, json.dumps(meta[0], ensure_ascii=False).encode("utf-8"))
        try:
            os.rename(staging, target)
        except OSError:
            if not (target / MESSAGES_NAME).exists():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _read_files(conn, session_id: str) -> dict[str, bytes]:  # noqa: ANN001
    """Each file's contiguous prefix, as bytes; files with names that are not a session's are ignored."""
    files: dict[str, bytearray] = {}
    broken: set[str] = set()
    with conn.cursor() as cur:
        cur.execute("SELECT file, byte_offset, next_offset, line, raw FROM evo_agent_lines WHERE session_id = %s "
                    "ORDER BY file, byte_offset", (session_id,))
        for file, offset, end, line, raw in cur:
            if file in broken or not (file == MESSAGES_NAME or is_sidechain_path(file)):
                continue
            buf = files.setdefault(file, bytearray())
            data = line.encode("utf-8") if line is not None else bytes(raw)
            if offset != len(buf) or end != offset + len(data) + 1:
                broken.add(file)  # a gap (or a row that does not fit): keep the prefix before it
                continue
            buf += data
            buf += b"\n"
    return {file: bytes(buf) for file, buf in files.items()}


def _make_dir(path: Path) -> None:
    try:
        os.mkdir(path, DIR_MODE)
    except FileExistsError:
        pass
    os.chmod(path, DIR_MODE)


def _write_file(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def prune_remote(conn, identity: Identity, cutoff_ms: int, *, dry_run: bool) -> list[RemoteSession]:  # noqa: ANN001
    """Delete this project's sessions last updated before `cutoff_ms` (lines and rows, in one transaction)."""
    with conn.transaction():
        rows = [RemoteSession(*r) for r in conn.execute(
            f"SELECT {_COLUMNS} FROM evo_agent_sessions WHERE repo = %s AND subdir = %s AND updated_ms < %s "
            "ORDER BY updated_ms FOR UPDATE", (identity.repo, identity.subdir, cutoff_ms)).fetchall()]
        if rows and not dry_run:
            ids = [r.id for r in rows]
            conn.execute("DELETE FROM evo_agent_lines WHERE session_id = ANY(%s)", (ids,))
            conn.execute("DELETE FROM evo_agent_sessions WHERE session_id = ANY(%s)", (ids,))
    return rows


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
            WHERE s.repo = %s AND to_tsvector('simple', coalesce(l.line, '')) @@ q
            ORDER BY s.updated_ms DESC, l.byte_offset LIMIT %s""", (text, identity.repo, limit)).fetchall()
    return [SearchHit(RemoteSession(*r[:10]), r[10], r[11]) for r in rows]
