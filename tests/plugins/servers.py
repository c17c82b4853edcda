"""Fixtures for the loopback fake APIs, fresh for each test, and the check on in-process scripted providers."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from tests.fake_model_server import FakeModelServer
from tests.fake_openai_server import FakeOpenAIServer
from tests.hostile_endpoint import Answer, HostileEndpoint
from tests.scripted_provider import ScriptedProvider


@pytest.fixture
def model_server() -> Iterator[FakeModelServer]:
    """A local Anthropic Messages API (tests/fake_model_server.py).

    Script answers with `model_server.script(text("hi"), tool_use("bash", {...}))`; point a
    subprocess at it with `env=model_server.env()`. Nothing global is set.
    """
    with FakeModelServer() as server:
        yield server


@pytest.fixture
def openai_server() -> Iterator[FakeOpenAIServer]:
    """A local chat completions API (tests/fake_openai_server.py), the twin of `model_server`."""
    with FakeOpenAIServer() as server:
        yield server


@pytest.fixture
def hostile_endpoint() -> Iterator[Callable[[Answer], HostileEndpoint]]:
    """Start a misbehaving model API (tests/hostile_endpoint.py): `endpoint = hostile_endpoint(answer)`; each one
    started is stopped after the test."""
    started: list[HostileEndpoint] = []

    def start(answer: Answer) -> HostileEndpoint:
        started.append(HostileEndpoint(answer).start())
        return started[-1]

    yield start
    for endpoint in started:
        endpoint.stop()


@pytest.fixture(autouse=True)
def _scripted_providers_used_up(request: pytest.FixtureRequest) -> Iterator[None]:
    """Every ScriptedProvider a test made used its whole script and saw only valid requests.

    Checked only after the test itself passed, so a failing test is not blamed twice.
    """
    ScriptedProvider.made.clear()
    yield
    made, ScriptedProvider.made[:] = list(ScriptedProvider.made), []
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.passed:
        for provider in made:
            provider.assert_used_up()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """Keep the call phase's report on the item, for fixtures that check only after a pass."""
    report = yield
    if report.when == "call":
        item.rep_call = report  # type: ignore[attr-defined]
    return report
