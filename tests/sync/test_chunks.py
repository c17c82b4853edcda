"""Chunks, not lines: expected-version appends enforced by the database, lines of any size, tombstones."""

from __future__ import annotations

import hashlib
import threading
import time
from pathlib import Path

import psycopg
import pytest

from evo_agent.sync import push as push_module
from evo_agent.sync.db import connect
from evo_agent.sync.push import AppendConflict, push_session
from evo_agent.sync.remote import fetch_session
from tests.builders import quiet_store
from tests.helpers import wait_for

from .helpers import complete_line_count, identity_of, line_rows, project_with_origin, store_bytes
from .test_cli import team_cli


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return project_with_origin(tmp_path / "a", "git@github.com:team/app.git")


class _RacedAtFirstAppend:
    """A connection that lets another pusher win the race just before its first chunk is inserted."""

    def __init__(self, conn, race) -> None:  # noqa: ANN001
        self._conn, self._race = conn, race

    def execute(self, sql, *args, **kw):  # noqa: ANN001, ANN201
        if self._race is not None and sql.lstrip().startswith("INSERT INTO evo_agent_chunks"):
            race, self._race = self._race, None
            race()
        return self._conn.execute(sql, *args, **kw)

    def __getattr__(self, name):  # noqa: ANN001, ANN204
        return getattr(self._conn, name)


def test_of_two_racing_appends_one_wins_the_other_reports_and_catches_up(sync_url: str, project: Path) -> None:
    store = quiet_store(project)
    rec = store.create(model="m", provider="demo")
    rec.user({"role": "user", "content": "first"})
    identity = identity_of(project)
    with connect(sync_url) as conn, connect(sync_url) as rival:
        push_session(conn, identity, store, rec.session_id)
        rec.user({"role": "user", "content": "second"})
        rec.user({"role": "user", "content": "third"})
        won = []
        raced = _RacedAtFirstAppend(conn, lambda: won.append(push_session(rival, identity, store, rec.session_id)))
        report = push_session(raced, identity, store, rec.session_id)  # read the store's end, then lost the race
    assert won[0].lines == 2 and report.lines == 0
    assert len(report.conflicts) == 1 and "this push started at" in report.conflicts[0]
    assert store_bytes(sync_url, rec.session_id) == rec.path.read_bytes()  # nothing twice, nothing lost


def test_two_open_transactions_appending_at_one_offset_cannot_both_commit(sync_url: str, project: Path) -> None:
    store = quiet_store(project)
    rec = store.create(model="m", provider="demo")
    rec.user({"role": "user", "content": "hello"})
    with connect(sync_url) as conn:
        push_session(conn, identity_of(project), store, rec.session_id)
    end = rec.path.stat().st_size
    body = b'{"type":"user","message":{"role":"user","content":"mine"}}\n'
    outcome: list[BaseException | None] = []
    with connect(sync_url) as first, connect(sync_url) as second:
        pid = second.execute("SELECT pg_backend_pid()").fetchone()[0]
        with first.transaction():
            push_module._append(first, rec.session_id, "messages.jsonl", end, body)

            def append_too() -> None:
                try:
                    with second.transaction():
                        push_module._append(second, rec.session_id, "messages.jsonl", end, body[:-3] + b"!}\n")
                    outcome.append(None)
                except BaseException as exc:
                    outcome.append(exc)

            thread = threading.Thread(target=append_too)
            thread.start()
            with connect(sync_url) as watcher:  # the second waits on the first's key, whatever the clock says
                wait_for(lambda: watcher.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s",
                                                 (pid,)).fetchone() == ("Lock",), what="the second append to wait")
        thread.join(30)
    assert isinstance(outcome[0], AppendConflict)
    assert store_bytes(sync_url, rec.session_id) == rec.path.read_bytes() + body


@pytest.mark.parametrize("start", ["gap", "overlap", "zero"])
def test_the_database_refuses_a_chunk_that_does_not_start_at_the_files_end(sync_url: str, project: Path,
                                                                           start: str) -> None:
    store = quiet_store(project)
    rec = store.create(model="m", provider="demo")
    rec.user({"role": "user", "content": "hello"})
    with connect(sync_url) as conn:
        push_session(conn, identity_of(project), store, rec.session_id)
    end = rec.path.stat().st_size
    offset = {"gap": end + 10, "overlap": end - 5, "zero": 0}[start]
    body = b"forged\n"
    with psycopg.connect(sync_url, autocommit=True) as admin, pytest.raises(psycopg.Error) as refused:
        admin.execute("INSERT INTO evo_agent_chunks (session_id, file, start_offset, end_offset, checksum, body) "
                      "VALUES (%s, 'messages.jsonl', %s, %s, %s, %s)",
                      (rec.session_id, offset, offset + len(body), hashlib.sha256(body).digest(), body))
    assert refused.value.sqlstate in ("EA409", "23505")
    assert store_bytes(sync_url, rec.session_id) == rec.path.read_bytes()


