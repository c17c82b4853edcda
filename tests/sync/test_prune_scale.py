"""Retention works on a big store: `prune --remote` of thousands of sessions completes (SPEC §10, "scales").

prune_remote read the sessions to delete, then, inside its transaction, split them into the role's own and the
others' with `r not in mine` — a list search per row, quadratic: 50,000 sessions meant billions of comparisons,
and the server ended the transaction it was holding open (idle_in_transaction_session_timeout) long before the
client came back to delete, so a repository past a few thousand old sessions could never be pruned by anyone.
Real cluster, the sessions written with the member's own SQL; the control: a prune of a handful.
"""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from evo_agent.sync.db import connect

from .pgcluster import add_teammate
from .test_cli import team_cli

REPO = "github.com/team/app"

_GEN = """
INSERT INTO evo_agent_sessions (session_id, repo, subdir, user_name, host, created_ms, updated_ms, message_count)
SELECT (1700000000000 + s * 10)::text || '_' || lpad(to_hex(s), 8, '0'), %(repo)s, '', 'u', 'h',
       1700000000000 + s * 10, 1700000000000 + s * 10, 1
FROM generate_series(0, %(n)s - 1) s"""


@pytest.mark.parametrize("sessions", [8000, 5], ids=["thousands", "a handful (the control)"])
def test_prune_of_thousands_of_sessions_completes(tmp_path: Path, sync_url: str, sessions: int) -> None:
    connect(sync_url).close()
    _, mate = add_teammate(sync_url, [REPO])
    with psycopg.connect(mate, autocommit=True) as conn:  # her own old sessions, as any member may write them
        conn.execute(_GEN, {"n": sessions, "repo": REPO})
    cli = team_cli(tmp_path, "mate", "https://github.com/team/app", mate, EVO_AGENT_SYNC_TIMEOUT="1")
    pruned = cli.run("sessions", "prune", "--remote", "--older-than", "1d", timeout=300)
    assert pruned.rc == 0 and "Traceback" not in pruned.err, pruned.err[-500:]
    assert f"deleted {sessions} sessions from the team store" in pruned.out, pruned.out[-500:]
    with psycopg.connect(sync_url) as admin:
        assert admin.execute("SELECT count(*) FROM evo_agent_sessions").fetchone() == (0,)
        assert admin.execute("SELECT count(*) FROM evo_agent_tombstones").fetchone() == (sessions,)
