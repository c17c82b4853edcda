"""The store run like a service: an admin migrates, clients need row rights only, search is derived."""

from __future__ import annotations

from pathlib import Path

import psycopg

from evo_agent.sync.schema import SCHEMA_VERSION
from tests.cli_runner import Cli

from .helpers import complete_line_count, line_rows
from .pgcluster import add_teammate
from .test_cli import team_cli


def sync(cli: Cli, *args: str):  # noqa: ANN201
    return cli.run("sync", *args, timeout=120)


def test_the_admin_migrates_and_a_member_with_row_rights_pushes(tmp_path: Path, empty_url: str) -> None:
    admin = team_cli(tmp_path, "admin", "git@github.com:team/app.git", empty_url)
    early = admin.run("sessions", "push", "--all")
    assert early.rc == 1 and len(early.err_lines) == 1 and "evo-agent sync migrate" in early.err, early.err
    made = sync(admin, "migrate")
    assert made.rc == 0 and f"schema version {SCHEMA_VERSION} (created)" in made.out and "concurrently" in made.out, made.err
    again = sync(admin, "migrate")
    assert again.rc == 0 and "building index" not in again.out  # nothing left to do
    role, url = add_teammate(empty_url, ["github.com/team/app"])
    mate = team_cli(tmp_path, "mate", "https://github.com/team/app", url)
    sid = mate.run("-p", "a member's work").hint_id()
    assert line_rows(empty_url, sid) == complete_line_count(mate.transcript(sid))
    found = mate.run("sessions", "search", "--remote", "member's")  # the index catches up as the owner
    assert found.rc == 0 and sid in found.out, found.out + found.err
    refused = sync(mate, "migrate")  # row rights only: the schema is not the member's to change
    assert refused.rc == 1 and len(refused.err_lines) == 1 and "does not own" in refused.err, refused.err
    with psycopg.connect(url, autocommit=True) as conn:
        for ddl in ("CREATE TABLE evo_agent_x (a int)", "DROP TABLE evo_agent_tombstones",
                    "CREATE INDEX evo_agent_y ON evo_agent_chunks (file)"):
            try:
                conn.execute(ddl)
            except psycopg.errors.InsufficientPrivilege:
                continue
            raise AssertionError(f"a member ran {ddl}")


def test_a_client_older_than_the_store_admits_says_what_to_do(tmp_path: Path, sync_url: str) -> None:
    with psycopg.connect(sync_url, autocommit=True) as conn:
        conn.execute("UPDATE evo_agent_schema SET version = %s, min_client = %s", (SCHEMA_VERSION + 2, SCHEMA_VERSION + 1))
    old = team_cli(tmp_path, "old", "git@github.com:team/app.git", sync_url)
    for args in (("sessions", "list", "--remote"), ("sessions", "push", "--all")):
        done = old.run(*args)
        assert done.rc == 1 and len(done.err_lines) == 1 and "upgrade evo-agent" in done.err, done.err
    ran = old.run("-p", "work goes on locally")  # the agent itself carries on: one warning, nothing pushed
    assert ran.rc == 0 and "upgrade evo-agent" in ran.err


def test_search_is_never_on_the_push_path(tmp_path: Path, sync_url: str) -> None:
    alice = team_cli(tmp_path, "alice", "git@github.com:team/app.git", sync_url)
    sid = alice.run("-p", "the flaky upload retries").hint_id()
    with psycopg.connect(sync_url, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM evo_agent_search").fetchone() == (0,)  # pushed, not indexed
        conn.execute("DROP FUNCTION evo_agent_index(text, integer)")  # the index job broken
    later = alice.run("-p", "pushed all the same").hint_id()
    assert line_rows(sync_url, sid) + line_rows(sync_url, later) == (
        complete_line_count(alice.transcript(sid)) + complete_line_count(alice.transcript(later)))
    found = alice.run("sessions", "search", "--remote", "upload")
    assert found.rc == 1 and "2 sessions not indexed yet" in found.out and "Traceback" not in found.err


def test_the_index_holds_message_text_not_keys_or_tool_output(tmp_path: Path, sync_url: str) -> None:
    from tests.builders import quiet_store

    alice = team_cli(tmp_path, "alice", "git@github.com:team/app.git", sync_url)
    store = quiet_store(alice.project)
    rec = store.create(model="m", provider="demo")
    rec.user({"role": "user", "content": "why does the zanzibar build fail"})
    rec.assistant({"role": "assistant", "content": [{"type": "text", "text": "reading the quokka log"},
                                                    {"type": "tool_use", "id": "t1", "name": "bash",
                                                     "input": {"command": "cat wombat.log"}}]})
    rec.user({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "platypus error"}]})
    rec.checkpoint()
    assert alice.run("sessions", "push", rec.session_id).rc == 0
    assert sync(alice, "index").rc == 0
    for word, found in (("zanzibar", True), ("quokka", True), ("wombat", False), ("platypus", False),
                        ("timestamp", False), ("assistant", False)):
        result = alice.run("sessions", "search", "--remote", word)
        assert (rec.session_id in result.out) is found, (word, result.out)
