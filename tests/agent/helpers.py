"""Checks shared by the agent tests: the fidelity check, a summarising server, requests by kind.

The agent itself is built with `tests.builders.make_agent` (and `server_provider`).
"""

from __future__ import annotations

from evo_agent.agent import Agent
from evo_agent.session import load_for_resume
from tests.api_rules import check_request
from tests.fake_model_server import text


def assert_faithful(agent: Agent) -> None:
    """What the live agent holds is what its transcript restores, and a valid next request."""
    loaded = load_for_resume(agent.recorder.path)
    assert loaded.messages == agent.history
    assert loaded.repairs == 0 and loaded.skipped_lines == 0
    check_request(agent.history + [{"role": "user", "content": "next"}])


def summarizer(*summaries: str, answers: tuple = ()):
    """A server answer: the next summary for a request without tools, else the next of `answers` (then `ok`)."""
    queue, replies = list(summaries), list(answers)

    def answer(body):
        if body.get("tools"):
            return replies.pop(0) if replies else text("ok")
        return text(queue.pop(0) if queue else "SUMMARY")

    return answer


def summary_requests(server) -> list[dict]:
    """The compaction calls the server received (SPEC §6: without tools)."""
    return [b for b in server.valid_requests if not b.get("tools")]


def model_requests(server) -> list[dict]:
    """The conversation's own requests (with tools)."""
    return [b for b in server.valid_requests if b.get("tools")]
