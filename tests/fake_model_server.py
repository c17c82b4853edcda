"""A local Anthropic Messages API for tests (stdlib only).

    server = FakeModelServer().start()          # or the `model_server` fixture
    server.script(
        tool_use("bash", {"command": "ls"}),    # 1st request: a tool call
        text("done"),                           # 2nd request: plain text
    )
    env = server.env()                          # for a subprocess: ANTHROPIC_BASE_URL, key, provider
    ...
    server.requests                             # every request body, in arrival order
    server.assert_all_valid()

What one scripted item may be (each `server.script(...)` argument answers one request):

- a block: `text("hi")`, `tool_use(name, input, id=None)`, `thinking(text, signature=None)`,
  `redacted_thinking(data)`; a plain `str` is `text(str)`;
- a list of blocks (one message with several blocks), or `reply(*blocks, stop_reason=..., usage=...)`;
- `error(status=529, type="overloaded_error", message=None)`: an HTTP error response
  (`mid_stream=True`: a 200 stream that breaks with an SSE `error` event instead);
- `hang(seconds, *blocks)`: streams the start of the answer, then sleeps (interruptible
  by `server.stop()`), then finishes; `server.hanging` is set while it sleeps;
  `in_tool_input=True`: no partial text, the sleep comes inside the first tool_use's input
  (after its content_block_start and the first piece of its JSON);
- a callable `fn(body) -> item`, evaluated when the request arrives.

When the script is empty, `server.default` answers (initially `text("ok")`; it may be a callable).

Every request is validated like the real API (tests/api_rules.py `check_request` plus the
basic fields, block shapes and tool definitions); an invalid one gets HTTP 400
`invalid_request_error`, does not consume a scripted item and is recorded with its reason.

Usage is deterministic: input_tokens = `server.input_tokens` (an int, or a function of the
request body; default `default_input_tokens`), output_tokens = `server.output_tokens`
(default 10), cache counts 0 — each overridable per reply with `reply(..., usage={...})`.
What each request was answered with (usage included) is in `server.log`, with its body size in `bytes`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.api_rules import InvalidConversation, check_cache_control, check_request
from tests.fake_server_base import ScriptedHandler, ScriptedServer, as_reply, chunks, default_prompt_size

# --------------------------------------------------------------------------- script items


def text(value: str) -> dict:
    return {"type": "text", "text": value}


def tool_use(name: str, input: dict | None = None, id: str | None = None) -> dict:
    block = {"type": "tool_use", "name": name, "input": dict(input or {})}
    if id is not None:
        block["id"] = id
    return block


def thinking(value: str, signature: str | None = None) -> dict:
    return {"type": "thinking", "thinking": value, "signature": signature or f"sig-{len(value)}-fake"}


def redacted_thinking(data: str = "cmVkYWN0ZWQ=") -> dict:
    return {"type": "redacted_thinking", "data": data}


@dataclass
class Reply:
    blocks: list[dict]
    stop_reason: str | None = None  # None: "tool_use" when a tool_use block is present, else "end_turn"
    usage: dict | None = None  # overrides of the computed usage, e.g. {"output_tokens": 3}
    delay: float = 0.0  # seconds to wait before answering


def reply(*blocks: dict | str, stop_reason: str | None = None, usage: dict | None = None, delay: float = 0.0) -> Reply:
    return Reply([text(b) if isinstance(b, str) else b for b in blocks], stop_reason, usage, delay)


@dataclass
class Error:
    status: int = 529
    type: str = "overloaded_error"
    message: str | None = None
    mid_stream: bool = False
    retry_after_ms: int | None = 10  # keeps the SDK's retries fast; None sends no retry header


def error(
    status: int = 529,
    type: str = "overloaded_error",
    message: str | None = None,
    *,
    mid_stream: bool = False,
    retry_after_ms: int | None = 10,
) -> Error:
    return Error(status, type, message, mid_stream, retry_after_ms)


@dataclass
class Hang:
    seconds: float = 30.0
    reply: Reply = field(default_factory=lambda: reply(text("…and done.")))
    partial: str = "Working on it"
    in_tool_input: bool = False


def hang(seconds: float = 30.0, *blocks: dict | str, partial: str = "Working on it",
         in_tool_input: bool = False) -> Hang:
    """Stream `partial` as the first text delta, sleep `seconds`, then stream the rest.

    `in_tool_input`: sleep inside the first tool_use block's streamed input instead."""
    return Hang(seconds, reply(*blocks) if blocks else reply(text("…and done.")), partial, in_tool_input)


