"""The picker's team view (issue #21): Tab lists the repository's sessions in the team store, Enter fetches one.

The real console script in tmux at 80×24, two clones with two HOMEs, a real PostgreSQL (tests/sync/conftest.py).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.cli_runner import Cli
from tests.tmux_terminal import Terminal

from .test_cli import team_cli

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def _resume_sources(cli: Cli) -> set[str]:
    sources = set()
    for sid in cli.session_ids():
        records = cli.records(sid)
        if len(records) > 1 and records[1].get("type") == "resume_marker":
            sources.add(records[1]["from_session_id"])
    return sources


def test_tab_shows_the_teams_sessions_and_enter_fetches_and_resumes_one(tmp_path: Path, sync_url: str, terminals):
    alice = team_cli(tmp_path, "alice", "git@github.com:team/app.git", sync_url)
    bob = team_cli(tmp_path, "bob", "https://github.com/team/app", sync_url)
    theirs = alice.run("-p", "list the files").hint_id()
    mine = bob.run("-p", "run echo mine").hint_id()
    t = Terminal(bob.project, ["--resume"], env=bob.env)
    terminals.append(t)
    screen = t.wait(r'"run echo mine"')
    assert "Tab team" in screen and "list the files" not in screen  # this machine's sessions first
    t.keys("Tab")
    screen = t.wait(r"Resume a team session")
    screen = t.wait(r'user-alice@\S+ "list the files"')
    assert "2 team sessions" in screen and "Tab this machine" in screen
    assert all(len(line) <= 80 for line in screen.splitlines())
    t.keys("Tab")
    t.wait(r"Resume a session ")  # and back
    t.keys("Tab")
    t.wait(r'user-alice@\S+ "list the files"')
    t.type("list the")  # filtering works in the team view too
    screen = t.wait(r"1 of 2 team sessions")
    assert "by user-alice@" in screen and "Enter copies it here and resumes it" in screen
    t.keys("Enter")
    screen = t.wait(r"resume anyway\? \[y/N\]")  # one shared role: whose it is cannot be proven, so it asks
    flat = " ".join(screen.split())  # the question folds between words (cli/fold.py)
    assert "fetched from the team store" in flat and "list the files" in flat
    t.type("y")
    t.keys("Enter")  # Enter ends the answer even right after the full-screen picker
    t.wait(r"messages restored")
    assert theirs in bob.session_ids() and _resume_sources(bob) == {theirs}
    listed = {r["id"]: r for r in json.loads(bob.run("sessions", "list", "--json").out)}
    assert listed[theirs]["first_prompt"] == "list the files"  # from the transcript, not the pusher's meta
    assert mine in bob.session_ids()


def test_without_a_team_store_there_is_no_team_view(tmp_path: Path, terminals):
    solo = team_cli(tmp_path, "solo", "https://github.com/team/app", None)
    solo.run("-p", "run echo alone").hint_id()
    t = Terminal(solo.project, ["--resume"], env=solo.env)
    terminals.append(t)
    screen = t.wait(r'"run echo alone"')
    assert "Tab" not in screen
    t.keys("Tab")  # does nothing
    t.keys("Escape")
    screen = t.wait(r"EXITED-0")
    assert "team" not in screen


def test_a_fresh_clone_opens_the_picker_on_the_teams_sessions(tmp_path: Path, sync_url: str, terminals):
    alice = team_cli(tmp_path, "alice", "git@github.com:team/app.git", sync_url)
    carol = team_cli(tmp_path, "carol", "https://github.com/team/app.git", sync_url)
    theirs = alice.run("-p", "list the files").hint_id()
    assert carol.session_ids() == []
    t = Terminal(carol.project, ["--resume"], env=carol.env)
    terminals.append(t)
    screen = t.wait(r'user-alice@\S+ "list the files"')
    assert "Resume a team session" in screen and "1 team session" in screen
    t.keys("Enter")
    t.wait(r"resume anyway\? \[y/N\]")
    t.type("y")
    t.keys("Enter")  # Enter ends the answer even right after the full-screen picker
    t.wait(r"messages restored")
    assert _resume_sources(carol) == {theirs}


def test_the_apps_resume_picker_has_the_team_view_too(tmp_path: Path, sync_url: str, terminals):
    alice = team_cli(tmp_path, "alice", "git@github.com:team/app.git", sync_url)
    bob = team_cli(tmp_path, "bob", "https://github.com/team/app", sync_url)
    theirs = alice.run("-p", "list the files").hint_id()
    bob.run("-p", "run echo mine").hint_id()
    t = Terminal(bob.project, [], env=bob.env)
    terminals.append(t)
    t.wait(r"/help for help")
    t.wait(r"tokens · context")
    t.type("/resume")
    t.keys("Enter")
    screen = t.wait(r'"run echo mine"')
    assert "Tab team" in screen, screen
    t.keys("Tab")
    t.wait(r'user-alice@\S+ "list the files"')  # below bob's own, pushed later: everyone's sessions are there
    t.type("alice")  # the filter matches user@host too
    t.wait(r'> .*user-alice@\S+ "list the files"')
    t.keys("Enter")
    t.wait(r"fetched from the team\s+store")  # the app asks: whose it is, its first prompt (folded between words)
    t.keys("Down", "Enter")  # "Yes", chosen on purpose from the question's menu
    t.wait(rf"Resumed {theirs}: \d+ messages restored")
    assert _resume_sources(bob) == {theirs}


@pytest.mark.parametrize("lie", ["user and host", "user only"])
def test_the_team_view_names_the_author_the_store_vouches_for(tmp_path: Path, sync_url: str, terminals,
                                                              lie: str) -> None:
    import psycopg

    from evo_agent.sync.db import connect

    from .pgcluster import add_teammate

    connect(sync_url).close()
    alice_role, alice_url = add_teammate(sync_url, ["github.com/team/app"])
    bob_role, bob_url = add_teammate(sync_url, ["github.com/team/app"])
    alice = team_cli(tmp_path, "alice", "git@github.com:team/app.git", alice_url)
    bob = team_cli(tmp_path, "bob", "https://github.com/team/app", bob_url)
    alice.run("-p", "alice's own work").hint_id()
    theirs = bob.run("-p", "curl the deploy script into sh").hint_id()
    with psycopg.connect(bob_url, autocommit=True) as conn:  # bob's own row: the user and host are his to say
        (host,) = conn.execute("SELECT host FROM evo_agent_sessions WHERE user_name = 'user-alice'").fetchone()
        conn.execute("UPDATE evo_agent_sessions SET user_name = 'user-alice', host = %s WHERE session_id = %s",
                     (host if lie == "user and host" else "elsewhere", theirs))
    (row,) = [r for r in json.loads(alice.run("sessions", "list", "--remote", "--json").out) if r["id"] == theirs]
    assert row["user"] == "user-alice" and row["author"] == bob_role  # the control: the claim is in the store
    t = Terminal(alice.project, ["--resume"], env=alice.env)
    terminals.append(t)
    t.wait(r"alice's own work")
    t.keys("Tab")
    screen = t.wait(r"curl the deploy")
    line = next(x for x in screen.splitlines() if "curl the deploy" in x)
    assert bob_role in line and "user-alice" not in line, screen
