"""Checks shared by the agent tests: the fidelity check, a summarising server, requests by kind.

The agent itself is built with `tests.builders.make_agent` (and `server_provider`).
"""

from __future__ import annotations

from evo_agent.agent import Agent
from evo_agent.agent.compaction import IN_PLACE_PREAMBLE
from evo_agent.session import load_for_resume
from tests.api_rules import check_request
from tests.fake_model_server import text


def assert_faithful(agent: Agent) -> None:
    """What the live agent holds is what its transcript restores, and a valid next request."""
    loaded = load_for_resume(agent.recorder.path)
    assert loaded.messages == agent.history
    assert loaded.repairs == 0 and loaded.skipped_lines == 0
    check_request(agent.history + [{"role": "user", "content": "next"}])


def is_summary_request(body: dict) -> bool:
    """A compaction call: flattened without tools, or in place (the conversation, then the instruction)."""
    if not body.get("tools"):
        return True
    content = (body.get("messages") or [{}])[-1].get("content")
    last = content[-1] if isinstance(content, list) and content else {"text": content}
    return isinstance(last, dict) and str(last.get("text") or "").startswith(IN_PLACE_PREAMBLE)


def instruction_of(body: dict) -> str:
    """What a summary call asked for: the flattened call's one message, or the in-place call's last text."""
    content = (body.get("messages") or [{}])[-1].get("content")
    if isinstance(content, str):
        return content
    return str(content[-1].get("text") or "") if content else ""


def conversation_of(body: dict) -> list[dict]:
    """The conversation an in-place summary call carried: its messages without the instruction (marks removed)."""
    from tests.prompt_cache import plain

    messages = plain(body["messages"])
    last = messages[-1]
    if len(last["content"]) == 1:
        return messages[:-1]
    return [*messages[:-1], {**last, "content": last["content"][:-1]}]


def summarizer(*summaries: str, answers: tuple = ()):
    """A server answer: the next summary for a summary call, else the next of `answers` (then `ok`)."""
    queue, replies = list(summaries), list(answers)

    def answer(body):
        if not is_summary_request(body):
            return replies.pop(0) if replies else text("ok")
        return text(queue.pop(0) if queue else "SUMMARY")

    return answer


def summary_requests(server) -> list[dict]:
    """The compaction calls the server received (SPEC §6: no tool used)."""
    return [b for b in server.valid_requests if is_summary_request(b)]


def flattened_summary_requests(server) -> list[dict]:
    """The compaction calls sent without tools, the conversation flattened to text."""
    return [b for b in server.valid_requests if not b.get("tools")]


def model_requests(server) -> list[dict]:
    """The conversation's own requests."""
    return [b for b in server.valid_requests if not is_summary_request(b)]


def resume_own(agent: Agent) -> object:
    """Come back to the session `agent` is in, as a user does: leave it (/clear), then /resume its id.

    `/resume` of the session one is in changes nothing (it is the session you are in): a test that wants a
    resume of this history into a new session leaves it first."""
    source = agent.session_id
    agent.clear()
    return agent.resume(source)