_DEFAULT_MESSAGES = {
    400: "invalid request",
    401: "invalid x-api-key",
    403: "permission denied",
    404: "not found",
    413: "request too large",
    429: "rate limited",
    500: "internal server error",
    503: "service unavailable",
    529: "Overloaded",
}


# --------------------------------------------------------------------------- validation

_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")
_TOOL_ID = re.compile(r"^[a-zA-Z0-9_-]+$")
_BLOCK_KEYS = {
    "text": ({"type", "text"}, {"cache_control", "citations"}),
    "tool_use": ({"type", "id", "name", "input"}, {"cache_control"}),
    "tool_result": ({"type", "tool_use_id"}, {"content", "is_error", "cache_control"}),
    "thinking": ({"type", "thinking", "signature"}, {"cache_control"}),  # refused by check_cache_control
    "redacted_thinking": ({"type", "data"}, {"cache_control"}),
    "image": ({"type", "source"}, {"cache_control"}),
    "document": ({"type", "source"}, {"cache_control", "title", "context", "citations"}),
}


def _check_block(where: str, block: dict, *, in_tool_result: bool = False) -> None:
    kind = block.get("type")
    if kind not in _BLOCK_KEYS:
        return  # a block type this fake does not know: let it through
    required, optional = _BLOCK_KEYS[kind]
    for key in sorted(required - block.keys()):
        raise InvalidConversation(f"{where}.{kind}.{key}: Field required")
    for key in sorted(block.keys() - required - optional):
        raise InvalidConversation(f"{where}.{kind}.{key}: Extra inputs are not permitted")
    for key, value in block.items():
        if value is None:
            raise InvalidConversation(f"{where}.{kind}.{key}: null is not a valid value")
    if kind == "text" and not isinstance(block["text"], str):
        raise InvalidConversation(f"{where}.text.text: Input should be a valid string")
    if kind == "tool_use":
        if not isinstance(block["id"], str) or not _TOOL_ID.match(block["id"]):
            raise InvalidConversation(f"{where}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'")
        if not isinstance(block["name"], str) or not _TOOL_NAME.match(block["name"]):
            raise InvalidConversation(f"{where}.tool_use.name: String should match pattern '^[a-zA-Z0-9_-]{{1,128}}$'")
    if kind == "tool_result":
        if in_tool_result:
            raise InvalidConversation(f"{where}: tool_result blocks cannot be nested")
        content = block.get("content", "")
        if isinstance(content, list):
            for j, inner in enumerate(content):
                if not isinstance(inner, dict) or inner.get("type") not in ("text", "image", "document"):
                    raise InvalidConversation(f"{where}.tool_result.content.{j}: only text, image and document blocks")
                _check_block(f"{where}.tool_result.content.{j}", inner, in_tool_result=True)
        elif not isinstance(content, str):
            raise InvalidConversation(f"{where}.tool_result.content: Input should be a valid string or list")
        if "is_error" in block and not isinstance(block["is_error"], bool):
            raise InvalidConversation(f"{where}.tool_result.is_error: Input should be a valid boolean")
    if kind == "thinking" and not (isinstance(block["signature"], str) and block["signature"]):
        raise InvalidConversation(f"{where}.thinking.signature: Input should be a non-empty string")


