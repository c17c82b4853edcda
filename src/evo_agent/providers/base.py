"""What every model provider returns, and the one error type the agent catches.

Messages are plain dicts in the Anthropic MessageParam shape everywhere in
evo-agent; a provider translates at its own boundary and nowhere else.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol


@dataclass
class ModelResponse:
    """One model turn: the assistant message in request-param shape plus usage."""

    message: dict  # {"role": "assistant", "content": [block, ...]}
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int | None = None
    cache_read_input_tokens: int | None = None
    stop_reason: str | None = None


@dataclass
class StreamCallbacks:
    """Optional hooks a UI passes in to show the response as it arrives."""

    on_text: Callable[[str], None] | None = None
    on_thinking: Callable[[str], None] | None = None
    on_tool_use_start: Callable[[str, str], None] | None = None  # (tool_use_id, name)
    # e.g. "Anthropic API overloaded (529), retrying in 4 s, attempt 2 of 5"
    on_retry: Callable[[str], None] | None = None


def one_line(text: object, limit: int = 300) -> str:
    """Any error text folded to one line of at most `limit` characters, for ProviderError."""
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


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
        messages: list[dict],
        tools: list[dict],
        max_tokens: int = 8192,
        callbacks: StreamCallbacks | None = None,
        cancel: threading.Event | None = None,
    ) -> ModelResponse: ...
