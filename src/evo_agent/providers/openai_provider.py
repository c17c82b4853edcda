"""The OpenAI-compatible provider: chat completions, streamed, over a small stdlib HTTP client.

It talks to anything that speaks `POST {base_url}/chat/completions` with tool calling:
OpenAI itself, Ollama, vLLM, llama.cpp's server, OpenRouter, LM Studio. Configuration
comes from the arguments, else from OPENAI_API_KEY and OPENAI_BASE_URL (read here, so
this module knows which URL it is talking to; the SDK would read the same variables).
A local server needs no key: when a base URL is set and no key is, a placeholder key
is sent.

The stored history stays in the Anthropic MessageParam shape (SPEC §2). Translation
happens only here, in pure functions, both ways:

    to_openai_messages(system, messages)   Anthropic history -> chat `messages`
    to_openai_tools(tools)                 Anthropic tool specs -> `tools`
    ChatStreamAssembler                    streamed chunks (or one completion) -> ModelResponse
    from_openai_messages(messages)         chat `messages` -> (system, Anthropic history);
                                           the inverse of to_openai_messages (tests, imports)

What the translation does with what one side cannot say:

- `thinking` / `redacted_thinking` blocks are dropped on the way out (chat completions
  cannot take them back). Streamed reasoning (`reasoning_content` / `reasoning`, as
  DeepSeek, vLLM, llama.cpp and OpenRouter send it) is shown through `on_thinking` but
  not stored: a thinking block without an Anthropic signature would break a later
  resume with the anthropic provider.
- A `tool_result` becomes one `role: tool` message; a list content becomes its text
  blocks joined with "\\n" (images become "[image omitted]"); `is_error: true` is
  sent as the text prefixed with TOOL_ERROR_PREFIX ("Error: "), the one way a chat
  model can be told. The `tool` messages of a user turn are sent before its text, as
  chat completions requires them right after the assistant's `tool_calls`.
- Consecutive messages of one role form one turn (the Messages API merges them), so an
  assistant turn split over several messages becomes one assistant message.
- Tool call ids are kept when they are `^[A-Za-z0-9_-]{1,40}$` (what both APIs accept);
  any other id is sent as a stable hash of itself, the same in `tool_calls` and in the
  matching `tool` message. Ids the server returns that are missing, malformed or
  already used in the history are replaced by deterministic ones ("call_" + hash of
  the history length, the call's position and name), so a session written with this
  provider resumes with the anthropic one.
- Arguments that are not a JSON object (truncated by `length`, or plain invalid JSON)
  still become a `tool_use` block, with input {INVALID_ARGUMENTS_KEY: "<raw text>"};
  `invalid_arguments_message(name, input)` gives the error text to return as the
  tool_result, so the model can send the call again. Empty arguments mean {}.
- Usage: `prompt_tokens` minus `prompt_tokens_details.cached_tokens` -> input_tokens,
  the cached part -> cache_read_input_tokens (Anthropic counts input_tokens without
  the cache reads; this keeps totals comparable across providers), `completion_tokens`
  -> output_tokens.
- finish_reason: stop -> end_turn, tool_calls / function_call -> tool_use, length ->
  max_tokens, content_filter -> refusal; any answer with tool calls is tool_use (some
  servers say "stop" there).

Compatibility fallbacks, each tried at most once per provider and then remembered:
a 400 that names `stream_options` drops it, a 400 that asks for
`max_completion_tokens` instead of `max_tokens` switches (api.openai.com gets
`max_completion_tokens` from the start).

The request (over the small stdlib client in http_client.py: the `openai` SDK cost ~1.1 s
to import) runs in a worker thread and hands the chunks to the caller's thread
through a queue, so `cancel` (and Ctrl+C) act at once even while a socket read is
blocked; callbacks always run in the caller's thread.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from .base import ModelResponse, ProviderCancelled, ProviderError, StreamCallbacks
from .base import one_line as _one_line
from .errors import ApiLabel, error_detail, failure_line, retry_notice, status_line
from .http_client import Client, HTTPFailure, StatusError, encode_json
from .streaming import CONTINUE, Put, run_in_worker

DEFAULT_MODEL = "gpt-4.1"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_MAX_RETRIES = 4
NO_KEY_PLACEHOLDER = "sk-no-key-required"  # sent to a local server that wants no key
INVALID_ARGUMENTS_KEY = "__invalid_arguments__"
TOOL_ERROR_PREFIX = "Error: "
IMAGE_PLACEHOLDER = "[image omitted]"
MISSING_KEY_MESSAGE = (
    "no OpenAI API key: set OPENAI_API_KEY (or OPENAI_BASE_URL for a local server such as Ollama), "
    "or choose --provider demo"
)
_ID_OK = re.compile(r"^[A-Za-z0-9_-]{1,40}$")
_NAME_BAD_CHARS = re.compile(r"[^A-Za-z0-9_-]")

_STOP_REASONS = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}


# --------------------------------------------------------------------------- small helpers


def _digest(*parts: object) -> str:
    return hashlib.sha256("\x00".join(str(p) for p in parts).encode("utf-8", "surrogatepass")).hexdigest()[:24]


def wire_tool_call_id(tool_use_id: object) -> str:
    """The id sent for a stored tool_use id: itself when both APIs accept it, else a stable hash."""
    if isinstance(tool_use_id, str) and _ID_OK.match(tool_use_id):
        return tool_use_id
    return "call_" + _digest("wire", tool_use_id)


def _blocks(content: Any) -> list[dict]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def _image_url(block: dict) -> str | None:
    source = block.get("source") or {}
    if source.get("type") == "base64" and source.get("data"):
        return f"data:{source.get('media_type') or 'image/png'};base64,{source['data']}"
    if source.get("type") == "url" and source.get("url"):
        return source["url"]
    return None


def tool_result_text(block: dict) -> str:
    """A tool_result's content as the text of a `tool` message (is_error -> TOOL_ERROR_PREFIX)."""
    content = block.get("content", "")
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        parts = []
        for inner in content:
            if not isinstance(inner, dict):
                continue
            kind = inner.get("type")
            if kind == "text":
                parts.append(str(inner.get("text", "")))
            elif kind == "image":
                parts.append(IMAGE_PLACEHOLDER)
            elif kind == "document" and isinstance(inner.get("source"), dict) and inner["source"].get("type") == "text":
                parts.append(str(inner["source"].get("data", "")))
            else:
                parts.append(f"[{kind} omitted]")
        text = "\n".join(parts)
    elif content is None:
        text = ""
    else:
        text = json.dumps(content, ensure_ascii=False)
    return TOOL_ERROR_PREFIX + text if block.get("is_error") else text


