"""A teammate's temporary tables never stand in for the store's own (SPEC §9: the store proves who reads what).

Any role may create temporary tables and views, and a role's temporary schema is searched before everything
else unless the search path names it. A function that resolves a name at run time through the caller's path
therefore reads what the caller planted. Real cluster: alice pushes a session of a repository bob was never
granted (with the real console script); bob, a member with row rights, connects with psycopg as a hostile
teammate would and plants a shadow. On a store as version 5 left it (the control) each payload reads alice's
words; on a migrated store none does.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest

from evo_agent.sync.db import connect
from evo_agent.sync.schema import MIGRATIONS

from .pgcluster import PgCluster, add_teammate
from .test_cli import team_cli

SECRET_REPO = "github.com/team/secret"
BOB_REPO = "github.com/team/app"
WORD = "zebrapassphrase"  # in alice's session only


def _pg_roles_view(bob: psycopg.Connection, sid: str) -> str:
    bob.execute("SET search_path = pg_temp, pg_catalog")
    bob.execute("CREATE TEMP VIEW pg_roles AS SELECT r.rolname, (SELECT oid FROM pg_catalog.pg_roles "
                "WHERE rolname = current_user) AS oid FROM pg_catalog.pg_roles r")
    rows = bob.execute("SELECT s.session_id, c.body FROM public.evo_agent_sessions s "
                       "JOIN public.evo_agent_chunks c USING (session_id)").fetchall()
    return repr(rows)


def _pg_roles_table_by_option(bob: psycopg.Connection, sid: str) -> str:
    bob.execute("SELECT set_config('search_path', 'pg_temp, pg_catalog, public', false)")
    bob.execute("CREATE TEMP TABLE pg_roles AS SELECT r.rolname, (SELECT oid FROM pg_catalog.pg_roles "
                "WHERE rolname = current_user) AS oid FROM pg_catalog.pg_roles r")
    return repr(bob.execute("SELECT body FROM public.evo_agent_chunks").fetchall())


def _fake_sessions_for_the_indexer(bob: psycopg.Connection, sid: str) -> str:
    bob.execute("CREATE TEMP TABLE evo_agent_sessions (session_id text, repo text, pushed_at timestamptz)")
    bob.execute("INSERT INTO pg_temp.evo_agent_sessions VALUES (%s, %s, 'infinity')", (sid, BOB_REPO))
    bob.execute("CREATE TEMP TABLE evo_agent_search_state (session_id text PRIMARY KEY, indexed_end bigint, "
                "indexed_at timestamptz)")
    bob.execute("SELECT public.evo_agent_index(NULL, 50)")
    return repr(bob.execute("SELECT tsv::text FROM public.evo_agent_search").fetchall())


def _progress_rows(bob: psycopg.Connection, sid: str) -> str:
    bob.execute("SELECT evo_agent_index(NULL, 50)")  # any role may drive the indexer: it runs as the owner
    return repr(bob.execute("SELECT session_id FROM evo_agent_search_state").fetchall())


PAYLOADS: dict[str, Callable[[psycopg.Connection, str], str]] = {
    "temp view pg_roles before pg_catalog": _pg_roles_view,
    "temp table pg_roles, path by set_config": _pg_roles_table_by_option,
    "temp evo_agent_sessions fed to the owner's indexer": _fake_sessions_for_the_indexer,
    "the indexer's progress rows": _progress_rows,
}


def as_version_5_left_it(url: str) -> None:
    """The control: the store's functions as versions 3 and 5 created them, the progress rows unguarded."""
    with psycopg.connect(url, autocommit=True) as admin:
        for version in (3, 5):
            for statement in MIGRATIONS[version]:
                if statement.lstrip().startswith("CREATE OR REPLACE FUNCTION"):
                    admin.execute(statement)
        admin.execute("ALTER TABLE evo_agent_search_state DISABLE ROW LEVEL SECURITY")


def alice_has_a_secret(tmp_path: Path, url: str) -> tuple[str, str]:
    """alice's session in a repository only she was granted, pushed (not indexed yet); (its id, bob's URL)."""
    tmp_path.mkdir()
    connect(url).close()
    _, alice_url = add_teammate(url, [SECRET_REPO])
    _, bob_url = add_teammate(url, [BOB_REPO])
    alice = team_cli(tmp_path, "alice", f"git@{SECRET_REPO.replace('/', ':', 1)}.git", alice_url)
    sid = alice.run("-p", f"the release passphrase is {WORD}").hint_id()
    return sid, bob_url


@pytest.mark.parametrize("payload", PAYLOADS)
def test_a_teammates_temporary_tables_never_open_another_repository(
        tmp_path: Path, pg_cluster: PgCluster, migrated_template: str, payload: str) -> None:
    attack = PAYLOADS[payload]
    old_url = pg_cluster.new_database(template=migrated_template)
    as_version_5_left_it(old_url)
    sid, bob_url = alice_has_a_secret(tmp_path / "old", old_url)
    with psycopg.connect(bob_url, autocommit=True) as bob:
        assert WORD not in repr(bob.execute("SELECT * FROM evo_agent_chunks").fetchall())  # not granted
        learned = attack(bob, sid)
    assert WORD in learned or sid in learned, learned  # the control: the payload is live against version 5

    url = pg_cluster.new_database(template=migrated_template)
    sid, bob_url = alice_has_a_secret(tmp_path / "new", url)
    with psycopg.connect(bob_url, autocommit=True) as bob:
        try:
            learned = attack(bob, sid)
        except psycopg.Error as exc:  # refused outright is as good as reading nothing
            learned = str(exc)
    assert WORD not in learned and sid not in learned, learned


def test_a_pruned_session_stays_refused_whatever_the_teammate_shadows(
        tmp_path: Path, pg_cluster: PgCluster, migrated_template: str) -> None:
    for url, live in ((pg_cluster.new_database(template=migrated_template), True),
                      (pg_cluster.new_database(template=migrated_template), False)):
        if live:
            as_version_5_left_it(url)
        connect(url).close()
        _, bob_url = add_teammate(url, [BOB_REPO])
        sid = "1796000000000_0badc0de"
        insert = ("INSERT INTO public.evo_agent_sessions (session_id, repo, user_name, host, created_ms, "
                  "updated_ms) VALUES (%s, %s, 'bob', 'h', 1, 1)")
        with psycopg.connect(bob_url, autocommit=True) as bob:
            bob.execute(insert, (sid, BOB_REPO))
        with psycopg.connect(url, autocommit=True) as admin:  # the admin prunes it: a tombstone
            admin.execute("DELETE FROM evo_agent_sessions WHERE session_id = %s", (sid,))
        with psycopg.connect(bob_url, autocommit=True) as bob:
            bob.execute("CREATE TEMP TABLE evo_agent_tombstones (session_id text)")
            try:
                bob.execute(insert, (sid, BOB_REPO))
                taken = True
            except psycopg.Error as exc:
                assert exc.sqlstate == "EA410", exc
                taken = False
        assert taken is live  # version 5 took it back; now the server refuses it
