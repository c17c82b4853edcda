"""A member's held locks and timestamps never stop the search index for the rest of the team.

The indexer took up to 50 sessions per call, oldest `pushed_at` first, and skipped one whose advisory lock
another indexer holds. Any role may take advisory locks (they are not privileges), and a member may UPDATE
the `pushed_at` of her own rows: mallory's 50 sessions, pushed first (or dated first), each with its lock held
by an idle connection of hers, filled every call's batch with sessions skipped, so every call indexed nothing
and nothing pushed after them became searchable, for anyone. Real cluster; mallory writes her rows with psycopg
as any member may; alice and bob run the real console script. The control: the same sessions, no lock held.
"""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest

from evo_agent.sync.schema import _LOCK_KEY

from .test_cli import team_cli
from .test_poison_rows import members, push_raw, user_line

FLOOD = 60  # more than one indexer call's batch (50)


def _flood(mallory: str) -> list[str]:
    ids = [f"1796000000000_f1{i:06x}" for i in range(FLOOD)]
    for sid in ids:
        push_raw(mallory, sid, [user_line(sid, "nothing to see")])
    return ids


@pytest.mark.parametrize("hold", ["advisory locks", "deletes held open", "nothing (the control)"])
def test_what_a_member_holds_never_starves_the_index(tmp_path: Path, sync_url: str, hold: str) -> None:
    _, mallory, bob_url = members(sync_url)
    ids = _flood(mallory)
    holder = psycopg.connect(mallory, autocommit=True)
    try:
        if hold == "advisory locks":
            for sid in ids:  # session-level advisory locks: kept while her connection idles
                holder.execute("SELECT pg_advisory_lock(hashtextextended(%s, %s))", (sid, _LOCK_KEY))
        elif hold == "deletes held open":  # her right, in a transaction she never ends
            holder.execute("BEGIN")
            holder.execute("DELETE FROM evo_agent_sessions WHERE session_id = ANY(%s)", (ids,))
        with pytest.raises(psycopg.errors.InsufficientPrivilege), \
                psycopg.connect(mallory, autocommit=True) as other:  # the indexer's own claim is not hers
            other.execute("SELECT 1 FROM evo_agent_search_state FOR UPDATE")
        alice = team_cli(tmp_path, "alice", "git@github.com:team/app.git", sync_url)
        real = alice.run("-p", "the wombat migration plan").hint_id()
        bob = team_cli(tmp_path, "bob", "https://github.com/team/app", bob_url, EVO_AGENT_SYNC_TIMEOUT="5")
        found = bob.run("sessions", "search", "--remote", "wombat", "--json", timeout=120)
        assert found.rc == 0 and "Traceback" not in found.err, found.err
        assert real in {hit["id"] for hit in json.loads(found.out)}
        indexed = bob.run("sync", "index", timeout=120)
        assert indexed.rc == 0 and "Traceback" not in indexed.err, indexed.err
        assert indexed.out.count("\n") == 1
    finally:
        holder.close()


def test_a_members_pushed_at_is_the_servers_word(sync_url: str) -> None:
    """`pushed_at` orders the indexer's work: a member dating her rows first (or last) is not taken at her word."""
    _, mallory, _ = members(sync_url)
    sid = "1796000000000_da7ed000"
    push_raw(mallory, sid, [user_line(sid, "dated")])
    with psycopg.connect(mallory, autocommit=True) as conn:
        for claim in ("-infinity", "1970-01-01", "infinity"):
            conn.execute("UPDATE evo_agent_sessions SET pushed_at = %s WHERE session_id = %s", (claim, sid))
            late = conn.execute("SELECT pushed_at > now() - interval '1 hour' AND pushed_at <= now() "
                                "FROM evo_agent_sessions WHERE session_id = %s", (sid,)).fetchone()[0]
            assert late, claim
        conn.execute("INSERT INTO evo_agent_sessions (session_id, repo, user_name, host, created_ms, updated_ms, "
                     "pushed_at) VALUES ('1796000000000_da7ed001', 'github.com/team/app', 'm', 'h', 1, 1, "
                     "'-infinity')")
        assert conn.execute("SELECT pushed_at > now() - interval '1 hour' FROM evo_agent_sessions "
                            "WHERE session_id = '1796000000000_da7ed001'").fetchone()[0]


def test_a_lock_timeout_never_marks_a_session_indexed(tmp_path: Path, sync_url: str) -> None:
    """The indexer takes an error inside a session for a poison line and marks it indexed to its end; one of the
    moment (clients now set a lock_timeout) is not one: the call fails, the session stays pending and is found
    once the lock is gone. A member drives the indexer with her own short lock_timeout here."""
    _, mallory, bob_url = members(sync_url)
    alice = team_cli(tmp_path, "alice", "git@github.com:team/app.git", sync_url)
    real = alice.run("-p", "the wombat migration plan").hint_id()
    holder = psycopg.connect(mallory)
    try:
        holder.execute("LOCK TABLE evo_agent_chunks IN ACCESS EXCLUSIVE MODE")
        with psycopg.connect(mallory, autocommit=True) as driver:
            driver.execute("SET lock_timeout = '50ms'")
            with pytest.raises(psycopg.errors.LockNotAvailable):
                driver.execute("SELECT evo_agent_index(NULL, 1000)")
    finally:
        holder.close()
    bob = team_cli(tmp_path, "bob", "https://github.com/team/app", bob_url)
    found = bob.run("sessions", "search", "--remote", "wombat", "--json", timeout=120)
    assert found.rc == 0 and real in {hit["id"] for hit in json.loads(found.out)}, (found.out, found.err)
