"""Messages API stream events folded into a ModelResponse, as the SDK's accumulator did (no I/O).

    assembler = MessageAssembler()
    for name, data in server_sent_events:
        for event in assembler.feed(name, data):   # TextDelta, ThinkingDelta, ToolNamed (base.py)
            ...
    response = assembler.response()                       # once assembler.done

Text, thinking with its signature, redacted thinking, tool_use with its streamed JSON input
(announced on content_block_start, before the input streams), usage with the cache counts
and the stop_reason. An `error` event raises StreamError, an event that is not JSON BadAnswer.
A tool input that is not a JSON object (cut at max_tokens mid-call) is kept, as the OpenAI
provider keeps one, as {INVALID_ARGUMENTS_KEY: raw}: the history stays valid, the tool runner
tells the model, and stop_reason says the answer was cut.
"""

from __future__ import annotations

from evo_agent.session import api_tool_name, text_block

from .base import INVALID_ARGUMENTS_KEY, ModelResponse, StreamEvent, TextDelta, ThinkingDelta, ToolNamed
from .errors import BadAnswer, StreamError
from .http_client import MAX_JSON_DEPTH, load_json

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)
if TYPE_CHECKING:
    from typing import Any, ClassVar

Event = StreamEvent


def block_to_param(block: dict[str, Any]) -> dict[str, Any] | None:
    """One response content block in request-param shape (None: drop it).

    Built field by field, so response-only fields (`citations: None`, ...) never reach the
    transcript or the next request.
    """
    kind = block.get("type")
    if kind == "text":
        return text_block(_text(block, "text")) if block.get("text") else None
    if kind == "tool_use":
        tool_input = block.get("input") or {}
        if not isinstance(tool_input, dict):
            raise BadAnswer("sent a tool_use block whose input is not an object")
        return {"type": "tool_use", "id": _text(block, "id"), "name": api_tool_name(_text(block, "name")),
                "input": dict(tool_input)}
    if kind == "thinking":
        return {"type": "thinking", "thinking": _text(block, "thinking", ""),
                "signature": _text(block, "signature", "")}
    if kind == "redacted_thinking":
        return {"type": "redacted_thinking", "data": _text(block, "data")}
    # A block type this version does not know (server tools, ...): keep it, minus nulls.
    return {k: v for k, v in block.items() if v is not None} if isinstance(kind, str) else None


def _text(block: dict[str, Any], field: str, default: str | None = None) -> str:
    """A block's text field, which must be a string: `"text": 7` recorded would be sent back on every later turn,
    and every later request refused."""
    value = block.get(field, default)
    if not isinstance(value, str):
        raise BadAnswer(f"sent a {block.get('type')} block whose {field} is not a string")
    return value


def _json(data: str) -> Any:
    try:
        return load_json(data)
    except ValueError as exc:
        raise BadAnswer(f"sent an event that could not be read: {exc}") from None


def _tool_input(raw: str) -> dict[str, Any]:
    try:
        value = load_json(raw, MAX_JSON_DEPTH)
    except ValueError:
        value = None
    return value if isinstance(value, dict) else {INVALID_ARGUMENTS_KEY: raw}


