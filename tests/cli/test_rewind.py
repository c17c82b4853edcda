"""Rewind (issue #19): a new session from before turn N, and the files the file tools changed since."""

from __future__ import annotations

import stat

from tests.fake_model_server import text, tool_use
from tests.prompt_cache import plain

EDITS = {"EVO_AGENT_PERMISSION_MODE": "accept-edits"}  # file edits inside the project run unasked


def _run(cli, *args, input=""):
    result = cli.run(*args, input=input, env={**cli.env, **EDITS})
    assert result.rc == 0, result.err
    return result


def _two_turns(cli, model_server, project):
    """Turn 1 creates a.txt; turn 2 (in a resume) edits it and creates b.txt."""
    model_server.script([tool_use("write_file", {"path": "a.txt", "content": "v1\n"})], text("wrote a"))
    first = _run(cli, "-p", "turn one").hint_id()
    model_server.script(
        [tool_use("edit_file", {"path": "a.txt", "old_string": "v1", "new_string": "v2"}),
         tool_use("write_file", {"path": "sub/b.txt", "content": "new\n"})],
        text("edited"))
    second = _run(cli, "--resume", first, "-p", "turn two").hint_id()
    assert (project / "a.txt").read_text() == "v2\n" and (project / "sub/b.txt").exists()
    return first, second


def test_rewind_restores_files_and_keeps_the_old_session(cli, model_server, project):
    first, second = _two_turns(cli, model_server, project)
    backups = sorted((cli.sessions_dir / second / "file-history").iterdir())
    assert [b.read_text() for b in backups] == ["v1\n"] and stat.S_IMODE(backups[0].stat().st_mode) == 0o600
    before = cli.transcript(second).read_bytes()

    model_server.script(text("redone"))
    result = _run(cli, "--resume", second, "--at", "2", "--restore-files", "-p", "turn two, again")
    third = result.hint_id()
    assert (project / "a.txt").read_text() == "v1\n"
    assert not (project / "sub/b.txt").exists()
    assert "Restored 2 of 2 files. Changes made through bash cannot be restored." in result.err
    assert cli.transcript(second).read_bytes() == before  # the rewound session is untouched
    # The new session's history ends before turn 2: the model saw turn one, then the new prompt.
    sent = plain(model_server.requests[-1]["messages"])
    prompts = [m["content"][0]["text"] for m in sent if m["role"] == "user" and m["content"][0]["type"] == "text"]
    assert prompts == ["turn one", "turn two, again"]
    marker = next(r for r in cli.records(third) if r["type"] == "resume_marker")
    assert marker["from_session_id"] == second and marker["at_turn"] == 2


def test_a_rewind_of_a_rewound_session_follows_the_chain(cli, model_server, project):
    first, second = _two_turns(cli, model_server, project)
    model_server.script(text("ok"))
    third = _run(cli, "--resume", second, "--at", "2", "--restore-files", "-p", "other way").hint_id()
    assert (project / "a.txt").read_text() == "v1\n"
    # Turn 1 of the third session was copied from the first: its write of a.txt is undone too.
    model_server.script(text("from scratch"))
    result = _run(cli, "--resume", third, "--at", "1", "--restore-files", "-p", "start over")
    assert not (project / "a.txt").exists(), result.err
    assert "removed: " in result.err


def test_a_file_changed_since_is_left_alone_in_print_mode(cli, model_server, project):
    first, second = _two_turns(cli, model_server, project)
    (project / "a.txt").write_text("hand edit\n")
    model_server.script(text("ok"))
    result = _run(cli, "--resume", second, "--at", "2", "--restore-files", "-p", "again")
    assert (project / "a.txt").read_text() == "hand edit\n"
    assert "left alone: " in result.err and "a.txt (changed since evo-agent wrote it)" in result.err
    assert not (project / "sub/b.txt").exists()


def test_rewind_in_the_repl(cli, model_server, project):
    first, second = _two_turns(cli, model_server, project)
    result = _run(cli, "--plain", "--resume", second, input="/rewind\n2\ny\n/exit\n")
    assert "   2. turn two" in result.out and "   1. turn one" in result.out
    assert "Rewound to before turn 2" in result.out
    assert "Restored 2 of 2 files." in result.out
    assert (project / "a.txt").read_text() == "v1\n" and not (project / "sub/b.txt").exists()


def test_bad_turns_and_flags_are_one_line_errors(cli, model_server, project):
    model_server.script(text("hi"))
    sid = _run(cli, "-p", "only turn").hint_id()
    no_turn = cli.run("--resume", sid, "--at", "5", "-p", "x")
    assert no_turn.rc == 1 and no_turn.err_lines == ["evo-agent: there is no user turn 5: this session has turns 1 to 1"]
    assert cli.run("--at", "1", "-p", "x").rc == 2
    assert cli.run("--resume", sid, "--restore-files", "-p", "x").rc == 2
    assert cli.run("--resume", sid, "--at", "0", "-p", "x").rc == 2
