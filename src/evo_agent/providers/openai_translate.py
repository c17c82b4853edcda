"""Anthropic-shape history <-> chat completions `messages`, as pure functions (no I/O).

The stored history stays in the Anthropic MessageParam shape (SPEC §2); the OpenAI-compatible
provider translates at its boundary, here, both ways:

    to_openai_messages(system, messages)   Anthropic history -> chat `messages`
    to_openai_tools(tools)                 Anthropic tool specs -> `tools`
    from_openai_messages(messages)         chat `messages` -> (system, Anthropic history);
                                           the inverse of to_openai_messages (tests, imports)
    parse_arguments(raw)                   a tool call's `arguments` -> a tool_use input

(streamed answers are folded into an assistant message by openai_stream.py).

What the translation does with what one side cannot say:

- `thinking` / `redacted_thinking` blocks are dropped on the way out (chat completions
  cannot take them back).
- A `tool_result` becomes one `role: tool` message; a list content becomes its text
  blocks joined with "\\n" (images become "[image omitted]"); `is_error: true` is
  sent as the text prefixed with TOOL_ERROR_PREFIX ("Error: "), the one way a chat
  model can be told. The `tool` messages of a user turn are sent before its text, as
  chat completions requires them right after the assistant's `tool_calls`.
- Consecutive messages of one role form one turn (the Messages API merges them), so an
  assistant turn split over several messages becomes one assistant message.
- Tool call ids are kept when they are `^[A-Za-z0-9_-]{1,40}$` (what both APIs accept);
  any other id is sent as a stable hash of itself, the same in `tool_calls` and in the
  matching `tool` message.
- A tool name outside `^[a-zA-Z0-9_-]{1,64}$` (a model's `functions.bash`) is recorded, and sent, as
  `invalid-name_functions_bash` (session.api_tool_name): an unknown tool, never a real one, and a history
  both APIs accept back.
- Arguments that are not a JSON object (truncated by `length`, or plain invalid JSON)
  still become a `tool_use` block, with input {INVALID_ARGUMENTS_KEY: "<raw text>"}; the
  tool runner answers it with an error, so the model can send the call again. Empty
  arguments mean {}.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from typing import Any

from evo_agent.session import api_tool_name, blocks, content_blocks, content_text, text_block, tool_results, tool_uses

from .base import INVALID_ARGUMENTS_KEY
from .http_client import MAX_JSON_DEPTH, load_json

TOOL_ERROR_PREFIX = "Error: "
IMAGE_PLACEHOLDER = "[image omitted]"
ID_OK = re.compile(r"^[A-Za-z0-9_-]{1,40}$")


# --------------------------------------------------------------------------- small helpers


def digest(*parts: object) -> str:
    return hashlib.sha256("\x00".join(str(p) for p in parts).encode("utf-8", "surrogatepass")).hexdigest()[:24]


def wire_tool_call_id(tool_use_id: object) -> str:
    """The id sent for a stored tool_use id: itself when both APIs accept it, else a stable hash."""
    if isinstance(tool_use_id, str) and ID_OK.match(tool_use_id):
        return tool_use_id
    return "call_" + digest("wire", tool_use_id)


def _image_url(block: dict[str, Any]) -> str | None:
    source = block.get("source") or {}
    if source.get("type") == "base64" and source.get("data"):
        return f"data:{source.get('media_type') or 'image/png'};base64,{source['data']}"
    if source.get("type") == "url" and source.get("url"):
        return str(source["url"])
    return None


def _result_part_text(inner: dict[str, Any]) -> str:
    kind = inner.get("type")
    if kind == "text":
        return str(inner.get("text", ""))
    if kind == "image":
        return IMAGE_PLACEHOLDER
    source = inner.get("source")
    if kind == "document" and isinstance(source, dict) and source.get("type") == "text":
        return str(source.get("data", ""))
    return f"[{kind} omitted]"


def tool_message_text(block: dict[str, Any]) -> str:
    """A tool_result as the text of a `tool` message: every part said (images as a placeholder),
    is_error as TOOL_ERROR_PREFIX. (session.messages.tool_result_text is its text blocks only.)"""
    content = block.get("content", "")
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        text = "\n".join(_result_part_text(inner) for inner in content_blocks(content))
    else:
        text = "" if content is None else json.dumps(content, ensure_ascii=False)
    return TOOL_ERROR_PREFIX + text if block.get("is_error") else text


# --------------------------------------------------------------------------- Anthropic -> OpenAI


def to_openai_tools(tools: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """[{name, description, input_schema}] -> [{"type": "function", "function": {name, description, parameters}}]."""
    out = []
    for tool in tools:
        function: dict[str, Any] = {"name": tool["name"]}
        if tool.get("description"):
            function["description"] = tool["description"]
        function["parameters"] = tool.get("input_schema") or {"type": "object", "properties": {}}
        out.append({"type": "function", "function": function})
    return out


def _user_part(block: dict[str, Any]) -> dict[str, Any] | None:
    """One block of a user message as a chat content part (None: nothing a chat model can read)."""
    kind = block.get("type")
    if kind == "text":
        return {"type": "text", "text": block["text"]} if block.get("text") else None
    if kind == "image":
        url = _image_url(block)
        return {"type": "image_url", "image_url": {"url": url}} if url else {"type": "text", "text": IMAGE_PLACEHOLDER}
    if kind == "document":
        source = block.get("source") or {}
        data = source.get("data") if source.get("type") == "text" else None
        return {"type": "text", "text": data or "[document omitted]"}
    return None  # thinking and unknown block types in a user turn


def _user_message(parts: list[dict[str, Any]]) -> dict[str, Any]:
    if all(p["type"] == "text" for p in parts):
        return {"role": "user", "content": "\n\n".join(p["text"] for p in parts)}
    return {"role": "user", "content": parts}


def _user_turn(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One user turn (consecutive user messages): its `tool` messages first, then its text."""
    tools: list[dict[str, Any]] = []
    users: list[dict[str, Any]] = []
    for message in messages:
        tools += [{"role": "tool", "tool_call_id": wire_tool_call_id(b.get("tool_use_id")),
                   "content": tool_message_text(b)} for b in tool_results(message)]
        others = [b for b in blocks(message) if b.get("type") != "tool_result"]
        parts = [p for p in map(_user_part, others) if p is not None]
        if parts:
            users.append(_user_message(parts))
    return tools + users


