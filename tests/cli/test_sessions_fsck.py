"""`sessions fsck [ID] [--repair]`: each kind of damage is named; repairs touch caches and modes, never a transcript."""

from __future__ import annotations

import hashlib
import json
import os
import stat

from evo_agent.session import LiveSessionStore, SessionStore, SidechainRecorder
from tests.builders import simple_session
from tests.cli.sessions_helpers import rich_session


def digest(paths) -> dict:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in paths}


def transcripts(session_dir):
    return [session_dir / "messages.jsonl", *sorted((session_dir / "subagent").glob("*"))]


def kinds(result) -> list[tuple[str, str]]:
    """Problems and notes alike."""
    data = json.loads(result.out)
    return sorted((p["kind"], p["path"]) for p in data["problems"] + data["notes"])


def test_a_torn_last_line_of_a_finished_session_is_a_harmless_note(demo_cli):
    sid = simple_session(demo_cli.project)
    with open(demo_cli.sessions_dir / sid / "messages.jsonl", "ab") as f:
        f.write(b'{"type":"assistant","message":{"role":"assis')  # the crash cut this write short
    result = demo_cli.run("sessions", "fsck")
    assert result.rc == 0, result.out
    lines = result.out.splitlines()
    assert lines[0].startswith(f"note: {sid}  messages.jsonl: line ") and "torn last line" in lines[0]
    assert "harmless" in lines[0]
    assert lines[-1] == "checked 1 session: no problems; 1 harmless note"
    data = json.loads(demo_cli.run("sessions", "fsck", "--json").out)
    assert data["problems"] == [] and [n["kind"] for n in data["notes"]] == ["torn_last_line"]
    assert demo_cli.run("sessions", "fsck", "--repair").rc == 0


def test_healthy_sessions_pass(demo_cli):
    rich_session(demo_cli.project)
    simple_session(demo_cli.project)
    result = demo_cli.run("sessions", "fsck")
    assert result.rc == 0 and result.out == "checked 3 sessions: no problems\n" and result.err == ""


