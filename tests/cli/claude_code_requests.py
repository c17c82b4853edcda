"""Claude Code's own log of what it sent (2.1.3xx), rebuilt: the ground truth an import is checked against.

Claude Code 2.1.3xx writes every model request into the transcript: an `api-request` record names the
request it extends (`base`), how many of its messages it keeps (`keep`) and the SHA-256 of each message
it adds (`tail`); a message is either an `api-request-blob` record or one of the transcript's own
`user`/`assistant` messages (an answer written a line per block is hashed whole). The hash is of the
message's JSON with sorted keys and no spaces.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any


def message_hash(message: dict[str, Any]) -> str:
    """The hash Claude Code names a logged message by."""
    text = json.dumps(message, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def _records(text: str) -> list[dict[str, Any]]:
    out = []
    for line in text.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            out.append(record)
    return out


def logged_messages(text: str) -> list[dict[str, Any]]:
    """Every message a request in the transcript `text` can name: blobs, user messages, whole answers (and
    every prefix of an answer's blocks: a request sent while its lines were still being written)."""
    found: list[dict[str, Any]] = []
    answers: dict[str, list[Any]] = {}
    for record in _records(text):
        message = record.get("message")
        if not isinstance(message, dict):
            continue
        if record.get("type") == "api-request-blob":
            found.append(message)
        elif record.get("type") == "user":
            found.append({"role": message.get("role"), "content": message.get("content")})
        elif record.get("type") == "assistant" and isinstance(message.get("content"), list):
            answers.setdefault(str(message.get("id")), []).extend(message["content"])
    for blocks in answers.values():
        found += [{"role": "assistant", "content": blocks[:n]} for n in range(1, len(blocks) + 1)]
    return found


def last_request(path: Path) -> list[dict[str, Any]]:
    """The messages of the last request Claude Code logged in the transcript at `path`.

    A message the transcript does not hold is `{"role": "unknown"}`: 2.1.332 logs no blob for the first
    prompt of a process that resumed a session (its text is the user record's, with context added)."""
    text = path.read_text()
    known = {message_hash(m): m for m in logged_messages(text)}
    sent: dict[str, list[dict[str, Any]]] = {}
    last: list[dict[str, Any]] = []
    for record in _records(text):
        if record.get("type") != "api-request":
            continue
        base = sent.get(record["base"], []) if record.get("base") else []
        last = sent[record["id"]] = base[:record["keep"]] + [known.get(h, {"role": "unknown"}) for h in record["tail"]]
    return last


def said(messages: list[dict[str, Any]]) -> list[tuple[str, ...]]:
    """The conversation in `messages` as what a resume must carry, in order: each text, each tool call's id,
    each tool result's id. Texts of role `system` messages are kept (a background agent's notice); block
    order within a message is kept."""
    out: list[tuple[str, ...]] = []
    for message in messages:
        content = message.get("content")
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        for block in parts:
            kind = block.get("type")
            if kind == "text" and block.get("text", "").strip():
                out.append(("text", block["text"].strip()))
            elif kind == "tool_use":
                out.append(("tool_use", block["id"]))
            elif kind == "tool_result":
                out.append(("tool_result", block["tool_use_id"]))
    return out
