"""A full disk under the user's state directory when a session starts, then space coming back (root: tmpfs).

Every session evo-agent creates is vouched for by a line in `$XDG_STATE_HOME/evo-agent/made`, appended as
the session is created. When that append hit a full disk, the session went on (its transcript is
elsewhere) but stayed unvouched for ever, even when space came back while it went on: it was "not made
by your evo-agent", so `-c` passed it by and `--resume ID -p` refused the user's own conversation.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from evo_agent.session.origin import start_registry
from tests.builders import history_of, seed_session
from tests.fake_model_server import text, tool_use
from tests.helpers import fill_disk, needs_root, tmpfs_or_skip
from tests.prompt_cache import plain

from .driver import Repl

pytestmark = pytest.mark.faults


@needs_root
def test_a_session_started_while_the_registry_could_not_be_written_is_the_users_once_space_is_back(
        cli, model_server):
    state = Path(cli.env["XDG_STATE_HOME"])
    with tmpfs_or_skip(state, "256k"):
        registry = state / "evo-agent" / "made"
        assert start_registry(registry)  # the count began with an earlier session
        with open(registry, "ab") as f:  # its last page full: the next line needs a page of its own
            f.write(b"#" * (4095 - registry.stat().st_size % 4096) + b"\n")
        filler = fill_disk(state, leave=0)
        model_server.script(text("First answer."), text("Second answer."), text("Third answer."))
        with Repl(cli.project, cli.env) as repl:
            repl.ask("first question", "First answer.")
            filler.unlink()  # space is back while the session goes on
            repl.ask("second question", "Second answer.")
            assert repl.close() == 0
        assert "Traceback" not in repl.err.text
        sid = repl.err.text.splitlines()[-1].rsplit(" ", 1)[1]

        third = cli.run("-c", "-p", "third question")
        assert third.rc == 0 and third.out == "Third answer.\n", third.err
        assert plain(model_server.requests[-1]["messages"]) == plain(history_of(
            ("first question", "First answer."), ("second question", "Second answer."))
            + [{"role": "user", "content": "third question"}])
        model_server.script(text("By id."))
        by_id = cli.run("--resume", sid, "-p", "by id")
        assert by_id.rc == 0 and by_id.out == "By id.\n", by_id.err
        assert "recorded elsewhere" not in cli.run("sessions", "list", "--all").out


@needs_root
def test_a_plan_create_whose_registry_line_hits_a_full_disk_is_refused_and_made_whole_once_space_is_back(
        cli, model_server):
    """A plan.md of this user's is vouched for by a line in `plans-made`. When that line could not be
    appended, the plan was made anyway and stayed unvouched for ever: `evo-agent plan` showed it, but no
    resume or later session told the model of it. Now the plan is not made (one line says why) and a
    `plan_create` once space is back makes it whole and the model is told of it."""
    from ..cli.test_plan import reminders

    state = Path(cli.env["XDG_STATE_HOME"])
    with tmpfs_or_skip(state, "256k"):
        registry = state / "evo-agent" / "plans-made"
        assert start_registry(registry)  # the count began with an earlier plan
        with open(registry, "ab") as f:  # its last page full: the next line needs a page of its own
            f.write(b"#" * (4095 - registry.stat().st_size % 4096) + b"\n")
        filler = fill_disk(state, leave=0)
        plan = {"title": "Port to Rust", "goal": "a Rust parser"}
        model_server.script(tool_use("plan_create", plan), text("Could not."))
        full = cli.run("-p", "plan the port", "--permission-mode", "bypass")
        assert full.rc == 0 and full.out == "Could not.\n", full.err
        result = model_server.requests[-1]["messages"][-1]["content"][0]
        assert result.get("is_error") and "plan_create failed" in str(result["content"]), result
        assert "Port to Rust" not in cli.run("plan").out

        filler.unlink()  # space is back
        model_server.script(tool_use("plan_create", plan), text("Planned."))
        made = cli.run("-c", "-p", "again", "--permission-mode", "bypass")
        assert made.rc == 0 and made.out == "Planned.\n", made.err
        model_server.script(text("Resumed."))
        resumed = cli.run("-c", "-p", "go on")
        assert resumed.rc == 0, resumed.err
        (told,) = reminders(model_server.requests[-1]["messages"][-1])
        assert "Port to Rust" in told


@needs_root
def test_a_registry_whose_first_line_hit_a_full_disk_does_not_disown_the_users_earlier_sessions(cli, model_server):
    """Before the registry exists every session is the user's (an older version made them). Its first append,
    on a full disk, left an empty file behind: a registry counting from the start of time, under which every
    earlier session of the user's, in every project, was "not made by your evo-agent" for good."""
    older = seed_session(cli.project, ("asked before the count began", "Earlier answer."))
    state = Path(cli.env["XDG_STATE_HOME"])
    with tmpfs_or_skip(state, "256k"):  # empty: no registry yet, as before the count began
        (state / "evo-agent").mkdir(mode=0o700)
        filler = fill_disk(state, leave=0)
        model_server.script(text("Answer on a full disk."))
        full = cli.run("-p", "a new question")
        assert full.rc == 0, full.err
        filler.unlink()  # space is back

        listed = cli.run("sessions", "list", "--all")
        assert older in listed.out and "not made by your evo-agent" not in listed.out, listed.out
        model_server.script(text("Resumed."))
        resumed = cli.run("--resume", older, "-p", "still mine?")
        assert resumed.rc == 0 and resumed.out == "Resumed.\n", resumed.err


