"""A pull into a full disk says so in one line and leaves every copy whole: none, or a verified prefix.

Real cluster, mallory's session written with psycopg as any member may; bob runs the real console script
with his sessions on a small tmpfs filled to within a few pages. Each test ends with the space back: the
same command then fetches the whole session (the control).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import psycopg
import pytest

from tests.cli_runner import Cli
from tests.helpers import fill_disk, mount_tmpfs, needs_root, unmount

from .helpers import store_bytes
from .test_cli import team_cli
from .test_poison_rows import members, push_raw, record, user_line

pytestmark = needs_root
SID = "1796000000000_d15cf011"
LEFT = 16 << 10  # bytes the disk has free: less than any fetch below needs


def _lines(word: str, n: int, size: int) -> bytes:
    return b"".join(user_line(SID, f"{word} {i} " + "x" * size) for i in range(n))


@pytest.fixture
def bob_on_a_small_disk(tmp_path: Path, sync_url: str):  # noqa: ANN201
    """(bob, the mount point holding his sessions, mallory's URL); her session of ~230 KB is in the store."""
    _, mallory, bob_url = members(sync_url)
    push_raw(mallory, SID, [record(SID, type="session_start", model="m", provider="demo"), _lines("wombat", 100, 2000)])
    bob = team_cli(tmp_path, "bob", "https://github.com/team/app", bob_url)
    mnt = bob.sessions_dir.parent
    try:
        mount_tmpfs(mnt, "1m")
    except subprocess.CalledProcessError as exc:
        pytest.skip(f"cannot mount a tmpfs here: {exc}")
    try:
        assert bob.run("sessions", "list").rc == 0  # the sessions directory and its .gitignore
        yield bob, mnt, mallory
    finally:
        unmount(mnt)


def _resume(bob: Cli) -> tuple[int, str]:
    done = bob.run("--resume", SID, "-p", "go on")
    assert "Traceback" not in done.err, done.err
    return done.rc, done.err


def test_a_fetch_into_a_full_disk_is_one_line_naming_the_disk(bob_on_a_small_disk, sync_url: str) -> None:
    bob, mnt, _ = bob_on_a_small_disk
    filler = fill_disk(mnt, LEFT)
    rc, err = _resume(bob)
    assert rc == 1 and len(err.splitlines()) == 1, err
    assert "No space left on device" in err and f"cannot copy session {SID}" in err and "failed" not in err, err
    assert sorted(os.listdir(bob.sessions_dir)) == [".gitignore"]  # no copy, no staging left
    os.unlink(filler)
    rc, err = _resume(bob)  # the control: space is back
    assert rc == 1 and f"evo-agent sessions adopt {SID}" in err, err
    assert (bob.sessions_dir / SID / "messages.jsonl").read_bytes() == store_bytes(sync_url, SID)


def test_a_refresh_cut_short_by_a_full_disk_leaves_the_copy_as_it_was(bob_on_a_small_disk, sync_url: str) -> None:
    bob, mnt, mallory = bob_on_a_small_disk
    _resume(bob)
    copy = bob.sessions_dir / SID / "messages.jsonl"
    before = copy.read_bytes()
    assert before == store_bytes(sync_url, SID)
    more = _lines("more", 60, 3000)  # her session grows by ~190 KB
    with psycopg.connect(mallory, autocommit=True) as conn:
        conn.execute("INSERT INTO evo_agent_chunks (session_id, file, start_offset, end_offset, checksum, body) "
                     "VALUES (%s, 'messages.jsonl', %s, %s, %s, %s)",
                     (SID, len(before), len(before) + len(more), hashlib.sha256(more).digest(), more))
    filler = fill_disk(mnt, LEFT)
    rc, err = _resume(bob)  # the refresh fails; the copy is asked about as it stands
    assert rc == 1 and f"evo-agent sessions adopt {SID}" in err, err
    assert copy.read_bytes() == before  # not a torn line more
    os.unlink(filler)
    _resume(bob)  # the control: space is back
    assert copy.read_bytes() == before + more
