"""Pushing and fetching against a real PostgreSQL: exactly once, complete lines only, byte-identical copies."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from evo_agent.sync.db import StoreUnavailable, connect
from evo_agent.sync.push import push_session, read_hint
from evo_agent.sync.remote import fetch_session, list_remote
from evo_agent.sync.schema import MIGRATIONS, SCHEMA_VERSION
from tests.builders import quiet_store
from tests.cli.sessions_helpers import rich_session

from .helpers import (
    assert_private,
    complete_line_count,
    identity_of,
    line_rows,
    project_with_origin,
    session_files,
    store_bytes,
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return project_with_origin(tmp_path / "a", "git@github.com:team/app.git")


def test_push_is_exactly_once_and_a_fetch_is_byte_identical(sync_url: str, project: Path, tmp_path: Path) -> None:
    rich = rich_session(project)
    store = quiet_store(project)
    source_dir = store.sessions_dir / rich.source
    lines = sum(v.count(b"\n") for v in session_files(source_dir).values())
    with connect(sync_url) as conn:
        first = push_session(conn, identity_of(project), store, rich.source)
        again = push_session(conn, identity_of(project), store, rich.source)
        assert (first.lines, again.lines) == (lines, 0)
        assert rich.sidechain in first.files
        assert line_rows(sync_url, rich.source) == lines
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        fetched = fetch_session(conn, rich.source, elsewhere)
    assert session_files(fetched) == session_files(source_dir)
    assert_private(fetched, read_only=["messages.jsonl"])  # one shared role: a fetched copy is foreign, read-only
    assert not [p for p in elsewhere.iterdir() if p.name.startswith(".fetch-")]  # no staging left behind


def test_only_complete_lines_leave_and_the_rest_follows_later(sync_url: str, project: Path, tmp_path: Path) -> None:
    store = quiet_store(project)
    rec = store.create(model="m", provider="demo")
    rec.user({"role": "user", "content": "first"})
    transcript = rec.path
    with open(transcript, "ab") as f:
        f.write(b'{"type":"user","message":{"role":"user","content":"half')  # a line being written
    identity = identity_of(project)
    with connect(sync_url) as conn:
        assert push_session(conn, identity, store, rec.session_id).lines == 2
        with open(transcript, "ab") as f:
            f.write(b' done"}}\n')
        assert push_session(conn, identity, store, rec.session_id).lines == 1
        dest = tmp_path / "dest"
        dest.mkdir()
        fetched = fetch_session(conn, rec.session_id, dest)
    assert (fetched / "messages.jsonl").read_bytes() == transcript.read_bytes()


def test_bytes_that_are_not_text_survive_the_round_trip(sync_url: str, project: Path, tmp_path: Path) -> None:
    store = quiet_store(project)
    rec = store.create(model="m", provider="demo")
    with open(rec.path, "ab") as f:
        f.write(b"\xff\xfe torn \x00 fragment\n")  # what a crash mid-write can leave: skipped by readers, kept here
    rec.user({"role": "user", "content": "after the tear ✓"})
    with connect(sync_url) as conn:
        push_session(conn, identity_of(project), store, rec.session_id)
        dest = tmp_path / "dest"
        dest.mkdir()
        fetched = fetch_session(conn, rec.session_id, dest)
    assert (fetched / "messages.jsonl").read_bytes() == rec.path.read_bytes()


def test_the_store_not_the_local_hint_says_where_to_resume(sync_url: str, project: Path) -> None:
    store = quiet_store(project)
    rec = store.create(model="m", provider="demo")
    rec.user({"role": "user", "content": "hello"})
    identity = identity_of(project)
    with connect(sync_url) as conn:
        push_session(conn, identity, store, rec.session_id)
        rec.user({"role": "user", "content": "again"})
        assert push_session(conn, identity, store, rec.session_id).lines == 1  # a second chunk
        assert read_hint(store, rec.session_id)["messages.jsonl"] == rec.path.stat().st_size
        (store.sessions_dir / rec.session_id / ".pushed.json").unlink()  # hint lost: nothing pushed twice
        assert push_session(conn, identity, store, rec.session_id).lines == 0
        conn.execute("DELETE FROM evo_agent_chunks WHERE session_id = %s AND start_offset > 0", (rec.session_id,))
        assert push_session(conn, identity, store, rec.session_id).lines == 1  # store lost its tail: it comes back
    assert store_bytes(sync_url, rec.session_id) == rec.path.read_bytes()


def test_two_pushers_at_once_while_the_agent_writes(sync_url: str, project: Path, tmp_path: Path) -> None:
    store = quiet_store(project)
    rec = store.create(model="m", provider="demo")
    identity = identity_of(project)
    writing = threading.Event()
    writing.set()
    errors: list[BaseException] = []

    def pusher() -> None:
        try:
            with connect(sync_url) as conn:
                while writing.is_set():
                    push_session(conn, identity, store, rec.session_id)
                push_session(conn, identity, store, rec.session_id)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=pusher) for _ in range(2)]
    for t in threads:
        t.start()
    for i in range(400):
        rec.user({"role": "user", "content": f"message {i} " + "x" * (i % 50)})
    writing.clear()
    for t in threads:
        t.join(60)
    assert not errors
    assert line_rows(sync_url, rec.session_id) == complete_line_count(rec.path)
    with connect(sync_url) as conn:
        dest = tmp_path / "dest"
        dest.mkdir()
        assert (fetch_session(conn, rec.session_id, dest) / "messages.jsonl").read_bytes() == rec.path.read_bytes()


def test_the_listing_row_names_who_pushed_it(sync_url: str, project: Path) -> None:
    store = quiet_store(project)
    rec = store.create(model="m", provider="demo", git_branch="feature/x")
    rec.user({"role": "user", "content": "tidy the upload code"})
    rec.checkpoint()
    identity = identity_of(project)
    with connect(sync_url) as conn:
        push_session(conn, identity, store, rec.session_id)
        (row,) = list_remote(conn, identity)
    assert (row.id, row.who, row.branch, row.first_prompt, row.message_count) == (
        rec.session_id, identity.who, "feature/x", "tidy the upload code", 1)


def test_a_line_table_store_is_converted_to_chunks_and_a_newer_one_refused(empty_url: str, tmp_path: Path) -> None:
    import psycopg

    from evo_agent.sync.schema import migrate

    sid = "1700000000000_0123abcd"
    with psycopg.connect(empty_url, autocommit=True) as conn:  # a store as version 4 left it: one row per line
        conn.execute("CREATE TABLE evo_agent_schema (version integer NOT NULL)")
        for version in (1, 2, 3, 4):
            for statement in MIGRATIONS[version]:
                conn.execute(statement)
        conn.execute("INSERT INTO evo_agent_schema VALUES (4, 3)")
        conn.execute("INSERT INTO evo_agent_sessions (session_id, repo, user_name, host, created_ms, updated_ms) "
                     "VALUES (%s, 'github.com/team/app', 'u', 'h', 1, 2)", (sid,))
        conn.execute("INSERT INTO evo_agent_lines VALUES (%s, 'messages.jsonl', 0, 3, 'ab', NULL), "
                     "(%s, 'messages.jsonl', 3, 6, NULL, '\\xff00'::bytea), "
                     "(%s, 'messages.jsonl', 9, 12, 'zz', NULL)", (sid, sid, sid))  # after a gap: not a prefix
    with pytest.raises(StoreUnavailable, match=r"evo-agent sync migrate"):  # clients run no DDL
        connect(empty_url)
    with connect(empty_url, check=False) as conn:
        assert migrate(conn) == SCHEMA_VERSION
        assert conn.execute("SELECT to_regclass('evo_agent_lines')").fetchone() == (None,)
    assert store_bytes(empty_url, sid) == b"ab\n\xff\x00\n"  # the contiguous prefix, byte for byte
    with connect(empty_url) as conn:
        conn.execute("UPDATE evo_agent_schema SET version = 99, min_client = 98")
    with pytest.raises(StoreUnavailable, match=r"admits clients from version 98.*upgrade evo-agent"):
        connect(empty_url)
    with psycopg.connect(empty_url, autocommit=True) as conn:  # a newer store that still admits this client
        conn.execute("UPDATE evo_agent_schema SET min_client = %s", (SCHEMA_VERSION,))
    with connect(empty_url) as conn:
        assert conn.execute("SELECT version FROM evo_agent_schema").fetchall() == [(99,)]  # left as it is


def test_a_fetch_writes_only_a_contiguous_prefix_and_safe_names(sync_url: str, project: Path, tmp_path: Path) -> None:
    import hashlib

    store = quiet_store(project)
    rec = store.create(model="m", provider="demo")
    identity = identity_of(project)
    with connect(sync_url) as conn:
        for text in ("one", "two", "three"):  # one chunk per push
            rec.user({"role": "user", "content": text})
            push_session(conn, identity, store, rec.session_id)
            if text == "one":
                prefix = rec.path.read_bytes()
        conn.execute("DELETE FROM evo_agent_chunks WHERE session_id = %s AND start_offset = %s",
                     (rec.session_id, len(prefix)))  # a hole where "two" was
        conn.execute("INSERT INTO evo_agent_chunks (session_id, file, start_offset, end_offset, checksum, body) "
                     "VALUES (%s, '../../escape', 0, 3, %s, 'hi\n')", (rec.session_id, hashlib.sha256(b"hi\n").digest()))
        dest = tmp_path / "dest"
        dest.mkdir()
        fetched = fetch_session(conn, rec.session_id, dest)
    assert (fetched / "messages.jsonl").read_bytes() == prefix
    assert sorted(os.listdir(tmp_path)) == ["a", "dest"]  # nothing written outside
