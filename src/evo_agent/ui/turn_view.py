"""The app's turn display: a running turn's events, printed into the scrollback or shown in the live region.

    callbacks = TurnEvents(app, turn)   # what `agent.run_turn` reports to (any thread)
    app.view.show(event)                # in the app's loop: the one place each event is drawn

Finished blocks of the answer, tool calls and their results and notices go into the scrollback;
the unfinished tail of the answer, the tools the model has named whose input is still streaming
and a retry (in the activity line) stay in the live region until they are done. A subagent's calls
(`depth` 1) are drawn indented under their task. Ctrl+O shows `last_tool` in full.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, assert_never

from prompt_toolkit.formatted_text import FormattedText
from rich.console import RenderableType
from rich.text import Text

from evo_agent.agent.events import (
    Notice,
    Retrying,
    TextDelta,
    ThinkingDelta,
    ToolFinished,
    ToolNamed,
    ToolStarted,
    TurnEvent,
)
from evo_agent.safe_text import terminal_safe
from evo_agent.session import one_line
from evo_agent.tools.approval import ApprovalDecision, ApprovalRequest

from . import render
from .stream import MarkdownStream, Piece

if TYPE_CHECKING:
    from .app import AgentApp

__all__ = ["TurnEvents", "TurnView", "answer_parts", "wrapped_tail"]


class TurnEvents:
    """The app's front end for one turn: every event is handed to the app's event loop (any thread may call).

    An event of an earlier turn (`turn` is no longer the app's) is dropped there (AgentApp.call_in_loop).
    """

    def __init__(self, app: AgentApp, turn: int) -> None:
        self._app = app
        self._turn = turn

    def on_event(self, event: TurnEvent) -> None:
        self._app.call_in_loop(self._turn, self._app.view.show, event)

    def on_approval(self, request: ApprovalRequest) -> ApprovalDecision:
        """Blocks this (worker) thread until the user answers in the app; Esc/Ctrl+C/exit mean no."""
        return self._app.ask_approval(request)


class TurnView:
    """What the running turn shows, and what it has shown (all in the app's loop thread)."""

    def __init__(self, app: AgentApp) -> None:
        self.app = app
        self.stream = MarkdownStream()
        self.thinking = ""
        self.tools: dict[str, tuple[str, Mapping[str, Any], int]] = {}   # running calls: name, input, depth
        self.named: dict[str, str] = {}      # tool_use id -> name: named by the model, input still streaming
        self.last_tool: tuple[str, Mapping[str, Any], str] | None = None   # name, input, output: Ctrl+O shows it
        self.last_tool_cut = False           # whether last_tool is a result shown cut, in this turn

    def start(self) -> None:
        """A new turn: nothing streamed, nothing running (the last tool stays for Ctrl+O)."""
        self.last_tool_cut = False
        self.stream = MarkdownStream()
        self.thinking = ""
        self.tools.clear()
        self.named.clear()

    def show(self, event: TurnEvent) -> None:
        match event:
            case TextDelta(text=text):
                self._text(text)
            case ThinkingDelta(text=text):
                self.thinking += text
                self.app.activity.label = "thinking"
                self.app.activity.streamed_chars += len(text)
            case ToolNamed(tool_id=tool_id, name=name):
                self.flush_text()  # the text before the call is complete: printed above it
                self.named[tool_id] = name
                self.app.activity.tool_started(f"{name}(…)")
                self.app.app.invalidate()
            case ToolStarted():
                self._tool_started(event)
            case ToolFinished():
                self._tool_finished(event)
            case Notice(text=text):
                self.flush_text()
                self.app.emit(render.notice(text))
            case Retrying(text=text):
                if self.app.activity.retrying(text):  # shown in the activity line while the turn runs
                    self.app.app.invalidate()
                else:
                    self.flush_text()
                    self.app.emit(render.notice(text))
            case _:
                assert_never(event)  # a new kind of event: mypy (and tests/agent/test_events.py) say where

    def finish(self) -> None:
        """The turn ended: the rest of its answer printed, a call that never finished marked interrupted."""
        self.named.clear()  # named but never run (cancelled, or the input was cut): the live line goes
        self.flush_text()
        for tool_id in list(self.tools):
            name, tool_input, depth = self.tools.pop(tool_id)
            self.app.emit(render.tool_result(name, dict(tool_input), "interrupted", is_error=True, depth=depth,
                                             width=self.app.width()))

    def flush_thinking(self) -> None:
        if self.thinking:
            self.app.emit(render.thinking_line(self.thinking))
            self.thinking = ""
            self.app.activity.label = "working"

    def flush_text(self) -> None:
        """Print what was streamed so far (a question, a tool call or a notice comes below it)."""
        self.flush_thinking()
        pieces = self.stream.finish()
        if pieces:
            self.app.emit(*answer_parts(pieces))
        self.app.refit()

    def named_text(self, width: int) -> FormattedText:
        """Tools the model named whose input is still streaming: `● write_file …` until the call is printed."""
        lines = [f"● {one_line(terminal_safe(name), width - 12)} …" for name in list(self.named.values())[-3:]]
        return FormattedText([("class:dim", "\n".join(lines))])

    def _text(self, text: str) -> None:
        self.flush_thinking()
        self.app.activity.text(text)
        pieces = self.stream.feed(text)
        if pieces:
            self.app.emit(*answer_parts(pieces))
        self.app.app.invalidate()

    def _tool_started(self, event: ToolStarted) -> None:
        self.named.pop(event.tool_id, None)
        self.flush_text()
        tool_input = dict(event.input)
        self.tools[event.tool_id] = (event.name, tool_input, event.depth)
        self.app.emit(render.tool_call(event.name, tool_input, depth=event.depth, width=self.app.width()))
        self.app.activity.tool_started(render.tool_label(event.name, tool_input))

    def _tool_finished(self, event: ToolFinished) -> None:
        name, tool_input, depth = self.tools.pop(event.tool_id, ("tool", {}, 0))
        tool_input, text = dict(tool_input), event.text
        # Ctrl+O expands the call whose result says "(Ctrl+O shows all)" (a subagent's, say, even after its
        # task ended); with no such result in this turn, the last call.
        if render.hides_lines(name, tool_input, text, is_error=event.is_error):
            self.last_tool, self.last_tool_cut = (name, tool_input, text), True
        elif not self.last_tool_cut:
            self.last_tool = (name, tool_input, text)
        self.app.emit(render.tool_result(name, tool_input, text, is_error=event.is_error, duration=event.duration,
                                         depth=depth, width=self.app.width()))
        self.app.activity.tool_finished()
        if self.tools:
            last = next(reversed(self.tools.values()))
            self.app.activity.tool_started(render.tool_label(last[0], dict(last[1])))


def answer_parts(pieces: list[Piece]) -> list[RenderableType]:
    """Finished pieces of an answer as renderables, with the blank lines Rich puts between blocks."""
    parts: list[RenderableType] = []
    for piece in pieces:
        if piece.gap_before:
            parts.append(Text(""))
        parts.append(render.answer(piece.text))
    return parts


def wrapped_tail(text: str, width: int, rows: int) -> list[str]:
    """The last `rows` screen lines of `text` wrapped at `width` columns (wide characters count two).

    Between words, as the finished block is printed (render.Prose's rule): cut at the last cell, a streaming
    line showed `… w16` / ` w17 …` (the blank at column 0) or a word in two pieces until its block ended and
    was printed again wrapped between words. Only a word wider than the screen is cut."""
    out: list[str] = []
    for line in text.split("\n")[-rows:]:
        for row in render.Prose(line).wrapped(width).plain.split("\n"):
            out.extend(_cut_rows(row, width))
    return out[-rows:]


def _cut_rows(line: str, width: int) -> list[str]:
    """`line` cut into rows of at most `width` cells (a word wider than the screen)."""
    from rich.cells import cell_len

    out: list[str] = []
    current, used = "", 0
    for ch in line:
        size = cell_len(ch)
        if used + size > width and current:
            out.append(current)
            current, used = "", 0
        current += ch
        used += size
    out.append(current)
    return out
