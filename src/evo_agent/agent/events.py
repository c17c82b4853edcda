"""What a turn reports to its front end: one frozen dataclass per kind of event, and their union.

The flow is provider → agent → front end. The provider streams text, thinking and "a tool was
named" as it reads the answer, and says when it retries the call (providers/base.py defines those
deltas: providers may not import the agent); the agent adds tool starts and ends and notices, and
hands every one of them, as it is, to the front end's one method:

    def on_event(self, event: TurnEvent) -> None:
        match event:
            case TextDelta(text=text): ...
            case ToolStarted(name=name, input=tool_input, depth=0): ...
            ...
            case _:
                assert_never(event)   # a new kind of event: mypy and tests/agent/test_events.py say where

A subagent's tool calls arrive as the same `ToolStarted`/`ToolFinished`, with `depth` 1 and
`parent_id` naming the `task` call they run under (subagents.NestedCallbacks); its streamed text
does not reach the front end (its final answer is the task's result). Every event may be delivered
from the turn's worker thread or a subagent's thread.

Approval is not an event: it is a question the turn waits on (`on_approval`, callbacks.py).
"""

from __future__ import annotations

from collections.abc import Mapping

from evo_agent.providers import Retrying, StreamEvent, TextDelta, ThinkingDelta, ToolNamed
from evo_agent.session import plain_dataclass as dataclass

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)
if TYPE_CHECKING:
    from typing import Any, NoReturn
    from typing import assert_never as assert_never
else:
    def assert_never(value: object) -> NoReturn:
        """typing.assert_never at run time (the type checker reads typing's): a kind of event left unhandled."""
        raise AssertionError(f"Expected code to be unreachable, but got: {value!r}")

__all__ = ["TURN_EVENTS", "Notice", "Retrying", "StreamEvent", "TextDelta", "ThinkingDelta", "ToolFinished",
           "ToolNamed", "ToolStarted", "TurnEvent", "assert_never"]


@dataclass(frozen=True)
class ToolStarted:
    """A tool call is about to run, its input complete (`tool_id` is the tool_use id).

    `depth` 0 is the turn's own call; 1 a subagent's, run under the `task` call `parent_id`.
    """

    tool_id: str
    name: str
    input: Mapping[str, Any]
    depth: int = 0
    parent_id: str | None = None


@dataclass(frozen=True)
class ToolFinished:
    """The tool call `tool_id` finished after `duration` seconds; `text` is its result as the model reads it."""

    tool_id: str
    text: str
    is_error: bool
    duration: float
    depth: int = 0
    parent_id: str | None = None


@dataclass(frozen=True)
class Notice:
    """A one-line system notice: compaction happened, a write failed, the answer was cut, a rule matched."""

    text: str


TurnEvent = TextDelta | ThinkingDelta | ToolNamed | ToolStarted | ToolFinished | Notice | Retrying

# Every kind of event, in the union's order: tests check that each front end handles each one.
TURN_EVENTS: tuple[type, ...] = TurnEvent.__args__  # typing.get_args of the union, without typing
