"""The store's tables, created and migrated by evo-agent itself.

`evo_agent_schema` holds one row: the version. Opening a store runs the
migrations it lacks, each in its own transaction under an advisory lock (two
agents starting at once migrate once). A store whose version is newer than
this evo-agent knows is refused with one line: an old client must not write
into a layout it does not understand.

Layout (version 2):
- `evo_agent_sessions`: one row per session — repository identity, who
  pushed it first (user, host), branch, times, counts, first prompt, and the
  meta.json it last saw.
- `evo_agent_lines`: one row per complete line of a session's files, keyed
  by (session id, file, byte offset): the unique key that makes every push
  exactly once (`ON CONFLICT DO NOTHING`). `next_offset` is where the line
  ends, so "how far has this file been pushed" is one index probe. A line
  that is valid UTF-8 without NUL is kept as `line` text (searchable); any
  other as `raw` bytes, so a fetched file is byte-identical.
- version 2 adds the full-text index used by `sessions search --remote`.
"""

from __future__ import annotations

SCHEMA_VERSION = 2
_LOCK_KEY = 7_345_262_001  # the advisory lock migrations take

MIGRATIONS: dict[int, list[str]] = {
    1: [
        """CREATE TABLE IF NOT EXISTS evo_agent_sessions (
            session_id    text PRIMARY KEY,
            repo          text NOT NULL,
            subdir        text NOT NULL DEFAULT '',
            user_name     text NOT NULL,
            host          text NOT NULL,
            branch        text,
            created_ms    bigint NOT NULL,
            updated_ms    bigint NOT NULL,
            message_count integer NOT NULL DEFAULT 0,
            first_prompt  text,
            name          text,
            meta          jsonb,
            pushed_at     timestamptz NOT NULL DEFAULT now()
        )""",
        "CREATE INDEX IF NOT EXISTS evo_agent_sessions_repo ON evo_agent_sessions (repo, subdir, updated_ms DESC)",
        """CREATE TABLE IF NOT EXISTS evo_agent_lines (
            session_id  text NOT NULL,
            file        text NOT NULL,
            byte_offset bigint NOT NULL,
            next_offset bigint NOT NULL,
            line        text,
            raw         bytea,
            PRIMARY KEY (session_id, file, byte_offset),
            CHECK ((line IS NULL) <> (raw IS NULL))
        )""",
    ],
    2: [
        "CREATE INDEX IF NOT EXISTS evo_agent_lines_fts ON evo_agent_lines "
        "USING gin (to_tsvector('simple', coalesce(line, '')))",
    ],
}


class SchemaTooNew(Exception):
    pass


def ensure_schema(conn) -> int:  # noqa: ANN001 - a psycopg Connection
    """Create or migrate the tables to SCHEMA_VERSION; SchemaTooNew for a store a newer evo-agent made.

    The common case (up to date) is one read without a lock; anything else
    happens in one transaction under an advisory lock, so two clients
    starting against an empty database create it once.
    """
    if _current_version(conn) == SCHEMA_VERSION:
        return SCHEMA_VERSION
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
        conn.execute("CREATE TABLE IF NOT EXISTS evo_agent_schema (version integer NOT NULL)")
        version = _version(conn)
        if version > SCHEMA_VERSION:
            raise SchemaTooNew(f"the team store's schema is version {version}, newer than this evo-agent "
                               f"understands ({SCHEMA_VERSION}); upgrade evo-agent")
        for step in range(version + 1, SCHEMA_VERSION + 1):
            for statement in MIGRATIONS[step]:
                conn.execute(statement)
        if version != SCHEMA_VERSION:
            conn.execute("DELETE FROM evo_agent_schema")
            conn.execute("INSERT INTO evo_agent_schema (version) VALUES (%s)", (SCHEMA_VERSION,))
    return SCHEMA_VERSION


def _current_version(conn) -> int | None:  # noqa: ANN001
    """The version, or None when the table does not exist yet."""
    row = conn.execute("SELECT to_regclass('evo_agent_schema')").fetchone()
    return _version(conn) if row and row[0] is not None else None


def _version(conn) -> int:  # noqa: ANN001
    row = conn.execute("SELECT max(version) FROM evo_agent_schema").fetchone()
    return int(row[0]) if row and row[0] is not None else 0
