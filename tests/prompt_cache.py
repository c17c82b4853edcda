"""Anthropic's prompt cache as its documentation describes it, for the fake API and the cost benchmark.

    cache = PromptCache()                      # or PromptCache(clock=lambda: t) to move time by hand
    usage = cache.usage(body)                  # input_tokens, cache_creation_input_tokens, cache_read_input_tokens

What it models (https://docs.claude.com/en/docs/build-with-claude/prompt-caching):

- the prompt is tools, then system, then messages, one *block* at a time (a tool definition, a
  system text block, a message's content block; a string content is one text block);
- a block marked `cache_control` is a breakpoint: the prefix ending there is written to the cache
  (1.25x the input price for the 5-minute lifetime, 2x for `ttl: "1h"`) when it is at least the
  minimum cacheable length (1024 tokens; 2048 for Haiku models); a shorter one is not cached;
- a request reads the longest prefix it shares, byte for byte, with an entry still alive: the
  entry must end at one of its breakpoints or at most 20 blocks before one (the lookback);
- `tool_choice` is part of what the messages are cached under: "changes to tool_choice parameter
  only affect message blocks" (the invalidation table), so a request whose tool_choice differs
  reads at most the tools and the system prompt of an entry written under another one;
- an entry lives 5 minutes (or 1 hour) from its last write or read;
- tokens are counted as the prefix's canonical JSON bytes / 4 (the same rule for every client, so
  comparisons are fair; `cache_control` itself is not part of the prefix).

`input_tokens` is what lies after the read part and is not written: the API's convention.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

LOOKBACK_BLOCKS = 20
MIN_TOKENS = 1024
MIN_TOKENS_HAIKU = 2048
LIFETIME_S = {"5m": 300.0, "1h": 3600.0}
WRITE_FACTOR = {"5m": 1.25, "1h": 2.0}


def _canonical(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode()


def _strip(block: object) -> object:
    if isinstance(block, dict):
        return {k: _strip(v) for k, v in block.items() if k != "cache_control"}
    if isinstance(block, list):
        return [_strip(v) for v in block]
    return block


@dataclass
class Unit:
    """One block of the prompt: its canonical bytes (marks removed) and its breakpoint's ttl, if any."""

    data: bytes
    ttl: str | None
    message: bool = False  # a message's block (after tools and system)


def prompt_units(body: dict) -> list[Unit]:
    """The request's blocks in prompt order: tools, system, then each message's blocks."""
    units: list[Unit] = []

    def add(kind: str, block: object, extra: object = None) -> None:
        mark = block.get("cache_control") if isinstance(block, dict) else None
        ttl = None
        if isinstance(mark, dict):
            ttl = mark.get("ttl") if mark.get("ttl") in LIFETIME_S else "5m"
        units.append(Unit(_canonical([kind, extra, _strip(block)]), ttl, kind not in ("tool", "system")))

    for tool in body.get("tools") or []:
        add("tool", tool)
    system = body.get("system")
    if isinstance(system, str):
        if system:
            add("system", {"type": "text", "text": system})
    elif isinstance(system, list):
        for block in system:
            add("system", block)
    for message in body.get("messages") or []:
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
        for position, block in enumerate(blocks):
            # the role opens each message; the same bytes whatever the message's index
            add(message.get("role", ""), block, "start" if position == 0 else None)
    return units


@dataclass
class _Entry:
    tokens: int
    ttl: str
    expires: float


