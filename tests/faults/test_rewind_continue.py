"""A rewind the user leaves without saying anything more: `--continue` brings back the rewound conversation.

The rewind starts a new session holding the history before prompt N, and the exit hint names it. A
session resumed with nothing new said is hidden (it repeats its source), but a rewind does not repeat
its source: hiding it made `--continue` pick the source, the very turns the user had just undone
(and whose file changes `--restore-files` had put back).
"""

from __future__ import annotations

import pytest

from tests.builders import history_of, seed_session
from tests.fake_model_server import text
from tests.prompt_cache import plain

pytestmark = pytest.mark.faults

TURNS = (("first question", "First answer."), ("second question", "Second answer."),
         ("third question", "Third answer."))


def test_continue_after_a_rewind_left_at_once_restores_the_rewound_history(cli, model_server):
    source = seed_session(cli.project, *TURNS)
    rewound = cli.run("--resume", source, "--at", "2", input="")  # the REPL, left at once (EOF)
    assert rewound.rc == 0, rewound.err
    new = rewound.hint_id()
    assert new != source  # the hint names the rewind: it holds the conversation now

    listing = cli.run("sessions", "list")
    assert new in listing.out, listing.out
    model_server.script(text("Continued."))
    result = cli.run("-c", "-p", "next")
    assert result.rc == 0 and result.out == "Continued.\n", result.err
    assert plain(model_server.requests[-1]["messages"]) == plain(
        history_of(TURNS[0]) + [{"role": "user", "content": "next"}])
