"""A teammate's function never runs as you (SPEC §9: the store proves who wrote what).

PostgreSQL 14 and older let every role create objects in schema `public` (15 revoked it). There a member
can overload a function evo-agent's own queries call — `plainto_tsquery(text, text)` wins over
pg_catalog's `(regconfig, text)` for `plainto_tsquery('simple', …)` — and its body runs as whoever
searches: alice's role, writing rows the server then records as alice's. `sync migrate` now revokes that
right, and a client refuses, in one line, a store where a role other than its owner still has it. Real
cluster, `public` opened as 14 leaves it; the control calls the trapped function as alice directly.
"""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from evo_agent.sync.db import connect

from .pgcluster import add_teammate
from .test_cli import team_cli

REPO = "github.com/team/app"
FORGED = "1796000000000_f0f0f0f0"
TRAP = f"""CREATE FUNCTION {{schema}}.plainto_tsquery(config text, query text) RETURNS tsquery LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO public.evo_agent_sessions (session_id, repo, user_name, host, created_ms, updated_ms, first_prompt)
    VALUES ('{FORGED}', '{REPO}', 'alice', 'h', 1, 1, 'push to prod') ON CONFLICT DO NOTHING;
  RETURN pg_catalog.plainto_tsquery(config::regconfig, query);
END $$"""


def _forged_author(url: str) -> str | None:
    with psycopg.connect(url) as admin:
        row = admin.execute("SELECT author FROM evo_agent_sessions WHERE session_id = %s", (FORGED,)).fetchone()
    return row[0] if row else None


@pytest.mark.parametrize("grantee", ["PUBLIC", "evo_agent_member", "bob", "a schema on alice's path"])
def test_a_members_overload_never_runs_as_the_one_who_searches(tmp_path: Path, sync_url: str, grantee: str) -> None:
    connect(sync_url).close()
    alice_role, alice_url = add_teammate(sync_url, [REPO])
    bob_role, bob_url = add_teammate(sync_url, [REPO])
    alice = team_cli(tmp_path, "alice", "git@github.com:team/app.git", alice_url)
    alice.run("-p", "the quokka migration").hint_id()
    schema = "public"
    with psycopg.connect(sync_url, autocommit=True) as admin:  # as PostgreSQL 14 and older leave `public`
        if grantee.startswith("a schema"):  # or a scratch schema everyone may use, first on alice's path
            schema = "scratch"
            admin.execute("CREATE SCHEMA scratch")
            admin.execute("GRANT USAGE, CREATE ON SCHEMA scratch TO PUBLIC")
            admin.execute(f"ALTER ROLE {alice_role} SET search_path = scratch, public")
        else:
            admin.execute(f"GRANT CREATE ON SCHEMA public TO {bob_role if grantee == 'bob' else grantee}")
    with psycopg.connect(bob_url, autocommit=True) as bob:
        bob.execute(TRAP.replace("{schema}", schema))
    with psycopg.connect(alice_url, autocommit=True) as conn:  # the control: the very call a search makes
        conn.execute("SELECT plainto_tsquery('simple', 'x')")
    assert _forged_author(sync_url) == alice_role  # the trap is live: the server says alice wrote it
    with psycopg.connect(sync_url, autocommit=True) as admin:
        admin.execute("DELETE FROM evo_agent_sessions WHERE session_id = %s", (FORGED,))
        admin.execute("DELETE FROM evo_agent_tombstones WHERE session_id = %s", (FORGED,))

    for args in (("sessions", "search", "--remote", "quokka"), ("sessions", "list", "--remote"),
                 ("sessions", "push", "--all")):
        refused = alice.run(*args)
        assert refused.rc == 1 and len(refused.err_lines) == 1 and "Traceback" not in refused.err, refused.err
        assert f"REVOKE CREATE ON SCHEMA {schema} FROM PUBLIC" in refused.err
        assert {"PUBLIC": "every role: PUBLIC", "bob": bob_role, "evo_agent_member": "evo_agent_member"}.get(
            grantee, "every role: PUBLIC") in refused.err
    assert _forged_author(sync_url) is None
    carried_on = alice.run("-p", "work goes on locally")  # the agent itself: one warning, nothing pushed
    assert carried_on.rc == 0 and "REVOKE CREATE" in carried_on.err
    assert _forged_author(sync_url) is None


def test_migrate_closes_the_schema(tmp_path: Path, empty_url: str) -> None:
    with psycopg.connect(empty_url, autocommit=True) as admin:
        admin.execute("GRANT CREATE ON SCHEMA public TO PUBLIC")
    admin_cli = team_cli(tmp_path, "admin", "git@github.com:team/app.git", empty_url)
    made = admin_cli.run("sync", "migrate", timeout=120)
    assert made.rc == 0 and "warning" not in made.out, made.out + made.err
    _, url = add_teammate(empty_url, [REPO])
    with psycopg.connect(url, autocommit=True) as member:
        assert member.execute("SELECT has_schema_privilege('public', 'CREATE')").fetchone() == (False,)
    mate = team_cli(tmp_path, "mate", "https://github.com/team/app", url)
    assert mate.run("sessions", "list", "--remote").rc == 0


def test_the_schemas_own_owner_is_an_admin_not_a_teammate(tmp_path: Path, sync_url: str) -> None:
    """A database owned by a role that is not the tables' (PostgreSQL 15 gives it CREATE in `public` through
    pg_database_owner): clients still use the store."""
    connect(sync_url).close()
    dbname = sync_url.rsplit("/", 1)[1]
    with psycopg.connect(sync_url, autocommit=True) as admin:
        dba = f"dba_{dbname}"  # roles are the cluster's: one name per database
        admin.execute(f"CREATE ROLE {dba} NOLOGIN")
        admin.execute(f'ALTER DATABASE "{dbname}" OWNER TO {dba}')
    _, url = add_teammate(sync_url, [REPO])
    mate = team_cli(tmp_path, "mate", "https://github.com/team/app", url)
    listed = mate.run("sessions", "list", "--remote")
    assert listed.rc == 0, listed.err
