"""The store's tables, created and migrated by an admin: `evo-agent sync migrate`.

Clients never run DDL: they need row rights only, and on connecting they
check one row, `evo_agent_schema` (version, min_client). A store older than
this client needs is one line for its admin (`evo-agent sync migrate`); a
store whose `min_client` is newer than this client is one line telling the
user to upgrade; a newer store that still admits this client (min_client)
is used as it is (an upgraded admin does not lock older clients out).

`migrate()` runs each version's statements in one transaction under an
advisory lock (two admins at once migrate once), then builds the indexes a
live store needs with `CREATE INDEX CONCURRENTLY`, each outside any
transaction (writers are never blocked; an index a failed build left invalid
is dropped and built again), and only then records the version. It also
creates the month partitions of the chunk table ahead (run it monthly, e.g.
from cron; rows of a month without a partition land in the default one).

Layout (version 5):
- `evo_agent_sessions`: one row per session — repository, subdirectory, the
  author (the pushing role, `current_user`, set by a trigger the client
  cannot override), the user and host the client named, branch, times,
  counts, first prompt, name, meta.json, `pushed_at` (bumped by every push,
  after its chunks: what the search indexer compares against).
- `evo_agent_chunks`: one row per push per file: (session, file,
  start_offset, end_offset, checksum = sha256(body), body bytea). Primary key
  (session, file, start_offset); a trigger refuses a chunk whose start is not
  the file's current end in the store (an expected-version append: of two
  racing pushers one commits, the other gets SQLSTATE EA409 or a unique
  violation, and catches up); CHECKs tie the offsets to the body's length and
  the checksum to the body. A body is bytea (PostgreSQL's limit is 1 GB per
  value; clients send at most CHUNK_BYTES per row, a longer line as several
  rows in one transaction), so a line of any size replicates. Partitioned by
  range of session id: ids begin with their creation time in ms, so a
  partition is one month of sessions and retention drops whole partitions.
- `evo_agent_tombstones`: sessions pruned from the store (by a trigger on
  their deletion); the server refuses to take such a session again, and
  `push --all` says it skipped it.
- `evo_agent_search` and `evo_agent_search_state`: the derived full-text
  index: one row per user/assistant message line with text (not keys, not
  tool output; the first SEARCH_CAP characters), a stored `tsvector` with
  the repository beside it (a GIN index over (repo, tsv), btree_gin when the
  server has it). Built by `evo_agent_index()`, a function that runs with the
  owner's rights over what the store already holds — so any role may drive
  it and none can plant index rows — called by `evo-agent sync index` and by
  `sessions search --remote` in its own transaction, never by a push.
- row-level security as in version 3: a role inserts, changes and deletes
  only its own sessions and their chunks, and reads the repositories
  `evo_agent_access` grants it; the tables' owner and superusers are not bound
  (one shared role: authors "not verified"). `evo_agent_member` gets the row
  rights.

Versions 1–4 (one row per line in `evo_agent_lines`) are kept below so an old
store can be brought up to date; version 5 converts its lines into chunks (a
contiguous prefix per file, rows of at most CHUNK_BYTES) in the migrating
transaction and drops the line table.
"""

from __future__ import annotations

import datetime as _dt

from evo_agent.session import MESSAGES_NAME

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable

    from psycopg import Connection

SCHEMA_VERSION = 9
MIN_CLIENT = 5  # the oldest client version that may use a store at SCHEMA_VERSION: it must speak chunks
# (versions 6 to 9 changed or added only the server's functions and policies: a version-5 client still works)
MEMBER_ROLE = "evo_agent_member"
SEARCH_CAP = 65536  # characters of a message's text indexed for search
CHUNK_BYTES = 4 << 20  # the largest body one chunk row carries (clients split longer lines)
APPEND_CONFLICT = "EA409"  # SQLSTATE of a chunk whose start is not the file's end in the store
TOMBSTONED = "EA410"  # SQLSTATE of a session the store pruned, pushed again
PARTITIONS_AHEAD = 3  # months of chunk partitions `migrate` creates beyond the current one
_LOCK_KEY = 7_345_262_001  # the advisory lock migrations take

# Versions 1-4: one row per line (kept to bring an old store up to date; version 5 converts and drops it).
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

_PARTITIONS = "-- month partitions"

_V5_CONVERT = f"""
INSERT INTO evo_agent_chunks (session_id, file, start_offset, end_offset, checksum, body)
SELECT session_id, file, start_offset, end_offset, sha256(body), body FROM (
  SELECT session_id, file, min(byte_offset) AS start_offset, max(next_offset) AS end_offset,
         string_agg(bytes || '\\x0a'::bytea, ''::bytea ORDER BY byte_offset) AS body
  FROM (SELECT *, bool_and(ok) OVER (PARTITION BY session_id, file ORDER BY byte_offset) AS prefix
        FROM (SELECT session_id, file, byte_offset, next_offset, coalesce(convert_to(line, 'UTF8'), raw) AS bytes,
                     lag(next_offset, 1, 0::bigint) OVER (PARTITION BY session_id, file ORDER BY byte_offset)
                       = byte_offset
                     AND next_offset = byte_offset + octet_length(coalesce(convert_to(line, 'UTF8'), raw)) + 1 AS ok
              FROM evo_agent_lines) numbered) checked
  WHERE prefix
  GROUP BY session_id, file, byte_offset / {CHUNK_BYTES}) grouped"""

_MEMBER_GRANTS = f"""DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{MEMBER_ROLE}') THEN
    BEGIN
      CREATE ROLE {MEMBER_ROLE} NOLOGIN;
    EXCEPTION WHEN insufficient_privilege OR duplicate_object OR unique_violation THEN NULL;
    END;
  END IF;
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{MEMBER_ROLE}') THEN
    GRANT SELECT, INSERT, UPDATE, DELETE ON evo_agent_sessions TO {MEMBER_ROLE};
    GRANT SELECT, INSERT, DELETE ON evo_agent_chunks TO {MEMBER_ROLE};
    GRANT SELECT ON evo_agent_access, evo_agent_schema, evo_agent_tombstones, evo_agent_search,
                    evo_agent_search_state TO {MEMBER_ROLE};
  END IF;
END $$"""

