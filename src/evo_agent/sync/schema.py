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
- version 3 makes the server the witness of who wrote what (SPEC §9):
  `author` is the pushing role (`current_user`), set by a trigger the client
  cannot override; row-level security lets a role insert, change and delete
  only its own sessions and their lines, and read the sessions of the
  repositories `evo_agent_access` grants it (to it or to a role it is a
  member of; `*` for every repository). The tables' owner and superusers are
  not bound by it: that is the single shared role of a small team, whose
  authors are "not verified". The group role `evo_agent_member` gets the row
  rights (created when the migrating role may create roles).
- version 4 indexes at most the first 64 KB of a line's text (a pasted
  4 MB log cannot exceed the 1 MB tsvector limit and fail its batch), and
  `evo_agent_schema.min_client`: the oldest evo-agent schema version that may
  still use the store. A client older than the store's version but not older
  than `min_client` carries on (an upgraded admin does not lock the team out);
  one older than `min_client` is refused with one line.
"""

from __future__ import annotations

SCHEMA_VERSION = 4
MIN_CLIENT = 3  # the oldest client version that may use a store at SCHEMA_VERSION: it must know authors and RLS
MEMBER_ROLE = "evo_agent_member"
SEARCH_CAP = 65536  # characters of a line indexed for search (schema version 4)
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
    3: [
        "ALTER TABLE evo_agent_sessions ADD COLUMN IF NOT EXISTS author text",  # NULL: pushed before version 3
        "ALTER TABLE evo_agent_sessions ALTER COLUMN author SET DEFAULT current_user",
        "CREATE INDEX IF NOT EXISTS evo_agent_sessions_author ON evo_agent_sessions (author)",
        """CREATE OR REPLACE FUNCTION evo_agent_set_author() RETURNS trigger LANGUAGE plpgsql AS $$
           BEGIN
             IF TG_OP = 'INSERT' THEN NEW.author := current_user; ELSE NEW.author := OLD.author; END IF;
             RETURN NEW;
           END $$""",
        "DROP TRIGGER IF EXISTS evo_agent_sessions_author ON evo_agent_sessions",
        "CREATE TRIGGER evo_agent_sessions_author BEFORE INSERT OR UPDATE ON evo_agent_sessions "
        "FOR EACH ROW EXECUTE FUNCTION evo_agent_set_author()",
        """CREATE TABLE IF NOT EXISTS evo_agent_access (
            grantee text NOT NULL,
            repo    text NOT NULL,
            PRIMARY KEY (grantee, repo)
        )""",
        """CREATE OR REPLACE FUNCTION evo_agent_is(grantee text) RETURNS boolean LANGUAGE sql STABLE AS $$
             SELECT grantee = current_user OR EXISTS (
               SELECT 1 FROM pg_roles r WHERE r.rolname = grantee AND pg_has_role(current_user, r.oid, 'MEMBER'))
           $$""",
        "ALTER TABLE evo_agent_access ENABLE ROW LEVEL SECURITY",
        "CREATE POLICY evo_agent_access_read ON evo_agent_access FOR SELECT USING (evo_agent_is(grantee))",
        "ALTER TABLE evo_agent_sessions ENABLE ROW LEVEL SECURITY",
        """CREATE POLICY evo_agent_sessions_read ON evo_agent_sessions FOR SELECT USING (
             author = current_user OR EXISTS (SELECT 1 FROM evo_agent_access a
                                             WHERE a.repo IN (evo_agent_sessions.repo, '*')))""",
        "CREATE POLICY evo_agent_sessions_insert ON evo_agent_sessions FOR INSERT WITH CHECK (author = current_user)",
        "CREATE POLICY evo_agent_sessions_update ON evo_agent_sessions FOR UPDATE "
        "USING (author = current_user) WITH CHECK (author = current_user)",
        "CREATE POLICY evo_agent_sessions_delete ON evo_agent_sessions FOR DELETE USING (author = current_user)",
        "ALTER TABLE evo_agent_lines ENABLE ROW LEVEL SECURITY",
        """CREATE POLICY evo_agent_lines_read ON evo_agent_lines FOR SELECT USING (
             EXISTS (SELECT 1 FROM evo_agent_sessions s WHERE s.session_id = evo_agent_lines.session_id))""",
        """CREATE POLICY evo_agent_lines_insert ON evo_agent_lines FOR INSERT WITH CHECK (
             EXISTS (SELECT 1 FROM evo_agent_sessions s
                     WHERE s.session_id = evo_agent_lines.session_id AND s.author = current_user))""",
        """CREATE POLICY evo_agent_lines_delete ON evo_agent_lines FOR DELETE USING (
             EXISTS (SELECT 1 FROM evo_agent_sessions s
                     WHERE s.session_id = evo_agent_lines.session_id AND s.author = current_user))""",
        f"""DO $$ BEGIN
             IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{MEMBER_ROLE}') THEN
               BEGIN
                 CREATE ROLE {MEMBER_ROLE} NOLOGIN;
               EXCEPTION WHEN insufficient_privilege OR duplicate_object OR unique_violation THEN NULL;
               END;
             END IF;
             IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{MEMBER_ROLE}') THEN
               GRANT SELECT, INSERT, UPDATE, DELETE ON evo_agent_sessions, evo_agent_lines TO {MEMBER_ROLE};
               GRANT SELECT ON evo_agent_access, evo_agent_schema TO {MEMBER_ROLE};
             END IF;
           END $$""",
    ],
    4: [
        "DROP INDEX IF EXISTS evo_agent_lines_fts",
        "CREATE INDEX IF NOT EXISTS evo_agent_lines_fts_capped ON evo_agent_lines "
        f"USING gin (to_tsvector('simple', left(coalesce(line, ''), {SEARCH_CAP})))",
        "ALTER TABLE evo_agent_schema ADD COLUMN IF NOT EXISTS min_client integer",
    ],
}


class SchemaTooNew(Exception):
    pass


class SchemaTooOld(Exception):
    """The store needs a migration this role may not run (it has row rights only): one line for the admin."""


def ensure_schema(conn) -> int:  # noqa: ANN001 - a psycopg Connection
    """Create or migrate the tables to SCHEMA_VERSION; SchemaTooNew for a store a newer evo-agent made.

    The common case (up to date) is one read without a lock; anything else
    happens in one transaction under an advisory lock, so two clients
    starting against an empty database create it once.
    """
    current = _current_version(conn)
    if current == SCHEMA_VERSION:
        return SCHEMA_VERSION
    if current is not None and current > SCHEMA_VERSION:
        if _min_client(conn) <= SCHEMA_VERSION:
            return current  # newer, and says this client may still use it
        raise SchemaTooNew(f"the team store's schema is version {current}, newer than this evo-agent "
                           f"understands ({SCHEMA_VERSION}); upgrade evo-agent")
    if not _may_migrate(conn):
        raise SchemaTooOld(f"the team store's schema is version {current or 0}, this evo-agent needs "
                           f"{SCHEMA_VERSION}: its owner (an admin) runs `evo-agent sessions push` once to migrate it")
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
        conn.execute("CREATE TABLE IF NOT EXISTS evo_agent_schema (version integer NOT NULL)")
        version = _version(conn)
        if version > SCHEMA_VERSION and _min_client(conn) <= SCHEMA_VERSION:
            return version
        if version > SCHEMA_VERSION:
            raise SchemaTooNew(f"the team store's schema is version {version}, newer than this evo-agent "
                               f"understands ({SCHEMA_VERSION}); upgrade evo-agent")
        for step in range(version + 1, SCHEMA_VERSION + 1):
            for statement in MIGRATIONS[step]:
                conn.execute(statement)
        if version != SCHEMA_VERSION:
            conn.execute("DELETE FROM evo_agent_schema")
            conn.execute("INSERT INTO evo_agent_schema (version, min_client) VALUES (%s, %s)",
                         (SCHEMA_VERSION, MIN_CLIENT))
    return SCHEMA_VERSION


def _may_migrate(conn) -> bool:  # noqa: ANN001
    """Whether this role owns the tables (or may create them): members with row rights only may not."""
    row = conn.execute("SELECT c.relowner FROM pg_class c WHERE c.oid = to_regclass('evo_agent_sessions')").fetchone()
    if row is None:
        row = conn.execute("SELECT has_schema_privilege(current_schema(), 'CREATE')").fetchone()
    else:
        row = conn.execute("SELECT pg_has_role(current_user, %s::oid, 'USAGE')", (row[0],)).fetchone()
    return bool(row and row[0])


def _min_client(conn) -> int:  # noqa: ANN001
    """The store's `min_client` (a store without the column, or the value, admits no older client)."""
    try:
        with conn.transaction():
            row = conn.execute("SELECT max(min_client) FROM evo_agent_schema").fetchone()
    except Exception:  # noqa: BLE001 - the column does not exist: made before version 4
        return 1 << 30
    return int(row[0]) if row and row[0] is not None else 1 << 30


def _current_version(conn) -> int | None:  # noqa: ANN001
    """The version, or None when the table does not exist yet."""
    row = conn.execute("SELECT to_regclass('evo_agent_schema')").fetchone()
    return _version(conn) if row and row[0] is not None else None


def _version(conn) -> int:  # noqa: ANN001
    row = conn.execute("SELECT max(version) FROM evo_agent_schema").fetchone()
    return int(row[0]) if row and row[0] is not None else 0
