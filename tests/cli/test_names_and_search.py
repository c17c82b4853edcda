"""Names and search through the real console script (issue #19)."""

from __future__ import annotations

import json

from evo_agent.session import LiveSessionStore
from tests.builders import seed_session, simple_session


def _listed(cli) -> dict[str, dict]:
    result = cli.run("sessions", "list", "--json")
    assert result.rc == 0, result.err
    return {row["id"]: row for row in json.loads(result.out)}


def test_name_at_start_shows_in_lists_and_resume_finds_it(demo_cli):
    first = demo_cli.run("-n", "Login bug", "-p", "fix the login bug")
    sid = first.hint_id()
    assert _listed(demo_cli)[sid]["name"] == "Login bug"
    assert "[Login bug]" in demo_cli.run("sessions", "list").out
    assert "name     Login bug" in demo_cli.run("sessions", "show", "login BUG").out

    again = demo_cli.run("--resume", "login bug", "-p", "and the logout bug")
    assert again.rc == 0, again.err
    resumed = again.hint_id()
    rows = _listed(demo_cli)
    assert rows[resumed]["name"] == "Login bug" and rows[resumed]["resumed_from"] == sid
    # The chain shares the name; its newest session is the one a name resumes.
    third = demo_cli.run("--resume", "Login bug", "-p", "one more")
    assert _listed(demo_cli)[third.hint_id()]["resumed_from"] == resumed


def test_ambiguous_and_unknown_names_are_one_line_errors(demo_cli, project):
    a = seed_session(project, ("first", "a"))
    b = seed_session(project, ("second", "b"))
    assert demo_cli.run("sessions", "rename", a, "release").rc == 0
    assert demo_cli.run("sessions", "rename", b[:16], "release").rc == 0
    result = demo_cli.run("--resume", "release", "-p", "go on")
    assert result.rc == 1
    assert result.err_lines == [f"evo-agent: 2 sessions are named 'release' ({b}, {a}); name one by its id"]
    missing = demo_cli.run("--resume", "no such name", "-p", "go on")
    assert missing.rc == 1 and len(missing.err_lines) == 1 and "invalid session id and no session named 'no such name'" in missing.err


def test_a_name_that_looks_like_an_id(demo_cli, project):
    sid = seed_session(project, ("x", "y"))
    assert demo_cli.run("sessions", "rename", sid, "2024").rc == 0
    # "2024" is id-shaped but no id starts with it: the name is found.
    assert demo_cli.run("--resume", "2024", "-p", "z").rc == 0
    # An id prefix still means the id, whatever names say.
    other = seed_session(project, ("p", "q"))
    assert demo_cli.run("sessions", "rename", other, sid[:15]).rc == 0
    shown = demo_cli.run("sessions", "show", sid[:15])
    assert shown.out.startswith(f"Session {sid}")


def test_rename_of_a_live_session_is_refused(demo_cli, project):
    store = LiveSessionStore(project, warn=lambda line: None)
    rec = store.create(model="m", provider="demo")
    rec.user({"role": "user", "content": "hi"})
    rec.checkpoint()
    try:
        result = demo_cli.run("sessions", "rename", rec.session_id, "busy")
        assert result.rc == 1
        assert "is in use by pid" in result.err and "/rename" in result.err
    finally:
        store.release()


def test_rename_in_the_repl(demo_cli):
    result = demo_cli.run("--plain", input="hello there\n/rename  Nightly   build \n/exit\n")
    assert result.rc == 0, result.err
    assert "is now named 'Nightly build'" in result.out
    sid = demo_cli.session_ids()[-1]
    assert _listed(demo_cli)[sid]["name"] == "Nightly build"
    assert [r["name"] for r in demo_cli.records(sid) if r["type"] == "session_name"] == ["Nightly build"]


def test_search_command(demo_cli, project):
    seed_session(project, ("where is the \x1b]0;owned\x07 retry loop", "in upload.py"))
    newer = seed_session(project, ("the retry loop again", "still in upload.py"))
    result = demo_cli.run("sessions", "search", "RETRY LOOP")
    assert result.rc == 0, result.err
    assert "\x1b" not in result.out and "^[]0;owned^G" in result.out
    assert result.out.index(newer) < result.out.index("owned")
    as_json = json.loads(demo_cli.run("sessions", "search", "upload.py", "--json", "--limit", "1").out)
    assert [(h["session_id"], h["kind"]) for h in as_json] == [(newer, "answer")]
    none = demo_cli.run("sessions", "search", "nothing like this")
    assert none.rc == 1 and none.out.startswith("No session mentions")
    bad = demo_cli.run("sessions", "search", "(", "--regex")
    assert bad.rc == 2 and bad.err.startswith("evo-agent: invalid regular expression")


def test_renaming_an_old_session_does_not_make_it_the_newest(demo_cli, project):
    old = simple_session(project, "last month's work", days_ago=30)
    new = simple_session(project, "today's work")
    assert demo_cli.run("sessions", "rename", old, "archive").rc == 0
    listed = json.loads(demo_cli.run("sessions", "list", "--json").out)
    assert [row["id"] for row in listed] == [new, old]
    assert listed[1]["name"] == "archive"
    went_on = demo_cli.run("-c", "-p", "go on")
    assert went_on.rc == 0, went_on.err
    assert _listed(demo_cli)[went_on.hint_id()]["resumed_from"] == new


def test_the_resume_hint_of_a_rename_before_anything_was_said_works(demo_cli):
    """`/rename nightly` as the first thing in a session: the hint `evo-agent --resume nightly` said no session
    had that name (a session with nothing said in it was skipped), though the session was kept."""
    named = demo_cli.run("--plain", input="/rename nightly\n/exit\n")
    assert named.rc == 0 and "evo-agent --resume nightly" in named.out, named.err
    resumed = demo_cli.run("--resume", "nightly", "-p", "hello again")
    assert resumed.rc == 0, resumed.err
    assert resumed.out.strip()