V5 = [
    """DO $$ BEGIN
         CREATE EXTENSION IF NOT EXISTS btree_gin;
       EXCEPTION WHEN OTHERS THEN NULL;  -- not installed or not allowed: a GIN over tsv alone, a btree on repo
       END $$""",
    """CREATE TABLE evo_agent_chunks (
        session_id   text COLLATE "C" NOT NULL,
        file         text NOT NULL,
        start_offset bigint NOT NULL,
        end_offset   bigint NOT NULL,
        checksum     bytea NOT NULL,
        body         bytea NOT NULL,
        pushed_at    timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (session_id, file, start_offset),
        CONSTRAINT evo_agent_chunk_length CHECK (start_offset >= 0 AND end_offset > start_offset
                                                 AND end_offset = start_offset + octet_length(body)),
        CONSTRAINT evo_agent_chunk_checksum CHECK (checksum = sha256(body))
    ) PARTITION BY RANGE (session_id)""",
    "CREATE TABLE evo_agent_chunks_default PARTITION OF evo_agent_chunks DEFAULT",
    _PARTITIONS,  # migrate() creates the month partitions here, before converting
    "DO $$ BEGIN IF to_regclass('evo_agent_lines') IS NOT NULL THEN EXECUTE $c$" + _V5_CONVERT + "$c$; END IF; END $$",
    "DROP TABLE IF EXISTS evo_agent_lines",
    f"""CREATE OR REPLACE FUNCTION evo_agent_append_check() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE current_end bigint;
        BEGIN
          SELECT c.end_offset INTO current_end FROM evo_agent_chunks c
            WHERE c.session_id = NEW.session_id AND c.file = NEW.file ORDER BY c.start_offset DESC LIMIT 1;
          IF coalesce(current_end, 0) <> NEW.start_offset THEN
            RAISE EXCEPTION 'append conflict: % % ends at % in the store, this chunk starts at %',
              NEW.session_id, NEW.file, coalesce(current_end, 0), NEW.start_offset
              USING ERRCODE = '{APPEND_CONFLICT}', DETAIL = coalesce(current_end, 0)::text;
          END IF;
          RETURN NEW;
        END $$""",
    "CREATE TRIGGER evo_agent_chunks_append BEFORE INSERT ON evo_agent_chunks "
    "FOR EACH ROW EXECUTE FUNCTION evo_agent_append_check()",
    "ALTER TABLE evo_agent_chunks ENABLE ROW LEVEL SECURITY",
    """CREATE POLICY evo_agent_chunks_read ON evo_agent_chunks FOR SELECT USING (
         EXISTS (SELECT 1 FROM evo_agent_sessions s WHERE s.session_id = evo_agent_chunks.session_id))""",
    """CREATE POLICY evo_agent_chunks_insert ON evo_agent_chunks FOR INSERT WITH CHECK (
         EXISTS (SELECT 1 FROM evo_agent_sessions s
                 WHERE s.session_id = evo_agent_chunks.session_id AND s.author = current_user))""",
    """CREATE POLICY evo_agent_chunks_delete ON evo_agent_chunks FOR DELETE USING (
         EXISTS (SELECT 1 FROM evo_agent_sessions s
                 WHERE s.session_id = evo_agent_chunks.session_id AND s.author = current_user))""",
    # Tombstones: written by the server when a session row is deleted; a pruned session is not taken again.
    """CREATE TABLE evo_agent_tombstones (
        session_id text PRIMARY KEY,
        repo       text NOT NULL,
        author     text,
        pruned_by  text NOT NULL,
        pruned_at  timestamptz NOT NULL DEFAULT now()
    )""",
    """CREATE OR REPLACE FUNCTION evo_agent_bury() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
       SET search_path FROM CURRENT AS $$
       BEGIN
         INSERT INTO evo_agent_tombstones (session_id, repo, author, pruned_by)
           VALUES (OLD.session_id, OLD.repo, OLD.author, session_user) ON CONFLICT (session_id) DO NOTHING;
         DELETE FROM evo_agent_search WHERE session_id = OLD.session_id;  -- derived rows go with their session
         DELETE FROM evo_agent_search_state WHERE session_id = OLD.session_id;
         RETURN OLD;
       END $$""",
    "CREATE TRIGGER evo_agent_sessions_bury AFTER DELETE ON evo_agent_sessions "
    "FOR EACH ROW EXECUTE FUNCTION evo_agent_bury()",
    f"""CREATE OR REPLACE FUNCTION evo_agent_refuse_buried() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
       SET search_path FROM CURRENT AS $$
       BEGIN
         IF EXISTS (SELECT 1 FROM evo_agent_tombstones t WHERE t.session_id = NEW.session_id) THEN
           RAISE EXCEPTION 'session % was pruned from the team store', NEW.session_id
             USING ERRCODE = '{TOMBSTONED}';
         END IF;
         RETURN NEW;
       END $$""",
    "CREATE TRIGGER evo_agent_sessions_buried BEFORE INSERT ON evo_agent_sessions "
    "FOR EACH ROW EXECUTE FUNCTION evo_agent_refuse_buried()",
    "ALTER TABLE evo_agent_tombstones ENABLE ROW LEVEL SECURITY",
    """CREATE POLICY evo_agent_tombstones_read ON evo_agent_tombstones FOR SELECT USING (
         author = current_user OR EXISTS (SELECT 1 FROM evo_agent_access a
                                         WHERE a.repo IN (evo_agent_tombstones.repo, '*')))""",
    # The derived search index.
    """CREATE TABLE evo_agent_search (
        repo        text NOT NULL,
        session_id  text NOT NULL,
        line_offset bigint NOT NULL,
        line_bytes  integer NOT NULL,
        tsv         tsvector NOT NULL,
        PRIMARY KEY (session_id, line_offset)
    )""",
    """CREATE TABLE evo_agent_search_state (
        session_id  text PRIMARY KEY,
        indexed_end bigint NOT NULL,
        indexed_at  timestamptz NOT NULL
    )""",
    "ALTER TABLE evo_agent_search ENABLE ROW LEVEL SECURITY",
    """CREATE POLICY evo_agent_search_read ON evo_agent_search FOR SELECT USING (
         EXISTS (SELECT 1 FROM evo_agent_access a WHERE a.repo IN (evo_agent_search.repo, '*'))
         OR EXISTS (SELECT 1 FROM evo_agent_sessions s WHERE s.session_id = evo_agent_search.session_id))""",
    f"""CREATE OR REPLACE FUNCTION evo_agent_message_text(line text) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$
        DECLARE j jsonb; content jsonb; out text;
        BEGIN
          j := line::jsonb;
          IF j->>'type' NOT IN ('user', 'assistant') THEN RETURN NULL; END IF;
          content := j->'message'->'content';
          IF jsonb_typeof(content) = 'string' THEN
            out := content #>> '{{}}';
          ELSIF jsonb_typeof(content) = 'array' THEN
            SELECT string_agg(e->>'text', E'\\n') INTO out FROM jsonb_array_elements(content) e
              WHERE jsonb_typeof(e) = 'object' AND e->>'type' = 'text';
          END IF;
          RETURN nullif(left(out, {SEARCH_CAP}), '');
        EXCEPTION WHEN OTHERS THEN
          RETURN NULL;  -- not JSON (a torn or hostile line): nothing to index
        END $$""",
    """CREATE OR REPLACE FUNCTION evo_agent_index_lines(p_repo text, p_session text, p_start bigint, p_buf bytea)
       RETURNS integer LANGUAGE plpgsql AS $$
       DECLARE added integer;
       BEGIN
         INSERT INTO evo_agent_search (repo, session_id, line_offset, line_bytes, tsv)
         SELECT p_repo, p_session, p_start + off, len, to_tsvector('simple', msg) FROM (
           SELECT sum(octet_length(line) + 1) OVER (ORDER BY n) - octet_length(line) - 1 AS off,
                  octet_length(line) AS len, line
           FROM regexp_split_to_table(convert_from(p_buf, 'UTF8'), E'\\n') WITH ORDINALITY AS t(line, n)) lines,
           LATERAL evo_agent_message_text(lines.line) AS msg
         WHERE line ~ '^\\{"type": ?"(user|assistant)"' AND msg IS NOT NULL
         ON CONFLICT DO NOTHING;
         GET DIAGNOSTICS added = ROW_COUNT;
         RETURN added;
       EXCEPTION WHEN character_not_in_repertoire OR untranslatable_character THEN
         RETURN 0;  -- not UTF-8 (raw bytes, a NUL): these lines are not searchable
       END $$""",
    f"""CREATE OR REPLACE FUNCTION evo_agent_index(p_repo text, p_sessions integer) RETURNS integer
       LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
       DECLARE s record; c record; buf bytea; buf_start bigint; lines integer := 0; done integer := 0;
       BEGIN
         FOR s IN SELECT ss.session_id, ss.repo, ss.pushed_at, coalesce(st.indexed_end, 0) AS indexed_end
                  FROM evo_agent_sessions ss LEFT JOIN evo_agent_search_state st USING (session_id)
                  WHERE (p_repo IS NULL OR ss.repo = p_repo)
                    AND (st.session_id IS NULL OR st.indexed_at < ss.pushed_at)
                  ORDER BY ss.pushed_at LIMIT p_sessions LOOP
           CONTINUE WHEN NOT pg_try_advisory_xact_lock(hashtextextended(s.session_id, {_LOCK_KEY}));
           buf := ''::bytea;
           buf_start := s.indexed_end;
           FOR c IN SELECT start_offset, end_offset, body FROM evo_agent_chunks
                    WHERE session_id = s.session_id AND file = '{MESSAGES_NAME}' AND start_offset >= s.indexed_end
                    ORDER BY start_offset LOOP
             EXIT WHEN c.start_offset <> buf_start + octet_length(buf);  -- a gap: stop at what is contiguous
             IF octet_length(buf) > {4 * CHUNK_BYTES} THEN
               buf := ''::bytea;  -- one enormous line: not indexed
               buf_start := c.start_offset;
             END IF;
             buf := buf || c.body;
             IF get_byte(c.body, octet_length(c.body) - 1) = 10 THEN
               lines := lines + evo_agent_index_lines(s.repo, s.session_id, buf_start, buf);
               buf_start := c.end_offset;
               buf := ''::bytea;
             END IF;
           END LOOP;
           INSERT INTO evo_agent_search_state (session_id, indexed_end, indexed_at)
             VALUES (s.session_id, buf_start, s.pushed_at)
             ON CONFLICT (session_id) DO UPDATE SET indexed_end = EXCLUDED.indexed_end,
                                                    indexed_at = EXCLUDED.indexed_at;
           done := done + 1;
         END LOOP;
         RETURN done;
       END $$""",
    f"""CREATE OR REPLACE FUNCTION evo_agent_line_text(p_session text, p_offset bigint, p_bytes integer) RETURNS text
       LANGUAGE plpgsql STABLE AS $$
       DECLARE piece bytea;
       BEGIN
         SELECT substring(c.body FROM (p_offset - c.start_offset + 1)::integer FOR p_bytes) INTO piece
           FROM evo_agent_chunks c WHERE c.session_id = p_session AND c.file = '{MESSAGES_NAME}'
             AND c.start_offset <= p_offset ORDER BY c.start_offset DESC LIMIT 1;
         RETURN evo_agent_message_text(convert_from(piece, 'UTF8'));
       EXCEPTION WHEN OTHERS THEN
         RETURN NULL;
       END $$""",
    "DROP POLICY IF EXISTS evo_agent_sessions_read ON evo_agent_sessions",
    """CREATE POLICY evo_agent_sessions_read ON evo_agent_sessions FOR SELECT USING (
         author = current_user OR EXISTS (SELECT 1 FROM evo_agent_access a
                                         WHERE a.repo IN (evo_agent_sessions.repo, '*')))""",
    _MEMBER_GRANTS,
]

