"""What the store hands back is untrusted: a poison line, escape sequences, ids that are paths."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg

from evo_agent.sync.db import connect
from tests.builders import quiet_store

from .helpers import complete_line_count, line_rows
from .test_cli import team_cli


def test_a_4mb_line_does_not_stop_the_sessions_after_it(sync_url: str, tmp_path: Path) -> None:
    kim = team_cli(tmp_path, "kim", "git@github.com:team/app.git", sync_url)
    store = quiet_store(kim.project)
    poison = store.create(model="m", provider="demo")
    pasted = " ".join(f"err{i}x" for i in range(520_000))  # a pasted log: 4 MB of distinct words
    poison.user({"role": "user", "content": "look at this log " + pasted})
    poison.checkpoint()
    assert max(len(line) for line in poison.path.read_bytes().split(b"\n")) > 4_000_000
    after = []
    for text in ("the next session", "and another one"):
        rec = store.create(model="m", provider="demo")
        rec.user({"role": "user", "content": text})
        rec.checkpoint()
        after.append(rec.session_id)
    pushed = kim.run("sessions", "push", "--all", timeout=120)
    assert pushed.rc == 0, pushed.err
    for sid in [poison.session_id, *after]:
        assert line_rows(sync_url, sid) == complete_line_count(kim.transcript(sid)), sid
    found = kim.run("sessions", "search", "--remote", "another")
    assert found.rc == 0 and after[1] in found.out
    early = kim.run("sessions", "search", "--remote", "err12x")  # within the indexed head of the big line
    assert early.rc == 0 and poison.session_id in early.out, early.err
    exported = team_cli(tmp_path, "lee", "git@github.com:team/app.git", sync_url).run(
        "sessions", "export", poison.session_id, "--format", "jsonl", timeout=120)
    assert exported.rc == 0 and exported.out.encode() == poison.path.read_bytes()


ESC = "\x1b]0;owned\x07\x1b[2J\x9b31m"


def test_remote_strings_never_reach_the_terminal_raw_and_bad_ids_are_dropped(sync_url: str, tmp_path: Path) -> None:
    connect(sync_url).close()
    good = "1796000000000_0123abcd"
    with psycopg.connect(sync_url, autocommit=True) as conn:
        for sid in (good, "../../../../tmp/evil", "1796000000000_0123abcd/../../x"):
            conn.execute("INSERT INTO evo_agent_sessions (session_id, repo, user_name, host, branch, created_ms, "
                         "updated_ms, first_prompt, name) VALUES (%s, 'github.com/team/app', %s, %s, %s, 1, 2, %s, %s)",
                         (sid, "mallory" + ESC, "h" + ESC, "main" + ESC, "hi" + ESC, None))
            conn.execute("INSERT INTO evo_agent_chunks (session_id, file, start_offset, end_offset, checksum, body) "
                         "VALUES (%s, 'messages.jsonl', 0, 3, sha256('{}\n'), '{}\n')", (sid,))
    bob = team_cli(tmp_path, "bob", "https://github.com/team/app", sync_url)
    listed = bob.run("sessions", "list", "--remote")
    assert listed.rc == 0 and good in listed.out, listed.err
    assert "\x1b" not in listed.out and "\x9b" not in listed.out and "\x07" not in listed.out
    assert "evil" not in listed.out and "/../" not in listed.out
    as_json = bob.run("sessions", "list", "--remote", "--json")
    assert "\x1b" not in as_json.out and [r["id"] for r in json.loads(as_json.out)] == [good]
    for text in ("../../../../tmp/evil", "1796000000000_0123abcd/../../x"):
        refused = bob.run("--resume", text, "-p", "go")
        assert refused.rc != 0 and "Traceback" not in refused.err
    assert not Path("/tmp/evil").exists() and not (tmp_path / "x").exists()
    fetched = bob.run("--resume", good, "-p", "go")  # foreign: refused, but the copy was made safely
    assert "\x1b" not in fetched.err and "\x9b" not in fetched.err and "mallory" in fetched.err


def test_list_remote_has_a_default_limit(sync_url: str, tmp_path: Path) -> None:
    connect(sync_url).close()
    with psycopg.connect(sync_url, autocommit=True) as conn:
        conn.execute("INSERT INTO evo_agent_sessions (session_id, repo, user_name, host, created_ms, updated_ms) "
                     "SELECT format('1796%s_%s', lpad(i::text, 9, '0'), lpad(to_hex(i), 8, '0')), "
                     "'github.com/team/app', 'u', 'h', i, i FROM generate_series(1, 250) i")
    bob = team_cli(tmp_path, "bob", "https://github.com/team/app", sync_url)
    listed = bob.run("sessions", "list", "--remote")
    rows = [line for line in listed.out_lines if line.startswith("1796")]
    assert len(rows) == 100 and "--limit N shows more" in listed.out
    assert len(json.loads(bob.run("sessions", "list", "--remote", "--json", "--limit", "300").out)) == 250
