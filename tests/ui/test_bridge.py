"""The app–agent seam (issue #32): `AgentLike` lists every member the app uses; the agent and the fake have them all."""

from __future__ import annotations

import re
from pathlib import Path

import evo_agent.ui
from evo_agent.ui.bridge import AgentLike
from tests.builders import make_agent
from tests.scripted_provider import ScriptedProvider

from .fakes import FakeAgent

# `self.agent.x`, `app.agent.x`, and `agent.x` / `a.x` where the app names its agent so (not `evo_agent.agent.x`).
_USE = re.compile(r"(?<![\w.])(?:self\.agent|app\.agent|agent|a)\.([a-z_]+)")


def members() -> set[str]:
    own = {name for name, value in vars(AgentLike).items()
           if (callable(value) or isinstance(value, property)) and not name.startswith("_")}  # attributes: properties
    return own | set(AgentLike.__annotations__)


def test_the_app_uses_nothing_of_the_agent_that_the_protocol_does_not_list():
    used = {name for path in Path(evo_agent.ui.__file__).parent.glob("*.py") for name in _USE.findall(path.read_text())}
    assert used and used <= members(), sorted(used - members())


def test_the_fake_and_the_real_agent_implement_every_member(tmp_path, project):
    assert isinstance(FakeAgent(tmp_path), AgentLike)
    missing = [name for name in members() if not hasattr(FakeAgent(tmp_path), name)]
    assert missing == []
    agent, _ = make_agent(project, ScriptedProvider())
    assert isinstance(agent, AgentLike)
    assert [name for name in members() if not hasattr(agent, name)] == []


def test_no_getattr_default_stands_in_for_a_member_of_the_agent():
    package = Path(evo_agent.ui.__file__).parent.parent
    for path in [*(package / "ui").glob("*.py"), *(package / "cli").rglob("*.py")]:
        assert not re.search(r"getattr\((?:self\.|app\.)?(?:agent|a)\b", path.read_text()), path.name