# Built after V5's transaction commits, one by one, outside any transaction (writers are not blocked).
V5_CONCURRENT = [
    ("evo_agent_sessions_pushed", "CREATE INDEX CONCURRENTLY evo_agent_sessions_pushed "
                                  "ON evo_agent_sessions (repo, pushed_at)"),
    ("evo_agent_search_tsv", "CREATE INDEX CONCURRENTLY evo_agent_search_tsv ON evo_agent_search "
                             "USING gin (repo, tsv)"),  # without btree_gin: gin (tsv) and a btree on repo
    ("evo_agent_search_repo", "CREATE INDEX CONCURRENTLY evo_agent_search_repo ON evo_agent_search "
                              "(repo, session_id DESC)"),
]

MIGRATIONS[5] = V5

# Version 6: no function of the store resolves a name through the caller's search_path. A role's temporary
# schema is searched first unless the path names it, and any role may create temporary tables and views: a
# teammate who put a `pg_temp.pg_roles` before pg_catalog made `evo_agent_is` — the row-level security of
# every read — say yes to every grant (every repository's sessions readable), and a temporary
# `evo_agent_sessions` fed the owner's SECURITY DEFINER indexer any session id (its text indexed under a
# repository the teammate reads) or hid the tombstones from `evo_agent_refuse_buried`. Each function now
# searches pg_catalog, then the tables' own schema, then pg_temp last. The indexer's progress rows name
# sessions of every repository, so they are read under the same rule as the sessions they describe.
# Version 6 also bounds what one call of the indexer reads. It read every session it took whole, in one
# transaction: a session of a few hundred MB (5 MB/s here) outlasted the client's 30 s idle deadline, and one
# chunk bigger than a client ever sends (a teammate's own INSERT: `buf || body` past 1 GB) failed the call;
# either way the batch rolled back and the same session came first again, so nothing pushed after it was ever
# indexed, for anyone. Now a call stops at a line boundary once it has read INDEX_CALL_BYTES (a session left
# half done keeps its place and resumes there), skips a chunk no client sends without reading it, and a
# session that still fails is marked indexed to its end instead of failing the others.
INDEX_CALL_BYTES = 4 << 20  # ~1 s of indexing here; a call stops at the first line boundary past it
_V6_INDEX = f"""CREATE OR REPLACE FUNCTION evo_agent_index(p_repo text, p_sessions integer) RETURNS integer
   LANGUAGE plpgsql SECURITY DEFINER AS $$
   DECLARE s record; c record; buf bytea; buf_start bigint; lines integer := 0; done integer := 0;
           spent bigint := 0; finished boolean;
   BEGIN
     FOR s IN SELECT ss.session_id, ss.repo, ss.pushed_at, coalesce(st.indexed_end, 0) AS indexed_end
              FROM evo_agent_sessions ss LEFT JOIN evo_agent_search_state st USING (session_id)
              WHERE (p_repo IS NULL OR ss.repo = p_repo)
                AND (st.session_id IS NULL OR st.indexed_at < ss.pushed_at)
              ORDER BY ss.pushed_at LIMIT p_sessions LOOP
       EXIT WHEN spent >= {INDEX_CALL_BYTES};
       CONTINUE WHEN NOT pg_try_advisory_xact_lock(hashtextextended(s.session_id, {_LOCK_KEY}));
       buf := ''::bytea;
       buf_start := s.indexed_end;
       finished := true;
       BEGIN
         FOR c IN SELECT start_offset, end_offset,
                         CASE WHEN octet_length(body) <= {CHUNK_BYTES} THEN body END AS body
                  FROM evo_agent_chunks
                  WHERE session_id = s.session_id AND file = '{MESSAGES_NAME}' AND start_offset >= s.indexed_end
                  ORDER BY start_offset LOOP
           EXIT WHEN c.start_offset <> buf_start + octet_length(buf);  -- a gap: stop at what is contiguous
           IF octet_length(buf) = 0 AND spent >= {INDEX_CALL_BYTES} THEN
             finished := false;  -- the rest in the next call, from this line
             EXIT;
           END IF;
           spent := spent + (c.end_offset - c.start_offset);
           IF c.body IS NULL THEN  -- bigger than any client sends: not read, and the line it is part of not indexed
             buf := ''::bytea;
             buf_start := c.end_offset;
             CONTINUE;
           END IF;
           IF octet_length(buf) > {4 * CHUNK_BYTES} THEN
             buf := ''::bytea;  -- one enormous line: not indexed
             buf_start := c.start_offset;
           END IF;
           buf := buf || c.body;
           IF get_byte(c.body, octet_length(c.body) - 1) = 10 THEN
             lines := lines + evo_agent_index_lines(s.repo, s.session_id, buf_start, buf);
             buf_start := c.end_offset;
             buf := ''::bytea;
           END IF;
         END LOOP;
       EXCEPTION WHEN OTHERS THEN  -- whatever this session holds, it does not stop the others
         SELECT coalesce(max(end_offset), 0) INTO buf_start FROM evo_agent_chunks
           WHERE session_id = s.session_id AND file = '{MESSAGES_NAME}';
         finished := true;
       END;
       INSERT INTO evo_agent_search_state (session_id, indexed_end, indexed_at)
         VALUES (s.session_id, buf_start, CASE WHEN finished THEN s.pushed_at ELSE '-infinity' END)
         ON CONFLICT (session_id) DO UPDATE SET indexed_end = EXCLUDED.indexed_end,
                                                indexed_at = EXCLUDED.indexed_at;
       done := done + 1;
     END LOOP;
     RETURN done;
   END $$"""

