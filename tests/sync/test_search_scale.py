"""A member's remote search reads the hits, not the whole store ("search that scales", SPEC §10).

Row-level security binds a member (one role per person, README "Team store") and its policies are not
leakproof, so PostgreSQL may not use `tsv @@ query` as an index condition below them: a member's search ran as a
sequential scan of every repository's index rows, each row checked against the policy's correlated subplans.
With 50,000 sessions of two messages (benchmarks/RESULTS.md), `sessions search --remote` for a word in no line
took a member 0.6 s and one for a common word 7.8 s (the tables' owner: 0.5 ms and 120 ms), growing with the
whole store, past the clients' 30 s idle window a few hundred thousand sessions on. Real cluster; the tables
read are counted by PostgreSQL itself (pg_stat_xact_user_tables), never timed. The control: the owner's search.
"""

from __future__ import annotations

import psycopg
import pytest

from evo_agent.sync.db import connect
from evo_agent.sync.identity import Identity
from evo_agent.sync.remote import refresh_index, search_remote, unindexed

from .pgcluster import add_teammate

REPO = "github.com/team/app"
SESSIONS = 1500  # per repository, two of them: 6,000 index rows

_GEN = """
INSERT INTO evo_agent_sessions (session_id, repo, subdir, user_name, host, created_ms, updated_ms, message_count)
SELECT (1796000000000 + s * 10)::text || '_' || lpad(to_hex(s), 8, '0'), r, '', 'u', 'h',
       1796000000000 + s * 10, 1796000000000 + s * 10, 2
FROM generate_series(0, %(n)s - 1) s, (VALUES (%(repo)s), ('github.com/other/thing')) v(r)
WHERE (r = %(repo)s) = (s %% 2 = 0)"""
_GEN_CHUNKS = """
INSERT INTO evo_agent_chunks (session_id, file, start_offset, end_offset, checksum, body)
SELECT session_id, 'messages.jsonl', 0, octet_length(b), sha256(b), b FROM (
  SELECT session_id, convert_to(
           '{"type":"user","message":{"role":"user","content":"fix the uploads w' || right(session_id, 4) || '"}}'
           || E'\\n' || '{"type":"assistant","message":{"role":"assistant","content":"uploads fixed"}}' || E'\\n',
           'UTF8') AS b
  FROM evo_agent_sessions) x
"""


@pytest.fixture
def big_store(sync_url: str) -> tuple[str, str]:
    """(the owner's URL, a member's URL): two repositories of SESSIONS sessions each, indexed and analysed."""
    with connect(sync_url) as conn:
        conn.execute(_GEN, {"n": 2 * SESSIONS, "repo": REPO})
        conn.execute(_GEN_CHUNKS)
        while refresh_index(conn, None, budget_s=600, batch=1000):
            pass
        conn.execute("VACUUM ANALYZE")
    return sync_url, add_teammate(sync_url, [REPO])[1]


def _reads(url: str, text: str) -> tuple[int, int]:
    """(hits, rows read from the store's tables) of one search and its pending count, as `url`'s role."""
    identity = Identity(repo=REPO, subdir="", user="u", host="h")
    with connect(url) as conn, conn.transaction():
        hits = search_remote(conn, identity, text, limit=20)
        assert unindexed(conn, REPO) == 0
        (rows,) = conn.execute("SELECT sum(coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0))::bigint "
                               "FROM pg_stat_xact_user_tables WHERE relname LIKE 'evo\\_agent\\_%'").fetchone()
    return len(hits), int(rows)


@pytest.mark.parametrize("text", ["w00a4", "zebra", "uploads"])
def test_a_members_search_reads_what_the_owners_does(big_store: tuple[str, str], text: str) -> None:
    owner, member = big_store
    hits, read = _reads(member, text)
    control, owner_read = _reads(owner, text)  # bound by no policy: the indexes the search was made for
    assert hits == control == {"w00a4": 1, "zebra": 0, "uploads": 20}[text]
    assert read <= 2 * owner_read + 100, (read, owner_read)


def test_a_member_reads_no_hits_of_a_repository_not_granted(big_store: tuple[str, str], sync_url: str) -> None:
    _, outsider = add_teammate(sync_url, ["github.com/else/where"])
    assert _reads(outsider, "uploads")[0] == 0
    with psycopg.connect(outsider) as conn:
        assert conn.execute("SELECT count(*) FROM evo_agent_search").fetchone() == (0,)


FUTURE = 500  # sessions whose ids claim the year 2286, every line holding the common word


def _index_rows_read(url: str, text: str) -> tuple[list[str], int]:
    """(the hits' session ids, rows of evo_agent_search read) of one search, as `url`'s role."""
    identity = Identity(repo=REPO, subdir="", user="u", host="h")
    with connect(url) as conn, conn.transaction():
        hits = [h.session.id for h in search_remote(conn, identity, text, limit=20)]
        (rows,) = conn.execute("SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) "
                               "FROM pg_stat_xact_user_tables WHERE relname = 'evo_agent_search'").fetchone()
    return hits, int(rows)


@pytest.mark.parametrize("who", ["member", "owner"])
@pytest.mark.parametrize("text", ["uploads", "w00a4 uploads"], ids=["common word", "rare word (the control)"])
def test_a_common_word_reads_about_as_many_index_rows_as_it_shows(big_store: tuple[str, str], who: str,
                                                                  text: str) -> None:
    """The newest hits of a word in every line came from sorting every match: sessions whose ids claim the future
    sort after the rest (a member's flood of them must not crowd the hits), and that sort key came first, so no
    index gave the order and the search read every matching row (the owner, 50,000 sessions: 71 ms against 0.05 ms
    walking the ids backwards, growing with the repository). Now the ids up to the cutoff are walked newest first,
    and the ones beyond it only when those run out; a flood of future ids, all matching, is never walked."""
    owner, member = big_store
    with connect(owner) as conn:
        conn.execute(_GEN.replace("1796000000000 + s * 10)::text", "9999999000000 + s)::text")
                     .replace("(r = %(repo)s) = (s %% 2 = 0)", "r = %(repo)s"), {"n": FUTURE, "repo": REPO})
        conn.execute(_GEN_CHUNKS.replace("FROM evo_agent_sessions) x", "FROM evo_agent_sessions "
                                         "WHERE session_id >= '9') x"))
        while refresh_index(conn, None, budget_s=600, batch=1000):
            pass
        conn.execute("VACUUM ANALYZE")
    hits, read = _index_rows_read(member if who == "member" else owner, text)
    if text == "uploads":
        assert len(hits) == 20 and not any(h.startswith("9") for h in hits), hits
        assert read <= 100, read  # about the 20 shown, never the 1,500 matches nor the 500 future ones
    else:  # the future one last
        assert hits == [f"{1796000000000 + 0xa4 * 10}_{0xa4:08x}", f"{9999999000000 + 0xa4}_{0xa4:08x}"]
        assert read <= 100, read
