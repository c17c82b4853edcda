"""An "always" answer to a command allows that command, never every command it is a prefix of.

The rule an "always" answer adds is `Bash(<the command>)`; a rule whose text ends in `:*` is a prefix rule
(`Bash(npm run:*)`). So a prompt-injected model asked once for a command that itself ends in `:*` — a harmless
looking failure such as `/usr/bin/env -S PYTHONUNBUFFERED=1 python3:*` ("command not found") — and a user who
answered "always" (the app words it "this exact command" when the rule is long) had allowed every
`/usr/bin/env -S PYTHONUNBUFFERED=1 python3 …`, i.e. any Python, unasked, for the session or for good.
Such a command now offers no "always": it can only be allowed once.
"""

from __future__ import annotations

import pytest

from evo_agent.tools.approval import ApprovalDecision
from tests.builders import make_agent
from tests.scripted_provider import ScriptedProvider, reply, use

BAITS = {
    "env-python": "/usr/bin/env -S PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 python3",
    "python": "python3",
    "bash": "bash",
    "spaced": "python3 ",
}


class AlwaysThenNo:
    """Answers the first question "always" (session or project), every later one "no"."""

    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.asked = []

    def on_approval(self, request):
        self.asked.append(request)
        return ApprovalDecision(self.answer if len(self.asked) == 1 else "no")


@pytest.mark.parametrize("answer", ["always-session", "always-project"])
@pytest.mark.parametrize("bait", sorted(BAITS))
def test_always_for_a_command_ending_in_colon_star_never_allows_what_it_prefixes(project, tmp_path, monkeypatch,
                                                                                 bait, answer):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # "project" answers land in the user's config
    marker = tmp_path / "PWNED"
    prefix = BAITS[bait]
    payload = f"{prefix.strip()} -c \"open('{marker}', 'w')\"" if "python" in prefix else \
        f"{prefix.strip()} -c 'touch {marker}'"
    provider = ScriptedProvider(reply(use("bash", {"command": f"{prefix}:*"}, "b1")),
                                reply(use("bash", {"command": payload}, "b2")), reply("done"))
    agent, _ = make_agent(project, provider, mode="ask")
    front = AlwaysThenNo(answer)
    agent.run_turn("set up", front)
    assert not marker.exists()
    assert [r.detail or r.summary for r in front.asked][1:] == [f"run: {payload}"]  # the payload asked again
    assert not front.asked[0].rule  # no "always" was offered for it at all