# The check of every row a member reads: it names only pg_catalog's objects, so no search path can redirect it,
# and it stays a plain SQL function the planner inlines into the policies (a pinned search path would forbid
# that: a member's scan of 50,000 sessions took 1.36× as long).
_V6_IS = """CREATE OR REPLACE FUNCTION evo_agent_is(grantee text) RETURNS boolean LANGUAGE sql STABLE AS $$
     SELECT grantee OPERATOR(pg_catalog.=) current_user::text OR EXISTS (
       SELECT 1 FROM pg_catalog.pg_roles r WHERE r.rolname OPERATOR(pg_catalog.=) grantee
         AND pg_catalog.pg_has_role(current_user, r.oid, 'MEMBER'))
   $$"""

_PIN_SEARCH_PATHS = """DO $$
       DECLARE home name := (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                             WHERE c.oid = to_regclass('evo_agent_sessions'));
               f regprocedure;
       BEGIN
         FOR f IN SELECT p.oid::regprocedure FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
                  WHERE n.nspname = home AND p.proname LIKE 'evo\\_agent\\_%' AND p.proname <> 'evo_agent_is' LOOP
           EXECUTE format('ALTER FUNCTION %s SET search_path = pg_catalog, %I, pg_temp', f, home);
         END LOOP;
       END $$"""

V6 = [
    _V6_INDEX,  # before the search paths are pinned below (CREATE OR REPLACE sets a function's settings anew)
    _V6_IS,
    _PIN_SEARCH_PATHS,
    # Nobody but the owner creates objects beside the tables (PostgreSQL 14 and older let every role create
    # in `public`): a member's overload of a function the clients call would run as whoever calls it.
    """DO $$
       DECLARE home name := (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                             WHERE c.oid = to_regclass('evo_agent_sessions'));
       BEGIN
         EXECUTE format('REVOKE CREATE ON SCHEMA %I FROM PUBLIC', home);
         IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'evo_agent_member') THEN
           EXECUTE format('REVOKE CREATE ON SCHEMA %I FROM evo_agent_member', home);
         END IF;
       EXCEPTION WHEN insufficient_privilege THEN
         NULL;  -- not the schema's owner: migrate() names the roles left, and clients refuse the store
       END $$""",
    "ALTER TABLE evo_agent_search_state ENABLE ROW LEVEL SECURITY",
    """CREATE POLICY evo_agent_search_state_read ON evo_agent_search_state FOR SELECT USING (
         EXISTS (SELECT 1 FROM evo_agent_sessions s WHERE s.session_id = evo_agent_search_state.session_id))""",
]

MIGRATIONS[6] = V6

# Version 7: a role adds sessions only to the repositories it has been granted. The insert and update policies
# checked the author alone, so a member granted one repository could INSERT a session (or UPDATE the `repo` of
# one of their own) into any other, and it was listed, searched and offered in that team's picker, under a
# verified author, to people whose repository that member was never given. The same check the read policy
# makes (the member's own grants, through the access table's row-level security) now guards what is written.
_GRANTED = "EXISTS (SELECT 1 FROM evo_agent_access a WHERE a.repo IN (evo_agent_sessions.repo, '*'))"
V7 = [
    "DROP POLICY IF EXISTS evo_agent_sessions_insert ON evo_agent_sessions",
    f"CREATE POLICY evo_agent_sessions_insert ON evo_agent_sessions FOR INSERT WITH CHECK "
    f"(author = current_user AND {_GRANTED})",
    "DROP POLICY IF EXISTS evo_agent_sessions_update ON evo_agent_sessions",
    f"CREATE POLICY evo_agent_sessions_update ON evo_agent_sessions FOR UPDATE USING (author = current_user) "
    f"WITH CHECK (author = current_user AND {_GRANTED})",
]