@dataclass
class PromptCache:
    """The cache of one organisation, shared by every request sent to the fake."""

    clock: Callable[[], float] = time.monotonic
    entries: dict[tuple[str, bytes], _Entry] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    log: list[dict] = field(default_factory=list)  # per request: model, body, the usage, the write weight

    def usage(self, body: dict) -> dict:
        """The usage the API reports for one request (the cache updated by it, the request logged)."""
        charged = self._charge(body)
        self.log.append({"model": str(body.get("model") or ""), "body": body, **charged})
        return {k: charged[k] for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")}

    def _charge(self, body: dict) -> dict:
        model = str(body.get("model") or "")
        units = prompt_units(body)
        # prefix digests and cumulative token counts, block by block
        digests: list[bytes] = []
        tokens: list[int] = []
        h = hashlib.sha256()
        size = 0
        choice_seen = False
        for unit in units:
            if unit.message and not choice_seen:  # the messages are cached under the request's tool_choice
                h.update(_canonical(["tool_choice", body.get("tool_choice")]))
                choice_seen = True
            h.update(len(unit.data).to_bytes(8, "big"))
            h.update(unit.data)
            size += len(unit.data)
            digests.append(h.copy().digest())
            tokens.append(max(1, size // 4))
        total = tokens[-1] if tokens else 0
        marks = [i for i, unit in enumerate(units) if unit.ttl is not None]
        minimum = MIN_TOKENS_HAIKU if "haiku" in model else MIN_TOKENS
        now = self.clock()
        with self.lock:
            read_end = -1
            for mark in marks:
                for i in range(mark, max(-1, mark - LOOKBACK_BLOCKS - 1), -1):
                    entry = self.entries.get((model, digests[i]))
                    if entry is not None and entry.expires > now:
                        if i > read_end:
                            read_end = i
                        entry.expires = now + LIFETIME_S[entry.ttl]
                        break
            read = tokens[read_end] if read_end >= 0 else 0
            written = 0
            written_end = read_end
            creation_cost = 0.0
            for mark in marks:
                if tokens[mark] < minimum or mark <= read_end:
                    continue
                ttl = units[mark].ttl or "5m"
                self.entries[(model, digests[mark])] = _Entry(tokens[mark], ttl, now + LIFETIME_S[ttl])
                if mark > written_end:
                    part = tokens[mark] - (tokens[written_end] if written_end >= 0 else 0)
                    written += part
                    creation_cost += part * WRITE_FACTOR[ttl]
                    written_end = mark
        return {
            "input_tokens": total - read - written,
            "cache_creation_input_tokens": written,
            "cache_read_input_tokens": read,
            "cache_write_weight": creation_cost,  # written tokens weighted by their ttl's price (1.25x or 2x)
        }


def breakpoints(body: dict) -> list[str]:
    """Where a request's cache_control marks are, as 'tools.N', 'system.N', 'messages.I.content.J' (for tests)."""
    found: list[str] = []
    for j, tool in enumerate(body.get("tools") or []):
        if isinstance(tool, dict) and "cache_control" in tool:
            found.append(f"tools.{j}")
    system = body.get("system")
    for j, block in enumerate(system if isinstance(system, list) else []):
        if isinstance(block, dict) and "cache_control" in block:
            found.append(f"system.{j}")
    for i, message in enumerate(body.get("messages") or []):
        content = message.get("content")
        for j, block in enumerate(content if isinstance(content, list) else []):
            if isinstance(block, dict) and "cache_control" in block:
                found.append(f"messages.{i}.content.{j}")
    return found


def unmarked(value: object) -> object:
    """A request (or any part of one) without its cache_control marks."""
    return _strip(value)


def as_sent(messages: list[dict]) -> list[dict]:
    """A history in the shape the Anthropic provider sends it: a string content is one text block."""
    return [{**m, "content": [{"type": "text", "text": m["content"]}]} if isinstance(m.get("content"), str)
            and m["content"] else m for m in messages]


def last_text(body: dict) -> str:
    """The text of a request's newest message, whichever shape it was sent in (for scripted answers)."""
    content = (body.get("messages") or [{}])[-1].get("content")
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text")


def plain(messages: object) -> object:
    """Messages (or one message) as a comparison sees them: no cache marks, a string content as one text block.

    `plain(request["messages"]) == plain(history)`: the request carried that history, whatever the
    decoration the provider added (SPEC §12's breakpoints are never part of the history).
    """
    if isinstance(messages, dict) and "role" in messages:
        return as_sent([unmarked(messages)])[0]
    if isinstance(messages, list) and all(isinstance(m, dict) and "role" in m for m in messages):
        return as_sent(unmarked(messages))
    return unmarked(messages)  # a block, a list of blocks, a string: only the marks go
