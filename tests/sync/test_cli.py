"""The real console script with a team store: two clones, two HOMEs, one history."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import pytest

from tests.cli_runner import Cli, clean_env

from .helpers import assert_private, line_rows, project_with_origin, session_files


def team_cli(tmp_path: Path, name: str, origin: str, url: str | None, **extra: str) -> Cli:
    home = tmp_path / f"home-{name}"
    home.mkdir()
    project = project_with_origin(tmp_path / name, origin)
    env = clean_env(home, EVO_AGENT_PROVIDER="demo", ANTHROPIC_BASE_URL="http://127.0.0.1:9", USER=f"user-{name}",
                    LOGNAME=f"user-{name}", **extra)
    if url is not None:
        env["EVO_AGENT_SYNC_URL"] = url
    return Cli(project, env)


@pytest.fixture
def alice(tmp_path: Path, sync_url: str) -> Cli:
    return team_cli(tmp_path, "alice", "git@github.com:team/app.git", sync_url)


@pytest.fixture
def bob(tmp_path: Path, sync_url: str) -> Cli:
    return team_cli(tmp_path, "bob", "https://github.com/team/app", sync_url)


def test_a_session_written_in_one_clone_is_listed_shown_and_resumed_in_another(alice: Cli, bob: Cli,
                                                                                sync_url: str) -> None:
    done = alice.run("-p", "hello from alice")
    assert done.rc == 0, done.err
    sid = done.hint_id()
    assert line_rows(sync_url, sid) == alice.transcript(sid).read_bytes().count(b"\n")  # pushed before exiting

    listed = bob.run("sessions", "list", "--remote", "--json")
    assert listed.rc == 0, listed.err
    (row,) = json.loads(listed.out)
    assert (row["id"], row["user"], row["first_prompt"]) == (sid, "user-alice", "hello from alice")
    table = bob.run("sessions", "list", "--remote")
    assert sid in table.out and "user-alice@" in table.out and "hello from alice" in table.out
    assert bob.run("sessions", "list", "--remote", "--user", "nobody-else").out.startswith("No sessions")
    assert sid in bob.run("sessions", "list", "--remote", "--branch", "main", "--user", "user-alice").out
    assert bob.run("sessions", "list", "--remote", "--branch", "elsewhere").out.startswith("No sessions")

    shown = bob.run("sessions", "show", sid[:16])
    assert shown.rc == 0 and "hello from alice" in shown.out, shown.err
    exported = bob.run("sessions", "export", sid, "--format", "jsonl")
    assert exported.rc == 0 and exported.out.encode() == alice.transcript(sid).read_bytes()
    assert bob.session_ids() == []  # show and export leave no copy behind

    # One shared role: the store cannot vouch for the author, so the fetched copy is foreign (SPEC §9).
    refused = bob.run("--resume", sid, "-p", "and bob continues")
    assert refused.rc == 1 and "fetched session" in refused.err
    assert f"evo-agent sessions adopt {sid}" in refused.err and "authors not verified" in refused.err
    assert "hello from alice" in refused.err  # whose it is and its first prompt
    assert session_files(bob.sessions_dir / sid) == session_files(alice.sessions_dir / sid)  # byte-identical
    listed = {r["id"]: r for r in json.loads(bob.run("sessions", "list", "--json").out)}
    own_meta = json.loads((alice.sessions_dir / sid / "meta.json").read_text())
    for key in ("first_prompt", "message_count", "created_ms", "updated_ms", "model"):  # rebuilt from the transcript
        assert listed[sid][key] == own_meta[key], key  # (a teammate's meta is their word: never taken)
    assert_private(bob.sessions_dir / sid, read_only=["messages.jsonl"])
    adopted = bob.run("sessions", "adopt", sid)
    assert adopted.rc == 0 and "recorded elsewhere: fetched from the team store" in adopted.out, adopted.err
    own = adopted.out.split("new session ")[1].split()[0]
    resumed = bob.run("--resume", own, "-p", "and bob continues")
    assert resumed.rc == 0, resumed.err
    new_sid = resumed.hint_id()
    assert sorted(bob.session_ids()) == sorted([sid, own, new_sid])
    marker = next(r for r in bob.records(own) if r["type"] == "resume_marker")
    assert marker["from_session_id"] == sid and "fetched from the team store" in marker["adopted"]
    restored = [r for r in bob.records(new_sid) if r.get("restored")]
    assert restored[0]["message"]["content"] == "hello from alice"
    assert line_rows(sync_url, sid) == alice.transcript(sid).read_bytes().count(b"\n")  # the remote is untouched
    pushed = bob.run("sessions", "push", sid)  # a teammate's copy never leaves under bob's name
    assert pushed.rc == 1 and "not pushed: recorded elsewhere" in pushed.err
    both = json.loads(alice.run("sessions", "list", "--remote", "--json").out)
    assert {r["id"]: r["user"] for r in both} == {sid: "user-alice", own: "user-bob", new_sid: "user-bob"}


def test_sessions_not_yet_pushed_are_named_and_push_says_what_was_behind(tmp_path: Path, sync_url: str) -> None:
    offline = team_cli(tmp_path, "carol", "git@github.com:team/app.git", "postgresql://evo:pw@127.0.0.1:9/none")
    first = offline.run("-p", "written while the store is down")
    assert first.rc == 0, first.err
    sid = first.hint_id()
    warnings = [line for line in first.err_lines if "team store" in line]
    assert len(warnings) == 1 and warnings[0].startswith("evo-agent: "), first.err
    assert "Traceback" not in first.err

    online = {**offline.env, "EVO_AGENT_SYNC_URL": sync_url}
    listing = offline.run("sessions", "list", env=online)
    assert "1 session not yet pushed to the team store" in listing.out and sid in listing.out

    pushed = offline.run("sessions", "push", "--all", env=online)
    assert pushed.rc == 0, pushed.err
    lines = offline.transcript(sid).read_bytes().count(b"\n")
    assert f"{sid}: pushed {lines} lines" in pushed.out
    assert "1 session was behind" in pushed.out
    assert "pw@" not in pushed.out and "s3cret" not in pushed.out
    again = offline.run("sessions", "push", sid, env=online)
    assert "0 sessions were behind" in again.out and "1 already up to date" in again.out
    assert "not yet pushed" not in offline.run("sessions", "list", env=online).out


def test_the_next_run_catches_up_what_an_earlier_run_could_not_send(tmp_path: Path, sync_url: str) -> None:
    dave = team_cli(tmp_path, "dave", "git@github.com:team/app.git", "postgresql://evo:pw@127.0.0.1:9/none")
    earlier = dave.run("-p", "while offline").hint_id()
    later = dave.run("-p", "back online", env={**dave.env, "EVO_AGENT_SYNC_URL": sync_url})
    assert later.rc == 0, later.err
    assert line_rows(sync_url, earlier) == dave.transcript(earlier).read_bytes().count(b"\n")
    assert line_rows(sync_url, later.hint_id()) > 0


def test_the_url_may_come_from_the_user_config_file(tmp_path: Path, sync_url: str) -> None:
    erin = team_cli(tmp_path, "erin", "git@github.com:team/app.git", None)
    config = Path(erin.env["HOME"]) / ".config" / "evo-agent" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f'sync_url = "{sync_url}"\n')
    sid = erin.run("-p", "configured in a file").hint_id()
    assert line_rows(sync_url, sid) > 0
    assert not list(erin.project.rglob("config.toml"))  # nothing written into the project


def test_search_and_prune_in_the_team_store(alice: Cli, bob: Cli) -> None:
    sid = alice.run("-p", "the flaky upload retries").hint_id()
    found = bob.run("sessions", "search", "--remote", "upload")
    assert found.rc == 0 and sid in found.out and "«upload»" in found.out, found.err
    assert bob.run("sessions", "search", "--remote", "zebra-nothing").rc == 1

    kept = bob.run("sessions", "prune", "--remote", "--older-than", "1d")
    assert kept.rc == 0 and "deleted 0 sessions" in kept.out
    time.sleep(1.1)  # the session was updated before alice's run returned: now it is older than 1 s, however slow
    dry = bob.run("sessions", "prune", "--remote", "--older-than", "1s", "--dry-run")
    assert f"would delete {sid}" in dry.out
    assert sid in bob.run("sessions", "list", "--remote").out
    gone = bob.run("sessions", "prune", "--remote", "--older-than", "1s")
    assert f"deleted {sid}" in gone.out and "deleted 1 session from" in gone.out
    assert bob.run("sessions", "list", "--remote").out.startswith("No sessions")
    assert alice.transcript(sid).is_file()  # the local source of truth is untouched


@pytest.mark.parametrize("url, expected", [
    ("postgresql://evo:wrong-pw@127.0.0.1:{port}/postgres", "password authentication failed"),
    ("postgresql://evo:pw@127.0.0.1:9/none", "cannot connect to the team store postgresql://evo:***@127.0.0.1:9"),
    ("postgresql://evo:pw@[bad/x", "bad EVO_AGENT_SYNC_URL"),
    ("mysql://evo:pw@127.0.0.1/x", "EVO_AGENT_SYNC_URL must be a postgresql://"),
])
def test_a_store_that_cannot_be_used_is_one_line(tmp_path: Path, pg_cluster, url: str, expected: str) -> None:
    url = url.format(port=pg_cluster.port)
    frank = team_cli(tmp_path, "frank", "git@github.com:team/app.git", url)
    for args in (("sessions", "push", "--all"), ("sessions", "list", "--remote"), ("sessions", "show", "1780")):
        done = frank.run(*args)
        assert done.rc == 1, (args, done.err)
        assert len(done.err_lines) == 1 and done.err.startswith("evo-agent: "), (args, done.err)
        assert "Traceback" not in done.err and "wrong-pw" not in done.err and ":pw@" not in done.err
        if args[1] != "show":
            assert expected in done.err, done.err
    run = frank.run("-p", "the agent does not care")
    assert (run.rc == 0 and "the agent does not care" in run.out) or run.out, run.err
    assert "Traceback" not in run.err and "wrong-pw" not in run.err
    assert run.hint_id()  # the exit hint is still the last line
    assert len([line for line in run.err_lines if "team store" in line or "SYNC_URL" in line]) == 1, run.err


def test_no_team_store_configured_is_one_line(tmp_path: Path) -> None:
    gina = team_cli(tmp_path, "gina", "git@github.com:team/app.git", None)
    done = gina.run("sessions", "list", "--remote")
    assert done.rc == 1 and done.err_lines == [
        "evo-agent: no team store configured: set EVO_AGENT_SYNC_URL=postgresql://… "
        "(or sync_url in ~/.config/evo-agent/config.toml)"]
    assert "not yet pushed" not in gina.run("sessions", "list").out


def test_the_url_never_reaches_a_tool_or_the_transcript(alice: Cli, sync_url: str) -> None:
    """A command the model runs does not inherit EVO_AGENT_SYNC_URL, so its password cannot land on disk."""
    done = alice.run("-p", "run env", env={**alice.env, "EVO_AGENT_PERMISSION_MODE": "bypass"})
    assert done.rc == 0, done.err
    text = alice.transcript(done.hint_id()).read_text()
    assert "LOGNAME=user-alice" in text  # the tool ran and its output was recorded
    assert "EVO_AGENT_SYNC_URL" not in text and "s3cret-pw" not in text


def test_a_store_that_never_answers_costs_a_bounded_wait_at_exit(tmp_path: Path) -> None:
    """A server on loopback that accepts and then never says a word: the turn is unaffected, the exit waits at most the bound."""
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)  # the kernel completes the handshakes; nobody ever answers
    try:
        port = silent.getsockname()[1]
        kim = team_cli(tmp_path, "kim", "git@github.com:team/app.git", f"postgresql://evo:pw@127.0.0.1:{port}/team",
                       EVO_AGENT_SYNC_CONNECT_TIMEOUT="30", EVO_AGENT_SYNC_EXIT_WAIT="1")
        done = kim.run("-p", "hello while the store stays silent", timeout=25)
        assert done.rc == 0, done.err
        assert done.hint_id()  # still the last line, whatever the sync thread is doing
        assert len([line for line in done.err_lines if "team store" in line]) == 1, done.err
    finally:
        silent.close()


def test_slash_resume_fetches_a_teammates_session_too(alice: Cli, bob: Cli) -> None:
    sid = alice.run("-p", "alice's question").hint_id()
    done = bob.run("--plain", input=f"/resume {sid[:18]}\n/exit\n")
    assert done.rc == 0, done.err
    assert "fetched session" in done.err, (done.out, done.err)
    # piped input cannot confirm: refused like a planted session, with the way to take it on
    assert f"evo-agent sessions adopt {sid}" in done.err and "recorded elsewhere" in done.err
    assert (bob.sessions_dir / sid / "messages.jsonl").read_bytes() == alice.transcript(sid).read_bytes()
    copies = [s for s in bob.session_ids() if s != sid and len(bob.records(s)) > 1
              and bob.records(s)[1]["type"] == "resume_marker"]
    assert copies == []


def test_team_sessions_for_the_picker(alice: Cli, bob: Cli, sync_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from evo_agent.sync.hooks import team_sessions

    sid = alice.run("-p", "for the team view").hint_id()
    monkeypatch.setenv("EVO_AGENT_SYNC_URL", sync_url)
    rows, error = team_sessions(bob.project)
    assert error is None and [(r.id, r.user) for r in rows] == [(sid, "user-alice")]
    monkeypatch.setenv("EVO_AGENT_SYNC_URL", "postgresql://evo:pw@127.0.0.1:9/x")
    rows, error = team_sessions(bob.project)
    assert rows == [] and error.startswith("evo-agent: cannot connect to the team store postgresql://evo:***@")
    monkeypatch.delenv("EVO_AGENT_SYNC_URL")
    monkeypatch.setenv("HOME", str(bob.project))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    assert team_sessions(bob.project) == ([], None)


def test_a_sessions_name_travels_to_the_team_listing(alice: Cli, bob: Cli) -> None:
    sid = alice.run("-n", "fix the uploads", "-p", "first prompt here").hint_id()
    (row,) = json.loads(bob.run("sessions", "list", "--remote", "--json").out)
    assert (row["id"], row["name"]) == (sid, "fix the uploads")
    assert "fix the uploads" in bob.run("sessions", "list", "--remote").out


def test_a_restored_store_is_caught_up_by_the_next_run(alice: Cli, sync_url: str) -> None:
    """The store rolled back (a backup restored) behind this machine's back: its own offsets say what is missing."""
    import psycopg

    sid = alice.run("-p", "before the restore").hint_id()
    lines = alice.transcript(sid).read_bytes().count(b"\n")
    assert line_rows(sync_url, sid) == lines
    with psycopg.connect(sync_url, autocommit=True) as conn:  # what a restore from an older backup leaves
        conn.execute("DELETE FROM evo_agent_chunks WHERE session_id = %s", (sid,))  # the backup had only its row
    assert line_rows(sync_url, sid) == 0
    later = alice.run("-p", "after the restore").hint_id()  # any run: its first push catches up first
    assert line_rows(sync_url, sid) == lines and line_rows(sync_url, later) > 0


