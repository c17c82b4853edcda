"""↑, the prompt's history key, never answers a question (SPEC §9: never by typing meant for the prompt).

With the prompt box empty the keyboard is on a question's menu, where ↑ with nothing chosen chose the last
row and went on upwards: a user recalling an earlier prompt with ↑↑↑ and sending it with Enter, as the
question came up, answered "Yes, and always allow … in this project" (↑↑↑↑: for this session, ↑↑↑↑↑: yes),
and ↑ then a prompt starting with a, p or y ("add a test", "please …") answered by the letter's shortcut.
Now ↑ with nothing chosen is the prompt's: the keyboard goes to the prompt box and recalls the history,
where Enter answers nothing. ↓ chooses the first row, as before (the control: the menu still answers).

A mouse wheel in tmux (mouse mode off) sends ↑ and ↓ too, so a menu can be moved by no deliberate key; the
letters y, a and p then answered at once, the first letter of a prompt ("add a test") saying "always". They now
choose their row, and Enter answers; n still says no at once.
"""

from __future__ import annotations

import asyncio

import pytest

from evo_agent.tools.approval import ApprovalDecision, ApprovalRequest
from tests.ui.fakes import FakeAgent
from tests.ui.test_app import DOWN, ENTER, ESC, UP, running

TYPED = {
    "resend the third last prompt": UP * 3 + ENTER,
    "the fourth": UP * 4 + ENTER,
    "the fifth": UP * 5 + ENTER,
    "recall, then a prompt": UP + "add a test" + ENTER,
    "recall, then please": UP + "please go on" + ENTER,
    "recall, then yes": UP + "yes" + ENTER,
    "a wheel's down, then a prompt": DOWN * 3 + "add a test" + ENTER,
    "a wheel's down, then please": DOWN + "please go on" + ENTER,
    "a wheel's down, then yes": DOWN * 2 + "yes, and more" + ENTER,
}


@pytest.mark.parametrize("typed", sorted(TYPED))
def test_the_history_key_and_what_follows_never_answer(tmp_path, typed):
    assert asyncio.run(_answered(tmp_path, TYPED[typed])) == [ApprovalDecision("no")], typed


async def _answered(tmp_path, typed: str) -> list[ApprovalDecision]:
    """What a question was answered when `typed` (ending in Enter) came as it was up, then Esc."""
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
        await run.until(lambda: "Answer the question first" in run.status() or bool(agent.decisions))
        if agent.decisions:
            return agent.decisions
        run.type(ESC)  # the control of the same run: a deliberate no is still taken
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



def test_the_control_a_shortcut_chooses_its_row_and_enter_answers(tmp_path):
    assert asyncio.run(_shortcut(tmp_path)) == [ApprovalDecision("always-project")]


async def _shortcut(tmp_path) -> list[ApprovalDecision]:
    agent = FakeAgent(tmp_path, script=[ApprovalRequest("bash", "run: touch pwned", rule="Bash(touch pwned)")])
    async with running(agent) as run:
        run.type("go" + ENTER)
        await run.until(lambda: run.app.questions.approval is not None)
        run.type(DOWN + "p")
        await run.until(lambda: run.app.questions.choice == 2)
        assert agent.decisions == []
        run.type(ENTER)
        await run.until(lambda: not run.app.running)
    return agent.decisions
