"""`sessions rm` and `sessions prune`: whole session directories, after asking, never a live one, never via a link."""

from __future__ import annotations

import os
import signal
import time

from tests.builders import simple_session
from tests.cli.sessions_helpers import rich_session


def wait_for(predicate, timeout=20.0, what="condition"):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def one_line_error(result, rc=1) -> str:
    assert result.rc == rc and "Traceback" not in result.err, result
    errors = [line for line in result.err_lines if line.startswith("evo-agent: ")]
    assert len(errors) == 1, result.err
    return errors[0]


def test_rm_asks_first_and_deletes_the_whole_directory(demo_cli):
    rich = rich_session(demo_cli.project)
    keep = simple_session(demo_cli.project)
    no = demo_cli.run("sessions", "rm", rich.source, input="n\n")
    assert "nothing deleted" in one_line_error(no)
    assert "Delete this session? This cannot be undone. [y/N]" in no.err and rich.source in no.err
    eof = demo_cli.run("sessions", "rm", rich.source, input="")
    assert "pass --yes" in one_line_error(eof)
    assert rich.source in demo_cli.session_ids()

    yes = demo_cli.run("sessions", "rm", rich.source[:15], input="y\n")  # a unique prefix
    assert yes.rc == 0 and yes.out == f"deleted {rich.source}\n"
    assert not (demo_cli.sessions_dir / rich.source).exists()  # sidechains and all
    forced = demo_cli.run("sessions", "rm", "--yes", rich.resumed)
    assert forced.rc == 0 and forced.err == ""
    assert demo_cli.session_ids() == [keep]


def test_rm_checks_every_id_before_deleting_any(demo_cli):
    a = simple_session(demo_cli.project)
    b = simple_session(demo_cli.project)
    result = demo_cli.run("sessions", "rm", "--yes", a, "9999999999999")
    assert "no session 9999999999999" in one_line_error(result)
    assert sorted(demo_cli.session_ids()) == sorted([a, b])
    both = demo_cli.run("sessions", "rm", "--yes", a, b, a)
    assert both.rc == 0 and both.out_lines == [f"deleted {a}", f"deleted {b}"]


def test_rm_refuses_a_symlinked_session_and_deletes_a_broken_one(demo_cli, tmp_path):
    elsewhere = tmp_path / "precious"
    elsewhere.mkdir()
    (elsewhere / "messages.jsonl").write_text("{}\n")
    simple_session(demo_cli.project)
    link = demo_cli.sessions_dir / "1780227556183_0badc0de"
    link.symlink_to(elsewhere, target_is_directory=True)
    result = demo_cli.run("sessions", "rm", "--yes", link.name)
    assert "symbolic link" in one_line_error(result)
    assert (elsewhere / "messages.jsonl").exists() and link.is_symlink()

    broken = demo_cli.sessions_dir / "1780227556184_00000000"
    broken.mkdir()
    (broken / "junk").write_text("x")
    assert demo_cli.run("sessions", "rm", "--yes", broken.name).rc == 0 and not broken.exists()


def test_prune_deletes_by_last_update_and_dry_run_deletes_nothing(demo_cli):
    old = simple_session(demo_cli.project, "old work", days_ago=40)
    older = simple_session(demo_cli.project, "older work", days_ago=90)
    recent = simple_session(demo_cli.project, "recent work", days_ago=3)
    new = simple_session(demo_cli.project, "new work")
    dry = demo_cli.run("sessions", "prune", "--older-than", "30d", "--dry-run")
    assert dry.rc == 0
    assert [line.split()[2] for line in dry.out_lines[:-1]] == sorted([old, older])
    assert dry.out_lines[-1].startswith("would delete 2 sessions (")
    assert sorted(demo_cli.session_ids()) == sorted([old, older, recent, new])

    refused = demo_cli.run("sessions", "prune", "--older-than", "30d")  # stdin is not a terminal: no one to ask
    assert "pass --yes" in one_line_error(refused) and len(demo_cli.session_ids()) == 4
    done = demo_cli.run("sessions", "prune", "--older-than", "30d", "--yes")
    assert done.rc == 0 and done.out_lines[-1].startswith("deleted 2 sessions (")
    assert sorted(demo_cli.session_ids()) == sorted([recent, new])
    assert demo_cli.run("sessions", "prune", "--older-than", "4w").out == "nothing to prune\n"
    assert demo_cli.run("sessions", "prune").out == "nothing to prune\n"  # no clutter here
    bad = demo_cli.run("sessions", "prune", "--older-than", "30 days")
    assert "invalid duration" in one_line_error(bad, rc=2)


def test_the_live_session_is_never_deleted_until_its_process_is_gone(demo_cli):
    old = simple_session(demo_cli.project, "old", days_ago=40)
    proc = demo_cli.popen("--plain", start_new_session=True)
    try:
        proc.stdin.write("/rename live\n")  # something said: the session is written (and locked) now
        proc.stdin.flush()
        wait_for(lambda: len(demo_cli.session_ids()) == 2, what="the REPL's session")
        (live,) = [s for s in demo_cli.session_ids() if s != old]
        wait_for(lambda: (demo_cli.sessions_dir / live / ".lock").exists(), what="its lock")

        refused = demo_cli.run("sessions", "rm", "--yes", live)
        assert one_line_error(refused) == (
            f"evo-agent: session {live} is in use by a running evo-agent (pid {proc.pid}); not deleted")
        pruned = demo_cli.run("sessions", "prune", "--older-than", "0s", "--yes")
        assert f"kept {live}: in use by a running evo-agent (pid {proc.pid})" in pruned.out_lines
        assert pruned.out_lines[-1].endswith("; kept 1 in use") and old not in demo_cli.session_ids()
        assert f"● live (pid {proc.pid})" in demo_cli.run("sessions", "show", live).out

        os.killpg(proc.pid, signal.SIGKILL)  # the kernel drops the lock with the process
        proc.wait(10)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            stream.close()
    gone = demo_cli.run("sessions", "rm", "--yes", live)
    assert gone.rc == 0 and demo_cli.session_ids() == []


def test_clear_hands_the_lock_to_the_new_session(demo_cli):
    proc = demo_cli.popen("--plain", start_new_session=True)
    try:
        proc.stdin.write("/rename first\n")  # each session is written once something is said in it
        proc.stdin.flush()
        wait_for(lambda: len(demo_cli.session_ids()) == 1, what="the first session")
        (first,) = demo_cli.session_ids()
        proc.stdin.write("/clear\n/rename second\n")
        proc.stdin.flush()
        wait_for(lambda: len(demo_cli.session_ids()) == 2, what="the session /clear starts")
        (second,) = [s for s in demo_cli.session_ids() if s != first]
        wait_for(lambda: demo_cli.transcript(second).exists(), what="its transcript")
        assert "in use" in one_line_error(demo_cli.run("sessions", "rm", "--yes", second))
        assert demo_cli.run("sessions", "rm", "--yes", first).rc == 0  # no longer this process's session
        proc.stdin.write("/exit\n")
        proc.stdin.flush()
        proc.wait(20)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            stream.close()
    assert demo_cli.run("sessions", "rm", "--yes", second).rc == 0
