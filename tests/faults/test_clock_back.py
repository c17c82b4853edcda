"""The clock jumps backwards between a session and its resume (NTP corrects a clock that ran ahead).

A session written while the clock ran ahead is dated later than everything written after the jump, by
as much as the clock was off. Resuming it starts a new session dated by the corrected clock, so by
date alone the source looks newer than its own continuation: `--continue` brought back the source, and
the turns said since (the ones the model last saw) were gone from the conversation it continued.
"""

from __future__ import annotations

import pytest

from tests.builders import history_of, simple_session
from tests.fake_model_server import text
from tests.prompt_cache import plain

pytestmark = pytest.mark.faults

AHEAD_DAYS = 20 / (24 * 60)  # the clock ran 20 minutes ahead (less than the hour a clock may be off unnoticed)


def test_continue_after_a_clock_jump_back_takes_the_resumed_session_not_its_source(cli, model_server):
    source = simple_session(cli.project, "asked while the clock ran ahead", days_ago=-AHEAD_DAYS)
    model_server.script(text("First answer after the jump."), text("Second answer."))
    first = cli.run("-c", "-p", "first after the jump")
    assert first.rc == 0 and first.out == "First answer after the jump.\n", first.err
    resumed = first.hint_id()
    assert resumed != source

    second = cli.run("-c", "-p", "and then?")
    assert second.rc == 0 and second.out == "Second answer.\n", second.err
    assert plain(model_server.requests[-1]["messages"]) == plain(history_of(
        ("asked while the clock ran ahead", "hi"), ("first after the jump", "First answer after the jump."))
        + [{"role": "user", "content": "and then?"}])
    assert second.hint_id() not in (source, resumed)
