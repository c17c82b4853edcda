"""`kill -9` (of the agent's process group) right after a `/rewind` in the REPL, before anything more is said.

The rewind is the conversation now (SPEC §5: a new session holding the history before prompt N; the
files and the plan may have been put back with it): `--continue` must bring back the rewound history,
never the source's turns the user had just undone.
"""

from __future__ import annotations

import pytest

from tests.builders import history_of, seed_session
from tests.fake_model_server import text
from tests.prompt_cache import plain

from .driver import Repl

pytestmark = pytest.mark.faults

TURNS = (("first question", "First answer."), ("second question", "Second answer."),
         ("third question", "Third answer."))


def test_continue_after_a_rewind_killed_before_anything_more_was_said_restores_the_rewound_history(
        cli, model_server):
    source = seed_session(cli.project, *TURNS)
    with Repl(cli.project, cli.env, "--resume", source) as repl:
        repl.type("/rewind 2")
        repl.out.wait_for("Rewound to before turn 2", 60)
        new = repl.out.text.split("Rewound to before turn 2: new session ", 1)[1].split(" ", 1)[0]
        repl.kill()  # SIGKILL of its process group
    assert new != source
    assert (cli.sessions_dir / new / "messages.jsonl").exists()  # published, not left staged
    model_server.script(text("Continued."))
    result = cli.run("-c", "-p", "next")
    assert result.rc == 0 and result.out == "Continued.\n", result.err
    assert plain(model_server.requests[-1]["messages"]) == plain(
        history_of(TURNS[0]) + [{"role": "user", "content": "next"}])