def test_an_empty_registry_a_killed_first_writer_left_does_not_disown_the_users_earlier_sessions(cli, model_server):
    """`kill -9` between the registry's creation and its first write leaves it empty (what this test makes,
    as that kill would): it must count as no registry, and the next session must start it whole."""
    older = seed_session(cli.project, ("asked before the count began", "Earlier answer."))
    registry = Path(cli.env["XDG_STATE_HOME"]) / "evo-agent" / "made"
    registry.write_bytes(b"")  # the count never began: the kill came before its header
    listed = cli.run("sessions", "list")
    assert older in listed.out and "not made by your evo-agent" not in listed.out, listed.out
    model_server.script(text("New answer."), text("Resumed."))
    new = cli.run("-p", "a new question")
    assert new.rc == 0, new.err
    resumed = cli.run("--resume", older, "-p", "still mine?")
    assert resumed.rc == 0 and resumed.out == "Resumed.\n", resumed.err
    assert registry.read_bytes().startswith(b"# ")  # started whole by the next session


@needs_root
def test_an_import_whose_registry_line_hits_a_full_disk_is_an_error_and_leaves_nothing(cli, tmp_path):
    """An import runs to its end in one process: a registry line it could not append is never retried, and
    the imported session would be "not made by your evo-agent" for good. It is an error, like an import
    that could not be written whole, and once space is back the import makes it the user's."""
    from .test_import_killed import _claude_code_source

    source = tmp_path / "cc.jsonl"
    _claude_code_source(source, 2)
    state = Path(cli.env["XDG_STATE_HOME"])
    with tmpfs_or_skip(state, "256k"):
        registry = state / "evo-agent" / "made"
        assert start_registry(registry)
        with open(registry, "ab") as f:  # its last page full: the next line needs a page of its own
            f.write(b"#" * (4095 - registry.stat().st_size % 4096) + b"\n")
        filler = fill_disk(state, leave=0)
        refused = cli.run("sessions", "import", "claude-code", str(source))
        assert refused.rc != 0 and "could not be recorded as yours" in refused.err, refused.err
        assert len(refused.err.splitlines()) == 1 and "Traceback" not in refused.err, refused.err
        assert cli.session_ids() == []

        filler.unlink()  # space is back
        again = cli.run("sessions", "import", "claude-code", str(source))
        assert again.rc == 0, again.err
        listed = cli.run("sessions", "list")
        assert "recorded elsewhere" not in listed.out and len(cli.session_ids()) == 1, listed.out