def test_every_kind_of_damage_is_reported_and_only_safe_things_are_repaired(demo_cli):
    rich = rich_session(demo_cli.project)
    session_dir = demo_cli.sessions_dir / rich.source
    # Damage the way crashes, people and other programs do.
    with open(session_dir / "messages.jsonl", "ab") as f:
        f.write(b"not json at all\n")
        f.write(b'{"type":"assistant","message":{"role":"assis')  # torn last line
    (session_dir / rich.sidechain).unlink()  # the marker now names nothing
    orphan_rel = "subagent/1780227556183_stray_abcd.jsonl"
    orphan = SidechainRecorder(session_dir / orphan_rel, agent_name="stray", relative_path=orphan_rel,
                               session_id=rich.source, cwd=str(demo_cli.project), agent_version="t",
                               git_branch=None, label="test", warn=lambda line: None)
    orphan.user({"role": "user", "content": "nobody started me"})
    os.chmod(session_dir, 0o755)
    os.chmod(session_dir / "messages.jsonl", 0o644)
    (session_dir / ".meta.abc123.tmp").write_text("{")

    other = demo_cli.sessions_dir / rich.resumed
    meta = json.loads((other / "meta.json").read_text())
    meta["message_count"] += 5
    (other / "meta.json").write_text(json.dumps(meta))

    missing = demo_cli.sessions_dir / simple_session(demo_cli.project)
    (missing / "meta.json").unlink()
    os.remove(demo_cli.sessions_dir / ".gitignore")

    before = digest(transcripts(session_dir) + transcripts(other) + transcripts(missing))
    report = demo_cli.run("sessions", "fsck", "--json")
    assert report.rc == 1
    found = kinds(report)
    assert ("torn_last_line", "messages.jsonl") in found
    assert ("unreadable_line", "messages.jsonl") in found
    assert ("marker_without_sidechain", rich.sidechain) in found
    assert ("sidechain_without_marker", orphan_rel) in found
    assert ("permissions", ".") in found and ("permissions", "messages.jsonl") in found
    assert ("foreign", ".") in found  # modes wider than 0700/0600: not recorded by this user's evo-agent
    assert ("leftover", ".meta.abc123.tmp") in found
    assert ("meta_stale", "meta.json") in found  # the damaged transcript grew past what meta.json describes
    assert ("meta_wrong", "meta.json") in found
    assert ("meta_missing", "meta.json") in found
    assert ("gitignore", str(demo_cli.sessions_dir / ".gitignore")) in found
    text = demo_cli.run("sessions", "fsck")
    assert text.rc == 1 and "line 14: unreadable" in text.out and "line 15: torn last line" in text.out
    assert "can be repaired with --repair" in text.out.splitlines()[-1]

    repaired = demo_cli.run("sessions", "fsck", "--repair")
    assert repaired.rc == 1  # transcript damage stays: it is never rewritten
    assert "— not repaired: transcripts are never rewritten" in repaired.out
    assert digest(transcripts(session_dir) + transcripts(other) + transcripts(missing)) == before
    # A foreign session's modes are never narrowed: that would make it look like the user's own.
    assert stat.S_IMODE(session_dir.stat().st_mode) == 0o755
    assert stat.S_IMODE((session_dir / "messages.jsonl").stat().st_mode) == 0o644
    assert f"take it on deliberately with: evo-agent sessions adopt {rich.source}" in repaired.out
    assert not (session_dir / ".meta.abc123.tmp").exists()
    assert (demo_cli.sessions_dir / ".gitignore").read_text() == "*\n"
    store = SessionStore(demo_cli.project, warn=lambda line: None)
    for sid in (rich.source, rich.resumed, missing.name):  # meta.json now says what the transcript says
        cached = json.loads((demo_cli.sessions_dir / sid / "meta.json").read_text())
        assert cached == store.info(sid).meta.to_json()

    after = kinds(demo_cli.run("sessions", "fsck", "--json"))
    assert sorted(k for k, _ in after) == sorted(["torn_last_line", "unreadable_line", "marker_without_sidechain",
                                                  "sidechain_without_marker", "foreign", "permissions", "permissions"])
    assert demo_cli.run("sessions", "fsck", rich.resumed).rc == 0  # fully repaired


def test_fsck_of_one_session_and_of_a_broken_directory(demo_cli):
    good = simple_session(demo_cli.project)
    broken = demo_cli.sessions_dir / "1780227556183_0123abcd"
    broken.mkdir(mode=0o700)
    result = demo_cli.run("sessions", "fsck", "1780227556183")
    assert result.rc == 1
    assert "messages.jsonl: missing: this session cannot be shown or resumed" in result.out
    assert result.out.endswith("checked 1 session: 1 problem\n")
    assert demo_cli.run("sessions", "fsck", good).rc == 0
    (demo_cli.sessions_dir / good / "meta.json").write_text('{"id": "not this one"}')
    assert kinds(demo_cli.run("sessions", "fsck", good, "--json")) == [("meta_unreadable", "meta.json")]
    fixed = demo_cli.run("sessions", "fsck", good, "--repair")
    assert fixed.rc == 0 and fixed.out.endswith("checked 1 session: 1 problem, 1 repaired\n")
    assert demo_cli.run("sessions", "fsck", good).out == "checked 1 session: no problems\n"


def test_a_live_sessions_lagging_meta_is_its_writers_business(demo_cli):
    store = LiveSessionStore(demo_cli.project, warn=lambda line: None)
    rec = store.create(model="m", provider="demo", meta_interval=3600)
    rec.user({"role": "user", "content": "still typing"})  # meta.json lags until the end of the turn
    assert demo_cli.run("sessions", "fsck", rec.session_id).rc == 0
    store.release()
    stale = demo_cli.run("sessions", "fsck", rec.session_id)
    assert stale.rc == 1 and "meta.json: stale" in stale.out