def test_a_teammates_growing_session_is_fetched_again_not_frozen(alice: Cli, bob: Cli) -> None:
    sid = alice.run("-p", "the first part").hint_id()
    assert bob.run("--resume", sid, "-p", "go on").rc == 1  # fetched (and, foreign, refused in print mode)
    first_copy = (bob.sessions_dir / sid / "messages.jsonl").read_bytes()
    inode = (bob.sessions_dir / sid / "messages.jsonl").stat().st_ino
    line = next(r for r in alice.transcript(sid).read_bytes().splitlines(keepends=True) if b'"type":"user"' in r)
    with open(alice.transcript(sid), "ab") as f:  # alice's session goes on
        f.write(line.replace(b"the first part", b"the second part"))
    assert alice.run("sessions", "push", sid).rc == 0
    assert bob.run("--resume", sid, "-p", "go on").rc == 1
    copy = (bob.sessions_dir / sid / "messages.jsonl").read_bytes()
    assert copy == alice.transcript(sid).read_bytes() and len(copy) > len(first_copy)
    assert (bob.sessions_dir / sid / "messages.jsonl").stat().st_ino == inode  # only the new tail travelled
    assert not [p for p in bob.sessions_dir.iterdir() if p.name.startswith(".")  and p.name != ".gitignore"]


def test_a_short_password_is_masked_only_where_it_stands_as_the_password(tmp_path: Path) -> None:
    """The password `p` turned libpq's "port 9 failed" into "***ort 9" and "accepting" into "acce***ting"."""
    hal = team_cli(tmp_path, "hal", "git@github.com:team/app.git", "postgresql://evo:p@127.0.0.1:9/none")
    done = hal.run("sessions", "list", "--remote")
    assert done.rc == 1 and len(done.err_lines) == 1, done.err
    assert "postgresql://evo:***@127.0.0.1:9/none" in done.err and ":p@" not in done.err
    assert "port 9 failed" in done.err and "***ort" not in done.err and "acce***ting" not in done.err


def test_a_password_an_error_quotes_as_a_token_is_masked() -> None:
    from evo_agent.sync.db import error_gist

    url = "postgresql://evo:s3cr%zz@db/team"
    said = error_gist(ValueError('invalid percent-encoded token: "s3cr%zz" (s3cr%zz)'), url)
    assert "s3cr" not in said and said.count("***") == 2, said
