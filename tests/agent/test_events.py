"""One event type for every front end: each handles every kind of event (issue #32).

Each front end's `match` ends with `assert_never(event)`: an event class added to `TurnEvent` that a
front end forgets fails here, once per front end, instead of being dropped in silence.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any, get_args, get_origin, get_type_hints

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from evo_agent.agent.callbacks import SafeCallbacks, TurnCallbacks
from evo_agent.agent.events import TURN_EVENTS, Notice, ToolFinished, ToolStarted, TurnEvent
from evo_agent.agent.subagents import NestedCallbacks
from evo_agent.cli.print_output import QuietCallbacks, StreamJsonCallbacks
from evo_agent.cli.repl import ConsoleCallbacks
from evo_agent.cli.runtime import Console
from evo_agent.providers import StreamEvent
from evo_agent.session.plaindata import MISSING, FrozenInstanceError
from tests.ui.fakes import FakeAgent

SAMPLES: dict[Any, Any] = {str: "x", bool: True, float: 0.5, int: 0}


def sample(cls: type, **given: Any) -> Any:
    """An instance of the event class `cls`, each required field filled from its type."""
    hints = get_type_hints(cls, localns={"Any": Any})  # the events import Any only for the type checker (start-up)
    values = {}
    for f in cls.__plain_fields__:  # plain data classes (session/plaindata.py): no dataclasses import at start-up
        if f.name in given or f.default is not MISSING:  # given, or has a default: left as it is
            continue
        hint = hints[f.name]
        values[f.name] = {"command": "ls"} if get_origin(hint) is Mapping else SAMPLES[hint]
    return cls(**values, **given)


def every_event() -> list[TurnEvent]:
    """One of each kind, and the tool events once more as a subagent's (depth 1)."""
    events = [sample(cls) for cls in TURN_EVENTS]
    events += [sample(ToolStarted, depth=1, parent_id="task1"), sample(ToolFinished, depth=1, parent_id="task1")]
    return events


class Recorder:
    def __init__(self) -> None:
        self.seen: list[TurnEvent] = []

    def on_event(self, event: TurnEvent) -> None:
        self.seen.append(event)


def console() -> Console:
    return Console(io.StringIO(), io.StringIO())


def test_the_union_is_frozen_data_classes_and_holds_the_providers_deltas():
    assert len(TURN_EVENTS) == len(set(TURN_EVENTS)) == 7
    assert set(get_args(StreamEvent)) <= set(TURN_EVENTS)  # the agent passes the provider's on as they are
    for cls in TURN_EVENTS:
        assert cls.__plain_fields__ and cls.__hash__ is not None  # frozen plain data classes
        event = sample(cls)
        with pytest.raises(FrozenInstanceError):
            event.text = "changed"  # type: ignore[misc]


@pytest.mark.parametrize("make", [
    pytest.param(lambda: ConsoleCallbacks(console()), id="repl"),
    pytest.param(lambda: StreamJsonCallbacks(SimpleNamespace(session_id="s1"), console()), id="stream-json"),
    pytest.param(lambda: QuietCallbacks(console()), id="quiet"),
    pytest.param(lambda: NestedCallbacks(Recorder(), "task1"), id="subagent"),
])
@pytest.mark.parametrize("event", every_event(), ids=lambda e: f"{type(e).__name__}-{getattr(e, 'depth', 0)}")
def test_every_front_end_handles_every_event(make, event):
    make().on_event(event)  # assert_never raises for a kind the front end has no case for


def test_the_app_handles_every_event(tmp_path: Path):
    from evo_agent.ui.app import AgentApp
    from evo_agent.ui.turn_view import TurnEvents

    with create_pipe_input() as pipe:
        app = AgentApp(FakeAgent(tmp_path), input=pipe, output=DummyOutput())
        app.activity.start()
        for event in every_event():
            app.view.show(event)
        assert app.view.tools == {}  # every started call finished
        assert isinstance(TurnEvents(app, 1), TurnCallbacks)


def test_print_mode_and_the_repl_show_only_the_turns_own_calls():
    """A subagent's calls (depth 1) are the app's to show; the REPL and stream-json stay as they were."""
    out = console()
    repl = ConsoleCallbacks(out)
    stream = StreamJsonCallbacks(SimpleNamespace(session_id="s1"), out)
    for front in (repl, stream):
        front.on_event(ToolStarted("n1", "grep", {"pattern": "x"}, depth=1, parent_id="t1"))
        front.on_event(ToolFinished("n1", "found", False, 0.1, depth=1, parent_id="t1"))
    assert out.out.getvalue() == ""


def test_a_subagents_events_go_up_one_level_under_its_task_and_its_text_stays_below():
    parent = Recorder()
    nested = NestedCallbacks(parent, "task1")
    for event in every_event():
        nested.on_event(event)
    kinds = [type(e).__name__ for e in parent.seen]
    assert "TextDelta" not in kinds and "ThinkingDelta" not in kinds and "ToolNamed" not in kinds
    tools = [e for e in parent.seen if isinstance(e, ToolStarted | ToolFinished)]
    assert [(e.depth, e.parent_id) for e in tools] == [(1, "task1"), (1, "task1"), (2, "task1"), (2, "task1")]
    assert any(isinstance(e, Notice) for e in parent.seen)


def test_a_front_end_that_raises_or_takes_no_events_never_breaks_the_turn():
    class Broken:
        def on_event(self, event: TurnEvent) -> None:
            raise RuntimeError("display broke")

    for target in (Broken(), object(), None):
        cb = SafeCallbacks(target)
        for event in every_event():
            cb.emit(event)
        assert cb.asker is None


def test_approval_stays_a_call_and_goes_up_from_a_subagent():
    class Asking(Recorder):
        def on_approval(self, request: Any) -> str:
            return "yes"

    assert SafeCallbacks(NestedCallbacks(Asking(), "task1")).asker is not None
    assert SafeCallbacks(NestedCallbacks(Recorder(), "task1")).asker is None