# --------------------------------------------------------------------------- Anthropic -> OpenAI


def to_openai_tools(tools: Iterable[dict]) -> list[dict]:
    """[{name, description, input_schema}] -> [{"type": "function", "function": {name, description, parameters}}]."""
    out = []
    for tool in tools:
        function: dict[str, Any] = {"name": tool["name"]}
        if tool.get("description"):
            function["description"] = tool["description"]
        function["parameters"] = tool.get("input_schema") or {"type": "object", "properties": {}}
        out.append({"type": "function", "function": function})
    return out


def _user_turn(messages: list[dict]) -> list[dict]:
    """One user turn (consecutive user messages): its `tool` messages first, then its text."""
    tools: list[dict] = []
    users: list[dict] = []
    for message in messages:
        parts: list[dict] = []
        for block in _blocks(message.get("content")):
            kind = block.get("type")
            if kind == "tool_result":
                tools.append(
                    {
                        "role": "tool",
                        "tool_call_id": wire_tool_call_id(block.get("tool_use_id")),
                        "content": tool_result_text(block),
                    }
                )
            elif kind == "text":
                if block.get("text"):
                    parts.append({"type": "text", "text": block["text"]})
            elif kind == "image":
                url = _image_url(block)
                parts.append({"type": "image_url", "image_url": {"url": url}} if url
                             else {"type": "text", "text": IMAGE_PLACEHOLDER})
            elif kind == "document":
                source = block.get("source") or {}
                data = source.get("data") if source.get("type") == "text" else None
                parts.append({"type": "text", "text": data or "[document omitted]"})
            # thinking and unknown block types in a user turn: nothing a chat model can read
        if not parts:
            continue
        if all(p["type"] == "text" for p in parts):
            users.append({"role": "user", "content": "\n\n".join(p["text"] for p in parts)})
        else:
            users.append({"role": "user", "content": parts})
    return tools + users