def _tool_call(block: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": wire_tool_call_id(block.get("id")),
        "type": "function",
        "function": {"name": api_tool_name(block.get("name")),
                     "arguments": json.dumps(block.get("input") or {}, ensure_ascii=False)},
    }


def _assistant_turn(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One assistant turn: its text joined, its tool_use blocks as `tool_calls`; thinking dropped."""
    texts = [b["text"] for m in messages for b in blocks(m) if b.get("type") == "text" and b.get("text")]
    calls = [_tool_call(b) for m in messages for b in tool_uses(m)]
    if not texts and not calls:
        return []
    out: dict[str, Any] = {"role": "assistant", "content": "\n\n".join(texts) if texts else None}
    if calls:
        out["tool_calls"] = calls
    return [out]


def to_openai_messages(system: str | None, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """An Anthropic-shape history (plus system prompt) as chat completions `messages`."""
    out: list[dict[str, Any]] = []
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


def history_tool_ids(messages: Iterable[dict[str, Any]]) -> set[str]:
    """Every tool_use id (and its wire form) in a history: ids a new response must not reuse."""
    ids: set[str] = set()
    for message in messages:
        for block in tool_uses(message):
            if isinstance(block.get("id"), str):
                ids.add(block["id"])
                ids.add(wire_tool_call_id(block["id"]))
    return ids




# --------------------------------------------------------------------------- OpenAI -> Anthropic


def parse_arguments(raw: Any) -> dict[str, Any]:
    """A tool call's `arguments` as a tool_use input; never raises.

    Empty -> {}; a JSON object -> itself (also when it was JSON-encoded twice); anything
    else -> {INVALID_ARGUMENTS_KEY: raw} (the tool runner refuses it).
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
        value = load_json(raw, MAX_JSON_DEPTH)
        if isinstance(value, str) and value.strip().startswith("{"):
            value = load_json(value, MAX_JSON_DEPTH)
    except ValueError:
        return {INVALID_ARGUMENTS_KEY: raw}
    return value if isinstance(value, dict) else {INVALID_ARGUMENTS_KEY: raw}


def clean_tool_name(name: str) -> str:
    """A tool name both APIs accept (a malformed one becomes an unknown tool, not a broken history)."""
    return api_tool_name(name)


def _text_of_openai_content(content: Any) -> str:
    return content_text(content, "\n\n")  # chat content parts have the Messages API's text shape


def _tool_result_block(message: dict[str, Any]) -> dict[str, Any]:
    """A `tool` message as a tool_result block (TOOL_ERROR_PREFIX -> is_error, the prefix removed)."""
    text = _text_of_openai_content(message.get("content"))
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.get("tool_call_id")}
    if text.startswith(TOOL_ERROR_PREFIX):
        block["content"] = text[len(TOOL_ERROR_PREFIX) :]
        block["is_error"] = True
    else:
        block["content"] = text
    return block


def _image_block(part: dict[str, Any]) -> dict[str, Any]:
    url = (part.get("image_url") or {}).get("url", "")
    match = re.match(r"^data:([^;]+);base64,(.*)$", url, re.S)
    if match:
        return {"type": "image", "source": {"type": "base64", "media_type": match.group(1), "data": match.group(2)}}
    return {"type": "image", "source": {"type": "url", "url": url}}


def _user_blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [text_block(content)] if content else []
    found: list[dict[str, Any]] = []
    for part in content if isinstance(content, list) else []:
        if part.get("type") == "text" and part.get("text"):
            found.append(text_block(part["text"]))
        elif part.get("type") == "image_url":
            found.append(_image_block(part))
    return found


def _assistant_blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    text = _text_of_openai_content(message.get("content"))
    found = [text_block(text)] if text else []
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        found.append({"type": "tool_use", "id": call.get("id"), "name": function.get("name", ""),
                      "input": parse_arguments(function.get("arguments"))})
    return found


def from_openai_messages(messages: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """Chat `messages` -> (system prompt, Anthropic-shape history); inverse of to_openai_messages.

    `tool` messages become tool_result blocks at the front of the next user turn.
    """
    system_parts: list[str] = []
    out: list[dict[str, Any]] = []
    pending_results: list[dict[str, Any]] = []

    def flush_results(then: list[dict[str, Any]]) -> None:
        if pending_results or then:
            out.append({"role": "user", "content": pending_results + then})
        pending_results.clear()

    for message in messages:
        role = message.get("role")
        if role in ("system", "developer"):
            system_parts.append(_text_of_openai_content(message.get("content")))
        elif role == "tool":
            pending_results.append(_tool_result_block(message))
        elif role == "user":
            flush_results(_user_blocks(message.get("content")))
        elif role == "assistant":
            flush_results([])
            answer = _assistant_blocks(message)
            if answer:
                out.append({"role": "assistant", "content": answer})
    flush_results([])
    return "\n\n".join(p for p in system_parts if p), out
