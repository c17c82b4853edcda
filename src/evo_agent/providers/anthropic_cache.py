"""Prompt-cache breakpoints of a Messages API request (SPEC §12): a pure decoration, never stored.

The API caches a request's prefix (tools, then system, then messages) up to each block marked
`cache_control: {"type": "ephemeral"}`, and a later request reads it when its own bytes up to a
breakpoint (or up to 20 blocks before one) are the same. At most 4 breakpoints are allowed. So:

1. the end of tools + system (the system prompt's one text block; the last tool when there is none):
   read by every request of the session, and by the first one after a compaction or a clearing;
2. the compaction summary (the first message, when it is one): read after a clearing of tool
   results rewrites what follows it;
3. the newest message's last block: what the next request reads;
4. the end of the previous request (the last user message before the newest assistant message):
   marked again so the next request finds it however many blocks one turn added (the API looks
   back only 20 blocks from a breakpoint).

The messages are copied where a mark goes; the caller's history is never changed, so
`cache_control` never reaches the transcript. Every string content is sent as one text block, so
a message has the same bytes whether or not it carries a mark (a mark itself does not count in
the cached prefix). Thinking blocks and empty text cannot carry a mark: the last block that can
is marked instead.
"""

from __future__ import annotations

from evo_agent.session import SUMMARY_PREFIX

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)
if TYPE_CHECKING:
    from typing import Any

EPHEMERAL = {"type": "ephemeral"}
MAX_BREAKPOINTS = 4
MARKABLE = frozenset({"text", "image", "document", "tool_use", "tool_result", "search_result"})


def as_blocks(content: Any) -> list[Any]:
    """A message's content as a list of blocks (a string is one text block; '' is no block)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return list(content) if isinstance(content, list) else []


def _markable_index(content: list[Any]) -> int | None:
    """The last block of `content` that may carry cache_control, or None."""
    for index in range(len(content) - 1, -1, -1):
        block = content[index]
        if isinstance(block, dict) and block.get("type") in MARKABLE:
            if block["type"] == "text" and not (isinstance(block.get("text"), str) and block["text"]):
                continue
            return index
    return None


def _is_summary(message: dict[str, Any]) -> bool:
    content = message.get("content")
    first = content[0] if isinstance(content, list) and content else None
    text = first.get("text") if isinstance(first, dict) else content
    return message.get("role") == "user" and isinstance(text, str) and text.startswith(SUMMARY_PREFIX)


def message_breakpoints(messages: list[dict[str, Any]]) -> list[int]:
    """The indices of the messages to mark, oldest first: the summary, the previous request's end, the newest."""
    if not messages:
        return []
    marks = [len(messages) - 1]
    last_assistant = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].get("role") == "assistant"), None)
    if last_assistant is not None:
        previous = next((i for i in range(last_assistant - 1, -1, -1) if messages[i].get("role") == "user"), None)
        if previous is not None:
            marks.append(previous)
    if _is_summary(messages[0]):
        marks.append(0)
    return sorted(set(marks))


def _marked(message: dict[str, Any]) -> dict[str, Any] | None:
    """A copy of `message` whose last markable block carries cache_control; None when no block can."""
    content = as_blocks(message.get("content"))
    index = _markable_index(content)
    if index is None:
        return None
    content[index] = {**content[index], "cache_control": EPHEMERAL}
    return {**message, "content": content}


def cached_request(
    system: str, tools: list[dict[str, Any]], messages: list[dict[str, Any]]
) -> tuple[Any, list[dict[str, Any]], list[dict[str, Any]]]:
    """(system, tools, messages) of a request with its cache breakpoints; the arguments are not changed."""
    out = [{**m, "content": as_blocks(m.get("content"))} if isinstance(m.get("content"), str) and m["content"] else m
           for m in messages]
    budget = MAX_BREAKPOINTS
    sent_system: Any = system
    sent_tools = tools
    if system:
        sent_system = [{"type": "text", "text": system, "cache_control": EPHEMERAL}]
        budget -= 1
    elif tools:
        sent_tools = [*tools[:-1], {**tools[-1], "cache_control": EPHEMERAL}]
        budget -= 1
    for index in reversed(message_breakpoints(out)):  # newest first: those matter most
        if budget == 0:
            break
        marked = _marked(out[index])
        if marked is not None:
            out[index] = marked
            budget -= 1
    return sent_system, sent_tools, out


def strip_cache_control(value: Any) -> Any:
    """`value` with every cache_control key removed, at any depth (for comparing prefixes, and for tests)."""
    if isinstance(value, dict):
        return {k: strip_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [strip_cache_control(v) for v in value]
    return value


__all__ = ["EPHEMERAL", "MAX_BREAKPOINTS", "cached_request", "message_breakpoints", "strip_cache_control"]
