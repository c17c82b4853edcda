"""A local OpenAI-compatible chat completions API for tests (stdlib only).

    server = FakeOpenAIServer().start()               # or the `openai_server` fixture
    server.script(
        tool_call("bash", {"command": "ls"}),         # 1st request: a tool call
        "done",                                       # 2nd request: plain text
    )
    env = server.env()                                # for a subprocess: OPENAI_BASE_URL, key, provider
    server.requests                                   # every request body, in arrival order
    server.assert_all_valid()

It serves POST /v1/chat/completions (`server.base_url` ends in /v1, as OPENAI_BASE_URL
does), as one JSON completion or, with `"stream": true`, as SSE (`data: {chunk}\\n\\n`
..., `data: [DONE]`), the usage chunk only when `stream_options.include_usage` asks.

What one scripted item may be (each `server.script(...)` argument answers one request):

- `text("hi")` (a plain `str` is the same), `reasoning("...")` (streamed as
  `reasoning_content`), `tool_call(name, arguments, id=None, raw=None, pieces=3)`:
  `arguments` a dict (sent as JSON, split into `pieces` chunks), or `raw` the exact
  arguments text (malformed JSON, say); `id=None` gets a fresh `call_fake_…` id,
  `id=""` sends none (a server that omits ids);
- a list of those, or `reply(*items, finish_reason=None, usage=None, delay=0,
  interleave=False)`: several parallel tool calls, interleaved argument chunks, an
  explicit finish_reason (default: "tool_calls" when there are calls, else "stop"),
  `usage` overrides merged into the usage object (e.g. {"prompt_tokens_details":
  {"cached_tokens": 5}});
- `error(status=500, message=None, type=None, code=None, body=None, mid_stream=False)`:
  an HTTP error (`body` replaces the JSON body, e.g. {"error": "ollama style"});
  `mid_stream=True` sends a 200 stream with one text chunk, then `data: {"error": ...}`;
- `hang(seconds, *items, partial="Working on it")`: streams `partial`, sleeps
  (interruptible by `server.stop()`; `server.hanging` is set meanwhile), then the rest;
  `in_tool_input=True`: no partial text, the sleep comes inside the first tool call (after
  the chunk that names it and the first piece of its arguments);
- `truncated(*items)`: streams the items, then closes without finish_reason or [DONE];
- a callable `fn(body) -> item`, evaluated when the request arrives.

When the script is empty, `server.default` answers (initially `text("ok")`).

Every request is validated like a strict server (`validate_chat_request`): known
top-level parameters only, roles and content types, system messages first, tools
well formed, every assistant `tool_calls` id answered by `tool` messages right after
it, no `tool` message without its call, arguments that are JSON objects. An invalid
request gets HTTP 400 (`invalid_request_error`), consumes no scripted item, and is
recorded with its reason in `server.invalid`.

Compatibility switches: `reject_stream_options` (an old server that refuses the
parameter), `reject_max_tokens` (OpenAI's reasoning models: `max_completion_tokens`
only), `api_key` (when set, the bearer token must equal it), `require_auth` (False:
like Ollama, no Authorization header needed).

Usage is deterministic: prompt_tokens = `server.prompt_tokens` (an int or a function of
the body; default: the messages' JSON size / 4), completion_tokens = `server.completion_tokens`.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.fake_server_base import ScriptedHandler, ScriptedServer, as_reply, chunks, default_prompt_size

# --------------------------------------------------------------------------- script items


def text(value: str) -> dict:
    return {"kind": "text", "text": value}


def reasoning(value: str) -> dict:
    return {"kind": "reasoning", "text": value}


def tool_call(
    name: str,
    arguments: dict | None = None,
    id: str | None = None,  # noqa: A002
    *,
    raw: str | None = None,
    pieces: int = 3,
) -> dict:
    return {
        "kind": "tool_call",
        "name": name,
        "arguments": raw if raw is not None else json.dumps(arguments or {}),
        "id": id,
        "pieces": pieces,
    }


@dataclass
class Reply:
    items: list[dict]
    finish_reason: str | None = None
    usage: dict | None = None
    delay: float = 0.0
    interleave: bool = False


def reply(
    *items: dict | str,
    finish_reason: str | None = None,
    usage: dict | None = None,
    delay: float = 0.0,
    interleave: bool = False,
) -> Reply:
    return Reply([text(i) if isinstance(i, str) else i for i in items], finish_reason, usage, delay, interleave)


@dataclass
class Error:
    status: int = 500
    message: str | None = None
    type: str | None = None
    code: str | None = None
    body: Any = None
    mid_stream: bool = False
    retry_after_ms: int | None = 10  # keeps the SDK's retries fast; None sends no header


def error(
    status: int = 500,
    message: str | None = None,
    type: str | None = None,  # noqa: A002
    code: str | None = None,
    *,
    body: Any = None,
    mid_stream: bool = False,
    retry_after_ms: int | None = 10,
) -> Error:
    return Error(status, message, type, code, body, mid_stream, retry_after_ms)


@dataclass
class Hang:
    seconds: float = 30.0
    reply: Reply = field(default_factory=lambda: reply("…and done."))
    partial: str = "Working on it"
    in_tool_input: bool = False


def hang(seconds: float = 30.0, *items: dict | str, partial: str = "Working on it",
         in_tool_input: bool = False) -> Hang:
    return Hang(seconds, reply(*items) if items else reply("…and done."), partial, in_tool_input)


@dataclass
class Truncated:
    reply: Reply


def truncated(*items: dict | str) -> Truncated:
    return Truncated(reply(*items))


_DEFAULT_ERRORS = {
    400: ("invalid_request_error", "invalid request"),
    401: ("invalid_request_error", "Incorrect API key provided"),
    403: ("permission_error", "permission denied"),
    404: ("invalid_request_error", "The model does not exist"),
    429: ("rate_limit_exceeded", "Rate limit reached"),
    500: ("server_error", "The server had an error while processing your request"),
    502: ("server_error", "bad gateway"),
    503: ("server_error", "The engine is currently overloaded"),
}


# --------------------------------------------------------------------------- validation


class InvalidChatRequest(AssertionError):
    pass


_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_HISTORY_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]+$")  # what OpenAI accepts back in an assistant's tool_calls
_KNOWN_PARAMS = {
    "model", "messages", "tools", "tool_choice", "parallel_tool_calls", "stream", "stream_options",
    "max_tokens", "max_completion_tokens", "temperature", "top_p", "n", "stop", "seed", "user",
    "response_format", "frequency_penalty", "presence_penalty", "logprobs", "top_logprobs",
    "logit_bias", "metadata", "store", "reasoning_effort", "service_level", "service_tier",
    "prompt_cache_key",  # the API accepts it (SPEC §12); `reject_prompt_cache_key` plays a server that does not
}  # fmt: skip
_MESSAGE_KEYS = {
    "system": ({"role", "content"}, {"name"}),
    "developer": ({"role", "content"}, {"name"}),
    "user": ({"role", "content"}, {"name"}),
    "assistant": ({"role"}, {"content", "tool_calls", "name", "refusal"}),
    "tool": ({"role", "content", "tool_call_id"}, set()),
}


def _check_keys(where: str, obj: dict, required: set[str], optional: set[str]) -> None:
    for key in sorted(required - obj.keys()):
        raise InvalidChatRequest(f"{where}: missing required parameter '{key}'")
    for key in sorted(obj.keys() - required - optional):
        raise InvalidChatRequest(f"{where}: unrecognized parameter '{key}'")


def _check_text_parts(where: str, parts: Any, *, images: bool = False) -> None:
    if not isinstance(parts, list) or not parts:
        raise InvalidChatRequest(f"{where}: content must be a string or a non-empty array of parts")
    for j, part in enumerate(parts):
        if not isinstance(part, dict):
            raise InvalidChatRequest(f"{where}[{j}]: a content part must be an object")
        kind = part.get("type")
        if kind == "text":
            _check_keys(f"{where}[{j}]", part, {"type", "text"}, set())
            if not isinstance(part["text"], str):
                raise InvalidChatRequest(f"{where}[{j}].text: expected a string")
        elif kind == "image_url" and images:
            _check_keys(f"{where}[{j}]", part, {"type", "image_url"}, set())
            url = part["image_url"]
            if not isinstance(url, dict) or not isinstance(url.get("url"), str) or not url["url"]:
                raise InvalidChatRequest(f"{where}[{j}].image_url.url: expected a non-empty string")
        else:
            raise InvalidChatRequest(f"{where}[{j}].type: unsupported content part type {kind!r}")


def _check_tools(tools: Any) -> None:
    if not isinstance(tools, list) or not tools:
        raise InvalidChatRequest("tools: expected a non-empty array")
    names = []
    for j, tool in enumerate(tools):
        where = f"tools[{j}]"
        if not isinstance(tool, dict):
            raise InvalidChatRequest(f"{where}: expected an object")
        _check_keys(where, tool, {"type", "function"}, set())
        if tool["type"] != "function":
            raise InvalidChatRequest(f"{where}.type: expected 'function'")
        function = tool["function"]
        if not isinstance(function, dict):
            raise InvalidChatRequest(f"{where}.function: expected an object")
        _check_keys(f"{where}.function", function, {"name"}, {"description", "parameters", "strict"})
        if not isinstance(function["name"], str) or not _TOOL_NAME.match(function["name"]):
            raise InvalidChatRequest(f"{where}.function.name: string does not match pattern '^[a-zA-Z0-9_-]{{1,64}}$'")
        if "description" in function and not isinstance(function["description"], str):
            raise InvalidChatRequest(f"{where}.function.description: expected a string")
        params = function.get("parameters")
        if params is not None and not (isinstance(params, dict) and params.get("type") == "object"):
            raise InvalidChatRequest(f"{where}.function.parameters: expected a JSON schema of type object")
        names.append(function["name"])
    if len(set(names)) != len(names):
        raise InvalidChatRequest("tools: function names must be unique")


def validate_chat_request(body: Any) -> None:
    """Raise InvalidChatRequest with the reason a strict chat completions server would give."""
    if not isinstance(body, dict):
        raise InvalidChatRequest("the request body must be a JSON object")
    for key in sorted(body.keys() - _KNOWN_PARAMS):
        raise InvalidChatRequest(f"Unrecognized request argument supplied: {key}")
    if "prompt_cache_key" in body and not isinstance(body["prompt_cache_key"], str):
        raise InvalidChatRequest("prompt_cache_key: expected a string")
    if not isinstance(body.get("model"), str) or not body["model"]:
        raise InvalidChatRequest("you must provide a model parameter")
    if "stream" in body and not isinstance(body["stream"], bool):
        raise InvalidChatRequest("stream: expected a boolean")
    if "stream_options" in body:
        if body.get("stream") is not True:
            raise InvalidChatRequest("The 'stream_options' parameter is only allowed when 'stream' is enabled.")
        options = body["stream_options"]
        if not isinstance(options, dict) or not set(options) <= {"include_usage", "include_obfuscation"}:
            raise InvalidChatRequest("stream_options: expected an object with include_usage")
    limits = [k for k in ("max_tokens", "max_completion_tokens") if k in body]
    if len(limits) > 1:
        raise InvalidChatRequest("max_tokens and max_completion_tokens cannot both be set")
    for key in limits:
        value = body[key]
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InvalidChatRequest(f"{key}: expected a positive integer")
    if "tools" in body:
        _check_tools(body["tools"])
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise InvalidChatRequest("messages: expected a non-empty array")
    check_chat_messages(messages)


def check_chat_messages(messages: list) -> None:
    """The conversation rules: roles, order, content types, tool call pairing."""
    pending: list[str] = []  # ids of the last assistant's tool_calls not yet answered
    answered: set[str] = set()
    seen_non_system = False
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(message, dict):
            raise InvalidChatRequest(f"{where}: expected an object")
        role = message.get("role")
        if role not in _MESSAGE_KEYS:
            raise InvalidChatRequest(f"{where}.role: expected one of system, developer, user, assistant, tool")
        required, optional = _MESSAGE_KEYS[role]
        _check_keys(where, message, required, optional)
        if role != "tool" and pending:
            raise InvalidChatRequest(
                "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
                f"'tool_call_id'. The following tool_call_ids did not have response messages: {', '.join(pending)}"
            )
        content = message.get("content")
        if role in ("system", "developer"):
            if seen_non_system:
                raise InvalidChatRequest(f"{where}: system messages must come before every other message")
            if isinstance(content, str):
                if not content:
                    raise InvalidChatRequest(f"{where}.content: a system message must not be empty")
            else:
                _check_text_parts(f"{where}.content", content)
            continue
        if not seen_non_system and role != "user":
            raise InvalidChatRequest(f"{where}: the first message after the system prompt must be a user message")
        seen_non_system = True
        if role == "user":
            if not isinstance(content, str):
                _check_text_parts(f"{where}.content", content, images=True)
        elif role == "assistant":
            calls = message.get("tool_calls")
            if content is None:
                if not calls:
                    raise InvalidChatRequest(f"{where}.content: required unless tool_calls is given")
            elif not isinstance(content, str):
                _check_text_parts(f"{where}.content", content)
            if calls is not None:
                if not isinstance(calls, list) or not calls:
                    raise InvalidChatRequest(f"{where}.tool_calls: expected a non-empty array")
                ids = []
                for j, call in enumerate(calls):
                    cw = f"{where}.tool_calls[{j}]"
                    if not isinstance(call, dict):
                        raise InvalidChatRequest(f"{cw}: expected an object")
                    _check_keys(cw, call, {"id", "type", "function"}, set())
                    if not isinstance(call["id"], str) or not call["id"]:
                        raise InvalidChatRequest(f"{cw}.id: expected a non-empty string")
                    if len(call["id"]) > 40:
                        raise InvalidChatRequest(f"{cw}.id: string too long. Expected a string with maximum length 40")
                    if call["type"] != "function":
                        raise InvalidChatRequest(f"{cw}.type: expected 'function'")
                    function = call["function"]
                    if not isinstance(function, dict):
                        raise InvalidChatRequest(f"{cw}.function: expected an object")
                    _check_keys(f"{cw}.function", function, {"name", "arguments"}, set())
                    if not isinstance(function["name"], str) or not _HISTORY_TOOL_NAME.match(function["name"]):
                        raise InvalidChatRequest(f"{cw}.function.name: string does not match pattern. "
                                                 "Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.")
                    if not isinstance(function["arguments"], str):
                        raise InvalidChatRequest(f"{cw}.function.arguments: expected a string")
                    try:
                        parsed = json.loads(function["arguments"])
                    except ValueError:
                        raise InvalidChatRequest(f"{cw}.function.arguments: not valid JSON") from None
                    if not isinstance(parsed, dict):
                        raise InvalidChatRequest(f"{cw}.function.arguments: expected a JSON object")
                    ids.append(call["id"])
                if len(set(ids)) != len(ids):
                    raise InvalidChatRequest(f"{where}.tool_calls: duplicate tool call ids")
                pending = list(ids)
                answered = set()
        else:  # tool
            call_id = message.get("tool_call_id")
            if not isinstance(call_id, str) or call_id not in pending:
                if isinstance(call_id, str) and call_id in answered:
                    raise InvalidChatRequest(f"{where}: a second response for tool_call_id {call_id!r}")
                raise InvalidChatRequest(
                    f"{where}: messages with role 'tool' must be a response to a preceding message with 'tool_calls'"
                )
            pending.remove(call_id)
            answered.add(call_id)
            if not isinstance(content, str):
                _check_text_parts(f"{where}.content", content)
    if pending:
        raise InvalidChatRequest(
            "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
            f"'tool_call_id'. The following tool_call_ids did not have response messages: {', '.join(pending)}"
        )


default_prompt_tokens = default_prompt_size  # the messages' JSON size / 4


# --------------------------------------------------------------------------- server


class FakeOpenAIServer(ScriptedServer):
    """The Chat Completions dialect: POST /v1/chat/completions, one JSON completion or SSE chunks."""

    base_path = "/v1"
    name = "the fake chat API"

    def __init__(
        self,
        *,
        prompt_tokens: int | Callable[[dict], int] = default_prompt_tokens,
        completion_tokens: int = 10,
    ) -> None:
        super().__init__()
        self.prompt_tokens = prompt_tokens
        self.completion_tokens = completion_tokens
        self.default = text("ok")
        self.require_auth = True
        self.reject_stream_options = False
        self.reject_max_tokens = False
        self.reject_prompt_cache_key = False  # a server that refuses OpenAI's prompt_cache_key
        self.reject_tool_choice = False  # a server that refuses tool_choice

    def env_vars(self) -> dict[str, str]:
        return {"OPENAI_BASE_URL": self.base_url, "OPENAI_API_KEY": self.api_key or "test-key",
                "EVO_AGENT_PROVIDER": "openai"}  # fmt: skip

    def usage(self, body: dict, overrides: dict | None) -> dict:
        fn = self.prompt_tokens
        prompt = int(fn(body)) if callable(fn) else int(fn)
        usage = {"prompt_tokens": prompt, "completion_tokens": int(self.completion_tokens)}
        usage.update(overrides or {})
        usage["total_tokens"] = int(usage.get("prompt_tokens") or 0) + int(usage.get("completion_tokens") or 0)
        return usage


class _Handler(ScriptedHandler):
    request_id_header = "x-request-id"
    stream_request_id = False

    def _send_error(self, status: int, message: str, kind: str | None = None, code: str | None = None,
                    param: str | None = None, headers: dict | None = None) -> None:  # fmt: skip
        default_kind, _ = _DEFAULT_ERRORS.get(status, ("error", "error"))
        payload = {"error": {"message": message, "type": kind or default_kind, "param": param, "code": code}}
        self._send_json(status, payload, headers)

    def _send_not_found(self, message: str) -> None:
        self._send_error(404, message)

    def _data(self, payload: Any) -> None:
        self._sse(payload)

    def _post(self) -> None:
        fake = self.fake
        raw = self.read_raw()
        path = self.route()
        headers = self.lower_headers()
        if path != "/v1/chat/completions":
            self._send_error(404, f"no route POST {self.path}")
            return
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            fake.record({"body": None, "valid": False, "error": "body is not JSON", "status": 400})
            self._send_error(400, "We could not parse the JSON body of your request.")
            return
        entry: dict = {"body": body, "stream": bool(isinstance(body, dict) and body.get("stream"))}

        bearer = headers.get("authorization") or ""
        key = bearer[len("Bearer ") :].strip() if bearer.startswith("Bearer ") else ""
        if fake.require_auth and not key:
            fake.record({**entry, "valid": False, "error": "missing bearer token", "status": 401}, headers)
            self._send_error(401, "You didn't provide an API key.")
            return
        if fake.api_key is not None and key != fake.api_key:
            fake.record({**entry, "valid": False, "error": "wrong api key", "status": 401}, headers)
            self._send_error(401, f"Incorrect API key provided: {key[:3]}***.", code="invalid_api_key")
            return
        try:
            validate_chat_request(body)
            if fake.reject_stream_options and "stream_options" in body:
                raise InvalidChatRequest("Unrecognized request argument supplied: stream_options")
            if fake.reject_prompt_cache_key and "prompt_cache_key" in body:
                raise InvalidChatRequest("Unrecognized request argument supplied: prompt_cache_key")
            if fake.reject_tool_choice and "tool_choice" in body:
                raise InvalidChatRequest("Unrecognized request argument supplied: tool_choice")
            if fake.reject_max_tokens and "max_tokens" in body:
                raise InvalidChatRequest(
                    "Unsupported parameter: 'max_tokens' is not supported with this model. "
                    "Use 'max_completion_tokens' instead."
                )
        except InvalidChatRequest as exc:
            fake.record({**entry, "valid": False, "error": str(exc), "status": 400}, headers)
            self._send_error(400, str(exc), "invalid_request_error")
            return

        item = fake.next_item(body)
        if isinstance(item, Error):
            self._answer_error(entry, item, headers)
            return
        hang_item = item if isinstance(item, Hang) else None
        cut = isinstance(item, Truncated)
        answer = hang_item.reply if hang_item else item.reply if cut else as_reply(item, Reply, reply)
        usage = fake.usage(body, answer.usage)
        calls = [dict(i) for i in answer.items if i["kind"] == "tool_call"]
        for call in calls:
            if call["id"] is None:
                call["id"] = f"call_fake_{fake.new_id():06d}"
        finish = answer.finish_reason or ("tool_calls" if calls else "stop")
        fake.record(
            {**entry, "valid": True, "error": None, "answer": "hang" if hang_item else "message", "usage": usage,
             "status": 200},
            headers,
        )  # fmt: skip
        if answer.delay:
            fake.sleep(answer.delay)
        if entry["stream"]:
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            self._stream(body, answer, calls, finish, usage if include_usage else None, hang_item, cut)
        else:
            self._send_completion(body, answer, calls, finish, usage, hang_item)

    def _answer_error(self, entry: dict, err: Error, headers: dict) -> None:
        fake = self.fake
        default_kind, default_message = _DEFAULT_ERRORS.get(err.status, ("error", "error"))
        message = err.message or default_message
        extra = {"retry-after-ms": str(err.retry_after_ms)} if err.retry_after_ms is not None else {}
        if err.mid_stream and entry["stream"]:
            fake.record({**entry, "valid": True, "error": None, "answer": "error mid-stream", "status": 200}, headers)
            self._start_stream()
            self._data(self._chunk(entry["body"], {"role": "assistant", "content": "Partial"}))
            self._data({"error": {"message": message, "type": err.type or default_kind, "code": err.code}})
            return
        fake.record({**entry, "valid": True, "error": None, "answer": f"error {err.status}", "status": err.status}, headers)
        if err.body is not None:
            self._send_json(err.status, err.body, extra)
        else:
            self._send_error(err.status, message, err.type or default_kind, err.code, None, extra)

    def _chunk(self, body: dict, delta: dict, finish: str | None = None) -> dict:
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "created": 1780000000,
            "model": body["model"],
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    def _stream(self, body, answer: Reply, calls, finish, usage, hang_item: Hang | None, cut: bool) -> None:
        fake = self.fake
        self._start_stream()
        self._data(self._chunk(body, {"role": "assistant", "content": ""}))
        pause = hang_item if hang_item and hang_item.in_tool_input else None
        if hang_item and not pause:
            self._data(self._chunk(body, {"content": hang_item.partial}))
            fake.hang_for(hang_item.seconds)
        for item in answer.items:
            if item["kind"] == "text":
                for piece in chunks(item["text"]):
                    self._data(self._chunk(body, {"content": piece}))
            elif item["kind"] == "reasoning":
                for piece in chunks(item["text"]):
                    self._data(self._chunk(body, {"reasoning_content": piece}))
        # tool calls: a start chunk each (id, type, name, empty arguments), then argument pieces
        pieces = [(index, chunks(call["arguments"], call["pieces"])) for index, call in enumerate(calls)]
        deltas: list[dict] = []
        for index, call in enumerate(calls):
            start: dict = {"index": index, "type": "function", "function": {"name": call["name"], "arguments": ""}}
            if call["id"]:
                start["id"] = call["id"]
            if answer.interleave:
                deltas.append(start)
            else:
                deltas.append(start)
                deltas.extend({"index": index, "function": {"arguments": p}} for p in pieces[index][1])
        if answer.interleave:
            for round_ in itertools.zip_longest(*(p for _, p in pieces)):
                for index, piece in enumerate(round_):
                    if piece is not None:
                        deltas.append({"index": index, "function": {"arguments": piece}})
        for position, delta in enumerate(deltas):
            self._data(self._chunk(body, {"tool_calls": [delta]}))
            if pause and position == 1:
                fake.hang_for(pause.seconds)
        if cut:
            return
        self._data(self._chunk(body, {}, finish))
        if usage is not None:
            self._data({**self._chunk(body, {}), "choices": [], "usage": usage})
        self._write(b"data: [DONE]\n\n")

    def _send_completion(self, body, answer: Reply, calls, finish, usage, hang_item: Hang | None) -> None:
        fake = self.fake
        if hang_item:
            fake.hang_for(hang_item.seconds)
        content = "".join(i["text"] for i in answer.items if i["kind"] == "text")
        message: dict = {"role": "assistant", "content": content or None}
        if hang_item and not hang_item.in_tool_input:
            message["content"] = hang_item.partial + (content or "")
        if calls:
            message["tool_calls"] = [
                {"id": c["id"] or "", "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
                for c in calls
            ]
        self._send_json(
            200,
            {
                "id": "chatcmpl-fake",
                "object": "chat.completion",
                "created": 1780000000,
                "model": body["model"],
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": usage,
            },
        )


FakeOpenAIServer.handler_class = _Handler

__all__ = [
    "Error",
    "FakeOpenAIServer",
    "Hang",
    "InvalidChatRequest",
    "Reply",
    "Truncated",
    "check_chat_messages",
    "default_prompt_tokens",
    "error",
    "hang",
    "reasoning",
    "reply",
    "text",
    "tool_call",
    "truncated",
    "validate_chat_request",
]