MIGRATIONS[7] = V7

# Version 8: no member decides what the search indexer skips, nor in what order it works.
# - It took up to p_sessions sessions, oldest `pushed_at` first, then skipped each whose advisory lock was
#   taken. Any role may take advisory locks (and pg_locks shows every key held): a member's idle connection
#   holding the keys of 50 sessions at the head of that order filled every call's batch with skips, so each
#   call returned 0 and nothing pushed after them was ever indexed, for anyone. A call now claims a session by
#   locking its progress row (FOR UPDATE SKIP LOCKED: members have no UPDATE right there, so only the owner's
#   function can take that lock), and only the sessions it indexed count toward its batch. The progress row is
#   made with the session (a trigger, and existing sessions here), so claiming one never inserts, and no call
#   ever waits for another's transaction or a member's.
# - `pushed_at` was whatever the client wrote (INSERT or UPDATE of one's own row): it is the server's clock now,
#   set by the trigger that already sets the author.
_V8_AUTHOR = """CREATE OR REPLACE FUNCTION evo_agent_set_author() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     IF TG_OP = 'INSERT' THEN NEW.author := current_user; ELSE NEW.author := OLD.author; END IF;
     NEW.pushed_at := now();  -- orders the indexer's work: the server's word, never the client's
     RETURN NEW;
   END $$"""

_V8_ENLIST = """CREATE OR REPLACE FUNCTION evo_agent_enlist() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER AS $$
   BEGIN
     INSERT INTO evo_agent_search_state (session_id, indexed_end, indexed_at)
       VALUES (NEW.session_id, 0, '-infinity') ON CONFLICT (session_id) DO NOTHING;
     RETURN NEW;
   END $$"""

# Errors of the moment (a lock not granted in lock_timeout, which clients now set; a deadlock; the server short of
# memory or disk) say nothing about a session's content, but `WHEN OTHERS` takes them for a poison line and marks
# the session indexed to its end, its lines never searchable. They are raised again: the call fails, the session
# stays pending. The snippet function swallowed them too, so a search waited out one lock per hit, silently.
_PASSING = ("transaction_rollback OR insufficient_resources OR object_not_in_prerequisite_state "
            "OR operator_intervention OR system_error")

_V8_LINE_TEXT = f"""CREATE OR REPLACE FUNCTION evo_agent_line_text(p_session text, p_offset bigint, p_bytes integer)
   RETURNS text LANGUAGE plpgsql STABLE AS $$
   DECLARE piece bytea;
   BEGIN
     SELECT substring(c.body FROM (p_offset - c.start_offset + 1)::integer FOR p_bytes) INTO piece
       FROM evo_agent_chunks c WHERE c.session_id = p_session AND c.file = '{MESSAGES_NAME}'
         AND c.start_offset <= p_offset ORDER BY c.start_offset DESC LIMIT 1;
     RETURN evo_agent_message_text(convert_from(piece, 'UTF8'));
   EXCEPTION WHEN {_PASSING} THEN
     RAISE;  -- one lock wait per hit, each swallowed, kept a search silent past every client's deadline
   WHEN OTHERS THEN
     RETURN NULL;
   END $$"""

_V8_INDEX = f"""CREATE OR REPLACE FUNCTION evo_agent_index(p_repo text, p_sessions integer) RETURNS integer
   LANGUAGE plpgsql SECURITY DEFINER AS $$
   DECLARE s record; c record; buf bytea; buf_start bigint; lines integer := 0; done integer := 0;
           spent bigint := 0; finished boolean; claimed_end bigint;
   BEGIN
     FOR s IN SELECT ss.session_id, ss.repo, ss.pushed_at
              FROM evo_agent_sessions ss JOIN evo_agent_search_state st USING (session_id)
              WHERE (p_repo IS NULL OR ss.repo = p_repo) AND st.indexed_at < ss.pushed_at
              ORDER BY ss.pushed_at LOOP
       EXIT WHEN spent >= {INDEX_CALL_BYTES} OR done >= p_sessions;
       -- the claim: its progress row, locked (by another call, or being deleted: skipped, not counted)
       SELECT st.indexed_end INTO claimed_end FROM evo_agent_search_state st
         WHERE st.session_id = s.session_id AND st.indexed_at < s.pushed_at FOR UPDATE SKIP LOCKED;
       CONTINUE WHEN NOT FOUND;
       buf := ''::bytea;
       buf_start := claimed_end;
       finished := true;
       BEGIN
         FOR c IN SELECT start_offset, end_offset,
                         CASE WHEN octet_length(body) <= {CHUNK_BYTES} THEN body END AS body
                  FROM evo_agent_chunks
                  WHERE session_id = s.session_id AND file = '{MESSAGES_NAME}' AND start_offset >= claimed_end
                  ORDER BY start_offset LOOP
           EXIT WHEN c.start_offset <> buf_start + octet_length(buf);  -- a gap: stop at what is contiguous
           IF octet_length(buf) = 0 AND spent >= {INDEX_CALL_BYTES} THEN
             finished := false;  -- the rest in the next call, from this line
             EXIT;
           END IF;
           spent := spent + (c.end_offset - c.start_offset);
           IF c.body IS NULL THEN  -- bigger than any client sends: not read, and the line it is part of not indexed
             buf := ''::bytea;
             buf_start := c.end_offset;
             CONTINUE;
           END IF;
           IF octet_length(buf) > {4 * CHUNK_BYTES} THEN
             buf := ''::bytea;  -- one enormous line: not indexed
             buf_start := c.start_offset;
           END IF;
           buf := buf || c.body;
           IF get_byte(c.body, octet_length(c.body) - 1) = 10 THEN
             lines := lines + evo_agent_index_lines(s.repo, s.session_id, buf_start, buf);
             buf_start := c.end_offset;
             buf := ''::bytea;
           END IF;
         END LOOP;
       EXCEPTION WHEN {_PASSING} THEN
         RAISE;  -- the server's moment, not the session's content: the session stays pending
       WHEN OTHERS THEN  -- whatever this session holds, it does not stop the others
         SELECT coalesce(max(end_offset), 0) INTO buf_start FROM evo_agent_chunks
           WHERE session_id = s.session_id AND file = '{MESSAGES_NAME}';
         finished := true;
       END;
       UPDATE evo_agent_search_state
         SET indexed_end = buf_start, indexed_at = CASE WHEN finished THEN s.pushed_at ELSE '-infinity' END
         WHERE session_id = s.session_id;
       done := done + 1;
     END LOOP;
     RETURN done;
   END $$"""

