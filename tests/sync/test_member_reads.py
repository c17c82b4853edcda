"""A member's push and fetch read their own session's rows, not every session in the store ("scales", SPEC §10).

The chunk table's session ids are `COLLATE "C"` (its month partitions are ranges of ids) and the sessions' are
the database's collation: the chunk policies' `s.session_id = evo_agent_chunks.session_id` compared in "C", which
the sessions' primary key cannot answer, so PostgreSQL checked every chunk a member reads against a hash of
*every session the member may read*, built anew by each statement. Every push's offsets query, every page of a
fetch and every search snippet of a member (one role per person, README "Team store") read the whole sessions
table: with 50,000 sessions, 0.4 s a statement (a search: 7.8 s), growing with the store. Real cluster; rows
read are counted by PostgreSQL itself (pg_stat_xact_user_tables), never timed. The control: the owner, whom no
policy binds.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from evo_agent.session import MESSAGES_NAME
from evo_agent.sync.db import connect
from evo_agent.sync.push import verified_offsets
from evo_agent.sync.remote import fetch_session, store_ends

from .pgcluster import add_teammate

REPO = "github.com/team/app"
SESSIONS = 2000

_GEN = """
INSERT INTO evo_agent_sessions (session_id, repo, subdir, user_name, host, created_ms, updated_ms, message_count)
SELECT (1796000000000 + s * 10)::text || '_' || lpad(to_hex(s), 8, '0'), %(repo)s, '', 'u', 'h',
       1796000000000 + s * 10, 1796000000000 + s * 10, 1
FROM generate_series(0, %(n)s - 1) s"""
_GEN_CHUNKS = """
INSERT INTO evo_agent_chunks (session_id, file, start_offset, end_offset, checksum, body)
SELECT session_id, 'messages.jsonl', 0, octet_length(b), sha256(b), b FROM (
  SELECT session_id, convert_to('{"type":"user","message":{"role":"user","content":"hi"}}' || E'\\n', 'UTF8') AS b
  FROM evo_agent_sessions) x"""


@pytest.fixture
def big_store(sync_url: str) -> tuple[str, str]:
    """(the owner's URL, a member's URL): SESSIONS sessions of one line in a repository granted to the member."""
    with connect(sync_url) as conn:
        conn.execute(_GEN, {"n": SESSIONS, "repo": REPO})
        conn.execute(_GEN_CHUNKS)
        conn.execute("VACUUM ANALYZE")
    return sync_url, add_teammate(sync_url, [REPO])[1]


def _sessions_read(url: str, directory: Path) -> int:
    """Rows of evo_agent_sessions read by one fetch and one push's offsets query, as `url`'s role."""
    sid = f"{1796000000000 + 10 * 7}_{7:08x}"
    with connect(url) as conn, conn.transaction():
        copy = fetch_session(conn, sid, directory)
        assert (copy / MESSAGES_NAME).read_bytes().count(b"\n") == 1
        assert store_ends(conn, sid) == {MESSAGES_NAME: 57}
        assert verified_offsets(conn, sid, copy, {MESSAGES_NAME: 57}) == {MESSAGES_NAME: 57}
        (rows,) = conn.execute("SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) "
                               "FROM pg_stat_xact_user_tables WHERE relname = 'evo_agent_sessions'").fetchone()
    return int(rows)


@pytest.mark.parametrize("who", ["member", "owner (the control)"])
def test_a_members_push_and_fetch_read_their_session_not_the_store(big_store: tuple[str, str], tmp_path: Path,
                                                                    who: str) -> None:
    owner, member = big_store
    read = _sessions_read(member if who == "member" else owner, tmp_path)
    assert read < 100, read  # a handful of probes by primary key, not SESSIONS rows per statement


def _grants_read(url: str) -> int:
    """Rows of evo_agent_access read while resolving an id prefix and listing one user's sessions, as `url`'s role."""
    from evo_agent.sync.identity import Identity
    from evo_agent.sync.remote import list_remote, resolve_remote

    identity = Identity(repo=REPO, subdir="", user="u", host="h")
    with connect(url) as conn, conn.transaction():
        assert resolve_remote(conn, identity, "1796000000070").id == f"{1796000000000 + 70}_{7:08x}"
        assert list_remote(conn, identity, user="nobody") == []
        (rows,) = conn.execute("SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) "
                               "FROM pg_stat_xact_user_tables WHERE relname = 'evo_agent_access'").fetchone()
    return int(rows)


@pytest.mark.parametrize("who", ["member", "owner (the control)"])
def test_a_members_grants_are_read_once_per_statement_not_once_per_session(big_store: tuple[str, str],
                                                                           who: str) -> None:
    """The sessions' read policy asked `evo_agent_access` once per session row (a correlated subplan): resolving an
    id prefix for `--resume` and `list --remote --user` walk a repository's sessions, so with 50,000 of them a
    member waited 132 ms and 440 ms where the owner waits 9 and 13."""
    owner, member = big_store
    assert _grants_read(member if who == "member" else owner) < 20
