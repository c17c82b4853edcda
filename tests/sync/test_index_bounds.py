"""One session can neither stall nor stop the derived search index for everyone (README "Team store": search).

The indexer used to read every session it took whole, in one transaction, sessions in push order: a chunk
bigger than any client sends (a teammate's own INSERT) failed every call on the same session, and a session
of a few hundred MB outlasted every client's deadline, so nothing pushed after it was ever indexed. Real
cluster, mallory pushing with psycopg as any member may; the control runs the same payload against the
indexer as version 5 left it.
"""

from __future__ import annotations

import hashlib
import json

import psycopg
import pytest

from evo_agent.sync.db import connect
from evo_agent.sync.schema import CHUNK_BYTES, INDEX_CALL_BYTES

from .pgcluster import PgCluster, add_teammate
from .test_cli import team_cli
from .test_shadowing import as_version_5_left_it

REPO = "github.com/team/app"
BIG = "1796000000000_00b16b16"


def _big_session(url: str) -> int:
    """mallory's session of 6 client-sized chunks of ordinary lines, the last saying `wombat`; its size."""
    line = json.dumps({"type": "user", "message": {"role": "user", "content": "alpha beta gamma delta " * 8}}) + "\n"
    last = json.dumps({"type": "user", "message": {"role": "user", "content": "wombat"}}) + "\n"
    bodies = [(line * (CHUNK_BYTES // len(line))).encode() for _ in range(5)] + [last.encode()]
    offset = 0
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("INSERT INTO evo_agent_sessions (session_id, repo, user_name, host, created_ms, updated_ms) "
                     "VALUES (%s, %s, 'mallory', 'h', 1, 1)", (BIG, REPO))
        for body in bodies:
            conn.execute("INSERT INTO evo_agent_chunks (session_id, file, start_offset, end_offset, checksum, body) "
                         "VALUES (%s, 'messages.jsonl', %s, %s, %s, %s)",
                         (BIG, offset, offset + len(body), hashlib.sha256(body).digest(), body))
            offset += len(body)
    return offset


def _store_with_two_members(pg_cluster: PgCluster, template: str, version: int) -> tuple[str, str, str]:
    """(the admin's url, mallory's, alice's) of a fresh store at `version` (5: as schema 5 left it, the control)
    with both members granted REPO."""
    url = pg_cluster.new_database(template=template)
    if version == 5:
        as_version_5_left_it(url)
    connect(url).close()
    _, mallory = add_teammate(url, [REPO])
    _, alice_url = add_teammate(url, [REPO])
    return url, mallory, alice_url


def _indexed_end(url: str) -> int:
    with psycopg.connect(url) as admin:
        row = admin.execute("SELECT indexed_end FROM evo_agent_search_state WHERE session_id = %s", (BIG,)).fetchone()
    return row[0] if row else 0


@pytest.mark.parametrize("version", [5, 6])
def test_one_call_of_the_indexer_reads_a_bounded_part_of_a_big_session(
        tmp_path, pg_cluster: PgCluster, migrated_template: str, version: int) -> None:
    url, mallory, alice_url = _store_with_two_members(pg_cluster, migrated_template, version)
    size = _big_session(mallory)
    alice = team_cli(tmp_path, "alice", "git@github.com:team/app.git", alice_url)
    sid = alice.run("-p", "the quokka migration").hint_id()
    with psycopg.connect(alice_url, autocommit=True) as conn:
        conn.execute("SELECT evo_agent_index(%s, 50)", (REPO,))
    if version == 5:  # the control: one call, one transaction, read the whole session
        assert _indexed_end(url) == size
        return
    assert 0 < _indexed_end(url) <= INDEX_CALL_BYTES + CHUNK_BYTES < size
    done = alice.run("sync", "index", timeout=300)  # call after call, each its own transaction, to the end
    assert done.rc == 0 and "the search index is up to date" in done.out, done.out + done.err
    assert _indexed_end(url) == size
    for word, session in (("wombat", BIG), ("quokka", sid)):
        found = alice.run("sessions", "search", "--remote", word)
        assert found.rc == 0 and session in found.out and "not indexed yet" not in found.out, found.out + found.err


@pytest.mark.parametrize("version", [5, 6])
def test_a_chunk_bigger_than_any_client_sends_never_stops_the_index(
        tmp_path, pg_cluster: PgCluster, migrated_template: str, version: int) -> None:
    url, mallory, alice_url = _store_with_two_members(pg_cluster, migrated_template, version)
    with psycopg.connect(mallory, autocommit=True) as conn:  # 260 MB in one row, made by the server itself
        # The same row, made in ~1.5 s rather than ~8: the body computed once (an inlined CTE made it three times),
        # 260 copies of 1 MB (not 272 million of one byte), squeezed by lz4 (any session may choose it).
        conn.execute("SET default_toast_compression = lz4")
        conn.execute("INSERT INTO evo_agent_sessions (session_id, repo, user_name, host, created_ms, updated_ms) "
                     "VALUES (%s, %s, 'mallory', 'h', 1, 1)", (BIG, REPO))
        conn.execute("WITH x AS MATERIALIZED (SELECT convert_to(repeat(repeat('x', 1 << 20), 260) || E'\\n', 'UTF8') "
                     "AS body) "
                     "INSERT INTO evo_agent_chunks (session_id, file, start_offset, end_offset, checksum, body) "
                     "SELECT %s, 'messages.jsonl', 0, octet_length(body), sha256(body), body FROM x", (BIG,))
    alice = team_cli(tmp_path, "alice", "git@github.com:team/app.git", alice_url)
    sid = alice.run("-p", "the quokka migration").hint_id()
    done = alice.run("sync", "index", timeout=300)
    assert "Traceback" not in done.err
    found = alice.run("sessions", "search", "--remote", "quokka")
    assert "Traceback" not in found.err
    if version == 5:  # the control: every call fails on mallory's row, so alice's session is never indexed
        assert done.rc == 1 and len(done.err_lines) == 1 and "memory alloc" in done.err, done.err
        assert sid not in found.out and "not indexed yet" in found.out, found.out + found.err
        return
    assert done.rc == 0 and "the search index is up to date" in done.out, done.out + done.err
    assert found.rc == 0 and sid in found.out, found.out + found.err
