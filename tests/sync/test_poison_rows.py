"""A teammate's rows are data, never a way to crash, flood or reorder what everyone else's evo-agent shows.

Real cluster; mallory is a member with her own role and writes her rows with psycopg, as any member may (no
client of hers needed); bob runs the real console script. Each test has a control: the same command over an
ordinary row.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import psycopg
import pytest

from evo_agent.sync.db import connect

from .pgcluster import PgCluster, add_teammate
from .proxy import SilentProxy
from .test_cli import team_cli

REPO = "github.com/team/app"
SID = "1796000000000_5e55a9e0"


def members(url: str) -> tuple[str, str, str]:
    """(mallory's role, her URL, bob's URL): two members granted REPO."""
    connect(url).close()
    mallory_role, mallory = add_teammate(url, [REPO])
    _, bob = add_teammate(url, [REPO])
    return mallory_role, mallory, bob


def push_raw(url: str, sid: str, lines: list[bytes], **row: object) -> None:
    """A session row and its transcript as one chunk, written directly with the member's SQL."""
    cols = {"session_id": sid, "repo": REPO, "user_name": "mallory", "host": "h", "created_ms": 1796000000000,
            "updated_ms": 1796000000000, **row}
    body = b"".join(lines)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"INSERT INTO evo_agent_sessions ({', '.join(cols)}) VALUES ({', '.join(['%s'] * len(cols))})",
                     list(cols.values()))
        if body:
            conn.execute("INSERT INTO evo_agent_chunks (session_id, file, start_offset, end_offset, checksum, body) "
                         "VALUES (%s, 'messages.jsonl', 0, %s, %s, %s)",
                         (sid, len(body), hashlib.sha256(body).digest(), body))


def record(sid: str, **fields: object) -> bytes:
    return json.dumps({**fields, "session_id": sid, "timestamp": "2026-12-01T10:00:00.000+00:00"}).encode() + b"\n"


def user_line(sid: str, text: str) -> bytes:
    """A user's turn and the answer to it."""
    return (record(sid, type="user", message={"role": "user", "content": text})
            + record(sid, type="assistant", message={"role": "assistant", "content": [{"type": "text", "text": "ok"}]}))


@pytest.mark.parametrize("text", ["deploy \ud800 now", "deploy \udfff now", "\udbff\udbff"],
                         ids=["lone high", "lone low", "two highs"])
@pytest.mark.parametrize("where", ["first prompt", "session name"])
def test_a_lone_surrogate_in_a_teammates_transcript_crashes_nothing(tmp_path: Path, sync_url: str, text: str,
                                                                    where: str) -> None:
    _, mallory, bob_url = members(sync_url)
    start = record(SID, type="session_start", model="m", provider="demo")
    if where == "first prompt":
        lines = [start, user_line(SID, text)]
    else:
        lines = [start, record(SID, type="session_name", name=text), user_line(SID, "hello")]
    push_raw(mallory, SID, lines)
    control = "1796000000000_c0c0c0c0"
    push_raw(mallory, control, [start.replace(SID.encode(), control.encode()), user_line(control, "plain words")])
    bob = team_cli(tmp_path, "bob", "https://github.com/team/app", bob_url)
    visible = "\\ud800" if "ud800" in ascii(text) else "\\udfff" if "udfff" in ascii(text) else "\\udbff"
    for sid, shows in ((control, "plain words"), (SID, visible if where == "first prompt" else "hello")):
        shown = bob.run("sessions", "show", sid)
        assert shown.rc == 0 and "Traceback" not in shown.err and shows in shown.out, shown.err
        refused = bob.run("--resume", sid, "-p", "go on")  # fetched, foreign: refused in print mode
        assert refused.rc == 1 and "Traceback" not in refused.err, refused.err
        assert f"evo-agent sessions adopt {sid}" in refused.err
        assert sid in bob.session_ids()
        listed = bob.run("sessions", "list", "--wide")
        assert listed.rc == 0 and "Traceback" not in listed.err and sid in listed.out, listed.err
        as_json = bob.run("sessions", "list", "--json")
        assert as_json.rc == 0 and sid in {r["id"] for r in json.loads(as_json.out)}, as_json.err
        adopted = bob.run("sessions", "adopt", sid)
        assert adopted.rc == 0 and "Traceback" not in adopted.err, adopted.err
    refused = bob.run("--resume", SID, "-p", "go on")
    if where == "first prompt":
        assert visible in refused.err  # the question quotes it, visibly
    else:
        assert visible in bob.run("sessions", "list", "--wide").out  # the name, visibly


