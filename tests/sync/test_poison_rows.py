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

from .pgcluster import add_teammate
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
