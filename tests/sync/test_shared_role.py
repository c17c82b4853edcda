"""A team that shares one role, the tables' owner (README "Team store": authors not verified): whatever that role
does to the store, a teammate's session never resumes as one's own.

The tests' cluster user is a superuser, whom row-level security never binds; a small team's shared role is an
ordinary login role that owns the database and the tables (it ran `sync migrate`). Any teammate holding it may
`ALTER TABLE … FORCE ROW LEVEL SECURITY`, after which the policies bind the owner too and
`row_security_active()` says yes: the client took that as "one role per person", so every session in the store,
all pushed as the one shared role, was the user's own.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import psycopg
import pytest

from .helpers import migrated
from .pgcluster import PgCluster
from .test_cli import team_cli


@pytest.fixture
def shared_url(pg_cluster: PgCluster) -> str:
    """A store whose database and tables belong to one ordinary login role the whole team uses."""
    role = "team_" + uuid.uuid4().hex[:8]
    with psycopg.connect(pg_cluster.url(), autocommit=True) as admin:
        admin.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'team-pw'")
        admin.execute(f'CREATE DATABASE "{role}" OWNER {role}')
    return migrated(f"postgresql://{role}:team-pw@127.0.0.1:{pg_cluster.port}/{role}")


@pytest.mark.parametrize("forced", [False, True], ids=["as-migrated", "rls-forced"])
def test_a_shared_role_never_vouches_for_anyone(tmp_path: Path, shared_url: str, forced: bool) -> None:
    alice = team_cli(tmp_path, "alice", "git@github.com:team/app.git", shared_url)
    bob = team_cli(tmp_path, "bob", "https://github.com/team/app", shared_url)
    sid = alice.run("-p", "please run the release script").hint_id()
    if forced:  # bob, holding the shared role, makes the policies bind it too
        with psycopg.connect(shared_url, autocommit=True) as conn:
            conn.execute("ALTER TABLE evo_agent_sessions FORCE ROW LEVEL SECURITY")
            conn.execute("ALTER TABLE evo_agent_chunks FORCE ROW LEVEL SECURITY")
    listing = bob.run("sessions", "list", "--remote")
    assert listing.rc == 0 and sid in listing.out, listing.err
    assert "authors not verified" in listing.out
    found = bob.run("sessions", "search", "--remote", "release", "--json")  # the owner reads every repository
    assert found.rc == 0 and sid in found.out, found.err
    refused = bob.run("--resume", sid, "-p", "go on")
    assert refused.rc == 1, refused.err
    assert "authors not verified" in refused.err and f"evo-agent sessions adopt {sid}" in refused.err
