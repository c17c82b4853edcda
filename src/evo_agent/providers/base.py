"""What every model provider returns, and the one error type the agent catches.

Messages are plain dicts in the Anthropic MessageParam shape everywhere in
evo-agent; a provider translates at its own boundary and nowhere else.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

# Where a tool_use input that was not one JSON object is kept (said once, in session/messages.py).
from evo_agent.session import INVALID_ARGUMENTS_KEY as INVALID_ARGUMENTS_KEY
from evo_agent.session import plain_dataclass as dataclass

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)
if TYPE_CHECKING:
    from typing import Any, Protocol
else:  # a Protocol is the type checker's: at run time a plain base class (typing is ~12 M instructions)
    Protocol = object

# Why an answer ended (ModelResponse.stop_reason): every provider says it in the Messages API's words.
END_TURN = "end_turn"  # the model finished
TOOL_USE = "tool_use"  # the model waits for tool results
MAX_TOKENS = "max_tokens"  # cut at the request's max_tokens (OpenAI: finish_reason "length")
REFUSAL = "refusal"  # refused (OpenAI: "content_filter")
CONTEXT_FULL = "model_context_window_exceeded"  # cut because the context window is full (Anthropic)



@dataclass
class ModelResponse:
    """One model turn: the assistant message in request-param shape plus usage.

    `stop_reason` is one of the constants above (an unknown one passes through as the API said
    it; None when the API said nothing); `cut_short` is what a front end tells the user about.
    """

    message: dict[str, Any]  # {"role": "assistant", "content": [block, ...]}
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int | None = None
    cache_read_input_tokens: int | None = None
    stop_reason: str | None = None

    @property
    def cut_short(self) -> bool:
        """The answer was cut before the model finished it: its end (text, a tool call's input) is missing."""
        return self.stop_reason in (MAX_TOKENS, CONTEXT_FULL)

    def cut_notice(self, max_tokens: int) -> str | None:
        """The one line a user is told when the answer was cut (None when it was not)."""
        if self.stop_reason == MAX_TOKENS:
            return f'the answer was cut at the {max_tokens}-token limit (max_tokens); send "continue" for the rest'
        if self.stop_reason == CONTEXT_FULL:
            return "the answer was cut: the conversation fills the model's context window; run /compact"
        return None


@dataclass(frozen=True)
class TextDelta:
    """A fragment of the model's visible text, as it streams (or a whole block at once)."""

    text: str


@dataclass(frozen=True)
class ThinkingDelta:
    """A fragment of the model's thinking, when it sends any."""

    text: str


@dataclass(frozen=True)
class ToolNamed:
    """The model named a tool (`tool_id` is the tool_use id); its input is still streaming.

    A front end can show the call at once instead of after a long input (a whole file for
    write_file) has arrived; the agent's `ToolStarted` with the same id follows when it runs.
    """

    tool_id: str
    name: str


@dataclass(frozen=True)
class Retrying:
    """The model call failed and is tried again, in one line:
    "Anthropic API overloaded (529), retrying in 4 s, attempt 2 of 5" (errors.retry_notice)."""

    text: str


# What a provider reports while it answers; the agent passes each on to its front end as it is
# (evo_agent.agent.events adds its own events to this union).
StreamEvent = TextDelta | ThinkingDelta | ToolNamed | Retrying


@dataclass
class StreamCallbacks:
    """Where a provider reports the answer as it arrives: `on_event` gets each StreamEvent, in order."""

    on_event: Callable[[StreamEvent], None] | None = None

    def emit(self, event: StreamEvent) -> None:
        if self.on_event is not None:
            self.on_event(event)

    def show(self, events: list[StreamEvent]) -> None:
        """Pass a stream assembler's events on, in order."""
        for event in events:
            self.emit(event)


class ProviderError(Exception):
    """A model call failed in a way a user should read as one line (no traceback)."""


class ProviderCancelled(Exception):
    """The cancel event was set while the model was answering."""


class Provider(Protocol):
    name: str
    model: str

    def complete(
        self,
        *,
        system: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        max_tokens: int = 8192,
        callbacks: StreamCallbacks | None = None,
        cancel: threading.Event | None = None,
        cache_key: str | None = None,
        text_only: bool = False,
    ) -> ModelResponse:
        """One model call. `cache_key` names the conversation a request belongs to (its resume chain's
        first session id), so its prefix will be sent again: the provider asks the API to cache it
        (SPEC §12). None for a one-off request (the flattened summary call), not worth a cache write.

        `text_only`: the answer must not call a tool although `tools` are defined (the summary call
        sent in place of the conversation's next request). The provider forbids tool use where the
        API lets it do so without changing the cached prefix; the caller still checks the answer."""
        ...
