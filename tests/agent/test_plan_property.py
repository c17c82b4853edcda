"""A property: whatever happens between turns (plan changes, compactions, resumes, a person's edits), a turn
after it tells the model exactly what the plan files say, and a completed plan is never mentioned again
(but for the one reminder that says it was closed, at the turn after a person completed it).

Hypothesis draws the sequence; the scripted provider checks every request like the API, and each
step also checks that the live history is what the transcript restores.
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evo_agent.session import REMINDER_CLOSE, REMINDER_OPEN, PlanStore, is_reminder_block
from evo_agent.tools.plan_tools import plan_summary
from tests.agent.helpers import assert_faithful, resume_own
from tests.builders import make_agent
from tests.scripted_provider import ScriptedProvider, reply, use

STEPS = st.lists(st.one_of(
    st.tuples(st.just("tool"), st.integers(1, 3), st.sampled_from(["pending", "in_progress", "completed"])),
    st.tuples(st.just("compact"), st.just(0), st.just("")),
    st.tuples(st.just("resume"), st.just(0), st.just("")),
    st.tuples(st.just("edit"), st.integers(1, 3), st.text("abcxyz ", min_size=1, max_size=12)),
    st.tuples(st.just("complete"), st.just(0), st.just("")),
), min_size=1, max_size=8)


def told(message: dict) -> list[str]:
    content = message.get("content") if isinstance(message.get("content"), list) else []
    return [b["text"].removeprefix(REMINDER_OPEN).removesuffix(REMINDER_CLOSE).strip()
            for b in content if is_reminder_block(b)]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=STEPS)
def test_after_anything_the_model_is_told_what_is_on_disk(tmp_path_factory, steps):
    project = tmp_path_factory.mktemp("project")
    store = PlanStore(project)
    store.create("Property plan", "hold the invariant")
    for subject in ("one", "two", "three"):
        store.add_task(subject)
    provider = ScriptedProvider(reply("hello"))
    agent, _ = make_agent(project, provider)
    agent.run_turn("start")
    (first,) = told(provider.calls[0][0])  # session start
    assert first.split("\n", 1)[1] == plan_summary(store.active())
    must_tell = completed = False
    for n, (kind, task, value) in enumerate(steps):
        just_completed = False
        if kind == "tool":
            provider.items += [reply(use("plan_task_update", {"task_id": task, "status": value}, f"u{n}")),
                               reply("ok")]
            agent.run_turn("update it")
            must_tell = False  # the turn's own prompt carried what was due; its change is the model's own
            continue
        if kind == "compact":
            provider.items.append(reply("SUMMARY: everything is finished, no plan is left"))
            agent.compact()
        elif kind == "resume":
            resume_own(agent)
        elif kind == "edit" and not completed:
            data = json.loads((store.active().path / f"task_{task}.json").read_text())
            if data["subject"] == value.strip() or not value.strip():
                continue
            data["subject"] = value.strip()
            (store.active().path / f"task_{task}.json").write_text(json.dumps(data))
        elif kind == "complete" and not completed:
            for t in store.active().tasks:
                store.update_task(t.id, status="completed")
            store.complete()
            completed = just_completed = True
        if kind in ("compact", "resume", "edit"):
            must_tell = True
        provider.items.append(reply("fine"))
        agent.run_turn("and now?")
        reminders = told(provider.calls[-1][-1])
        if just_completed:  # the model knew it open: told it is closed, once, without its tasks
            (closed,) = reminders
            assert closed.startswith("There is no open Session Plan") and "Tasks" not in closed
        elif completed:
            assert reminders == [], "a completed plan came back"
        elif must_tell:
            (reminder,) = reminders
            assert reminder.split("\n", 1)[1] == plan_summary(store.active())
        must_tell = False
        assert_faithful(agent)
