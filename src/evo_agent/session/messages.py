"""The shape of a message, said once: blocks, text, tool calls and their results.

A message is an Anthropic MessageParam as SPEC §2 stores it:
`{"role": "user" | "assistant", "content": str | list[block]}`. A string
content is shorthand for one text block; a block is a dict with a `"type"`
(`text`, `tool_use`, `tool_result`, `thinking`, `image`…). A `tool_result`'s
own `content` has the same two shapes.

Every reader in evo-agent (compaction, the loop, the providers, repair, the
renderers, the importers, listing and search) asks the same few questions of
that shape; these functions are the one place that answers them. They are
total: a malformed message (content missing, not a list, a block that is not
a dict, a text that is not a string) reads as having fewer blocks or less
text, never as an exception, because transcripts come from disk and from
other tools.

Pure functions over plain dicts; nothing here mutates its argument.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: `sessions list` loads this module
if TYPE_CHECKING:
    from typing import Any


__all__ = [
    "INTERRUPTED_MARKER",
    "INVALID_ARGUMENTS_KEY",
    "INVALID_TOOL_NAME_PREFIX",
    "api_tool_name",
    "with_api_tool_names",
    "SUMMARY_PREFIX",
    "SUMMARY_SUFFIX",
    "summary_message",
    "summary_text",
    "REMINDER_CLOSE",
    "REMINDER_OPEN",
    "blocks",
    "content_blocks",
    "content_text",
    "escape_tags",
    "has_tool_results",
    "is_reminder_block",
    "one_line",
    "reminder_block",
    "seal_summary",
    "text_block",
    "text_of",
    "tool_names_by_id",
    "tool_result_block",
    "tool_result_text",
    "tool_results",
    "tool_uses",
    "tool_uses_by_id",
]

# The user message a turn interrupted by the user ends with (the agent writes it; readers show it as a notice).
INTERRUPTED_MARKER = "[Request interrupted by user]"

# A tool_use input that was not one JSON object (cut mid-call, or malformed) is stored by the provider as
# {INVALID_ARGUMENTS_KEY: "<raw text>"}: the history stays valid and the tool runner refuses the call.
INVALID_ARGUMENTS_KEY = "__invalid_arguments__"

# A tool name a model sent that the APIs refuse back (outside `^[a-zA-Z0-9_-]{1,64}$`, which both the Messages
# API and chat completions accept) is recorded as INVALID_TOOL_NAME_PREFIX + its allowed characters: recorded
# as sent, it made every later request of the session, and of its resumes, fail with a 400. The prefix (a
# hyphen no tool of evo-agent's has, nor an MCP tool's `mcp__`) keeps it from naming a real tool, so the
# runner answers it as an unknown tool, and the model sees in its history the name that was sent back.
INVALID_TOOL_NAME_PREFIX = "invalid-name_"
_TOOL_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
_TOOL_NAME_MAX = 64


def api_tool_name(name: object) -> str:
    """The name to record for a tool call the model named `name`: itself when both APIs accept it back,
    else INVALID_TOOL_NAME_PREFIX + its allowed characters (cut to 64), the same for the same name."""
    if isinstance(name, str) and 0 < len(name) <= _TOOL_NAME_MAX and _TOOL_NAME_CHARS.issuperset(name):
        return name
    text = name if isinstance(name, str) else ""
    kept = "".join(c if c in _TOOL_NAME_CHARS else "_" for c in text.strip()[:_TOOL_NAME_MAX * 4])
    return (INVALID_TOOL_NAME_PREFIX + (kept or "empty"))[:_TOOL_NAME_MAX]


def with_api_tool_names(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`messages` as a request sends them: a tool_use name an older version recorded as the model sent it (one
    the APIs refuse, so no request holding it ever succeeded) is sent as api_tool_name makes it, in every request,
    so such a session resumes. The list itself when nothing changes (every session recorded since); never mutated."""
    out = messages
    for i, message in enumerate(messages):
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list) or not any(
                isinstance(b, dict) and b.get("type") == "tool_use" and api_tool_name(b.get("name")) != b.get("name")
                for b in content):
            continue
        if out is messages:
            out = list(messages)
        out[i] = {**message, "content": [
            {**b, "name": api_tool_name(b.get("name"))} if isinstance(b, dict) and b.get("type") == "tool_use" else b
            for b in content]}
    return out

# The synthetic summary message is exactly SUMMARY_PREFIX + summary + SUMMARY_SUFFIX (SPEC §4 step 4).
SUMMARY_PREFIX = "<previous-conversation-summary>\n"
SUMMARY_SUFFIX = "\n</previous-conversation-summary>"


def summary_message(summary: str) -> dict[str, Any]:
    """The one synthetic user message that stands for everything before a boundary.

    Here, not in resume.py: the loop and compaction state use it, and a new session's `-p` loads
    neither the resume reader nor its repair (SPEC §8, issue #30)."""
    return {"role": "user", "content": [{"type": "text", "text": f"{SUMMARY_PREFIX}{summary}{SUMMARY_SUFFIX}"}]}


def summary_text(message: dict[str, Any]) -> str:
    """The summary inside a synthetic summary message (summary_message), or "" for any other message."""
    content = text_of(message)
    if message.get("role") == "user" and content.startswith(SUMMARY_PREFIX) and content.endswith(SUMMARY_SUFFIX):
        return content[len(SUMMARY_PREFIX):-len(SUMMARY_SUFFIX)]
    return ""