HUGE = 8 << 20  # characters in each of the row's free-text fields


@pytest.mark.parametrize("command", ["list", "list --json", "search", "resume"])
def test_a_teammates_huge_row_is_not_shipped_to_everyone(tmp_path: Path, sync_url: str, pg_cluster: PgCluster,
                                                         command: str) -> None:
    _, mallory, bob_url = members(sync_url)
    start = record(SID, type="session_start", model="m", provider="demo")
    push_raw(mallory, SID, [start, user_line(SID, "the wombat plan")])
    with psycopg.connect(mallory, autocommit=True) as conn:  # her own row: hers to UPDATE, 40 MB of it
        conn.execute("UPDATE evo_agent_sessions SET first_prompt = repeat('p', %s), name = repeat('n', %s), "
                     "user_name = repeat('u', %s), host = repeat('h', %s), branch = repeat('b', %s) "
                     "WHERE session_id = %s", (HUGE, HUGE, HUGE, HUGE, HUGE, SID))
    alice = team_cli(tmp_path, "alice", "git@github.com:team/app.git", sync_url)
    own = alice.run("-p", "the wombat migration").hint_id()  # the control: an ordinary row beside it
    proxy = SilentProxy(pg_cluster.port)
    try:
        bob = team_cli(tmp_path, "bob", "https://github.com/team/app", proxy.url(bob_url))
        args = {"list": ("sessions", "list", "--remote"), "list --json": ("sessions", "list", "--remote", "--json"),
                "search": ("sessions", "search", "--remote", "wombat"),
                "resume": ("--resume", SID, "-p", "go on")}[command]
        done = bob.run(*args)
        shipped = proxy.bytes_down()
    finally:
        proxy.close()
    assert "Traceback" not in done.err and (done.rc == 0 or command == "resume"), done.err
    assert shipped < 1 << 20, f"{shipped:,} bytes came from the store"
    said = done.out + done.err
    assert len(said) < 20_000
    if command == "resume":
        assert done.rc == 1 and f"evo-agent sessions adopt {SID}" in done.err, done.err
        return
    assert SID in said and own in said
    if command == "list --json":
        rows = {r["id"]: r for r in json.loads(done.out)}
        assert rows[own]["first_prompt"] == "the wombat migration"
        assert all(len(rows[SID][k]) <= 200 for k in ("first_prompt", "name", "user", "host", "git_branch"))


@pytest.mark.parametrize("claim", [9223372036854775807, 7258118400000, "two days ahead"],
                         ids=["bigint max", "year 2200", "two days ahead"])
def test_a_teammates_future_timestamps_never_bury_the_teams_sessions(tmp_path: Path, sync_url: str,
                                                                     monkeypatch: pytest.MonkeyPatch,
                                                                     claim: int | str) -> None:
    import time

    _, mallory, bob_url = members(sync_url)
    future = int(time.time() * 1000) + 2 * 86_400_000 if claim == "two days ahead" else int(claim)
    flood = [f"1796000000000_f100d{i:03x}" for i in range(3)]
    for sid in flood:
        push_raw(mallory, sid, [user_line(sid, "look at me")], updated_ms=future, first_prompt="look at me")
    alice = team_cli(tmp_path, "alice", "git@github.com:team/app.git", sync_url)
    older = alice.run("-p", "the first real session").hint_id()
    newer = alice.run("-p", "the second real session").hint_id()
    bob = team_cli(tmp_path, "bob", "https://github.com/team/app", bob_url)
    first_screen = bob.run("sessions", "list", "--remote", "--limit", "2")
    assert first_screen.rc == 0, first_screen.err
    ids = [line.split()[0] for line in first_screen.out_lines[1:] if line.startswith("17")]
    assert ids == [newer, older], first_screen.out
    everything = json.loads(bob.run("sessions", "list", "--remote", "--json").out)
    assert [r["id"] for r in everything] == [newer, older, *sorted(flood, reverse=True)]  # listed, last

    from evo_agent.sync import hooks

    monkeypatch.setenv("EVO_AGENT_SYNC_URL", bob_url)  # the picker's team view (Tab) reads the same rows
    rows, error = hooks.team_sessions(bob.project, limit=2)
    assert error is None and [r.id for r in rows] == [newer, older]