def test_the_database_refuses_a_body_that_does_not_match_its_checksum_or_offsets(sync_url: str) -> None:
    with psycopg.connect(sync_url, autocommit=True) as admin:
        for end, checksum in ((4, hashlib.sha256(b"abc!").digest()), (9, hashlib.sha256(b"abc\n").digest())):
            with pytest.raises(psycopg.errors.CheckViolation):
                admin.execute("INSERT INTO evo_agent_chunks (session_id, file, start_offset, end_offset, checksum, "
                              "body) VALUES ('1796000000000_0123abcd', 'messages.jsonl', 0, %s, %s, 'abc\n')",
                              (end, checksum))


def test_a_line_longer_than_a_chunk_goes_in_pieces_and_comes_back_whole(
        sync_url: str, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(push_module, "CHUNK_BYTES", 1000)
    store = quiet_store(project)
    rec = store.create(model="m", provider="demo")
    rec.user({"role": "user", "content": "x" * 4500})  # one line, five pieces
    for i in range(30):
        rec.user({"role": "user", "content": f"short {i}"})
    with connect(sync_url) as conn:
        report = push_session(conn, identity_of(project), store, rec.session_id)
        pieces = conn.execute("SELECT count(*) FROM evo_agent_chunks WHERE session_id = %s",
                              (rec.session_id,)).fetchone()[0]
        dest = tmp_path / "dest"
        dest.mkdir()
        fetched = fetch_session(conn, rec.session_id, dest)
    assert report.lines == complete_line_count(rec.path) and pieces > 6
    assert (fetched / "messages.jsonl").read_bytes() == rec.path.read_bytes()


def test_a_chunk_that_fails_its_checksum_ends_the_fetched_file(sync_url: str, project: Path, tmp_path: Path) -> None:
    store = quiet_store(project)
    rec = store.create(model="m", provider="demo")
    identity = identity_of(project)
    with connect(sync_url) as conn:
        rec.user({"role": "user", "content": "one"})
        push_session(conn, identity, store, rec.session_id)
        good = rec.path.read_bytes()
        rec.user({"role": "user", "content": "two"})
        push_session(conn, identity, store, rec.session_id)
    with psycopg.connect(sync_url, autocommit=True) as admin:  # storage rot, or an owner with a text editor
        admin.execute("ALTER TABLE evo_agent_chunks DROP CONSTRAINT evo_agent_chunk_checksum")
        admin.execute("UPDATE evo_agent_chunks SET body = overlay(body placing 'X' from 3) "
                      "WHERE session_id = %s AND start_offset > 0", (rec.session_id,))
    with connect(sync_url) as conn:
        dest = tmp_path / "dest"
        dest.mkdir()
        fetched = fetch_session(conn, rec.session_id, dest)
    assert (fetched / "messages.jsonl").read_bytes() == good


def test_a_pruned_session_is_not_pushed_again(tmp_path: Path, sync_url: str) -> None:
    alice = team_cli(tmp_path, "alice", "git@github.com:team/app.git", sync_url)
    first = alice.run("-p", "an old session").hint_id()
    second = alice.run("-p", "another old one").hint_id()
    time.sleep(1.1)  # both were updated before that run returned: now both are older than 1 s, however slow it was
    pruned = alice.run("sessions", "prune", "--remote", "--older-than", "1s")
    assert pruned.rc == 0 and "deleted 2 sessions" in pruned.out, pruned.err
    assert "month partition" in pruned.out  # the owner dropped this month's chunks whole: they were all pruned
    assert line_rows(sync_url) == 0
    again = alice.run("sessions", "push", "--all")
    assert again.rc == 0 and "2 pruned from the store, not pushed again" in again.out, again.out
    named = alice.run("sessions", "push", first)
    assert named.rc == 1 and "pruned from the team store on" in named.err and "tombstone" in named.err
    third = alice.run("-p", "a new one").hint_id()  # its catch-up skips the pruned ones, pushes the new one
    assert line_rows(sync_url) == complete_line_count(alice.transcript(third))
    with psycopg.connect(sync_url) as admin:  # the server refuses them too, whatever the client does
        with pytest.raises(psycopg.Error) as refused:
            admin.execute("INSERT INTO evo_agent_sessions (session_id, repo, user_name, host, created_ms, updated_ms) "
                          "VALUES (%s, 'github.com/team/app', 'u', 'h', 1, 1)", (second,))
        assert refused.value.sqlstate == "EA410"
