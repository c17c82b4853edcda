"""Print mode's output for scripts: `--output-format text | json | stream-json`, shaped like Claude Code's.

- text: the final answer on stdout (the default);
- json: one JSON object once the turn is over: `type: "result"`, `subtype`, `is_error`, `result`
  (the final text, or the error), `session_id`, `usage` (this session's own, not the resume chain's: Claude
  Code's `input_tokens`, `output_tokens`,
  `cache_creation_input_tokens`, `cache_read_input_tokens`, and `cache_hit_rate`: the share of the
  input read from the prompt cache), `total_cost_usd` (at the cache's prices; null when the model's
  price is unknown), `duration_ms`, `num_turns`;
- stream-json: one JSON object per line as things happen: `system`/`init` (session_id, model,
  cwd, tools), `stream_event` text deltas, `assistant` messages holding a `tool_use`, `user`
  messages holding its `tool_result`, and the same `result` object last.

Notices and errors still go to stderr as one line each; stdout holds only JSON.
"""

from __future__ import annotations

import json
import time

from evo_agent.agent.events import (
    Notice,
    Retrying,
    TextDelta,
    ThinkingDelta,
    ToolFinished,
    ToolNamed,
    ToolStarted,
    TurnEvent,
    assert_never,
)
from evo_agent.safe_text import terminal_safe

from .runtime import Console

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)
if TYPE_CHECKING:
    from typing import Any, TextIO


def _line(obj: dict) -> str:
    """One JSON line with C1 controls and bidi marks escaped (`\\u009b`, `\\u202e`): json.dumps leaves them raw, and
    a terminal acts on them; escaped, the line still parses to the very same data, so a pipe loses nothing."""
    from .trust import json_escape_unsafe  # only for the JSON formats: not on plain -p's path (issue #30)

    return json_escape_unsafe(json.dumps(obj, ensure_ascii=False, separators=(",", ":")))


def usage_of(agent: Any) -> dict:
    """Claude Code's usage fields, and the share of the input read from the prompt cache (null: nothing sent).

    This session's own, as total_cost_usd: a resumed agent's `usage` also holds the chain it continues."""
    from evo_agent.agent.usage import cache_hit_rate

    u = agent.own_usage()
    rate = cache_hit_rate(u)
    return {"input_tokens": u.input_tokens, "output_tokens": u.output_tokens,
            "cache_creation_input_tokens": u.cache_creation_input_tokens,
            "cache_read_input_tokens": u.cache_read_input_tokens,
            "cache_hit_rate": None if rate is None else round(rate, 4)}


def init_event(agent: Any) -> dict:
    """The session's first event. Its `tools` are those of every request, fixed first (a session's MCP servers
    start and are waited for then, as its first request would: Claude Code's init lists their tools too)."""
    tools = [spec["name"] for spec in agent.tool_specs()]
    return {"type": "system", "subtype": "init", "session_id": agent.session_id, "model": agent.model,
            "provider": agent.provider.name, "cwd": str(agent.project_dir), "tools": tools}


def result_event(agent: Any, *, text: str, subtype: str, started: float) -> dict:
    """The final object of json and stream-json output; `subtype` is "success" or "error_…"."""
    return {
        "type": "result",
        "subtype": subtype,
        "is_error": subtype != "success",
        "result": text,
        "session_id": agent.session_id,
        "usage": usage_of(agent),
        "total_cost_usd": agent.cost_usd(),
        "duration_ms": int((time.monotonic() - started) * 1000),
        "num_turns": agent.usage.model_calls,
    }


class StreamJsonCallbacks:
    """Turn callbacks that print one JSON event per line on stdout, as it happens."""

    def __init__(self, agent: Any, console: Console) -> None:
        self.agent = agent
        self.console = console

    def emit(self, event: dict) -> None:
        self.console.write(_line(event) + "\n")

    def on_event(self, event: TurnEvent) -> None:
        match event:
            case TextDelta(text=text):
                self.emit({"type": "stream_event", "session_id": self.agent.session_id,
                           "event": {"type": "content_block_delta", "delta": {"type": "text_delta", "text": text}}})
            case ToolStarted(depth=0):
                block: dict[str, Any] = {"type": "tool_use", "id": event.tool_id, "name": event.name,
                                         "input": dict(event.input)}
                self.emit({"type": "assistant", "session_id": self.agent.session_id,
                           "message": {"role": "assistant", "content": [block]}})
            case ToolFinished(depth=0):
                block = {"type": "tool_result", "tool_use_id": event.tool_id, "content": event.text,
                         "is_error": bool(event.is_error)}
                self.emit({"type": "user", "session_id": self.agent.session_id,
                           "message": {"role": "user", "content": [block]}})
            case Notice(text=text) | Retrying(text=text):
                notice_line(self.console, text)
            case ThinkingDelta() | ToolNamed() | ToolStarted() | ToolFinished():
                pass  # the stream holds the turn's own calls; thinking is not part of it
            case _:
                assert_never(event)  # a new kind of event: mypy (and tests/agent/test_events.py) say where


class QuietCallbacks:
    """text and json output: nothing on stdout during the turn; notices on stderr."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def on_event(self, event: TurnEvent) -> None:
        match event:
            case Notice(text=text) | Retrying(text=text):
                notice_line(self.console, text)
            case TextDelta() | ThinkingDelta() | ToolNamed() | ToolStarted() | ToolFinished():
                pass
            case _:
                assert_never(event)  # a new kind of event: mypy (and tests/agent/test_events.py) say where


def notice_line(console: Console, text: str) -> None:
    """A notice on stderr, made safe: it may quote the model (a subagent's name, a command)."""
    console.error(terminal_safe(text))


class PrintOutput:
    """What print mode writes on stdout for one of help_text.OUTPUT_FORMATS (the parser's choices)."""

    def __init__(self, fmt: str, agent: Any, console: Console) -> None:
        self.fmt = fmt
        self.agent = agent
        self.console = console
        self.started = time.monotonic()

    def callbacks(self) -> StreamJsonCallbacks | QuietCallbacks:
        if self.fmt == "stream-json":
            self.console.write(_line(init_event(self.agent)) + "\n")
            return StreamJsonCallbacks(self.agent, self.console)
        return QuietCallbacks(self.console)

    def answer(self, text: str) -> None:
        """The turn finished: the final text."""
        if self.fmt == "text":
            if text and _isatty(self.console.out):  # a terminal acts on escape sequences; a pipe gets the answer as is
                from evo_agent.safe_text import terminal_safe

                text = terminal_safe(text)
            if text:
                self.console.write(text if text.endswith("\n") else text + "\n")
            return
        self._result(text, "success")

    def failure(self, message: str, subtype: str = "error_during_execution") -> None:
        """The turn failed or was stopped (the one-line error is on stderr already)."""
        if self.fmt != "text":
            self._result(message, subtype)

    def _result(self, text: str, subtype: str) -> None:
        self.console.write(_line(result_event(self.agent, text=text, subtype=subtype, started=self.started)) + "\n")


def _isatty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False