def test_a_session_an_hour_ahead_still_sorts_by_its_time(tmp_path: Path, sync_url: str) -> None:
    """The control: a teammate whose clock runs a little fast is listed by the time it says."""
    import time

    _, mallory, bob_url = members(sync_url)
    ahead = "1796000000000_a11ead00"
    push_raw(mallory, ahead, [user_line(ahead, "a fast clock")], updated_ms=int(time.time() * 1000) + 3_600_000)
    alice = team_cli(tmp_path, "alice", "git@github.com:team/app.git", sync_url)
    real = alice.run("-p", "a real session").hint_id()
    bob = team_cli(tmp_path, "bob", "https://github.com/team/app", bob_url)
    assert [r["id"] for r in json.loads(bob.run("sessions", "list", "--remote", "--json").out)] == [ahead, real]


@pytest.mark.parametrize("command", ["show", "resume"])
def test_a_chunk_bigger_than_any_client_sends_is_never_fetched(tmp_path: Path, sync_url: str, pg_cluster: PgCluster,
                                                               command: str) -> None:
    """A member's own INSERT can make a chunk of up to 1 GB; a fetch held four in memory (as hex text: twice
    that) for one `sessions show`. Such a chunk ends the file where it starts, as a chunk failing its checksum does:
    the verified lines before it are shown, nothing of it travels."""
    _, mallory, bob_url = members(sync_url)
    head = [record(SID, type="session_start", model="m", provider="demo"), user_line(SID, "the verified head")]
    push_raw(mallory, SID, head)
    start = sum(len(x) for x in head)
    with psycopg.connect(mallory, autocommit=True) as conn:  # 80 MB in one row, made by the server itself
        conn.execute("WITH x AS (SELECT convert_to(repeat('x', 80 << 20) || E'\\n', 'UTF8') AS body) "
                     "INSERT INTO evo_agent_chunks (session_id, file, start_offset, end_offset, checksum, body) "
                     "SELECT %s, 'messages.jsonl', %s, %s + octet_length(body), sha256(body), body FROM x",
                     (SID, start, start))
    proxy = SilentProxy(pg_cluster.port)
    try:
        bob = team_cli(tmp_path, "bob", "https://github.com/team/app", proxy.url(bob_url))
        done = bob.run(*(("sessions", "show", SID) if command == "show" else ("--resume", SID, "-p", "go on")))
        shipped = proxy.bytes_down()
    finally:
        proxy.close()
    assert "Traceback" not in done.err and shipped < 1 << 20, (shipped, done.err)
    if command == "show":
        assert done.rc == 0 and "the verified head" in done.out, done.err
    else:
        assert done.rc == 1 and f"evo-agent sessions adopt {SID}" in done.err, done.err
        assert (bob.sessions_dir / SID / "messages.jsonl").read_bytes() == b"".join(head)


@pytest.mark.parametrize("ahead", ["year 2286", "two days ahead"])
def test_a_teammates_future_ids_never_crowd_the_teams_search_hits(tmp_path: Path, sync_url: str, ahead: str) -> None:
    """Search orders hits newest session first, by id; a member's ids that claim the future filled all 20."""
    import time

    _, mallory, bob_url = members(sync_url)
    base = 9999999999000 if ahead == "year 2286" else int(time.time() * 1000) + 2 * 86_400_000
    flood = [f"{base + i:013d}_f100d{i:03x}" for i in range(25)]
    for sid in flood:
        push_raw(mallory, sid, [user_line(sid, "deploy the release now")], created_ms=base, updated_ms=base)
    alice = team_cli(tmp_path, "alice", "git@github.com:team/app.git", sync_url)
    real = [alice.run("-p", f"how do we deploy the {what}").hint_id() for what in ("api", "web")]
    assert alice.run("sync", "index", timeout=120).rc == 0
    bob = team_cli(tmp_path, "bob", "https://github.com/team/app", bob_url)
    found = bob.run("sessions", "search", "--remote", "deploy", "--json")
    assert found.rc == 0, found.err
    ids = list(dict.fromkeys(hit["id"] for hit in json.loads(found.out)))  # a session may match on several lines
    assert ids[:2] == real[::-1] and set(ids[2:]) <= set(flood) and len(ids) > 2, ids  # the flood comes after