def _assistant_turn(messages: list[dict]) -> list[dict]:
    """One assistant turn: its text joined, its tool_use blocks as `tool_calls`; thinking dropped."""
    texts: list[str] = []
    calls: list[dict] = []
    for message in messages:
        for block in _blocks(message.get("content")):
            kind = block.get("type")
            if kind == "text" and block.get("text"):
                texts.append(block["text"])
            elif kind == "tool_use":
                calls.append(
                    {
                        "id": wire_tool_call_id(block.get("id")),
                        "type": "function",
                        "function": {
                            "name": str(block.get("name", "")),
                            "arguments": json.dumps(block.get("input") or {}, ensure_ascii=False),
                        },
                    }
                )
    if not texts and not calls:
        return []
    out: dict[str, Any] = {"role": "assistant", "content": "\n\n".join(texts) if texts else None}
    if calls:
        out["tool_calls"] = calls
    return [out]


def to_openai_messages(system: str | None, messages: list[dict]) -> list[dict]:
    """An Anthropic-shape history (plus system prompt) as chat completions `messages`."""
    out: list[dict] = []
    if system:
        out.append({"role": "system", "content": system})
    i = 0
    while i < len(messages):
        role = messages[i].get("role")
        j = i
        while j < len(messages) and messages[j].get("role") == role:
            j += 1
        group = messages[i:j]
        if role == "user":
            out.extend(_user_turn(group))
        elif role == "assistant":
            out.extend(_assistant_turn(group))
        i = j
    return out


def history_tool_ids(messages: Iterable[dict]) -> set[str]:
    """Every tool_use id (and its wire form) in a history: ids a new response must not reuse."""
    ids: set[str] = set()
    for message in messages:
        for block in _blocks(message.get("content")):
            if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                ids.add(block["id"])
                ids.add(wire_tool_call_id(block["id"]))
    return ids


# --------------------------------------------------------------------------- OpenAI -> Anthropic


def parse_arguments(raw: Any) -> dict:
    """A tool call's `arguments` as a tool_use input; never raises.

    Empty -> {}; a JSON object -> itself (also when it was JSON-encoded twice); anything
    else -> {INVALID_ARGUMENTS_KEY: raw} (see invalid_arguments_message).
    """
    if raw is None:
        return {}
    if isinstance(raw, dict):
        return raw
    if not isinstance(raw, str):
        raw = json.dumps(raw, ensure_ascii=False)
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
        if isinstance(value, str) and value.strip().startswith("{"):
            value = json.loads(value)
    except ValueError:
        return {INVALID_ARGUMENTS_KEY: raw}
    return value if isinstance(value, dict) else {INVALID_ARGUMENTS_KEY: raw}


def invalid_arguments_message(name: str, tool_input: Any) -> str | None:
    """The tool error for a call whose arguments did not parse, or None for a normal input."""
    if not (isinstance(tool_input, dict) and isinstance(tool_input.get(INVALID_ARGUMENTS_KEY), str)):
        return None
    raw = tool_input[INVALID_ARGUMENTS_KEY]
    try:
        json.loads(raw)
        why = "they are not a JSON object"
    except ValueError as exc:
        why = f"they are not valid JSON ({exc})"
    shown = raw if len(raw) <= 200 else raw[:199] + "…"
    return _one_line(
        f"the arguments of this {name} call could not be read: {why}; nothing was run. "
        f"Call the tool again with one JSON object as its arguments. Received: {shown}",
        limit=600,
    )


def map_stop_reason(finish_reason: str | None, has_tool_calls: bool) -> str | None:
    if has_tool_calls and finish_reason in (None, "stop", "tool_calls", "function_call"):
        return "tool_use"
    if finish_reason is None:
        return None
    return _STOP_REASONS.get(finish_reason, finish_reason)


