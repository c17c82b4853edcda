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

from .crash import without_reminders

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


def test_a_session_made_while_the_clock_ran_hours_ahead_is_still_the_users_own(cli, model_server):
    """A clock hours off (an RTC kept in local time by a dual boot: the UTC offset) dated the user's session
    after now + the hour's slack, and "dated in the future" made it foreign: `-c` skipped it and
    `--resume ID -p` refused it, though the user's registry names it as made here."""
    source = simple_session(cli.project, "asked while the clock ran 8 hours ahead", days_ago=-8 / 24)
    model_server.script(text("By id."), text("Continued."), text("Again."))
    by_id = cli.run("--resume", source, "-p", "by id")
    assert by_id.rc == 0 and by_id.out == "By id.\n", by_id.err
    listed = cli.run("sessions", "list")
    assert "recorded elsewhere" not in listed.out and "dated in the future" not in listed.out, listed.out

    continued = cli.run("-c", "-p", "continued")
    assert continued.rc == 0 and continued.out == "Continued.\n", continued.err
    sent = [without_reminders(m) for m in model_server.requests[-1]["messages"]]  # the date's reminder aside
    assert plain(sent) == plain(history_of(
        ("asked while the clock ran 8 hours ahead", "hi"), ("by id", "By id."))
        + [{"role": "user", "content": "continued"}])
    again = cli.run("-c", "-p", "again")
    assert again.rc == 0 and again.out == "Again.\n", again.err
    sent = [without_reminders(m) for m in model_server.requests[-1]["messages"]]
    assert plain(sent[-3:]) == plain(history_of(("continued", "Continued."))
                                                                       + [{"role": "user", "content": "again"}])