def validate_request(body: Any, *, tools_required_for_tool_blocks: bool = True) -> None:
    """Raise InvalidConversation with the reason the real Messages API would give (approximately).

    `tools_required_for_tool_blocks`: the API refuses a history with tool_use/tool_result
    blocks when the request defines no tools (a summary call must still send `tools`, or
    flatten the history to text).
    """
    if not isinstance(body, dict):
        raise InvalidConversation("the request body must be a JSON object")
    if not isinstance(body.get("model"), str) or not body["model"]:
        raise InvalidConversation("model: Field required")
    max_tokens = body.get("max_tokens")
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise InvalidConversation("max_tokens: Field required (a positive integer)")
    messages = body.get("messages")
    if not isinstance(messages, list):
        raise InvalidConversation("messages: Field required (a list)")
    if "stream" in body and not isinstance(body["stream"], bool):
        raise InvalidConversation("stream: Input should be a valid boolean")
    system = body.get("system")
    if system is not None:
        if isinstance(system, list):
            for j, block in enumerate(system):
                if not isinstance(block, dict) or block.get("type") != "text":
                    raise InvalidConversation(f"system.{j}: only text blocks are allowed")
                _check_block(f"system.{j}", block)
                if not block["text"]:
                    raise InvalidConversation(f"system.{j}: text content blocks must be non-empty")
        elif not isinstance(system, str):
            raise InvalidConversation("system: Input should be a valid string or list of text blocks")
    tools = body.get("tools")
    if tools is not None:
        if not isinstance(tools, list):
            raise InvalidConversation("tools: Input should be a valid list")
        names = []
        for j, tool in enumerate(tools):
            if not isinstance(tool, dict) or not isinstance(tool.get("name"), str) or not _TOOL_NAME.match(tool["name"]):
                raise InvalidConversation(f"tools.{j}.name: String should match pattern '^[a-zA-Z0-9_-]{{1,128}}$'")
            if "type" not in tool or tool.get("type") == "custom":
                schema = tool.get("input_schema")
                if not isinstance(schema, dict) or schema.get("type") != "object":
                    raise InvalidConversation(f"tools.{j}.custom.input_schema: an object schema is required")
                if "description" in tool and not isinstance(tool["description"], str):
                    raise InvalidConversation(f"tools.{j}.custom.description: Input should be a valid string")
            names.append(tool["name"])
        if len(set(names)) != len(names):
            raise InvalidConversation("tools: Tool names must be unique.")
    for i, message in enumerate(messages):
        if isinstance(message, dict):
            for key in sorted(message.keys() - {"role", "content"}):
                raise InvalidConversation(f"messages.{i}.{key}: Extra inputs are not permitted")
            if isinstance(message.get("content"), list):
                for j, block in enumerate(message["content"]):
                    if isinstance(block, dict):
                        _check_block(f"messages.{i}.content.{j}", block)
    check_request(messages)
    check_cache_control(body)
    uses_tools = any(
        isinstance(b, dict) and b.get("type") in ("tool_use", "tool_result")
        for m in messages
        if isinstance(m.get("content"), list)
        for b in m["content"]
    )
    if uses_tools and not tools and tools_required_for_tool_blocks:
        raise InvalidConversation("Requests which include `tool_use` or `tool_result` blocks must define tools.")


default_input_tokens = default_prompt_size  # the messages' JSON size / 4


# --------------------------------------------------------------------------- server


class FakeModelServer(ScriptedServer):
    """The Messages API dialect: /v1/messages (JSON or SSE) and /v1/messages/count_tokens."""

    base_path = ""
    name = "the fake API"

    def __init__(self, *, input_tokens: int | Callable[[dict], int] = default_input_tokens, output_tokens: int = 10):
        super().__init__()
        self.input_tokens = input_tokens
        self.output_tokens = output_tokens
        self.default = text("ok")
        self.tools_required_for_tool_blocks = True  # see validate_request
        self.validate = True  # False: take any request (another client's, measured in benchmarks/cost.py)
        # A tests.prompt_cache.PromptCache: usage then counts cache reads and writes as the API does.
        self.prompt_cache = None

    def env_vars(self) -> dict[str, str]:
        return {
            "ANTHROPIC_BASE_URL": self.base_url,
            "ANTHROPIC_API_KEY": self.api_key or "test-key",
            "EVO_AGENT_PROVIDER": "anthropic",
        }

    def usage(self, body: dict, overrides: dict | None) -> dict:
        fn = self.input_tokens
        usage = {
            "input_tokens": int(fn(body)) if callable(fn) else int(fn),
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": int(self.output_tokens),
        }
        if self.prompt_cache is not None:
            usage.update(self.prompt_cache.usage(body))
        usage.update(overrides or {})
        return usage