def map_usage(usage: dict | None) -> dict:
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


def _tool_name(name: str) -> str:
    """A tool name both APIs accept (a malformed one becomes an unknown tool, not a broken history)."""
    clean = _NAME_BAD_CHARS.sub("_", name.strip())[:64]
    return clean or "unnamed_tool"


class ChatStreamAssembler:
    """Folds chat completion chunks (plain dicts, as the server sent them) into a ModelResponse.

    `feed(chunk)` returns the events it implies, in order: ("text", str),
    ("thinking", str), ("tool_use", (tool_use_id, name)). `response()` builds the
    assistant message. Ids are final when announced: `used_ids` are the history's
    (a new id never repeats one), `seed` makes generated ids differ from turn to turn.
    """

    def __init__(self, used_ids: Iterable[str] = (), seed: object = "") -> None:
        self.used_ids = set(used_ids)
        self.seed = seed
        self.text: list[str] = []
        self.calls: list[dict] = []  # {"key", "server_id", "id", "name", "arguments": [str]}
        self.finish_reason: str | None = None
        self.usage: dict | None = None
        self.chunks = 0

    # ---- ids
    def _final_id(self, server_id: str | None, position: int, name: str) -> str:
        if isinstance(server_id, str) and _ID_OK.match(server_id) and server_id not in self.used_ids:
            chosen = server_id
        else:
            attempt = 0
            while True:
                chosen = "call_" + _digest(self.seed, position, name, attempt)
                if chosen not in self.used_ids:
                    break
                attempt += 1
        self.used_ids.add(chosen)
        return chosen

    def _call_for(self, delta: dict) -> dict:
        index = delta.get("index")
        server_id = delta.get("id") or None
        if index is not None:
            for call in self.calls:
                if call["key"] == ("index", index):
                    return call
            key: tuple = ("index", index)
        elif server_id is not None:
            for call in self.calls:
                if call["server_id"] == server_id:
                    return call
            key = ("id", server_id)
        elif self.calls:
            return self.calls[-1]  # no index and no id: the continuation of the last call
        else:
            key = ("position", 0)
        call = {"key": key, "server_id": server_id, "id": None, "name": "", "arguments": []}
        self.calls.append(call)
        return call

    # ---- feeding
    def feed(self, chunk: dict) -> list[tuple[str, Any]]:
        events: list[tuple[str, Any]] = []
        if not isinstance(chunk, dict):
            return events
        self.chunks += 1
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        for choice in chunk.get("choices") or []:
            if not isinstance(choice, dict) or (choice.get("index") or 0) != 0:
                continue
            delta = choice.get("delta")
            if delta is None:
                delta = choice.get("message")  # a whole completion fed as one chunk
            delta = delta if isinstance(delta, dict) else {}
            for key in ("reasoning_content", "reasoning"):
                value = delta.get(key)
                if isinstance(value, str) and value:
                    events.append(("thinking", value))
                    break
            for key in ("content", "refusal"):
                value = delta.get(key)
                if isinstance(value, str) and value:
                    self.text.append(value)
                    events.append(("text", value))
            for position, tc in enumerate(delta.get("tool_calls") or []):
                if not isinstance(tc, dict):
                    continue
                if "index" not in tc and choice.get("message") is not None:
                    tc = dict(tc, index=position)
                call = self._call_for(tc)
                if call["server_id"] is None and tc.get("id"):
                    call["server_id"] = tc["id"]
                function = tc.get("function") if isinstance(tc.get("function"), dict) else {}
                name = function.get("name")
                if isinstance(name, str) and name:
                    if not call["name"] or name.startswith(call["name"]):
                        call["name"] = name  # the whole name, possibly repeated or growing
                    elif name != call["name"]:
                        call["name"] += name  # a name sent in pieces
                arguments = function.get("arguments")
                if arguments is not None:
                    call["arguments"].append(
                        arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
                    )
                if call["id"] is None and call["name"]:
                    call["id"] = self._final_id(call["server_id"], self.calls.index(call), call["name"])
                    events.append(("tool_use", (call["id"], _tool_name(call["name"]))))
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
        return events

    # ---- result
    def response(self) -> ModelResponse:
        content: list[dict] = []
        text = "".join(self.text)
        if text.strip():  # whitespace-only text is not a block the Messages API would accept back
            content.append({"type": "text", "text": text})
        # in `index` order (the order the model wrote them), whatever order their chunks came in
        ordered = sorted(
            enumerate(self.calls),
            key=lambda item: (0, item[1]["key"][1], item[0]) if isinstance(item[1]["key"][1], int) else (1, 0, item[0]),
        )
        for position, call in ordered:
            if call["id"] is None:
                call["id"] = self._final_id(call["server_id"], position, call["name"])
            content.append(
                {
                    "type": "tool_use",
                    "id": call["id"],
                    "name": _tool_name(call["name"]),
                    "input": parse_arguments("".join(call["arguments"])),
                }
            )
        usage = map_usage(self.usage)
        return ModelResponse(
            message={"role": "assistant", "content": content},
            input_tokens=usage["input_tokens"],
            output_tokens=usage["output_tokens"],
            cache_creation_input_tokens=None,
            cache_read_input_tokens=usage["cache_read_input_tokens"],
            stop_reason=map_stop_reason(self.finish_reason, bool(self.calls)),
        )


