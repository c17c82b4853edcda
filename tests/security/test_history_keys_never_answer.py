"""↑, the prompt's history key, never answers a question (SPEC §9: never by typing meant for the prompt).

With the prompt box empty the keyboard is on a question's menu, where ↑ with nothing chosen chose the last
row and went on upwards: a user recalling an earlier prompt with ↑↑↑ and sending it with Enter, as the
question came up, answered "Yes, and always allow … in this project" (↑↑↑↑: for this session, ↑↑↑↑↑: yes),
and ↑ then a prompt starting with a, p or y ("add a test", "please …") answered by the letter's shortcut.
Now ↑ with nothing chosen is the prompt's: the keyboard goes to the prompt box and recalls the history,
where Enter answers nothing. ↓ chooses the first row, as before (the control: the menu still answers).
"""

from __future__ import annotations

import asyncio

import pytest

from evo_agent.tools.approval import ApprovalDecision, ApprovalRequest
from tests.ui.fakes import FakeAgent
from tests.ui.test_app import DOWN, ENTER, TAB, UP, running

TYPED = {
    "resend the third last prompt": UP * 3 + ENTER,
    "the fourth": UP * 4 + ENTER,
    "the fifth": UP * 5 + ENTER,
    "recall, then a prompt": UP + "add a test",
    "recall, then please": UP + "please go on" + ENTER,
    "recall, then yes": UP + "yes" + ENTER,
}


@pytest.mark.parametrize("typed", sorted(TYPED))
def test_the_history_key_and_what_follows_never_answer(tmp_path, typed):
    assert asyncio.run(_answered(tmp_path, TYPED[typed])) == [ApprovalDecision("no")], typed


async def _answered(tmp_path, typed: str) -> list[ApprovalDecision]:
    """What a question was answered when `typed` came as it was up, then the menu's "No" was chosen."""
    request = ApprovalRequest("bash", "run: touch pwned", rule="Bash(touch pwned)")
    agent = FakeAgent(tmp_path, script=[request])
    async with running(agent) as run:
        run.type("go" + ENTER)
        await run.until(lambda: run.app.questions.approval is not None)
        assert run.app.buffer.text == ""  # the keyboard is on the question
        run.type(typed)
        await run.until(lambda: run.app.questions.on_prompt or bool(agent.decisions))
        if agent.decisions:  # answered by what was typed for the prompt
            return agent.decisions
        run.type(TAB + DOWN + DOWN + DOWN + DOWN)  # the control of the same run: back to the menu, "No"
        await run.until(lambda: run.app.questions.choice == 3)
        run.type(ENTER)
        await run.until(lambda: not run.app.running)
    return agent.decisions


def test_the_control_down_then_enter_answers_yes(tmp_path):
    assert asyncio.run(_down_enter(tmp_path)) == [ApprovalDecision("yes")]


async def _down_enter(tmp_path) -> list[ApprovalDecision]:
    agent = FakeAgent(tmp_path, script=[ApprovalRequest("bash", "run: touch pwned", rule="Bash(touch pwned)")])
    async with running(agent) as run:
        run.type("go" + ENTER)
        await run.until(lambda: run.app.questions.approval is not None)
        run.type(DOWN + ENTER)
        await run.until(lambda: not run.app.running)
    return agent.decisions

