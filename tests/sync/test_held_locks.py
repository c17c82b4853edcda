"""A lock another client holds on the store's tables is named in one line, and no command waits for it long.

Any member may `LOCK TABLE` a table it may UPDATE or DELETE from (the sessions, the chunks) and keep it in a
transaction it never ends; so can an admin's migration or a forgotten psql. Each command used to give up after
its idle window with "the server sent nothing" (as if the network were down), and a search whose index
catch-up had given up that way said only "the connection is closed". Real cluster, mallory's own psycopg
connection holding the lock; bob runs the real console script. The control: the same commands once it is gone.
"""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from .test_cli import team_cli
from .test_poison_rows import members, push_raw, record, user_line

THEIRS = "1796000000000_10c4ed00"


@pytest.mark.parametrize("table", ["evo_agent_sessions", "evo_agent_chunks"])
def test_a_lock_held_by_another_client_is_named_in_one_line(tmp_path: Path, sync_url: str, table: str) -> None:
    _, mallory, bob_url = members(sync_url)
    push_raw(mallory, THEIRS, [record(THEIRS, type="session_start", model="m", provider="demo"),
                               user_line(THEIRS, "the wombat plan")])
    bob = team_cli(tmp_path, "bob", "https://github.com/team/app", bob_url, EVO_AGENT_SYNC_TIMEOUT="4")
    commands = {"list": ("sessions", "list", "--remote"), "search": ("sessions", "search", "--remote", "wombat"),
                "push": ("sessions", "push", "--all"), "resume": ("--resume", THEIRS, "-p", "go on"),
                "a turn": ("-p", "while it is held")}
    holder = psycopg.connect(mallory)  # her transaction, never ended while the commands run
    try:
        holder.execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")
        assert bob.run("-p", "bob's own work", env={**bob.env, "EVO_AGENT_SYNC_URL": ""}).rc == 0  # to push
        said = {name: bob.run(*args, timeout=120) for name, args in commands.items()}
    finally:
        holder.close()
    for name, done in said.items():
        assert "Traceback" not in done.err, (name, done.err)
        if done.rc != 0 or (done.err.strip() and name != "resume"):  # a search without hits says it on stdout
            assert "holds a lock on the team store's tables" in done.err + done.out, (name, done.err)
            assert len(done.err_lines) <= (2 if name == "a turn" else 1), (name, done.err)  # + the exit hint
    assert said["push"].rc == 1 and said["search"].rc == 1, {n: d.err for n, d in said.items()}
    for name, args in commands.items():  # the control: the lock is gone
        done = bob.run(*args, timeout=120)
        assert done.rc == (1 if name == "resume" else 0) and "lock" not in done.err, (name, done.err)
