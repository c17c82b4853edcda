"""A slow but steady link fetches a session of full chunks: no single wait has to carry more than one chunk.

Every wait on the server is capped at 20 idle windows, bytes flowing or not (EVO_AGENT_SYNC_TIMEOUT=1 here: 20 s).
A fetch asked for four chunks at a time, as hex text: four full 4 MB chunks (what a long catch-up pushes) were
32 MB in one wait, past the cap at any link slower than 1.6 MB/s here (~56 KB/s with the default 30 s windows),
so such a session could never be fetched there, however often it was tried. Real cluster, mallory's chunks
written with psycopg as any member may, bob's real console script through a proxy that hands him 1 MB a second.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import psycopg
import pytest

from evo_agent.sync.db import connect
from evo_agent.sync.schema import CHUNK_BYTES

from .helpers import store_bytes
from .pgcluster import PgCluster
from .proxy import SlowLinkProxy
from .test_cli import team_cli
from .test_poison_rows import members, push_raw, record, user_line

SID = "1796000000000_5105105a"


def _full_chunks(url: str, count: int, *, append: bool = False) -> None:
    """`count` chunks of just under CHUNK_BYTES of ordinary lines after the session's first line (or, `append`,
    after what the store holds)."""
    start = record(SID, type="session_start", model="m", provider="demo")
    if not append:
        push_raw(url, SID, [start, *user_line(SID, "the first prompt").splitlines(keepends=True)])
    line = json.dumps({"type": "user", "message": {"role": "user", "content": "slow link " * 40}}).encode() + b"\n"
    body = line * (CHUNK_BYTES // len(line))
    with psycopg.connect(url, autocommit=True) as conn:
        offset = conn.execute("SELECT coalesce(max(end_offset), 0) FROM evo_agent_chunks WHERE session_id = %s",
                              (SID,)).fetchone()[0]
        for _ in range(count):
            conn.execute("INSERT INTO evo_agent_chunks (session_id, file, start_offset, end_offset, checksum, body) "
                         "VALUES (%s, 'messages.jsonl', %s, %s, %s, %s)",
                         (SID, offset, offset + len(body), hashlib.sha256(body).digest(), body))
            offset += len(body)


def test_a_session_of_full_chunks_comes_through_a_slow_link(tmp_path: Path, sync_url: str,
                                                            pg_cluster: PgCluster) -> None:
    _, mallory, bob_url = members(sync_url)
    _full_chunks(mallory, 4)
    proxy = SlowLinkProxy(pg_cluster.port, rate=1 << 20)
    try:
        bob = team_cli(tmp_path, "bob", "https://github.com/team/app", proxy.url(bob_url), EVO_AGENT_SYNC_TIMEOUT="1")
        exported = bob.run("sessions", "export", SID, "--format", "jsonl", timeout=180)
    finally:
        proxy.close()
    assert exported.rc == 0 and "Traceback" not in exported.err, exported.err
    assert exported.out.encode() == store_bytes(sync_url, SID)


def test_a_fetch_pages_through_sizes_and_chunks_alike(tmp_path: Path, sync_url: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Sizes are read INDEX_ROWS at a time and bodies PAGE_ROWS at a time (a session of a million tiny chunks made
    one answer of its sizes); with both tiny, a fetch and a refresh still write exactly what the store holds."""
    from evo_agent.sync import remote

    monkeypatch.setattr(remote, "INDEX_ROWS", 3)
    monkeypatch.setattr(remote, "PAGE_ROWS", 2)
    _, mallory, bob_url = members(sync_url)
    start = record(SID, type="session_start", model="m", provider="demo")
    push_raw(mallory, SID, [start])

    def grow(by: int) -> None:
        offset = len(store_bytes(sync_url, SID))
        with psycopg.connect(mallory, autocommit=True) as conn:
            for i in range(by):
                body = user_line(SID, f"tiny {offset} {i}")
                conn.execute("INSERT INTO evo_agent_chunks (session_id, file, start_offset, end_offset, checksum, "
                             "body) VALUES (%s, 'messages.jsonl', %s, %s, %s, %s)",
                             (SID, offset, offset + len(body), hashlib.sha256(body).digest(), body))
                offset += len(body)

    grow(10)
    with connect(bob_url) as conn:
        copy = remote.fetch_session(conn, SID, tmp_path) / "messages.jsonl"
        assert copy.read_bytes() == store_bytes(sync_url, SID)
        grow(7)
        remote.fetch_session(conn, SID, tmp_path)  # a foreign copy: refreshed from where it ends
        assert copy.read_bytes() == store_bytes(sync_url, SID)