class MessageAssembler:
    """Folds Messages API stream events into the final message.

    `feed(name, data)` returns what to show now; `done` is set by message_stop.
    """

    def __init__(self) -> None:
        self.message: dict[str, Any] | None = None
        self.blocks: dict[int, dict[str, Any]] = {}
        self.partial_json: dict[int, list[str]] = {}
        # text, thinking and signature deltas as they came, joined once (`_joined`): adding each to the block's
        # string copied the whole text again per delta, quadratic in the answer (80,000 deltas: a minute of CPU)
        self.pieces: dict[tuple[int, str], list[str]] = {}
        self.usage: dict[str, Any] = {}
        self.stop_reason: str | None = None
        self.done = False

    def feed(self, name: str, data: str) -> list[Event]:
        event = _json(data)
        if not isinstance(event, dict):
            event = {}
            kind = name
        else:
            kind = event.get("type", name)
        if name == "error":
            kind = "error"
        handler = self._HANDLERS.get(kind)
        return (handler(self, event) or []) if handler else []

    # ---- one handler per event type (ping and unknown types: nothing)
    def _error(self, event: dict[str, Any]) -> None:
        err = event.get("error")
        err = err if isinstance(err, dict) else {}
        raise StreamError(err.get("type"), str(err.get("message") or "the stream reported an error"))

    def _message_start(self, event: dict[str, Any]) -> None:
        self.message = dict(event.get("message") or {})
        self.usage = dict(self.message.get("usage") or {})
        self.stop_reason = self.message.get("stop_reason") or self.stop_reason

    def _block_start(self, event: dict[str, Any]) -> list[Event]:
        block = dict(event.get("content_block") or {})
        index = event.get("index", len(self.blocks))
        self.blocks[index] = block
        for field in ("text", "thinking", "signature"):
            self.pieces.pop((index, field), None)
        if block.get("type") not in ("tool_use", "server_tool_use"):
            return []
        self.partial_json[index] = []
        if block.get("type") == "tool_use":
            return [ToolNamed(block.get("id", ""), api_tool_name(block.get("name", "")))]
        return []

    def _block_delta(self, event: dict[str, Any]) -> list[Event]:
        index, delta = event.get("index", 0), event.get("delta") or {}
        self.blocks.setdefault(index, {"type": "text", "text": ""})
        kind = delta.get("type")
        if kind in ("text_delta", "thinking_delta"):
            field = "text" if kind == "text_delta" else "thinking"
            piece = self._add(index, field, delta.get(field, ""))
            return [(TextDelta if field == "text" else ThinkingDelta)(piece)] if piece else []
        if kind == "signature_delta":
            self._add(index, "signature", delta.get("signature", ""))
        elif kind == "input_json_delta":
            self.partial_json.setdefault(index, []).append(delta.get("partial_json", ""))
        return []

    def _add(self, index: int, field: str, piece: Any) -> str:
        if not isinstance(piece, str):
            raise BadAnswer(f"sent a {field} delta that is not a string")
        self.pieces.setdefault((index, field), []).append(piece)
        return piece

    def _joined(self) -> None:
        """Each block's deltas added to it, in order (after whatever its start event held)."""
        for (index, field), parts in self.pieces.items():
            block = self.blocks[index]
            block[field] = _text(block, field, "") + "".join(parts)
        self.pieces.clear()

    def _block_stop(self, event: dict[str, Any]) -> None:
        self._finish_block(event.get("index", 0))

    def _message_delta(self, event: dict[str, Any]) -> None:
        delta = event.get("delta") or {}
        if "stop_reason" in delta and (delta["stop_reason"] is None or isinstance(delta["stop_reason"], str)):
            self.stop_reason = delta["stop_reason"]
        for key, value in (event.get("usage") or {}).items():
            if value is not None:
                self.usage[key] = value

    def _message_stop(self, event: dict[str, Any]) -> None:
        self.done = True

    _HANDLERS: ClassVar[dict[str, Any]] = {
        "error": _error,
        "message_start": _message_start,
        "content_block_start": _block_start,
        "content_block_delta": _block_delta,
        "content_block_stop": _block_stop,
        "message_delta": _message_delta,
        "message_stop": _message_stop,
    }

    def _finish_block(self, index: int) -> None:
        parts = self.partial_json.pop(index, None)
        if parts is None or index not in self.blocks:
            return
        raw = "".join(parts).strip()
        if raw:
            self.blocks[index]["input"] = _tool_input(raw)

    def response(self) -> ModelResponse:
        self._joined()
        for index in list(self.partial_json):
            self._finish_block(index)
        content = [p for p in (block_to_param(self.blocks[i]) for i in sorted(self.blocks)) if p is not None]
        usage = self.usage
        return ModelResponse(
            message={"role": "assistant", "content": content},
            input_tokens=int(usage.get("input_tokens") or 0),
            output_tokens=int(usage.get("output_tokens") or 0),
            cache_creation_input_tokens=usage.get("cache_creation_input_tokens"),
            cache_read_input_tokens=usage.get("cache_read_input_tokens"),
            stop_reason=self.stop_reason,
        )