def content_blocks(content: object) -> list[dict[str, Any]]:
    """A content as a list of blocks: a string is one text block, non-dict items are skipped.

    An empty string is one empty text block (as the API would read the
    shorthand); anything neither a string nor a list has no blocks.
    """
    if isinstance(content, str):
        return [text_block(content)]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def blocks(message: object) -> list[dict[str, Any]]:
    """The blocks of a message (`content_blocks` of its content; none when it is not a dict)."""
    return content_blocks(message.get("content")) if isinstance(message, dict) else []


def content_text(content: object, sep: str = "") -> str:
    """The text of a content: a string as it is, else its text blocks' texts joined by `sep`.

    Blocks of other types (tool calls, results, images, thinking) contribute
    nothing; a text that is not a string is skipped.
    """
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return sep.join(
        b["text"] for b in content
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    )


def text_of(message: object, sep: str = "") -> str:
    """The visible text of a message: its text blocks joined by `sep` (nothing by default,
    the way the model streamed them); "" for anything that is not a message."""
    return content_text(message.get("content"), sep) if isinstance(message, dict) else ""


def tool_result_text(block: Mapping[str, Any], sep: str = "\n") -> str:
    """The text of a tool_result block: its string content, or its text blocks joined by a newline."""
    return content_text(block.get("content"), sep)


def tool_uses(message: object) -> list[dict[str, Any]]:
    """The tool_use blocks of a message, in order."""
    return [b for b in blocks(message) if b.get("type") == "tool_use"]


def tool_results(message: object) -> list[dict[str, Any]]:
    """The tool_result blocks of a message, in order (they travel in the user role)."""
    return [b for b in blocks(message) if b.get("type") == "tool_result"]


def has_tool_results(message: object) -> bool:
    """Whether a message carries any tool_result (so it is not a prompt a person typed)."""
    return any(b.get("type") == "tool_result" for b in blocks(message))


def tool_uses_by_id(messages: Iterable[object]) -> dict[str, dict[str, Any]]:
    """Every assistant tool_use with a string id, by id (a later block with the same id wins):
    what a tool_result's `tool_use_id` points at."""
    return {
        b["id"]: b
        for m in messages if isinstance(m, dict) and m.get("role") == "assistant"
        for b in tool_uses(m) if isinstance(b.get("id"), str)
    }


def tool_names_by_id(messages: Iterable[object]) -> dict[str, str]:
    """The name of every assistant tool_use by its id ("tool" when it has none)."""
    return {tid: str(b.get("name", "tool")) for tid, b in tool_uses_by_id(messages).items()}


def one_line(text: object, limit: int | None = None) -> str:
    """`text` folded onto one line (every run of whitespace one space), cut to `limit` characters with
    `…` when longer: how a message, a tool's input or an error is shown in a line of its own."""
    line = " ".join(str(text).split())
    return line if limit is None or len(line) <= limit else line[: max(limit - 1, 0)] + "…"


def text_block(text: str) -> dict[str, Any]:
    """A text block."""
    return {"type": "text", "text": text}


def tool_result_block(tool_use_id: str, content: str | list[Any], *, is_error: bool = False) -> dict[str, Any]:
    """A tool_result block answering `tool_use_id`; `is_error` appears only when true."""
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}
    if is_error:
        block["is_error"] = True
    return block


# A `reminder` (SPEC §2, §12): context given to the model mid-session travels as one text block of
# the next user message, wrapped so the model (and every reader here) can tell it from what a person typed.
REMINDER_OPEN = "<system-reminder>"
REMINDER_CLOSE = "</system-reminder>"


def reminder_block(text: str) -> dict[str, Any]:
    """The text block that carries a reminder inside a user message.

    What it carries (a changed AGENTS.md, a memory description a pull brought) cannot end the block itself and
    write, after it, text the model reads as the user's: its own `<system-reminder` / `</system-reminder` tags,
    however spelled, are written `&lt;system-reminder`, so the block ends where evo-agent ends it."""
    return text_block(f"{REMINDER_OPEN}\n{escape_tags(text.strip(), 'system-reminder')}\n{REMINDER_CLOSE}")


def escape_tags(text: str, *names: str) -> str:
    """`text` with every opening or closing tag of `names`, however spelled (case, spaces), written `&lt;name`.

    What a block evo-agent wraps in its own tags carries cannot end that block (or open one the model is told
    comes from evo-agent) and write, after it, text the model reads as the user's."""
    if "<" not in text:  # not a test of the names: the pattern's case folding also reads `ı`, `İ`, `ſ`, `K` as letters
        return text  # of theirs, which str.casefold does not
    import re  # only for a text holding a `<` (`sessions list` loads this module)

    alternatives = "|".join(re.escape(name) for name in names)
    return re.sub(rf"<(\s*(?:/\s*)?(?:{alternatives}))", r"&lt;\1", text, flags=re.IGNORECASE)


def seal_summary(summary: str) -> str:
    """A compaction summary as it is stored and sent: the model wrote it while reading files and outputs
    others control, so neither its own block's tags nor a reminder's can appear in it (escape_tags)."""
    return escape_tags(summary, "previous-conversation-summary", "system-reminder")


def is_reminder_block(block: object) -> bool:
    """Whether a block is a reminder (not what a person typed): prompts, lists and rewinds skip it."""
    return (isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
            and block["text"].startswith(REMINDER_OPEN) and block["text"].rstrip().endswith(REMINDER_CLOSE))