V8 = [
    _V8_AUTHOR,
    _V8_ENLIST,
    "DROP TRIGGER IF EXISTS evo_agent_sessions_enlist ON evo_agent_sessions",
    "CREATE TRIGGER evo_agent_sessions_enlist AFTER INSERT ON evo_agent_sessions "
    "FOR EACH ROW EXECUTE FUNCTION evo_agent_enlist()",
    "INSERT INTO evo_agent_search_state (session_id, indexed_end, indexed_at) "
    "SELECT session_id, 0, '-infinity' FROM evo_agent_sessions ON CONFLICT (session_id) DO NOTHING",
    _V8_INDEX,
    _V8_LINE_TEXT,
    _PIN_SEARCH_PATHS,  # last: CREATE OR REPLACE sets a function's settings anew
]

MIGRATIONS[8] = V8

# Version 9: what a member reads of the chunks costs one probe of the sessions, not a scan of them. The chunk table's
# ids are COLLATE "C" (its partitions are ranges of ids) and the sessions' are the database's collation, so the
# chunk policies' `s.session_id = evo_agent_chunks.session_id` compared in "C", which the sessions' primary key
# cannot answer: PostgreSQL checked the chunks against a hash of every session the member may read, built anew by
# each statement. Every push's offsets query, every page of a fetch and every search snippet of a member read the
# whole sessions table (50,000 sessions: 0.4 s a statement). The sessions' side now names its own collation.
_OWN_ID = 's.session_id = (evo_agent_chunks.session_id COLLATE "default")'
V9 = [
    "DROP POLICY IF EXISTS evo_agent_chunks_read ON evo_agent_chunks",
    f"CREATE POLICY evo_agent_chunks_read ON evo_agent_chunks FOR SELECT USING ("
    f"EXISTS (SELECT 1 FROM evo_agent_sessions s WHERE {_OWN_ID}))",
    "DROP POLICY IF EXISTS evo_agent_chunks_insert ON evo_agent_chunks",
    f"CREATE POLICY evo_agent_chunks_insert ON evo_agent_chunks FOR INSERT WITH CHECK ("
    f"EXISTS (SELECT 1 FROM evo_agent_sessions s WHERE {_OWN_ID} AND s.author = current_user))",
    "DROP POLICY IF EXISTS evo_agent_chunks_delete ON evo_agent_chunks",
    f"CREATE POLICY evo_agent_chunks_delete ON evo_agent_chunks FOR DELETE USING ("
    f"EXISTS (SELECT 1 FROM evo_agent_sessions s WHERE {_OWN_ID} AND s.author = current_user))",
]

# Version 9, too: a member's search reads the hits, not the store. Row-level security binds a member, and its policies
# are not leakproof, so PostgreSQL may not use `tsv @@ query` (not leakproof either) as an index condition under
# them: a member's search was a sequential scan of every repository's index rows, each checked by the policy's
# correlated subplans, and so was the count of sessions not indexed yet. With 50,000 sessions a member waited
# 0.6 s for a word in no line and 7.8 s for a common word (the owner, whom no policy binds: 0.5 ms and 120 ms),
# growing with the whole store. Two functions run as the owner and apply the read rule themselves, once per call:
# the login role (`session_user`: the one role per person that connected) reads a repository granted to it,
# directly or through a role it belongs to, or else only its own sessions there; the owner and superusers read all.
# The hits are walked newest first up to the clients' cutoff, then beyond it only when needed: sorting on "ahead"
# first (schema 8's clients) gave no index the order, so a word in every line sorted every line holding it
# (the owner at 50,000 sessions: 71 ms against 0.05 ms, growing with the repository).
_V9_READS = """CREATE OR REPLACE FUNCTION evo_agent_reads(p_repo text) RETURNS boolean LANGUAGE sql STABLE AS $$
     SELECT EXISTS (SELECT 1 FROM evo_agent_access a JOIN pg_roles r ON r.rolname = a.grantee
                    WHERE a.repo IN (p_repo, '*') AND pg_has_role(session_user, r.oid, 'MEMBER'))
         OR pg_has_role(session_user, (SELECT c.relowner FROM pg_class c
                                       WHERE c.oid = 'evo_agent_search'::regclass), 'MEMBER')
         OR EXISTS (SELECT 1 FROM pg_roles r WHERE r.rolname = session_user AND (r.rolsuper OR r.rolbypassrls))
   $$"""

_V9_HITS = """CREATE OR REPLACE FUNCTION evo_agent_search_hits(p_repo text, p_query text, p_cutoff text,
                                                p_limit integer)
   RETURNS TABLE (session_id text, line_offset bigint, line_bytes integer, ahead boolean)
   LANGUAGE plpgsql STABLE SECURITY DEFINER ROWS 20 AS $$
   DECLARE q tsquery := plainto_tsquery('simple', p_query); everything boolean := evo_agent_reads(p_repo);
           lim integer := least(greatest(p_limit, 0), 1000); n integer;
   BEGIN
     -- newest first up to the cutoff, then (only when those run out) the ids that claim a later time; each walk
     -- stops at the hits it needs. Not granted the repository: one's own sessions there, as the read policy says.
     -- (ROWS 20, what a search asks for: estimated at 1,000 rows, the caller's join read every session.)
     RETURN QUERY SELECT x.session_id, x.line_offset, x.line_bytes, false FROM evo_agent_search x
       WHERE x.repo = p_repo AND x.session_id < p_cutoff AND x.tsv @@ q
         AND (everything OR EXISTS (SELECT 1 FROM evo_agent_sessions s
                                   WHERE s.session_id = x.session_id AND s.author = session_user))
       ORDER BY x.session_id DESC, x.line_offset LIMIT lim;
     GET DIAGNOSTICS n = ROW_COUNT;
     IF n < lim THEN
       RETURN QUERY SELECT x.session_id, x.line_offset, x.line_bytes, true FROM evo_agent_search x
         WHERE x.repo = p_repo AND x.session_id >= p_cutoff AND x.tsv @@ q
           AND (everything OR EXISTS (SELECT 1 FROM evo_agent_sessions s
                                     WHERE s.session_id = x.session_id AND s.author = session_user))
         ORDER BY x.session_id DESC, x.line_offset LIMIT lim - n;
     END IF;
   END $$"""

_V9_PENDING = """CREATE OR REPLACE FUNCTION evo_agent_pending(p_repo text) RETURNS bigint
   LANGUAGE plpgsql STABLE SECURITY DEFINER AS $$
   BEGIN
     IF evo_agent_reads(p_repo) THEN
       RETURN (SELECT count(*) FROM evo_agent_sessions s JOIN evo_agent_search_state st USING (session_id)
               WHERE s.repo = p_repo AND st.indexed_at < s.pushed_at);
     END IF;
     RETURN (SELECT count(*) FROM evo_agent_sessions s JOIN evo_agent_search_state st USING (session_id)
             WHERE s.repo = p_repo AND st.indexed_at < s.pushed_at AND s.author = session_user);
   END $$"""

V9 += [_V9_READS, _V9_HITS, _V9_PENDING, _PIN_SEARCH_PATHS]  # last: pins the new functions' paths

