"""Chat completion chunks (or one whole completion) folded into a ModelResponse, as pure code (no I/O).

    assembler = ChatStreamAssembler(history_tool_ids(messages), seed=len(messages))
    for chunk in chunks:
        for event in assembler.feed(chunk):   # TextDelta, ThinkingDelta, ToolNamed (base.py)
            ...
    response = assembler.response()

What the assembly does with what one side cannot say:

- Streamed reasoning (`reasoning_content` / `reasoning`, as DeepSeek, vLLM, llama.cpp and
  OpenRouter send it) is shown through `ThinkingDelta` but not stored: a thinking block
  without an Anthropic signature would break a later resume with the anthropic provider.
- A tool call is announced (`ToolNamed`) on the chunk that names it, before its
  arguments finish streaming, with its final id: ids the server returns that are missing,
  malformed or already used in the history are replaced by deterministic ones ("call_" +
  hash of the history length, the call's position and name), so a session written with
  this provider resumes with the anthropic one.
- Usage: `prompt_tokens` minus `prompt_tokens_details.cached_tokens` -> input_tokens,
  the cached part -> cache_read_input_tokens (Anthropic counts input_tokens without
  the cache reads; this keeps totals comparable across providers), `completion_tokens`
  -> output_tokens.
- finish_reason -> ModelResponse.stop_reason in the Messages API's words: stop -> end_turn,
  tool_calls / function_call -> tool_use, length -> max_tokens, content_filter -> refusal;
  an answer with tool calls that says "stop" (some servers do) is tool_use, one cut by
  `length` stays max_tokens (its last call's arguments are likely incomplete).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from evo_agent.session import text_block

from .base import (
    END_TURN,
    MAX_TOKENS,
    REFUSAL,
    TOOL_USE,
    ModelResponse,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolNamed,
)
from .openai_translate import ID_OK, clean_tool_name, digest, parse_arguments

MAX_NAME_CHARS = 1024  # a tool name sent in pieces grows no further (clean_tool_name keeps 64)
_STOP_REASONS = {
    "stop": END_TURN,
    "tool_calls": TOOL_USE,
    "function_call": TOOL_USE,
    "length": MAX_TOKENS,
    "content_filter": REFUSAL,
}

Event = StreamEvent


def map_stop_reason(finish_reason: str | None, has_tool_calls: bool) -> str | None:
    """A chat finish_reason as a Messages API stop_reason (unknown ones pass through)."""
    if has_tool_calls and finish_reason in (None, "stop", "tool_calls", "function_call"):
        return TOOL_USE
    if finish_reason is None:
        return None
    return _STOP_REASONS.get(finish_reason, finish_reason)


def map_usage(usage: dict[str, Any] | None) -> dict[str, Any]:
    """OpenAI usage -> the record's token fields (input_tokens excludes cache reads, as in Anthropic's)."""
    if not isinstance(usage, dict):
        return {"input_tokens": 0, "output_tokens": 0, "cache_read_input_tokens": None}
    prompt = int(usage.get("prompt_tokens") or 0)
    details = usage.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    cached = int(cached) if isinstance(cached, (int, float)) and not isinstance(cached, bool) else None
    return {
        "input_tokens": max(0, prompt - (cached or 0)),
        "output_tokens": int(usage.get("completion_tokens") or 0),
        "cache_read_input_tokens": cached,
    }


@dataclass(eq=False)  # calls are told apart by identity
class _Call:
    """One tool call being assembled; `key` is how its later chunks find it."""

    key: tuple[Any, ...]  # ("index", n) | ("id", server id) | ("position", 0)
    server_id: str | None
    position: int = 0  # its place in the assembler's `calls`
    id: str | None = None  # final (announced) id
    name: str = ""
    arguments: list[str] = field(default_factory=list)

    def order(self, position: int) -> tuple[Any, ...]:
        """Sort key: `index` order (the order the model wrote them), whatever order their chunks came in."""
        return (0, self.key[1], position) if isinstance(self.key[1], int) else (1, 0, position)

    def add_name(self, name: Any) -> None:
        if not (isinstance(name, str) and name):
            return
        if not self.name or name.startswith(self.name):
            self.name = name[:MAX_NAME_CHARS]  # the whole name, possibly repeated or growing
        elif name != self.name and len(self.name) < MAX_NAME_CHARS:
            self.name += name  # a name sent in pieces (no tool's name is longer than 64: clean_tool_name)

    def add_arguments(self, arguments: Any) -> None:
        if arguments is not None:
            text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
            self.arguments.append(text)


def _delta_of(choice: dict[str, Any]) -> dict[str, Any]:
    delta = choice.get("delta")
    if delta is None:
        delta = choice.get("message")  # a whole completion fed as one chunk
    return delta if isinstance(delta, dict) else {}


def _first_choices(chunk: dict[str, Any]) -> list[dict[str, Any]]:
    """The choices of index 0 (only one answer is asked for; others are ignored)."""
    return [c for c in chunk.get("choices") or [] if isinstance(c, dict) and (c.get("index") or 0) == 0]


class ChatStreamAssembler:
    """Folds chat completion chunks (plain dicts, as the server sent them) into a ModelResponse.

    `feed(chunk)` returns the events it implies, in order: `TextDelta`,
    `ThinkingDelta`, `ToolNamed` (base.py). `response()` builds the
    assistant message. Ids are final when announced: `used_ids` are the history's
    (a new id never repeats one), `seed` makes generated ids differ from turn to turn.
    """

    def __init__(self, used_ids: Iterable[str] = (), seed: object = "") -> None:
        self.used_ids = set(used_ids)
        self.seed = seed
        self.text: list[str] = []
        self.calls: list[_Call] = []
        self._by_key: dict[tuple[Any, ...], _Call] = {}  # a call's later chunks find it here, not by a scan of all
        self._by_server_id: dict[Any, _Call] = {}
        self.finish_reason: str | None = None
        self.usage: dict[str, Any] | None = None
        self.chunks = 0

    # ---- feeding
    def feed(self, chunk: dict[str, Any]) -> list[Event]:
        if not isinstance(chunk, dict):
            return []
        self.chunks += 1
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        events: list[Event] = []
        for choice in _first_choices(chunk):
            events += self._feed_choice(choice)
        return events

    def _feed_choice(self, choice: dict[str, Any]) -> list[Event]:
        delta = _delta_of(choice)
        events = self._reasoning(delta) + self._content(delta)
        whole = choice.get("message") is not None
        for position, tool_call in enumerate(delta.get("tool_calls") or []):
            if isinstance(tool_call, dict):
                if whole and "index" not in tool_call:
                    tool_call = dict(tool_call, index=position)
                events += self._tool_call(tool_call)
        if choice.get("finish_reason"):
            self.finish_reason = choice["finish_reason"]
        return events

    @staticmethod
    def _reasoning(delta: dict[str, Any]) -> list[Event]:
        for key in ("reasoning_content", "reasoning"):
            value = delta.get(key)
            if isinstance(value, str) and value:
                return [ThinkingDelta(value)]
        return []

    def _content(self, delta: dict[str, Any]) -> list[Event]:
        events: list[Event] = []
        for key in ("content", "refusal"):
            value = delta.get(key)
            if isinstance(value, str) and value:
                self.text.append(value)
                events.append(TextDelta(value))
        return events

    def _tool_call(self, delta: dict[str, Any]) -> list[Event]:
        """One tool_calls entry: merged into its call; the call is announced once it has a name."""
        call = self._call_for(delta)
        if call.server_id is None and delta.get("id"):
            call.server_id = delta["id"]
            self._by_server_id.setdefault(call.server_id, call)
        function = delta.get("function")
        if not isinstance(function, dict):
            function = {}
        call.add_name(function.get("name"))
        call.add_arguments(function.get("arguments"))
        if call.id is None and call.name:
            call.id = self._final_id(call.server_id, call.position, call.name)
            return [ToolNamed(call.id, clean_tool_name(call.name))]
        return []

    def _call_for(self, delta: dict[str, Any]) -> _Call:
        index = delta.get("index")
        server_id = delta.get("id") or None
        if index is not None:
            key: tuple[Any, ...] = ("index", index)
        elif server_id is not None:
            key = ("id", server_id)
        elif self.calls:
            return self.calls[-1]  # no index and no id: the continuation of the last call
        else:
            key = ("position", 0)
        found = self._by_server_id.get(key[1]) if key[0] == "id" else self._by_key.get(key)
        if found is not None:
            return found
        call = _Call(key, server_id, position=len(self.calls))
        self.calls.append(call)
        if key[0] == "index":
            self._by_key[key] = call
        if server_id is not None:
            self._by_server_id.setdefault(server_id, call)
        return call

    # ---- ids
    def _final_id(self, server_id: str | None, position: int, name: str) -> str:
        if isinstance(server_id, str) and ID_OK.match(server_id) and server_id not in self.used_ids:
            chosen = server_id
        else:
            attempt = 0
            while True:
                chosen = "call_" + digest(self.seed, position, name, attempt)
                if chosen not in self.used_ids:
                    break
                attempt += 1
        self.used_ids.add(chosen)
        return chosen

    # ---- result
    def response(self) -> ModelResponse:
        content: list[dict[str, Any]] = []
        text = "".join(self.text)
        if text.strip():  # whitespace-only text is not a block the Messages API would accept back
            content.append(text_block(text))
        for position, call in sorted(enumerate(self.calls), key=lambda item: item[1].order(item[0])):
            if call.id is None:
                call.id = self._final_id(call.server_id, position, call.name)
            content.append({"type": "tool_use", "id": call.id, "name": clean_tool_name(call.name),
                            "input": parse_arguments("".join(call.arguments))})
        usage = map_usage(self.usage)
        return ModelResponse(
            message={"role": "assistant", "content": content},
            input_tokens=usage["input_tokens"],
            output_tokens=usage["output_tokens"],
            cache_creation_input_tokens=None,
            cache_read_input_tokens=usage["cache_read_input_tokens"],
            stop_reason=map_stop_reason(self.finish_reason, bool(self.calls)),
        )


def assemble(chunks: Iterable[dict[str, Any]], used_ids: Iterable[str] = (), seed: object = "") -> ModelResponse:
    """All chunks of one stream (or one completion) -> ModelResponse (a pure convenience)."""
    assembler = ChatStreamAssembler(used_ids, seed)
    for chunk in chunks:
        assembler.feed(chunk)
    return assembler.response()
