"""The one resume path (agent/resuming.py): what it asks, what it refuses, what it returns to show."""

from __future__ import annotations

import os

import pytest

from evo_agent.session import ForeignSession, LiveLock
from tests.builders import make_agent, seed_session
from tests.scripted_provider import ScriptedProvider


def _foreign(project, *turns) -> str:
    """A session whose transcript others may read: recorded elsewhere (session/trust.py)."""
    sid = seed_session(project, *turns)
    os.chmod(project / ".evo-agent" / "sessions" / sid / "messages.jsonl", 0o644)
    return sid


def test_a_foreign_source_is_refused_without_a_confirm_and_nothing_changes(project):
    sid = _foreign(project, ("hello", "hi"))
    agent, store = make_agent(project, ScriptedProvider())
    before = (agent.session_id, set(r.id for r in store.list()))
    with pytest.raises(ForeignSession) as refused:
        agent.resume(sid)
    assert refused.value.session_id == sid and "sessions adopt" in str(refused.value)
    assert (agent.session_id, set(r.id for r in store.list())) == before


def test_the_confirm_is_asked_with_the_reason_and_a_no_refuses(project):
    sid = _foreign(project, ("hello", "hi"))
    agent, _ = make_agent(project, ScriptedProvider())
    asked: list[tuple[str, str]] = []

    def no(session_id: str, reason: str) -> bool:
        asked.append((session_id, reason))
        return False

    with pytest.raises(ForeignSession):
        agent.resume(sid[:16], confirm=no)
    assert asked and asked[0][0] == sid and asked[0][1]


def test_a_yes_resumes_and_the_result_is_what_a_front_end_shows(project):
    sid = _foreign(project, ("hello", "hi"), ("again", "there"))
    agent, _ = make_agent(project, ScriptedProvider())
    resumed = agent.resume(sid, confirm=lambda session_id, reason: True)
    assert (resumed.source, resumed.session_id, resumed.restored) == (sid, agent.session_id, 4)
    assert resumed.messages == agent.history and resumed.notice is None and resumed.warnings == ()
    assert resumed.line == f"Resumed {sid}: 4 messages restored (new session {agent.session_id})"


def test_our_own_session_is_never_asked_about_and_a_live_one_says_so(project):
    sid = seed_session(project, ("hello", "hi"))
    agent, _ = make_agent(project, ScriptedProvider())
    lock = LiveLock.acquire(project / ".evo-agent" / "sessions" / sid)
    try:
        resumed = agent.resume(sid, confirm=lambda session_id, reason: pytest.fail("asked about our own session"))
    finally:
        lock.release()
    assert resumed.source == sid and len(resumed.warnings) == 1
    assert f"session {sid} is in use by pid {os.getpid()}; this resume starts a new session from it" in resumed.warnings[0]
