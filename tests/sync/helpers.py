"""Shared bits of the sync tests: a project with an origin, a store connection, counting and comparing."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

from evo_agent.sync.identity import Identity, project_identity
from tests.builders import make_git_project


def project_with_origin(parent: Path, origin: str) -> Path:
    """A git project (one commit) whose `origin` is `origin` (never contacted)."""
    parent.mkdir(parents=True, exist_ok=True)
    root = make_git_project(parent)
    subprocess.run(["git", "-C", str(root), "remote", "add", "origin", origin], check=True)
    return root


def identity_of(project: Path) -> Identity:
    return project_identity(project)


def migrated(url: str) -> str:
    """The store at `url` migrated by its owner, as `evo-agent sync migrate` does; the URL."""
    from evo_agent.sync.db import connect
    from evo_agent.sync.schema import migrate

    with connect(url, check=False) as conn:
        migrate(conn)
    return url


def line_rows(url: str, session_id: str | None = None) -> int:
    """How many complete lines the store holds (of one session, or of all): the newlines in its chunks."""
    import psycopg

    with psycopg.connect(url) as conn:
        if conn.execute("SELECT to_regclass('evo_agent_chunks')").fetchone()[0] is None:
            return 0  # nothing was ever migrated
        rows = conn.execute("SELECT body FROM evo_agent_chunks WHERE %s::text IS NULL OR session_id = %s",
                            (session_id, session_id))
        return sum(bytes(body).count(b"\n") for (body,) in rows)


def store_bytes(url: str, session_id: str, file: str = "messages.jsonl") -> bytes:
    """A file of a session as the store holds it: its chunks in order (checked contiguous)."""
    import psycopg

    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT start_offset, end_offset, body FROM evo_agent_chunks "
                            "WHERE session_id = %s AND file = %s ORDER BY start_offset", (session_id, file)).fetchall()
    data = b""
    for start, end, body in rows:
        assert start == len(data) and end == start + len(body)
        data += bytes(body)
    return data


def complete_line_count(path: Path) -> int:
    return path.read_bytes().count(b"\n")


def session_files(session_dir: Path) -> dict[str, bytes]:
    """Every replicated file of a session (main transcript and sidechains) by relative path."""
    files = {"messages.jsonl": (session_dir / "messages.jsonl").read_bytes()}
    sub = session_dir / "subagent"
    if sub.is_dir():
        for p in sorted(sub.iterdir()):
            files[f"subagent/{p.name}"] = p.read_bytes()
    return files


def assert_private(session_dir: Path, read_only: list[str] = ()) -> None:
    """0700 directories, 0600 files (0400 those named in `read_only`), all the way down."""
    for dirpath, dirnames, filenames in os.walk(session_dir):
        assert stat.S_IMODE(os.stat(dirpath).st_mode) == 0o700, dirpath
        for name in filenames:
            want = 0o400 if name in read_only else 0o600
            assert stat.S_IMODE(os.stat(os.path.join(dirpath, name)).st_mode) == want, name