@pytest.mark.parametrize("meta", ["deep array", "deep object", "huge", "ordinary (the control)"])
def test_the_store_s_word_for_ones_own_meta_never_crashes_a_resume(tmp_path: Path, sync_url: str, meta: str) -> None:
    """A session the store vouches is the user's own keeps the row's meta.json; whoever holds the owner's
    credentials (or runs the server) can make that any jsonb."""
    connect(sync_url).close()
    _, alice_url = add_teammate(sync_url, [REPO])
    desk = team_cli(tmp_path, "desk", "git@github.com:team/app.git", alice_url)
    sid = desk.run("-p", "alice's own work").hint_id()
    pushed = json.loads((desk.sessions_dir / sid / "meta.json").read_text())
    size = pushed["messages_bytes"]
    sql = {"deep array": "(repeat('[', 5000) || repeat(']', 5000))::jsonb",
           "deep object": f"('{{\"messages_bytes\": {size}, \"x\": ' || repeat('{{\"a\": ', 5000) || '1' "
                          f"|| repeat('}}', 5000) || '}}')::jsonb",
           "huge": f"jsonb_build_object('messages_bytes', {size}, 'first_prompt', repeat('p', 8 << 20))",
           "ordinary (the control)": "meta"}[meta]
    with psycopg.connect(sync_url, autocommit=True) as admin:
        admin.execute(f"UPDATE evo_agent_sessions SET meta = {sql} WHERE session_id = %s", (sid,))
    laptop = team_cli(tmp_path, "laptop", "https://github.com/team/app", alice_url)
    resumed = laptop.run("--resume", sid, "-p", "go on")
    assert resumed.rc == 0 and "Traceback" not in resumed.err, resumed.err  # her own: resumed as hers
    kept = laptop.sessions_dir / sid / "meta.json"
    if meta == "ordinary (the control)":
        assert json.loads(kept.read_text())["messages_bytes"] == size
    else:
        assert not kept.exists() or kept.stat().st_size < 100_000
    listed = laptop.run("sessions", "list", "--json")
    assert listed.rc == 0 and sid in {r["id"] for r in json.loads(listed.out)}, listed.err


def test_a_store_whose_database_is_not_utf8_is_refused_in_one_line(tmp_path: Path, pg_cluster: PgCluster) -> None:
    """`initdb` under the C locale makes SQL_ASCII databases, whose text holds any bytes: a member's row of
    invalid UTF-8 there failed every teammate's listing (and before that, psycopg handed rows back as bytes:
    every listing was empty, and search's query failed with a traceback)."""
    import uuid

    from evo_agent.sync import schema

    name = "ascii_" + uuid.uuid4().hex[:8]
    with psycopg.connect(pg_cluster.url(), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name} ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0")
    url = pg_cluster.url(name)
    admin = team_cli(tmp_path, "admin", "git@github.com:team/app.git", url)
    refused = admin.run("sync", "migrate")
    assert refused.rc != 0 and len(refused.err_lines) == 1 and "not UTF8" in refused.err, refused.err
    with psycopg.connect(url, autocommit=True) as conn:  # a store migrated before clients checked
        real = schema.check_encoding
        schema.check_encoding = lambda conn: None
        try:
            schema.migrate(conn)
        finally:
            schema.check_encoding = real
    _, mallory = add_teammate(url, [REPO])
    _, bob_url = add_teammate(url, [REPO])
    with psycopg.connect(mallory, autocommit=True) as conn:
        conn.execute("INSERT INTO evo_agent_sessions (session_id, repo, user_name, host, created_ms, updated_ms) "
                     "VALUES (%s, %s, E'mal\\xfflory', 'h', 1, 2)", (SID, REPO))
    bob = team_cli(tmp_path, "bob", "https://github.com/team/app", bob_url)
    for args in (("sessions", "list", "--remote"), ("sessions", "search", "--remote", "wombat"),
                 ("--resume", SID, "-p", "go on"), ("sessions", "push", "--all")):
        done = bob.run(*args)
        assert done.rc != 0 and "Traceback" not in done.err and "not UTF8" in done.err, (args, done.err)
    ran = bob.run("-p", "hello")  # the agent goes on, with one warning
    assert ran.rc == 0 and "not UTF8" in ran.err and "Traceback" not in ran.err, ran.err
