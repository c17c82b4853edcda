"""When an agent compacts, and the summary call: the state machine around compaction.py's pure functions.

An agent compacts (SPEC §6) on `/compact` (`Agent.compact`), after the model called the `compact`
tool (before the next model call: the tool only schedules it, so every tool_use of that response
is answered first), and automatically when the history's JSON size passes the threshold. The
automatic check runs before the user's prompt is added (so a new prompt is not summarised before
the model saw it) and before every further model call of a turn, not counting the newest message
then (tool results the model has yet to read). An automatic compaction that fails is not retried
in the same turn: one warning, not one before every model call.

`CompactionState` holds that: the threshold, the count so far (carried across resumes), a pending
request of the `compact` tool and whether this turn's automatic attempt failed. `request_summary`
and `summary_of` are the summary call; the agent records the boundary and replaces its history.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

from evo_agent.providers.base import ProviderCancelled, ProviderError
from evo_agent.session import blocks, summary_message, summary_text
from evo_agent.session import plain_dataclass as dataclass
from evo_agent.tools import Tool, ToolContext, ToolResult
from evo_agent.tools.registry import COMPACT_FACTS

from .compaction import (
    SUMMARY_MAX_TOKENS,
    SUMMARY_SYSTEM,
    finish_summary,
    history_chars,
    in_place_summary,
    summary_request,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)
if TYPE_CHECKING:
    from typing import Any

    from evo_agent.providers.base import ModelResponse, Provider

__all__ = ["COMPACT_SCHEDULED", "DEFAULT_COMPACT_CHARS", "CompactResult", "CompactionFailed", "CompactionState",
           "ConversationPrefix", "PromptTooLarge", "check_compactable", "default_compact_threshold", "prompt_limit",
           "prompt_refusal", "request_summary", "summary_of"]

DEFAULT_COMPACT_CHARS = 50_000
# A prompt alone larger than this many compaction thresholds (600,000 characters by default: about the
# 200k-token context window of today's models) can never be answered: it is refused before it is sent.
PROMPT_LIMIT_THRESHOLDS = 12

COMPACT_SCHEMA = {
    "type": "object",
    "properties": {"focus": {"type": "string", "description": "What the summary should concentrate on."}},
}
COMPACT_DESCRIPTION = (
    "Summarise the conversation so far and continue from the summary, freeing context. Use it when the "
    "history is long and mostly done with; the summary keeps goals, decisions, files and remaining work."
)
COMPACT_SCHEDULED = "Compaction scheduled: the conversation will be summarised before the next model call."


class PromptTooLarge(ProviderError):
    """A prompt refused before it was sent or recorded (prompt_refusal); a ProviderError: -p exits 1 with its line."""


class CompactionFailed(Exception):
    """The summary could not be made; history and transcript are as they were. One printable line."""


@dataclass
class CompactResult:
    summary: str
    compact_count: int
    trigger: str  # "manual" | "auto" | "tool"
    messages_before: int
    chars_before: int
    chars_after: int

    def describe(self) -> str:
        return (f"Compacted {self.messages_before} message{'s' if self.messages_before != 1 else ''} "
                f"({self.chars_before:,} characters) into a summary of {self.chars_after:,} characters "
                f"(compaction #{self.compact_count}, {self.trigger})")


@dataclass
class CompactionState:
    """Whether a compaction is due (see the module docstring)."""

    threshold: int  # history JSON characters that trigger an automatic compaction
    count: int = 0  # compactions so far, counted across resumes
    requested: str | None = None  # the focus of a `compact` tool call, until it runs
    auto_failed: bool = False  # this turn's automatic compaction failed: not again before the next turn

    def switch(self, count: int) -> None:
        """Another session's history (/resume, /clear, a rewind): its count, nothing pending."""
        self.count = count
        self.requested = None

    def start_turn(self) -> None:
        self.auto_failed = False

    def end_turn(self) -> None:
        """A compaction the model asked for but that never ran (Ctrl+C, an API error) is forgotten:
        the transcript has no trace of it, so a resume would not run it either."""
        self.requested = None

    def tool(self) -> Tool:
        """The `compact` tool: it schedules the compaction, which runs once the response's tools are answered."""
        def schedule(tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
            self.requested = str(tool_input.get("focus") or "")
            return ToolResult(COMPACT_SCHEDULED)

        return Tool(COMPACT_FACTS.name, COMPACT_DESCRIPTION, COMPACT_SCHEMA, schedule, facts=COMPACT_FACTS)

    def due(self, history: list[dict[str, Any]], *, mid_turn: bool) -> tuple[str | None, str] | None:
        """(focus, trigger) of the compaction to run now, or None; a pending tool request is taken.

        Mid-turn, the newest message (tool results the model has not seen yet) does not count
        towards the threshold: one large result can then never be summarised away before the model
        reads it, and a model that runs the tool again cannot be caught in a compact-and-reread loop.
        """
        if self.requested is not None:
            focus, self.requested = self.requested, None
            return focus or None, "tool"
        seen = history[:-1] if mid_turn else history
        if self.auto_failed or len(seen) < 2 or history_chars(seen) <= self.threshold:
            return None
        return None, "auto"

    def failed(self, trigger: str) -> None:
        if trigger == "auto":
            self.auto_failed = True  # warn once per turn, not before every call


def prompt_limit(threshold: int) -> int:
    """The most characters one prompt may hold under this compaction threshold (PROMPT_LIMIT_THRESHOLDS)."""
    return threshold * PROMPT_LIMIT_THRESHOLDS


def prompt_refusal(prompt: str, threshold: int) -> str | None:
    """The one line refusing a prompt too large for the model's context window, or None when it may be sent.

    Why before anything is recorded: such a prompt, once in the history, is resent by every later turn and
    refused every time (compaction cannot summarise the prompt the model has yet to answer).
    """
    limit = prompt_limit(threshold)
    if len(prompt) <= limit:
        return None
    return (f"the prompt is {len(prompt):,} characters, over the {limit:,} characters the model's context window "
            "holds; nothing was sent: shorten it or send it in parts")


def check_compactable(history: list[dict[str, Any]]) -> None:
    """CompactionFailed when there is nothing to summarise: no history, or only the summary of one."""
    if not history:
        raise CompactionFailed("there is nothing to compact yet")
    if len(history) == 1 and history[0] == summary_message(_summary_text(history[0])):
        raise CompactionFailed("there is nothing to compact: the conversation is already one summary")


def _summary_text(message: dict[str, Any]) -> str:
    """The summary inside a synthetic summary message (or '' for any other message)."""
    return summary_text(message)


@dataclass(frozen=True)
class ConversationPrefix:
    """What the conversation's next request would send (system, tools, messages as sent, cache key):
    the summary call repeats it, so it reads all of it from the prompt cache (SPEC §12)."""

    system: str
    tools: list[dict[str, Any]]
    messages: list[dict[str, Any]]
    cache_key: str


def request_summary(provider: Provider, history: list[dict[str, Any]], focus: str | None, cancel: threading.Event,
                    prefix: ConversationPrefix | None = None,
                    count: Callable[[ModelResponse], None] | None = None, *,
                    agent_focus: bool = False) -> ModelResponse:
    """The one model call that writes the summary, using no tool; CompactionFailed when it fails.

    With a `prefix`, the call is sent in place (compaction.py), reading the cache; an answer that
    calls a tool anyway, or a refusal as too long, is followed by the flattened call without tools.
    `count` is given every answer that was paid for, the discarded one too. `agent_focus`: `focus` is the
    `compact` tool's (summary_instruction).
    """
    if prefix is not None:
        response = _summary_call(provider, cancel, system=prefix.system, tools=prefix.tools,
                                 messages=in_place_summary(prefix.messages, history, focus, agent_focus=agent_focus),
                                 cache_key=prefix.cache_key, text_only=True)
        if response is not None:
            if count is not None:
                count(response)
            if not any(b.get("type") == "tool_use" for b in blocks(response.message)):
                return response
    response = _summary_call(provider, cancel, system=SUMMARY_SYSTEM, tools=[],
                             messages=summary_request(history, focus, agent_focus=agent_focus), flattened=True)
    assert response is not None  # the flattened call raises rather than gives up
    if count is not None:
        count(response)
    return response


def _summary_call(provider: Provider, cancel: threading.Event, *, system: str, tools: list[dict[str, Any]],
                  messages: list[dict[str, Any]], cache_key: str | None = None, text_only: bool = False,
                  flattened: bool = False) -> ModelResponse | None:
    """One summary request; None when the in-place form was refused as too long (the flattened one is shorter)."""
    try:
        return provider.complete(system=system, messages=messages, tools=tools, max_tokens=SUMMARY_MAX_TOKENS,
                                 cancel=cancel, cache_key=cache_key, text_only=text_only)
    except ProviderCancelled:
        raise CompactionFailed("the summary was interrupted; nothing was compacted") from None
    except ProviderError as exc:
        from evo_agent.providers.errors import is_too_long  # the HTTP client's module: only on this path

        if not flattened and is_too_long(None, str(exc)):
            return None
        raise CompactionFailed(f"the summary call failed ({exc}); nothing was compacted") from None


def summary_of(model_text: str, history: list[dict[str, Any]]) -> str:
    """The summary to store, from the model's answer; CompactionFailed when it is empty."""
    model_text = model_text.strip()
    if not model_text:
        raise CompactionFailed("the model returned an empty summary; nothing was compacted")
    return finish_summary(model_text, history)


def default_compact_threshold() -> int:
    """The history size (JSON characters) that triggers automatic compaction: EVO_AGENT_COMPACT_CHARS."""
    try:
        value = int(os.environ.get("EVO_AGENT_COMPACT_CHARS", ""))
    except ValueError:
        return DEFAULT_COMPACT_CHARS
    return value if value > 0 else DEFAULT_COMPACT_CHARS