# Version 9, too: the sessions' and tombstones' read policies ask for the member's grants once per statement (an
# uncorrelated array, which PostgreSQL computes once) instead of once per row (a correlated EXISTS): resolving an id
# prefix for `--resume` and `list --remote --user` walk a repository's sessions, and with 50,000 of them a member
# waited 132 ms and 440 ms where the owner waits 9 and 13.
_GRANTED_REPOS = "ARRAY(SELECT a.repo FROM evo_agent_access a)"
V9 += [
    "DROP POLICY IF EXISTS evo_agent_sessions_read ON evo_agent_sessions",
    f"CREATE POLICY evo_agent_sessions_read ON evo_agent_sessions FOR SELECT USING (author = current_user "
    f"OR repo = ANY ({_GRANTED_REPOS}) OR '*' = ANY ({_GRANTED_REPOS}))",
    "DROP POLICY IF EXISTS evo_agent_tombstones_read ON evo_agent_tombstones",
    f"CREATE POLICY evo_agent_tombstones_read ON evo_agent_tombstones FOR SELECT USING (author = current_user "
    f"OR repo = ANY ({_GRANTED_REPOS}) OR '*' = ANY ({_GRANTED_REPOS}))",
]

MIGRATIONS[9] = V9


class SchemaTooNew(Exception):
    """This client is older than the store admits (its min_client): one line telling the user to upgrade."""


class SchemaTooOld(Exception):
    """The store lacks the schema this client needs: one line for its admin (`evo-agent sync migrate`)."""


MIGRATE_HINT = "its admin runs `evo-agent sync migrate` (as the role that owns the store's tables)"


_SCHEMA_WRITERS = """
SELECT r.rolname::text, n.nspname::text
FROM pg_catalog.pg_class c, pg_catalog.pg_namespace n, pg_catalog.pg_roles r
WHERE c.oid = pg_catalog.to_regclass('evo_agent_sessions'::text)
  AND (n.oid = c.relnamespace OR n.nspname = ANY (pg_catalog.current_schemas(false)))
  AND NOT r.rolsuper
  AND NOT pg_catalog.starts_with(r.rolname::text, 'pg_'::text)
  AND NOT pg_catalog.pg_has_role(r.oid, c.relowner, 'USAGE'::text)
  AND NOT pg_catalog.pg_has_role(r.oid, n.nspowner, 'USAGE'::text)
  AND pg_catalog.has_schema_privilege(r.oid, n.oid, 'CREATE'::text)
ORDER BY 2, 1"""


_PUBLIC_CREATES = """
SELECT 1 FROM pg_catalog.pg_namespace n, pg_catalog.aclexplode(n.nspacl) a
WHERE n.nspname = %s AND a.grantee = 0 AND a.privilege_type = 'CREATE'"""


class SchemaOpen(Exception):
    """Roles other than the store's owner may create objects in its schema: one line for its admin."""


def check_schema_closed(conn: Connection) -> None:
    """Refuse a store whose schema (or one on this connection's search path) others than its owner may create
    objects in (every name fully qualified: this runs before any query that could resolve to such an object;
    superusers, the schema's and the tables' owners and PostgreSQL's own `pg_*` roles excepted: admins, not
    teammates). A member's overload of a function the
    clients call (`plainto_tsquery(text, text)` beats pg_catalog's for `plainto_tsquery('simple', …)`) would
    run as whoever calls it, writing rows the server records as theirs."""
    rows = conn.execute(_SCHEMA_WRITERS).fetchall()
    if rows:
        schema = str(rows[0][1])
        rows = [r for r in rows if r[1] == schema]
        if conn.execute(_PUBLIC_CREATES, (schema,)).fetchone() is not None:
            names = "every role: PUBLIC"
        else:
            names = ", ".join(str(r[0]) for r in rows[:5]) + (", …" if len(rows) > 5 else "")
        raise SchemaOpen(f"the team store's schema {schema} lets roles other than its owner create objects "
                         f"({names}), where any of them could plant a function that runs as you: its admin runs "
                         f"REVOKE CREATE ON SCHEMA {schema} FROM PUBLIC (and from those roles)")


def check_encoding(conn: Connection) -> None:
    """Refuse a database not encoded in UTF8 (SchemaTooOld, one line for its admin).

    `initdb` under the C locale makes SQL_ASCII databases, where text holds any bytes: there psycopg handed
    every row back as bytes (listings empty, fetches "not found") and encoded queries as ASCII (search
    failed with a traceback), and, once clients ask for UTF8, one member's row of invalid bytes failed every
    teammate's `list --remote`. A UTF8 database refuses such text on the way in."""
    row = conn.execute("SELECT pg_catalog.current_setting('server_encoding')").fetchone()
    encoding = str(row[0]) if row else "?"
    if encoding.upper() not in ("UTF8", "UTF-8"):
        raise SchemaTooOld(f"the team store's database is encoded {encoding}, not UTF8 (text there can hold any "
                           "bytes, and one row of them fails every teammate's listing): its admin creates it with "
                           "CREATE DATABASE … ENCODING 'UTF8' TEMPLATE template0 and moves the tables there")


def check_schema(conn: Connection) -> int:
    """What a client does on connecting: read the version row, run no DDL; the store's version.

    SchemaTooOld when the store lacks the schema (or is older than this client speaks, or its migration is
    half done, or its database is not UTF8), SchemaTooNew when its min_client is newer than this client.
    """
    try:
        check_schema_closed(conn)  # first: before any query whose names could resolve to a member's object
    except SchemaOpen as exc:
        raise SchemaTooOld(str(exc)) from None
    check_encoding(conn)
    current = _current_version(conn)
    if current is None:
        raise SchemaTooOld(f"the team store has no evo-agent schema yet: {MIGRATE_HINT}")
    if current < SCHEMA_VERSION:
        raise SchemaTooOld(f"the team store's schema is version {current}, this evo-agent needs {SCHEMA_VERSION}: "
                           f"{MIGRATE_HINT}")
    if current > SCHEMA_VERSION and _min_client(conn) > SCHEMA_VERSION:
        raise SchemaTooNew(f"the team store's schema is version {current} and admits clients from version "
                           f"{_min_client(conn)}; this evo-agent speaks {SCHEMA_VERSION}: upgrade evo-agent "
                           "(pip install -U 'evo-agent[sync]')")
    if current == SCHEMA_VERSION and not _ready(conn):
        raise SchemaTooOld(f"the team store's migration to version {current} is not finished: {MIGRATE_HINT}")
    return current


