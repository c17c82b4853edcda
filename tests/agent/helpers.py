"""Builders shared by the agent tests: an Agent on a fresh session, its records, the fidelity check."""

from __future__ import annotations

import json
from pathlib import Path

from evo_agent.agent import Agent
from evo_agent.providers.anthropic_provider import AnthropicProvider
from evo_agent.session import SessionStore, load_for_resume
from tests.api_rules import check_request
from tests.fake_model_server import text


def make_agent(project: Path, provider, tools=None, mode: str = "bypass", **kw) -> tuple[Agent, SessionStore]:
    """An agent on a fresh session; `mode` is its permission mode (these tests are about the loop: bypass)."""
    from evo_agent.agent.permissions import PermissionGate, Policy

    store = SessionStore(project, warn=lambda line: None)
    recorder = store.create(model=provider.model, provider=provider.name)
    kw.setdefault("permissions", PermissionGate(Policy(project, mode)))
    return Agent(provider=provider, recorder=recorder, project_dir=project, store=store, tools=tools, **kw), store


def server_provider(server) -> AnthropicProvider:
    """The real Anthropic provider (official SDK over HTTP) talking to the local fake API."""
    return AnthropicProvider("claude-test", api_key="test-key", base_url=server.base_url, max_retries=0)


def records(path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_bytes().splitlines() if line.strip()]


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
