"""A pull killed mid-way (kill -9 of the process group, a closed terminal's SIGHUP) leaves nothing behind for ever.

A fetch assembles its copy in a hidden staging directory (`.fetch-<id>-<hex>`) and renames it into place; the
`finally` that removes it on failure never runs when the process is killed. Each killed pull left a partial copy of
up to the session's size in the sessions directory, hidden and never removed, however many later fetches
succeeded. Real cluster, mallory's chunks written with psycopg, bob's real console script through a proxy that
hands him 2 MB a second (a page in two seconds) so the kill lands mid-transfer; the control: a fetch left alone leaves
no staging either.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from evo_agent.sync.remote import MAX_SIDECHAINS

from .helpers import store_bytes
from .pgcluster import PgCluster
from .proxy import SlowLinkProxy
from .test_cli import team_cli
from .test_poison_rows import members
from .test_slow_link import SID, _full_chunks

# The link's speed: each test acts once the first 4 MB page is written (two seconds), with two more pages (four
# seconds) still to come, room enough for a loaded machine to act mid-transfer; at 1 MB/s the same moments came
# twice as late (15 s for the two tests, now ~8 s).
RATE = 2 << 20


def _staging(sessions_dir: Path) -> list[Path]:
    return sorted(sessions_dir.glob(".fetch-*")) if sessions_dir.is_dir() else []


@pytest.mark.parametrize("killed", [True, False], ids=["killed mid-pull", "left alone (the control)"])
def test_a_pull_killed_mid_way_leaves_no_staging_behind(tmp_path: Path, sync_url: str, pg_cluster: PgCluster,
                                                        killed: bool) -> None:
    _, mallory, bob_url = members(sync_url)
    _full_chunks(mallory, 3)
    bob = team_cli(tmp_path, "bob", "https://github.com/team/app", bob_url)
    if killed:
        proxy = SlowLinkProxy(pg_cluster.port, rate=RATE)
        try:
            slow = dict(bob.env, EVO_AGENT_SYNC_URL=proxy.url(bob_url))
            proc = bob.popen("--resume", SID, "-p", "go on", env=slow, start_new_session=True,
                             stdin=subprocess.DEVNULL)

            def mid_transfer() -> None:
                deadline = time.monotonic() + 60
                while not any((d / "messages.jsonl").is_file() and (d / "messages.jsonl").stat().st_size > (1 << 20)
                              for d in _staging(bob.sessions_dir)):
                    assert proc.poll() is None, proc.communicate()
                    assert time.monotonic() < deadline, "the fetch never got going"
                    time.sleep(0.05)

            bob.kill_9_when(proc, mid_transfer)
        finally:
            proxy.close()
        assert _staging(bob.sessions_dir), "the kill came after the fetch"
        assert not (bob.sessions_dir / SID).exists()
    again = bob.run("--resume", SID, "-p", "go on", timeout=120)  # a teammate's: asked, refused in print mode
    assert again.rc == 1 and "evo-agent sessions adopt" in again.err and "Traceback" not in again.err, again.err
    assert (bob.sessions_dir / SID / "messages.jsonl").read_bytes() == store_bytes(sync_url, SID)
    assert _staging(bob.sessions_dir) == []


def test_a_refresh_cut_by_the_server_stopping_mid_transfer_is_caught_up_whole(tmp_path: Path, sync_url: str,
                                                                             pg_cluster: PgCluster) -> None:
    """`pg_ctl stop -m immediate` while a teammate's growing session is appended to bob's copy: one line, the copy
    as it was, and the next resume brings it up to the store's bytes exactly."""
    _, mallory, bob_url = members(sync_url)
    _full_chunks(mallory, 0)
    bob = team_cli(tmp_path, "bob", "https://github.com/team/app", bob_url)
    first = bob.run("--resume", SID, "-p", "go on")
    assert first.rc == 1 and "evo-agent sessions adopt" in first.err, first.err
    copy = bob.sessions_dir / SID / "messages.jsonl"
    before = copy.read_bytes()
    _full_chunks(mallory, 3, append=True)
    proxy = SlowLinkProxy(pg_cluster.port, rate=RATE)
    try:
        slow = dict(bob.env, EVO_AGENT_SYNC_URL=proxy.url(bob_url))
        proc = bob.popen("--resume", SID, "-p", "go on", env=slow, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while copy.stat().st_size < len(before) + (1 << 20):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the refresh never got going"
            time.sleep(0.05)
        pg_cluster.crash()
        out, err = proc.communicate(timeout=60)
    finally:
        proxy.close()
        pg_cluster.start()
    assert proc.returncode != 0 and "Traceback" not in err, err
    assert copy.read_bytes() == before  # put back as it was: no torn tail to resume
    again = bob.run("--resume", SID, "-p", "go on", timeout=120)
    assert again.rc == 1 and "Traceback" not in again.err, again.err
    assert copy.read_bytes() == store_bytes(sync_url, SID)


def test_a_refresh_held_by_a_suspended_process_never_hangs_a_resume(tmp_path: Path, sync_url: str) -> None:
    """A refresh locks the copy's transcript while it appends; another evo-agent suspended mid-refresh (Ctrl+Z) held
    that lock for as long as it stayed stopped, and every other `--resume` of the session waited on it, silently,
    for ever. Now it waits one idle window (EVO_AGENT_SYNC_TIMEOUT) and goes on with the copy as it is. The test
    holds the lock itself, as the stopped process would; the control: the lock released, the copy caught up."""
    import fcntl
    import os

    _, mallory, bob_url = members(sync_url)
    _full_chunks(mallory, 0)
    bob = team_cli(tmp_path, "bob", "https://github.com/team/app", bob_url, EVO_AGENT_SYNC_TIMEOUT="2")
    assert bob.run("--resume", SID, "-p", "go on").rc == 1
    copy = bob.sessions_dir / SID / "messages.jsonl"
    before = copy.read_bytes()
    _full_chunks(mallory, 1, append=True)
    fd = os.open(copy, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        held = bob.run("--resume", SID, "-p", "go on", timeout=60)
        assert held.rc == 1 and "evo-agent sessions adopt" in held.err and "Traceback" not in held.err, held.err
        assert copy.read_bytes() == before
    finally:
        os.close(fd)
    released = bob.run("--resume", SID, "-p", "go on", timeout=60)
    assert released.rc == 1 and "Traceback" not in released.err, released.err
    assert copy.read_bytes() == store_bytes(sync_url, SID)


@pytest.mark.parametrize("sidechains", [MAX_SIDECHAINS + 1, 3], ids=["a flood", "a few (the control)"])
@pytest.mark.parametrize("when", ["first fetch", "refresh"])
def test_a_teammates_flood_of_sidechain_files_is_not_fetched(tmp_path: Path, sync_url: str, sidechains: int,
                                                             when: str) -> None:
    """A member's own rows can name a million sidechain files (one INSERT … SELECT of tiny chunks): a teammate's
    `--resume` wrote every one into the project, for minutes, as far as the disk's inodes went. Now a session
    with more than MAX_SIDECHAINS is refused in one line, on a first fetch or a refresh of a copy fetched before."""
    import hashlib

    import psycopg

    _, mallory, bob_url = members(sync_url)
    _full_chunks(mallory, 0)
    bob = team_cli(tmp_path, "bob", "https://github.com/team/app", bob_url)
    if when == "refresh":
        assert bob.run("--resume", SID, "-p", "go on").rc == 1
    body = b'{"type":"user","message":{"role":"user","content":"x"}}\n'
    with psycopg.connect(mallory, autocommit=True) as conn:
        conn.execute("INSERT INTO evo_agent_chunks (session_id, file, start_offset, end_offset, checksum, body) "
                     "SELECT %s, 'subagent/1796000000000_task' || i || '_abcd.jsonl', 0, %s, %s, %s "
                     "FROM generate_series(1, %s) i", (SID, len(body), hashlib.sha256(body).digest(), body, sidechains))
    resumed = bob.run("--resume", SID, "-p", "go on", timeout=120)
    assert "Traceback" not in resumed.err, resumed.err
    sub = bob.sessions_dir / SID / "subagent"
    written = len(list(sub.iterdir())) if sub.is_dir() else 0
    if sidechains > MAX_SIDECHAINS:
        assert written == 0 and resumed.rc != 0, resumed.err
        if when == "first fetch":
            assert f"more than {MAX_SIDECHAINS:,} sidechain files" in resumed.err, resumed.err
            assert not (bob.sessions_dir / SID).exists() and _staging(bob.sessions_dir) == []
    else:
        assert written == sidechains and resumed.rc == 1, resumed.err
