"""A restored history as the live session showed it: prompts, answers, tool calls with one-line results.

Used at every resume entry point (`--resume ID`, `-c`, the startup picker, `/resume` in the app and
the REPL). A long history shows its tail and says how many earlier exchanges the transcript holds
(an exchange = one prompt of the user and everything up to the next). The compaction summary is one
folded block; `[Request interrupted by user]` is a notice; a tool that never finished is "interrupted".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import RenderableType
from rich.text import Text

from evo_agent.session import blocks, has_tool_results, is_reminder_block, text_of, tool_result_text

from . import render

__all__ = ["history_renderables", "split_exchanges", "TAIL_EXCHANGES"]

TAIL_EXCHANGES = 10


def _without_reminders(message: Any) -> Any:
    """A user message without the reminders evo-agent gave the model in it (a person did not type them)."""
    if isinstance(message, dict) and message.get("role") == "user" and isinstance(message.get("content"), list):
        return {**message, "content": [b for b in message["content"] if not is_reminder_block(b)]}
    return message


def _is_prompt(message: Any) -> bool:
    """A user message a person typed (not tool results, not the interruption marker, not a summary)."""
    if not isinstance(message, dict) or message.get("role") != "user":
        return False
    message = _without_reminders(message)
    if not any(b.get("type") == "text" for b in blocks(message)) or has_tool_results(message):
        return False
    joined = text_of(message).strip()
    return bool(joined) and joined != render.INTERRUPTED_MARKER and not joined.startswith(render.SUMMARY_OPEN)


def split_exchanges(messages: Sequence[dict]) -> list[list[dict]]:
    """The history cut before each typed prompt; what precedes the first prompt is an exchange too."""
    exchanges: list[list[dict]] = []
    for message in messages:
        if _is_prompt(message) or not exchanges:
            exchanges.append([])
        exchanges[-1].append(message)
    return exchanges


def history_renderables(messages: Sequence[dict], *, tail: int = TAIL_EXCHANGES,
                        width: int | None = None) -> list[RenderableType]:
    """What to print for a restored history: a count of what is left out, then the tail, in order.

    With `width`, tool calls and result previews are cut to one screen line each (the app's view).
    """
    exchanges = split_exchanges(messages)
    out: list[RenderableType] = []
    earlier = exchanges[:-tail] if tail and len(exchanges) > tail else []
    shown = exchanges[len(earlier):]
    # A summary at the very start stays visible even when its exchange is left out.
    if earlier and any(_is_summary(m) for m in earlier[0]):
        out.append(render.summary_block(text_of(earlier[0][0])))
    if earlier:
        n = len(earlier)
        out.append(Text(f"… {n} earlier exchange{'s' if n != 1 else ''} in this transcript "
                        f"(evo-agent sessions show prints them all)", style="evo.dim"))
    tools: dict[str, tuple[str, Any]] = {}
    calls: dict[str, RenderableType] = {}  # tool calls drawn with their results, as the live session drew them
    for exchange in shown:
        for message in exchange:
            out.extend(_message(message, tools, calls, width))
    out.extend(calls.values())  # calls no result answered (the transcript ends inside a tool)
    return out


def _is_summary(message: dict) -> bool:
    return message.get("role") == "user" and text_of(message).startswith(render.SUMMARY_OPEN)


def _message(message: Any, tools: dict[str, tuple[str, Any]], calls: dict[str, RenderableType],
             width: int | None = None) -> list[RenderableType]:
    """What one message draws. An assistant's tool calls wait in `calls` until the results come back,
    so each call is drawn right above its own result (parallel calls included), as they ran."""
    if not isinstance(message, dict):
        return []
    message = _without_reminders(message)
    role = message.get("role")
    out: list[RenderableType] = []
    if role == "user":
        text = text_of(message).strip()
        results = {str(b.get("tool_use_id")) for b in blocks(message) if b.get("type") == "tool_result"}
        for call_id in [c for c in calls if c not in results]:  # calls answered nowhere: drawn before this
            out.append(calls.pop(call_id))
        if text.startswith(render.SUMMARY_OPEN):
            return out + [render.summary_block(text)]
        for block in blocks(message):
            if block.get("type") == "tool_result":
                call = calls.pop(str(block.get("tool_use_id")), None)
                if call is not None:
                    out.append(call)
                name, tool_input = tools.get(str(block.get("tool_use_id")), ("tool", {}))
                out.append(render.tool_result(name, tool_input, tool_result_text(block),
                                              is_error=bool(block.get("is_error")), expand_hint=False, width=width))
        if text == render.INTERRUPTED_MARKER or (text.endswith(render.INTERRUPTED_MARKER) and not _is_prompt(message)):
            out.append(render.interrupted_notice())
        elif _is_prompt(message):
            out.append(Text(""))
            out.append(render.user_prompt(text))
        return out
    if role == "assistant":
        out.extend(calls.values())  # a call no result followed (not a valid history, but drawn in order)
        calls.clear()
        for block in blocks(message):
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str) and block["text"].strip():
                out.append(render.answer(block["text"]))
            elif kind == "thinking" and isinstance(block.get("thinking"), str):
                out.append(render.thinking_line(block["thinking"]))
            elif kind == "tool_use":
                name = str(block.get("name", "tool"))
                tools[str(block.get("id"))] = (name, block.get("input", {}))
                calls[str(block.get("id"))] = render.tool_call(name, block.get("input", {}), width=width)
    return out