class _Handler(ScriptedHandler):
    request_id_header = "request-id"
    stream_request_id = True

    def _send_error(self, status: int, kind: str, message: str, headers: dict | None = None) -> None:
        self._send_json(status, {"type": "error", "error": {"type": kind, "message": message}}, headers)

    def _send_not_found(self, message: str) -> None:
        self._send_error(404, "not_found_error", message)

    def _event(self, name: str, payload: dict) -> None:
        self._sse(payload, event=name)

    def _post(self) -> None:
        fake = self.fake
        raw = self.read_raw()
        path = self.route()
        headers = self.lower_headers()
        if path not in ("/v1/messages", "/v1/messages/count_tokens"):
            self._send_error(404, "not_found_error", f"no route POST {self.path}")
            return
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            fake.record({"body": None, "path": path, "valid": False, "error": "body is not JSON", "status": 400})
            self._send_error(400, "invalid_request_error", "the request body is not valid JSON")
            return
        entry: dict = {"body": body, "path": path, "stream": bool(isinstance(body, dict) and body.get("stream")),
                       "bytes": len(raw)}

        key = self.headers.get("x-api-key")  # older SDKs send x-api-key, newer ones a bearer token
        bearer = self.headers.get("authorization") or ""
        if not key and bearer.startswith("Bearer "):
            key = bearer[len("Bearer ") :].strip()
        if not key:
            fake.record({**entry, "valid": False, "error": "missing x-api-key", "status": 401}, headers)
            self._send_error(401, "authentication_error", "x-api-key header is required")
            return
        if fake.api_key is not None and key != fake.api_key:
            fake.record({**entry, "valid": False, "error": "invalid x-api-key", "status": 401}, headers)
            self._send_error(401, "authentication_error", "invalid x-api-key")
            return
        if not self.headers.get("anthropic-version"):
            fake.record({**entry, "valid": False, "error": "missing anthropic-version", "status": 400}, headers)
            self._send_error(400, "invalid_request_error", "anthropic-version: header is required")
            return

        try:
            if not fake.validate:
                pass
            elif path.endswith("count_tokens"):
                probe = dict(body, max_tokens=1) if isinstance(body, dict) else body
                validate_request(probe, tools_required_for_tool_blocks=fake.tools_required_for_tool_blocks)
            else:
                validate_request(body, tools_required_for_tool_blocks=fake.tools_required_for_tool_blocks)
        except InvalidConversation as exc:
            fake.record({**entry, "valid": False, "error": str(exc), "status": 400}, headers)
            self._send_error(400, "invalid_request_error", str(exc))
            return

        if path.endswith("count_tokens"):  # counted, never charged to the prompt cache
            fn = fake.input_tokens
            tokens = int(fn(body)) if callable(fn) else int(fn)
            fake.record({**entry, "valid": True, "error": None, "answer": "count_tokens", "status": 200}, headers)
            self._send_json(200, {"input_tokens": tokens})
            return

        item = fake.next_item(body)
        if isinstance(item, Error):
            self._answer_error(entry, item, headers)
            return
        hang_item = item if isinstance(item, Hang) else None
        answer = hang_item.reply if hang_item else as_reply(item, Reply, reply)
        usage = fake.usage(body, answer.usage)
        blocks = self._finish_blocks(answer.blocks)
        stop_reason = answer.stop_reason or ("tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn")
        message = {
            "id": f"msg_fake_{fake.new_id():06d}",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": blocks,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": usage,
        }
        fake.record(
            {
                **entry,
                "valid": True,
                "error": None,
                "answer": "hang" if hang_item else "message",
                "content": blocks,
                "usage": usage,
                "status": 200,
            },
            headers,
        )
        if answer.delay:
            fake.sleep(answer.delay)
        if entry["stream"]:
            self._stream(message, hang_item)
        else:
            if hang_item:
                fake.hang_for(hang_item.seconds)
            self._send_json(200, message)

    def _finish_blocks(self, blocks: list[dict]) -> list[dict]:
        fake = self.fake
        out = []
        for block in blocks:
            block = dict(block)
            if block["type"] == "tool_use" and "id" not in block:
                block["id"] = f"toolu_fake_{fake.new_id():06d}"
            if block["type"] == "text":
                block.setdefault("citations", None)  # the real API sends it: providers must drop it
            out.append(block)
        return out

    def _answer_error(self, entry: dict, err: Error, headers: dict) -> None:
        fake = self.fake
        message = err.message or _DEFAULT_MESSAGES.get(err.status, "error")
        extra = {"retry-after-ms": str(err.retry_after_ms)} if err.retry_after_ms is not None else {}
        if err.mid_stream and entry["stream"]:
            fake.record({**entry, "valid": True, "error": None, "answer": f"error {err.type} (mid-stream)", "status": 200}, headers)
            self._start_stream()
            usage = fake.usage(entry["body"], None)
            start = {
                "id": f"msg_fake_{fake.new_id():06d}",
                "type": "message",
                "role": "assistant",
                "model": entry["body"]["model"],
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": dict(usage, output_tokens=1),
            }
            self._event("message_start", {"type": "message_start", "message": start})
            self._event("error", {"type": "error", "error": {"type": err.type, "message": message}})
            self.close_connection = True
            return
        fake.record({**entry, "valid": True, "error": None, "answer": f"error {err.status} {err.type}", "status": err.status}, headers)
        self._send_error(err.status, err.type, message, extra)

    def _stream(self, message: dict, hang_item: Hang | None) -> None:
        fake = self.fake
        self._start_stream()
        start = dict(message, content=[], stop_reason=None, stop_sequence=None)
        start["usage"] = dict(message["usage"], output_tokens=1)
        self._event("message_start", {"type": "message_start", "message": start})
        index = 0
        pause = hang_item if hang_item and hang_item.in_tool_input else None
        if hang_item and not pause:
            self._event(
                "content_block_start",
                {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            )
            self._event(
                "content_block_delta",
                {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": hang_item.partial}},
            )
            fake.hang_for(hang_item.seconds)
            self._event("content_block_stop", {"type": "content_block_stop", "index": 0})
            index = 1
        self._event("ping", {"type": "ping"})
        for block in message["content"]:
            self._stream_block(index, block, pause if block["type"] == "tool_use" else None)
            if block["type"] == "tool_use":
                pause = None
            index += 1
        self._event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": message["usage"]["output_tokens"]},
            },
        )
        self._event("message_stop", {"type": "message_stop"})

    def _stream_block(self, index: int, block: dict, pause: Hang | None = None) -> None:
        def delta(payload: dict) -> None:
            self._event("content_block_delta", {"type": "content_block_delta", "index": index, "delta": payload})

        kind = block["type"]
        if kind == "text":
            start = {"type": "text", "text": "", "citations": None}
        elif kind == "tool_use":
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
        elif kind == "thinking":
            start = {"type": "thinking", "thinking": "", "signature": ""}
        else:  # redacted_thinking and anything else arrive whole
            start = block
        self._event("content_block_start", {"type": "content_block_start", "index": index, "content_block": start})
        if kind == "text":
            for piece in chunks(block["text"]):
                delta({"type": "text_delta", "text": piece})
        elif kind == "tool_use":
            delta({"type": "input_json_delta", "partial_json": ""})
            for position, piece in enumerate(chunks(json.dumps(block["input"]), 4)):
                delta({"type": "input_json_delta", "partial_json": piece})
                if pause and position == 0:
                    self.fake.hang_for(pause.seconds)
        elif kind == "thinking":
            for piece in chunks(block["thinking"]):
                delta({"type": "thinking_delta", "thinking": piece})
            delta({"type": "signature_delta", "signature": block["signature"]})
        self._event("content_block_stop", {"type": "content_block_stop", "index": index})


FakeModelServer.handler_class = _Handler

__all__ = [
    "FakeModelServer",
    "Reply",
    "Error",
    "Hang",
    "text",
    "tool_use",
    "thinking",
    "redacted_thinking",
    "reply",
    "error",
    "hang",
    "validate_request",
    "default_input_tokens",
]