def assemble(chunks: Iterable[dict], used_ids: Iterable[str] = (), seed: object = "") -> ModelResponse:
    """All chunks of one stream (or one completion) -> ModelResponse (a pure convenience)."""
    assembler = ChatStreamAssembler(used_ids, seed)
    for chunk in chunks:
        assembler.feed(chunk)
    return assembler.response()


def _text_of_openai_content(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n\n".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return ""


def from_openai_messages(messages: list[dict]) -> tuple[str, list[dict]]:
    """Chat `messages` -> (system prompt, Anthropic-shape history); inverse of to_openai_messages.

    `tool` messages become tool_result blocks at the front of the next user turn
    (a text starting with TOOL_ERROR_PREFIX becomes is_error with the prefix removed).
    """
    system_parts: list[str] = []
    out: list[dict] = []
    pending_results: list[dict] = []

    def flush_results() -> None:
        if pending_results:
            out.append({"role": "user", "content": list(pending_results)})
            pending_results.clear()

    for message in messages:
        role = message.get("role")
        if role in ("system", "developer"):
            system_parts.append(_text_of_openai_content(message.get("content")))
        elif role == "tool":
            text = _text_of_openai_content(message.get("content"))
            block: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.get("tool_call_id")}
            if text.startswith(TOOL_ERROR_PREFIX):
                block["content"] = text[len(TOOL_ERROR_PREFIX) :]
                block["is_error"] = True
            else:
                block["content"] = text
            pending_results.append(block)
        elif role == "user":
            content = message.get("content")
            blocks: list[dict] = []
            if isinstance(content, str):
                if content:
                    blocks.append({"type": "text", "text": content})
            elif isinstance(content, list):
                for part in content:
                    if part.get("type") == "text" and part.get("text"):
                        blocks.append({"type": "text", "text": part["text"]})
                    elif part.get("type") == "image_url":
                        url = (part.get("image_url") or {}).get("url", "")
                        match = re.match(r"^data:([^;]+);base64,(.*)$", url, re.S)
                        source = (
                            {"type": "base64", "media_type": match.group(1), "data": match.group(2)}
                            if match
                            else {"type": "url", "url": url}
                        )
                        blocks.append({"type": "image", "source": source})
            if pending_results:
                out.append({"role": "user", "content": list(pending_results) + blocks})
                pending_results.clear()
            elif blocks:
                out.append({"role": "user", "content": blocks})
        elif role == "assistant":
            flush_results()
            blocks = []
            text = _text_of_openai_content(message.get("content"))
            if text:
                blocks.append({"type": "text", "text": text})
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": call.get("id"),
                        "name": function.get("name", ""),
                        "input": parse_arguments(function.get("arguments")),
                    }
                )
            if blocks:
                out.append({"role": "assistant", "content": blocks})
    flush_results()
    return "\n\n".join(p for p in system_parts if p), out


