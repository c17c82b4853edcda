"""A server that goes silent mid-transfer (no reset, no FIN: a dead path, a stopped backend) never hangs a command.

Through a loopback proxy the test controls: it forwards a push or a fetch for a while, then stops forwarding in
both directions with the sockets left open. The command ends with one line (EVO_AGENT_SYNC_TIMEOUT seconds
without a byte), and once the path is back the next push catches up exactly (the store's own offsets).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.builders import quiet_store, write_session

from .helpers import complete_line_count, line_rows
from .proxy import SilentProxy
from .test_cli import team_cli

pytestmark = pytest.mark.faults


def big_session(project: Path, lines: int) -> str:
    rec = quiet_store(project).create(model="m", provider="demo")
    rec.append_many(("user", {"message": {"role": "user", "content": f"line {i} " + "y" * (i % 300)}})
                    for i in range(lines))
    rec.checkpoint()
    return rec.session_id


@pytest.fixture
def proxy(pg_cluster):
    made: list[SilentProxy] = []

    def make(**limits: int) -> SilentProxy:
        made.append(SilentProxy(pg_cluster.port, **limits))
        return made[-1]

    yield make
    for p in made:
        p.close()


def test_silent_mid_push_is_one_line_then_caught_up(sync_url: str, tmp_path: Path, proxy) -> None:
    from evo_agent.sync.db import connect

    connect(sync_url).close()  # the schema exists: the silence falls on the lines, not the migration
    silent = proxy(silent_after_up=300_000)
    kim = team_cli(tmp_path, "kim", "git@github.com:team/app.git", silent.url(sync_url),
                   EVO_AGENT_SYNC_TIMEOUT="2")
    sid = big_session(kim.project, 4000)
    stuck = kim.run("sessions", "push", "--all", timeout=90)  # a hang fails here
    assert silent.went_silent.is_set()
    assert stuck.rc != 0 and len(stuck.err_lines) == 1, stuck.err
    assert "sent nothing for 2s" in stuck.err and "Traceback" not in stuck.err
    assert line_rows(sync_url, sid) < complete_line_count(kim.transcript(sid))  # it really was cut short
    silent.heal()
    done = kim.run("sessions", "push", "--all", timeout=90)
    assert done.rc == 0, done.err
    assert line_rows(sync_url, sid) == complete_line_count(kim.transcript(sid))


def test_silent_mid_fetch_is_one_line_and_leaves_no_copy(sync_url: str, tmp_path: Path, proxy) -> None:
    alice = team_cli(tmp_path, "alice", "git@github.com:team/app.git", sync_url)
    sid = big_session(alice.project, 4000)
    assert alice.run("sessions", "push", "--all").rc == 0
    silent = proxy(silent_after_down=200_000)
    bob = team_cli(tmp_path, "bob", "https://github.com/team/app", silent.url(sync_url), EVO_AGENT_SYNC_TIMEOUT="2")
    for attempt in (("sessions", "show", sid), ("--resume", sid, "-p", "go on")):
        stuck = bob.run(*attempt, timeout=90)
        assert silent.went_silent.is_set(), (attempt, stuck.err)
        assert stuck.rc != 0 and "sent nothing for 2s" in stuck.err and "Traceback" not in stuck.err, stuck.err
        assert bob.session_ids() == []  # nothing half-fetched to list or resume
        silent.rearm(silent_after_down=200_000)
    silent.heal()
    shown = bob.run("sessions", "show", sid, timeout=90)
    assert shown.rc == 0 and "line 3999" in shown.out, shown.err


def test_background_sync_gets_past_a_silent_connection(sync_url: str, tmp_path: Path, proxy,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The agent's thread: one warning when the path goes silent, then — path back — the next turn catches up."""
    from evo_agent.sync.background import BackgroundSync
    from evo_agent.sync.db import connect
    from tests.helpers import wait_for

    from .helpers import project_with_origin

    connect(sync_url).close()
    monkeypatch.setenv("EVO_AGENT_SYNC_TIMEOUT", "1")
    silent = proxy(silent_after_up=300_000)
    project = project_with_origin(tmp_path / "p", "git@github.com:team/app.git")
    sid = big_session(project, 4000)
    store = quiet_store(project)
    warnings: list[str] = []
    sync = BackgroundSync(silent.url(sync_url), store, warnings.append)
    sync.notify(sid)  # a turn ended
    wait_for(lambda: sync.failures >= 1, timeout=60)
    assert silent.went_silent.is_set() and len(warnings) == 1 and "sent nothing for 1s" in warnings[0]
    silent.heal()
    lines = complete_line_count(store.sessions_dir / sid / "messages.jsonl")

    def next_turn_caught_up() -> bool:
        sync.notify(sid)  # a turn ended: a fresh connection, from the store's own offsets
        sync._idle.wait(30)
        return line_rows(sync_url, sid) == lines

    wait_for(next_turn_caught_up, timeout=120, interval=0.5)
    assert sync.close(wait=60)
    assert len(warnings) == 1


