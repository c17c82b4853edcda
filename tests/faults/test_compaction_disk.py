"""A full disk when a compaction's boundary is written, then space coming back (root: a small tmpfs).

The boundary must be on disk before the history is replaced (SPEC §2, §4): when it cannot be written the
compaction is refused in one line and nothing is compacted, so once space is back the conversation that
resumes is exactly the one the model went on seeing, never one whose summary was lost.
"""

from __future__ import annotations

import pytest

from evo_agent.session import load_for_resume
from tests.builders import history_of, seed_session
from tests.fake_model_server import text
from tests.helpers import fill_disk, needs_root, tmpfs_or_skip
from tests.prompt_cache import plain

from .crash import without_reminders
from .driver import Repl

pytestmark = pytest.mark.faults

TURNS = [(f"question {n}", f"Answer {n}.") for n in range(3)]


@needs_root
def test_a_compaction_whose_boundary_hits_a_full_disk_compacts_nothing_and_resumes_what_the_model_saw(
        cli, model_server, project):
    sessions = project / ".evo-agent" / "sessions"
    with tmpfs_or_skip(sessions, "1m"):
        source = seed_session(project, *TURNS)
        model_server.script(text("Before."), text("S" * 20_000), text("After."))
        with Repl(project, cli.env, "-c") as repl:
            repl.ask("one more", "Before.")
            filler = fill_disk(sessions, leave=0, name=f"{source}/filler")
            repl.type("/compact")
            repl.err.wait_for("nothing was compacted", 60)
            filler.unlink()  # space is back
            repl.ask("and now?", "After.")
            assert repl.close() == 0
        err = repl.err.text
        assert "Traceback" not in err
        assert len([line for line in err.splitlines() if "nothing was compacted" in line]) == 1, err
        sid = err.splitlines()[-1].rsplit(" ", 1)[1]
        seen = [without_reminders(m) for m in model_server.requests[-1]["messages"]]
        assert plain(seen[:6]) == plain(history_of(*TURNS))  # the model was never sent a summary
        expected = model_server.requests[-1]["messages"] + [
            {"role": "assistant", "content": [{"type": "text", "text": "After."}]}]
        loaded = load_for_resume(sessions / sid / "messages.jsonl")
        assert plain(loaded.messages) == plain(expected)
        model_server.script(text("Resumed."))
        resumed = cli.run("-c", "-p", "still there?")
        assert resumed.rc == 0 and resumed.out == "Resumed.\n", resumed.err
        assert plain(model_server.requests[-1]["messages"][:-1]) == plain(expected)
        model_server.assert_all_valid()