def migrate(conn: Connection, *, ahead: int = PARTITIONS_AHEAD,
            say: Callable[[str], object] = lambda line: None) -> int:
    """Create or migrate the store to SCHEMA_VERSION and create chunk partitions ahead; the version it is at.

    `conn` is an autocommit connection of the tables' owner (or of a role that may create them). The
    versions' statements run in one transaction under an advisory lock (the row then says `ready = false`);
    the indexes a live store needs are built CONCURRENTLY outside it; then the row says `ready`.
    """
    check_encoding(conn)
    current = _current_version(conn)
    if current is not None and current > SCHEMA_VERSION:
        raise SchemaTooNew(f"the team store's schema is version {current}, newer than this evo-agent "
                           f"understands ({SCHEMA_VERSION}): upgrade evo-agent to migrate it")
    if current is not None and not _may_migrate(conn):
        raise SchemaTooOld("this role does not own the team store's tables: run `evo-agent sync migrate` "
                           "as the role that does (the admin)")
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
        conn.execute("CREATE TABLE IF NOT EXISTS evo_agent_schema (version integer NOT NULL)")
        conn.execute("ALTER TABLE evo_agent_schema ADD COLUMN IF NOT EXISTS min_client integer")
        conn.execute("ALTER TABLE evo_agent_schema ADD COLUMN IF NOT EXISTS ready boolean NOT NULL DEFAULT true")
        version = _version(conn)
        for step in range(version + 1, SCHEMA_VERSION + 1):
            say(f"schema version {step}")
            for statement in MIGRATIONS[step]:
                if statement == _PARTITIONS:
                    ensure_partitions(conn, ahead, say)
                else:
                    conn.execute(statement)
        if version < SCHEMA_VERSION:
            conn.execute("DELETE FROM evo_agent_schema")
            conn.execute("INSERT INTO evo_agent_schema (version, min_client, ready) VALUES (%s, %s, false)",
                         (SCHEMA_VERSION, MIN_CLIENT))
    _build_indexes(conn, say)
    with conn.transaction():
        ensure_partitions(conn, ahead, say)
        conn.execute("UPDATE evo_agent_schema SET ready = true")
    try:
        check_schema_closed(conn)
    except SchemaOpen as exc:
        say(f"warning: {exc}; until then clients refuse the store")
    return SCHEMA_VERSION


def _build_indexes(conn: Connection, say: Callable[[str], object]) -> None:
    """The CONCURRENTLY-built indexes, each outside a transaction; an invalid leftover is dropped and rebuilt."""
    btree_gin = conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'btree_gin'").fetchone() is not None
    for name, statement in V5_CONCURRENT:
        if not btree_gin and name == "evo_agent_search_tsv":
            statement = "CREATE INDEX CONCURRENTLY evo_agent_search_tsv ON evo_agent_search USING gin (tsv)"
        row = conn.execute("SELECT i.indisvalid FROM pg_index i WHERE i.indexrelid = to_regclass(%s)",
                           (name,)).fetchone()
        if row is not None and row[0]:
            continue
        if row is not None:
            conn.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")
        say(f"building index {name} (concurrently)")
        conn.execute(statement)


def month_start(year: int, month: int) -> _dt.datetime:
    return _dt.datetime(year + (month - 1) // 12, (month - 1) % 12 + 1, 1, tzinfo=_dt.UTC)


def partition_bounds(year: int, month: int) -> tuple[str, str]:
    """The session-id range of one month: ids begin with their creation time in ms (13 digits)."""
    lo = int(month_start(year, month).timestamp() * 1000)
    hi = int(month_start(year, month + 1).timestamp() * 1000)
    return f"{lo:013d}", f"{hi:013d}"


def ensure_partitions(conn: Connection, ahead: int = PARTITIONS_AHEAD,
                      say: Callable[[str], object] = lambda line: None) -> list[str]:
    """Month partitions of evo_agent_chunks from the oldest session's month to `ahead` months from now.

    A month whose rows already sit in the default partition (migrate was not run for a while) is left
    there, said once; nothing is lost, only that month is not dropped whole by retention.
    """
    now = _dt.datetime.now(_dt.UTC)
    first = now
    row = conn.execute("SELECT min(session_id) FROM evo_agent_sessions WHERE session_id ~ '^[0-9]{13}_'").fetchone()
    if row and row[0]:
        first = max(_dt.datetime.fromtimestamp(int(row[0][:13]) / 1000, _dt.UTC),
                    now - _dt.timedelta(days=366 * 10))
    made = []
    year, month = first.year, first.month
    while (year, month) <= (now.year + (now.month + ahead - 1) // 12, (now.month + ahead - 1) % 12 + 1):
        name = f"evo_agent_chunks_p{year:04d}{month:02d}"
        if conn.execute("SELECT to_regclass(%s)", (name,)).fetchone()[0] is None:  # type: ignore[index]  # one row
            lo, hi = partition_bounds(year, month)
            try:
                with conn.transaction():
                    conn.execute(f"CREATE TABLE {name} PARTITION OF evo_agent_chunks "
                                 f"FOR VALUES FROM ('{lo}') TO ('{hi}')")
                made.append(name)
            except Exception as exc:  # noqa: BLE001 - rows of that month are in the default partition already
                say(f"partition {name} not created: {' '.join(str(exc).split())[:200]}")
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    if made:
        say(f"created partitions {made[0]} … {made[-1]}" if len(made) > 1 else f"created partition {made[0]}")
    return made


def _may_migrate(conn: Connection) -> bool:
    """Whether this role owns the tables (members with row rights only may not)."""
    row = conn.execute("SELECT c.relowner FROM pg_class c WHERE c.oid = to_regclass('evo_agent_sessions')").fetchone()
    if row is None:
        row = conn.execute("SELECT has_schema_privilege(current_schema(), 'CREATE')").fetchone()
    else:
        row = conn.execute("SELECT pg_has_role(current_user, %s::oid, 'USAGE')", (row[0],)).fetchone()
    return bool(row and row[0])


def _columns(conn: Connection) -> set[str]:
    rows = conn.execute("SELECT attname FROM pg_attribute WHERE attrelid = to_regclass('evo_agent_schema') "
                        "AND attnum > 0 AND NOT attisdropped").fetchall()
    return {r[0] for r in rows}


def _min_client(conn: Connection) -> int:
    """The store's `min_client` (a store without the column, or the value, admits no older client)."""
    if "min_client" not in _columns(conn):
        return 1 << 30
    row = conn.execute("SELECT max(min_client) FROM evo_agent_schema").fetchone()
    return int(row[0]) if row and row[0] is not None else 1 << 30


def _ready(conn: Connection) -> bool:
    if "ready" not in _columns(conn):
        return True
    row = conn.execute("SELECT bool_and(ready) FROM evo_agent_schema").fetchone()
    return bool(row and row[0])


def _current_version(conn: Connection) -> int | None:
    """The version, or None when the table does not exist yet."""
    row = conn.execute("SELECT to_regclass('evo_agent_schema')").fetchone()
    return _version(conn) if row and row[0] is not None else None


def _version(conn: Connection) -> int:
    row = conn.execute("SELECT max(version) FROM evo_agent_schema").fetchone()
    return int(row[0]) if row and row[0] is not None else 0