@pytest.mark.parametrize("when", ["while connecting", "in the listing's answer", "mid-fetch"])
def test_a_server_that_trickles_its_answer_never_hangs_a_command(sync_url: str, tmp_path: Path, pg_cluster,
                                                                 when: str) -> None:
    """One byte every quarter second is never "idle", yet a listing of 20 rows would take hours: the command
    ends with one line after about EVO_AGENT_SYNC_TIMEOUT seconds of too little, and works once the path heals."""
    from .proxy import SilentProxy, TrickleProxy

    alice = team_cli(tmp_path, "alice", "git@github.com:team/app.git", sync_url)
    sid = big_session(alice.project, 4000)
    store = quiet_store(alice.project)  # 20 more sessions to list, as a turn writes them (not 20 runs: 8 s)
    for i in range(20):
        write_session(store, (f"session number {i} " + "words " * 30, "ok"), model="demo", provider="demo")
    assert alice.run("sessions", "push", "--all").rc == 0
    args = ("sessions", "show", sid) if when == "mid-fetch" else ("sessions", "list", "--remote", "--limit", "30")
    counting = SilentProxy(pg_cluster.port)  # how many bytes the command takes from the server at full speed
    try:
        bob = team_cli(tmp_path, "bob", "https://github.com/team/app", counting.url(sync_url),
                       EVO_AGENT_SYNC_TIMEOUT="1")
        assert bob.run(*args).rc == 0
        total = max(link.sent["down"] for link in counting.links)
    finally:
        counting.close()
    fast = {"while connecting": 100, "in the listing's answer": total - 4000, "mid-fetch": total // 3}[when]
    slow = TrickleProxy(pg_cluster.port, fast=fast)
    try:
        bob.env["EVO_AGENT_SYNC_URL"] = slow.url(sync_url)
        stuck = bob.run(*args, timeout=90)  # a hang fails here
        assert slow.went_silent.is_set()
        assert stuck.rc != 0 and len(stuck.err_lines) == 1 and "Traceback" not in stuck.err, stuck.err
        assert "EVO_AGENT_SYNC_TIMEOUT" in stuck.err or "timeout" in stuck.err, stuck.err
        assert bob.session_ids() == []
        slow.heal()
        healed = bob.run(*args, timeout=90)
        assert healed.rc == 0 and sid in healed.out + healed.err, healed.err
    finally:
        slow.close()


def test_an_answer_that_never_ends_never_hangs_a_call(sync_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server that keeps answering at full speed and never finishes (here: notices without end, the server's
    own statement timeout lifted, as a hostile server would ignore it) is never idle; one call still ends."""
    import psycopg

    from evo_agent.sync.db import WAIT_CAP_WINDOWS, connect

    monkeypatch.setenv("EVO_AGENT_SYNC_TIMEOUT", "0.25")
    conn = connect(sync_url)
    try:
        conn.execute("SET statement_timeout = 0")
        with pytest.raises(psycopg.OperationalError, match=f"went on past {0.25 * WAIT_CAP_WINDOWS:g}s"):
            conn.execute("DO $$ BEGIN LOOP RAISE NOTICE 'and more'; END LOOP; END $$")
    finally:
        conn.close()
    with connect(sync_url) as again:  # the control: an ordinary call on a fresh connection
        assert again.execute("SELECT 1").fetchone() == (1,)
