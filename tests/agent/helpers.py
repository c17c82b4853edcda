"""Builders shared by the agent tests: an Agent on a fresh session, its records, the fidelity check."""

from __future__ import annotations

import json
from pathlib import Path

from evo_agent.agent import Agent
from evo_agent.providers.anthropic_provider import AnthropicProvider
from evo_agent.session import SessionStore, load_for_resume
from tests.api_rules import check_request


def make_agent(project: Path, provider, tools=None, **kw) -> tuple[Agent, SessionStore]:
    store = SessionStore(project, warn=lambda line: None)
    recorder = store.create(model=provider.model, provider=provider.name)
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