# --------------------------------------------------------------------------- errors


def _error_text(exc: BaseException) -> str:
    """What a 400 says, lower-cased, to recognise a parameter the server refuses."""
    if isinstance(exc, StatusError):
        message, kind = error_detail(exc.body, exc.reason)
        inner = exc.body.get("error", exc.body) if isinstance(exc.body, dict) else None
        param = inner.get("param") if isinstance(inner, dict) else None
        return f"{message} {kind or ''} {param or ''}".lower()
    return str(exc).lower()


# --------------------------------------------------------------------------- the provider


class OpenAIProvider:
    name = "openai"

    def __init__(
        self,
        model: str | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        *,
        max_retries: int = DEFAULT_MAX_RETRIES,
        timeout: float | None = None,
        stream: bool = True,
    ) -> None:
        self.model = model or DEFAULT_MODEL
        env_url = (os.environ.get("OPENAI_BASE_URL") or "").strip()
        chosen_url = (base_url or "").strip() or env_url
        self.base_url = (chosen_url or DEFAULT_BASE_URL).rstrip("/")
        key = (api_key or "").strip() or (os.environ.get("OPENAI_API_KEY") or "").strip()
        self.missing_key = not key and not chosen_url
        if not key:
            key = NO_KEY_PLACEHOLDER  # a local server needs none; without a URL, complete() says so
        self.stream = stream
        self.max_retries = max_retries
        host = (urlsplit(self.base_url).hostname or "").lower()
        self.max_tokens_param = "max_completion_tokens" if host == "api.openai.com" else "max_tokens"
        self.send_stream_options = True
        self._compat_tried: set[str] = set()
        self.label = ApiLabel("OpenAI-compatible API", "OPENAI_API_KEY", "OPENAI_BASE_URL", self.base_url,
                              self.model, DEFAULT_BASE_URL, url_in_status=True)
        headers = {"Authorization": f"Bearer {key}", "Accept": "application/json"}
        for env, header in (("OPENAI_ORG_ID", "OpenAI-Organization"), ("OPENAI_PROJECT_ID", "OpenAI-Project")):
            if (os.environ.get(env) or "").strip():
                headers[header] = os.environ[env].strip()
        try:
            self._client = Client(self.base_url, timeout=timeout, max_retries=max_retries, headers=headers)
        except ValueError as exc:  # a malformed base URL
            raise ProviderError(f"{exc}: check OPENAI_BASE_URL") from None

    def warm_up(self) -> None:
        """Connect to the API in the background so the first request does not wait for the handshake."""
        self._client.warm()

    # ---- request building
    def build_params(self, *, system: str, messages: list[dict], tools: list[dict], max_tokens: int) -> dict:
        params: dict[str, Any] = {"model": self.model, "messages": to_openai_messages(system, messages)}
        if tools:
            params["tools"] = to_openai_tools(tools)
        params[self.max_tokens_param] = max_tokens
        if self.stream:
            params["stream"] = True
            if self.send_stream_options:
                params["stream_options"] = {"include_usage": True}
        return params

    def _adapt(self, exc: BaseException, params: dict) -> bool:
        """After a 400: adjust `params` for a server that refuses a parameter; False when nothing applies."""
        if not (isinstance(exc, StatusError) and exc.status == 400):
            return False
        text = _error_text(exc)
        if "stream_options" in params and "stream_options" in text and "stream_options" not in self._compat_tried:
            self._compat_tried.add("stream_options")
            self.send_stream_options = False
            del params["stream_options"]
            return True
        if (
            "max_tokens" in params
            and "max_completion_tokens" in text
            and "max_completion_tokens" not in self._compat_tried
        ):
            self._compat_tried.add("max_completion_tokens")
            self.max_tokens_param = "max_completion_tokens"
            params["max_completion_tokens"] = params.pop("max_tokens")
            return True
        return False

    # ---- the call
    def complete(
        self,
        *,
        system: str,
        messages: list[dict],
        tools: list[dict],
        max_tokens: int = 8192,
        callbacks: StreamCallbacks | None = None,
        cancel: threading.Event | None = None,
    ) -> ModelResponse:
        callbacks = callbacks or StreamCallbacks()
        if cancel is not None and cancel.is_set():
            raise ProviderCancelled()
        if self.missing_key:
            raise ProviderError(MISSING_KEY_MESSAGE)
        params = self.build_params(system=system, messages=messages, tools=tools, max_tokens=max_tokens)
        assembler = ChatStreamAssembler(history_tool_ids(messages), seed=len(messages))
        attempts = 1 + self.max_retries

        def work(put: Put, stop: threading.Event, live: dict) -> None:
            def on_retry(retry: Any) -> None:
                put(("notice", retry_notice(self.label, retry)))

            while True:
                try:
                    response = self._client.post("/chat/completions", encode_json(params), stop=stop,
                                                 on_retry=on_retry)
                    break
                except StatusError as exc:
                    if not self._adapt(exc, params):
                        raise
            live["stream"] = response
            if stop.is_set():
                response.close()
                return
            if not params.get("stream"):
                put(("completion", response.json()))
                return
            for _name, data in response.events():
                if stop.is_set():
                    return
                if data.strip() == "[DONE]":
                    break
                put(("chunk", data))
            response.close()
            put(("done", None))

        def handle(kind: str, payload: Any) -> Any:
            if kind in ("chunk", "completion"):
                chunk = self._parse_chunk(payload) if kind == "chunk" else payload
                for event, value in assembler.feed(chunk):
                    if event == "text":
                        if callbacks.on_text:
                            callbacks.on_text(value)
                    elif event == "thinking":
                        if callbacks.on_thinking:
                            callbacks.on_thinking(value)
                    elif event == "tool_use" and callbacks.on_tool_use_start:
                        callbacks.on_tool_use_start(*value)
                if kind == "chunk":
                    return CONTINUE
                return self._finish(assembler)
            if kind == "notice":
                if callbacks.on_retry:
                    callbacks.on_retry(payload)
                return CONTINUE
            if kind == "error":
                if isinstance(payload, HTTPFailure):
                    raise ProviderError(failure_line(self.label, payload, attempts)) from None
                if isinstance(payload, ValueError):  # e.g. a completion that is not JSON
                    raise ProviderError(_one_line(
                        f"the OpenAI-compatible API at {self.base_url} sent a response that could not be read: "
                        f"{payload}"
                    )) from None
                raise ProviderError(failure_line(self.label, payload)) from None
            return self._finish(assembler)

        return run_in_worker(work, handle, cancel=cancel, thread_name="evo-agent-openai")

    def _parse_chunk(self, data: str) -> dict:
        try:
            chunk = json.loads(data)
        except ValueError as exc:
            raise ProviderError(_one_line(
                f"the OpenAI-compatible API at {self.base_url} sent a chunk that could not be read: {exc}"
            )) from None
        if isinstance(chunk, dict) and chunk.get("error") is not None:
            message, kind = error_detail(chunk)
            raise ProviderError(status_line(self.label, None, kind, message)) from None
        return chunk if isinstance(chunk, dict) else {}

    def _finish(self, assembler: ChatStreamAssembler) -> ModelResponse:
        if assembler.chunks == 0:
            raise ProviderError(
                f"the OpenAI-compatible API at {self.base_url} sent an empty stream "
                "(does the server support stream=true for chat completions?)"
            )
        if assembler.finish_reason is None:
            raise ProviderError(
                f"the OpenAI-compatible API at {self.base_url} ended the stream before the answer was complete "
                "(no finish_reason)"
            )
        return assembler.response()


__all__ = [
    "DEFAULT_BASE_URL",
    "DEFAULT_MODEL",
    "INVALID_ARGUMENTS_KEY",
    "TOOL_ERROR_PREFIX",
    "ChatStreamAssembler",
    "OpenAIProvider",
    "assemble",
    "from_openai_messages",
    "history_tool_ids",
    "invalid_arguments_message",
    "map_stop_reason",
    "map_usage",
    "parse_arguments",
    "to_openai_messages",
    "to_openai_tools",
    "tool_result_text",
    "wire_tool_call_id",
]
