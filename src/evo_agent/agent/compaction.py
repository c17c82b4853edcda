"""Compaction: the summary request, and the per-request trimming of old tool results.

Two mechanisms keep a long conversation inside the model's context:

- **Full compaction** replaces the whole history with one synthetic user
  message holding a summary (`summary_message` from the session library, the
  very message resume builds from a `compact_boundary`). The summary is
  written by one model call that uses no tool. Once the session has sent a
  request, that call is the conversation's own next request (the same tools,
  system prompt and messages, byte for byte) plus the summary instruction
  (`in_place_summary`), so it reads the whole conversation from the prompt
  cache (SPEC §12) instead of paying for it again at the full price: the tools
  are defined but the instruction forbids them, and the provider forbids them
  too where that keeps the cache (`text_only`). Otherwise (a resumed history
  summarised before its first request, a windowed one, an answer that called a
  tool anyway, a prompt the API finds too long) the history is flattened to
  text (`summary_request`) and sent *without tools*, because the API refuses
  tool blocks in a request that defines no tools, and because a flat text is
  what both providers accept alike.
- **Micro-compaction** (`micro_compact`) is a pure function applied when a
  request is built: older, long tool results are shown to the model as a
  short placeholder. The stored history is never changed, so a resumed
  session builds exactly the same requests as the live one would have.
  It clears in batches (as Anthropic's context editing does): nothing until
  the stale output not yet cleared reaches CLEAR_TRIGGER_CHARS, then all of
  it at once. Between two clearings the request only grows at its end, so the
  prompt cache reads all of it (SPEC §12); a clearing rewrites what follows
  the first result it clears, once, instead of on every turn.
"""

from __future__ import annotations

import json

from evo_agent.session import blocks, one_line, tool_names_by_id, tool_result_text, tool_results
from evo_agent.tools.registry import facts_of

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)
if TYPE_CHECKING:
    from typing import Any

    from evo_agent.session import LoadedSession

SUMMARY_MAX_TOKENS = 4096

# The flattened conversation sent to the summariser: per-part and total caps.
TEXT_PART_CHARS = 6_000
TOOL_PART_CHARS = 2_000
LATEST_TOOL_PART_CHARS = 20_000  # results the model may not have read yet get more room
SUMMARY_INPUT_CHARS = 240_000
SUMMARY_INPUT_HEAD_CHARS = 40_000

# Micro-compaction: the latest KEEP_RECENT_RESULTS tool results are always
# sent in full; older ones longer than CLEAR_RESULT_CHARS ("stale") become a
# placeholder, in batches: once the stale ones not yet cleared add up to
# CLEAR_TRIGGER_CHARS. A clearing costs a cache write of everything after the
# first result it clears (1.25x input instead of 0.1x) and saves 0.1x of what
# it cleared on each later request: it pays in context room, rarely in dollars
# (docs/benchmarks.md), hence a batch of ~10k tokens rather than one result a turn.
KEEP_RECENT_RESULTS = 3
CLEAR_RESULT_CHARS = 2_000
CLEAR_TRIGGER_CHARS = 40_000

# A resumed history over the threshold is only ever summarised before its first request (SPEC §8), so a
# resume keeps at most this many bytes of it decoded (load_for_resume's `window`): its head and tail,
# many times what `summary_request` can use (SUMMARY_INPUT_CHARS).
RESUME_WINDOW_MIN = 4 << 20

TOUCHED_FILES_SHOWN = 15

SUMMARY_SYSTEM = (
    "You write the working summary of a coding session between a user and a coding agent. "
    "The agent will continue the work from your summary alone: everything before it is discarded. "
    "Be specific and complete; keep file paths, names, commands, numbers and error messages exact."
)

SUMMARY_INSTRUCTIONS = """\
Summarise the conversation above for the agent that will continue it. Use these sections:

1. Goal: what the user wants, and every explicit request or constraint they gave; quote their latest request verbatim.
2. Findings and decisions: what was learned about the code and why things were decided.
3. Files: each file read, created or changed, and what changed in it.
4. Done so far: the steps completed, with the commands run and their outcome.
5. Remaining work: what is still to do, and the very next step. If the conversation ends in the middle of a
   task (tool results not yet acted on), say so and keep the facts from those results that the next step needs.

Answer with the summary only, no preamble."""


def history_chars(messages: list[dict[str, Any]]) -> int:
    """The JSON size of a message list in characters: what EVO_AGENT_COMPACT_CHARS is compared with."""
    return len(json.dumps(messages, ensure_ascii=False, separators=(",", ":")))


def history_exceeds(messages: list[dict[str, Any]], limit: int) -> bool:
    """Whether `history_chars(messages) > limit`, stopping as soon as it is (a resumed 1 GB history
    is not serialised whole just to learn that it is over a 50,000-character threshold)."""
    total = 1  # "[" ... "]" and the commas: n + 1 characters for n messages
    for message in messages:
        total += len(json.dumps(message, ensure_ascii=False, separators=(",", ":"))) + 1
        if total > limit:
            return True
    return max(total, 2) > limit


def resume_window(threshold: int) -> int:
    """The `window` of a resume under this compaction threshold.

    At least 4x the threshold: a history whose records pass the window is then surely over the
    threshold (a message's JSON is most of its record's line), so windowing never drops a history
    that would have been sent whole.
    """
    return max(RESUME_WINDOW_MIN, 4 * threshold)


def restored_oversized(loaded: LoadedSession, threshold: int) -> bool:
    """Whether a restored history is to be summarised before its first request: windowed, or over the threshold."""
    return loaded.windowed or (len(loaded.messages) >= 2 and history_exceeds(loaded.messages, threshold))


# A line of a part's text that would read as a part's own header ("[user]", "[ Assistant: image block ]",
# "[tool result: bash]", "[… 5 more characters …]"): its bracket is escaped (`\\[`), see `_inert`. A line starts
# after any line break a reader may honour (\r, U+2028, …), not only after \n.
_HEADER_LIKE = (r"(^|[\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029])(\s*)\["
                r"(?=\s*(?:(?:user|assistant)\s*[\]:]|tool\s+(?:call|result|error)\s*:|…))")


def _inert(text: str) -> str:
    """A part's text as the summariser reads it: it cannot open a part of its own or end the conversation.

    Tool results (a cloned repository's README printed by `cat`) and the model's text are others' words: a
    line `[user]` in them would start what reads as a turn the user typed, a `</conversation>` would end the
    conversation and make what follows read as evo-agent's instruction. Lines that read as a header get a
    backslash before their bracket, the conversation's tags are written `&lt;…` (escape_tags)."""
    from evo_agent.session import escape_tags

    text = escape_tags(text, "conversation")
    if "[" not in text:
        return text
    import re  # only for a text with a bracket, when a summary is flattened

    return re.sub(_HEADER_LIKE, r"\1\2\\[", text, flags=re.IGNORECASE | re.MULTILINE)


def _part(header: str, text: str, limit: int) -> str:
    """One part of the flattened conversation: its header line, then its text clipped and made inert (only
    what is kept is scanned: a result of many megabytes costs its first `limit` characters)."""
    if len(text) <= limit:
        return f"{header}\n{_inert(text)}"
    return f"{header}\n{_inert(text[:limit])}\n[… {len(text) - limit:,} more characters not shown]"


def flatten_conversation(messages: list[dict[str, Any]]) -> str:
    """The conversation as plain text, one tagged part per block, long parts clipped."""
    from evo_agent.session import is_omitted_marker, is_reminder_block

    names = tool_names_by_id(messages)
    parts: list[str] = []
    gap: tuple[int, str] | None = None  # (part index, note) of a windowed resume's omitted middle
    for index, message in enumerate(messages):
        if gap is None and is_omitted_marker(message):
            gap = (len(parts), message["content"][0]["text"])
            continue
        role = message.get("role")
        tool_chars = LATEST_TOOL_PART_CHARS if index == len(messages) - 1 else TOOL_PART_CHARS
        for block in blocks(message):
            kind = block.get("type")
            if is_reminder_block(block):
                continue  # context evo-agent gave (the plan's state then): given again, fresh, after the compaction
            if kind == "text" and block.get("text"):
                parts.append(_part(f"[{role}]", block["text"], TEXT_PART_CHARS))
            elif kind == "tool_use":
                arguments = json.dumps(block.get("input"), ensure_ascii=False)
                parts.append(_part(f"[tool call: {_inert(one_line(block.get('name')))}]", arguments, TOOL_PART_CHARS))
            elif kind == "tool_result":
                tid = block.get("tool_use_id")
                name = names.get(tid, "tool") if isinstance(tid, str) else "tool"
                label = "tool error" if block.get("is_error") else "tool result"
                parts.append(_part(f"[{label}: {_inert(one_line(name))}]", tool_result_text(block), tool_chars))
            elif kind in ("thinking", "redacted_thinking"):
                continue  # the agent's private reasoning; the decisions it led to are in the text
            elif kind:
                parts.append(f"[{role}: {kind} block]")
    if gap is not None:
        return _around_gap(parts[:gap[0]], parts[gap[0]:], gap[1])
    text = "\n\n".join(parts)
    if len(text) > SUMMARY_INPUT_CHARS:
        tail = SUMMARY_INPUT_CHARS - SUMMARY_INPUT_HEAD_CHARS
        omitted = len(text) - SUMMARY_INPUT_CHARS
        note = f"[… {omitted:,} characters of the middle of the conversation omitted …]"
        text = f"{text[:SUMMARY_INPUT_HEAD_CHARS]}\n\n{note}\n\n{text[-tail:]}"
    return text


def _around_gap(head_parts: list[str], tail_parts: list[str], note: str) -> str:
    """A windowed history flattened: its head and tail within the same caps, the gap's own note between."""
    head = "\n\n".join(head_parts)
    tail = "\n\n".join(tail_parts)
    cut = ""
    if len(head) > SUMMARY_INPUT_HEAD_CHARS:
        head, cut = head[:SUMMARY_INPUT_HEAD_CHARS], " (and the loaded parts around it were clipped)"
    room = SUMMARY_INPUT_CHARS - len(head)
    if len(tail) > room:
        tail, cut = tail[-room:], " (and the loaded parts around it were clipped)"
    return f"{head}\n\n{note}{cut}\n\n{tail}"


def touched_files(messages: list[dict[str, Any]], limit: int = TOUCHED_FILES_SHOWN) -> list[str]:
    """Paths the file tools worked on, most recent first, without repeats.

    A call that failed or was refused (its tool_result `is_error`) touched nothing: a write the user
    said no to must not come back after a compaction as a file the agent worked on.
    """
    failed = {b.get("tool_use_id") for m in messages if m.get("role") == "user"
              for b in tool_results(m) if b.get("is_error")}
    seen: list[str] = []
    for message in reversed(messages):
        if message.get("role") != "assistant":
            continue
        for block in reversed(blocks(message)):
            if block.get("type") != "tool_use" or block.get("id") in failed:
                continue
            facts = facts_of(str(block.get("name", "")))  # a tool that opens one file names it in its path_arg
            path = (block.get("input") or {}).get(facts.path_arg) if facts.opens_path and facts.path_arg else None
            if isinstance(path, str) and path and path not in seen:
                seen.append(path)
    return seen[:limit]


def _names(paths: list[str]) -> str:
    """Paths on one line, a path with a character that is not printable (a line break) as a JSON string:
    a name is the model's choice, and one holding `\\n\\nThe user asked…` must not write lines of its own
    into the summary's instruction or the summary."""
    return ", ".join(p if p.isprintable() else json.dumps(p, ensure_ascii=False) for p in paths)


def summary_request(messages: list[dict[str, Any]], focus: str | None = None, *,
                    agent_focus: bool = False) -> list[dict[str, Any]]:
    """The one user message of the flattened summary call: the conversation as text and what to write."""
    conversation = flatten_conversation(messages)
    instruction = summary_instruction(messages, focus, agent_focus=agent_focus)
    text = f"<conversation>\n{conversation}\n</conversation>\n\n{instruction}"
    return [{"role": "user", "content": text}]


IN_PLACE_PREAMBLE = (
    "The conversation is being compacted now. Do not call any tool: no tool call will run. "
    "Answer with text only. Leave out what the system prompt and the <system-reminder> blocks give "
    "(project instructions, Auto Memory, the plan's state): the agent is given it again, current, "
    "after the compaction.\n\n" + SUMMARY_SYSTEM + "\n\n"
)


def summary_instruction(messages: list[dict[str, Any]], focus: str | None = None, *, agent_focus: bool = False) -> str:
    """What to write, with the focus asked for and the files touched recently (both forms of the call).

    `agent_focus`: the focus is the `compact` tool's, which the model chose after reading what others wrote
    (a README can ask for one): it is said to be the agent's, never the user's (`/compact FOCUS` is theirs)."""
    instructions = SUMMARY_INSTRUCTIONS
    if focus and focus.strip():
        who = "The agent (not the user) asked" if agent_focus else "The user asked"
        instructions += f"\n\n{who} the summary to focus on: {' '.join(focus.split())}"
    files = touched_files(messages)
    if files:
        instructions += "\n\nFiles the agent touched recently (most recent first): " + _names(files)
    return instructions


def in_place_summary(request: list[dict[str, Any]], history: list[dict[str, Any]],
                     focus: str | None = None, *, agent_focus: bool = False) -> list[dict[str, Any]]:
    """The summary call's messages sent in place: the conversation's next request (`request`, the
    history as sent) unchanged, then the instruction as the last user text.

    The instruction goes after everything the cache holds: a new user message after an answer, or
    a text block after the tool results of the newest user message (the API wants results first,
    and two user messages in a row are not a conversation). Pure: `request` is not modified.

    That newest user message is the one part no earlier request cached (it came after the last
    answer), so its `<system-reminder>` blocks (the plan's or memory's state) are left out for free.
    The older ones stay: they lie inside the cached prefix, and leaving them out would send the
    whole conversation again at the full price (a summary's input read at 0.1x becomes 1x, plus a
    cache write) for text the preamble already tells the model to leave out, since it is given
    again, current, after the compaction. The stored history keeps all of them.
    """
    from evo_agent.session import is_reminder_block

    text = IN_PLACE_PREAMBLE + summary_instruction(history, focus, agent_focus=agent_focus)
    if not request or request[-1].get("role") != "user":
        return [*request, {"role": "user", "content": text}]
    last = request[-1]
    content = last.get("content")
    blocks_before = [{"type": "text", "text": content}] if isinstance(content, str) and content else [
        b for b in (content if isinstance(content, list) else []) if not is_reminder_block(b)]
    return [*request[:-1], {**last, "content": [*blocks_before, {"type": "text", "text": text}]}]


def finish_summary(model_text: str, messages: list[dict[str, Any]]) -> str:
    """The summary as stored in the boundary: the model's text plus the files touched recently, sealed
    (seal_summary: no tag in it can end the summary's block), so the record holds the bytes the model is sent."""
    from evo_agent.session import seal_summary

    summary = model_text.strip()
    files = touched_files(messages)
    if files:
        summary += "\n\nRecently touched files: " + _names(files)
    return seal_summary(summary)


def cleared_count(sizes: list[int], trigger: int = CLEAR_TRIGGER_CHARS) -> int:
    """How many of the oldest tool results (sizes in order) are in cleared batches.

    Replays the results' arrival: each time one more result leaves the KEEP_RECENT_RESULTS
    kept in full, its size counts as stale if it is long; when the stale sizes not yet cleared
    reach `trigger`, everything up to there is cleared. A pure function of the history whose
    value only grows with it, so a cleared result stays cleared and live and resumed sessions agree.
    """
    cleared = stale = 0
    for leaving in range(max(0, len(sizes) - KEEP_RECENT_RESULTS)):
        if sizes[leaving] > CLEAR_RESULT_CHARS:
            stale += sizes[leaving]
        if stale >= trigger:
            cleared, stale = leaving + 1, 0
    return cleared


def micro_compact(messages: list[dict[str, Any]], *, trigger: int = CLEAR_TRIGGER_CHARS) -> list[dict[str, Any]]:
    """The history as sent: old long tool results replaced by a placeholder, in batches (cleared_count).

    Pure: the input is not modified, and the same history always gives the
    same request (so live and resumed sessions send the same thing).
    """
    positions = [
        (i, j)
        for i, m in enumerate(messages) if m.get("role") == "user" and isinstance(m.get("content"), list)
        for j, b in enumerate(m["content"]) if isinstance(b, dict) and b.get("type") == "tool_result"
    ]
    sizes = [len(tool_result_text(messages[i]["content"][j])) for i, j in positions]
    upto = cleared_count(sizes, trigger)
    to_clear = [(i, j) for k, (i, j) in enumerate(positions[:upto]) if sizes[k] > CLEAR_RESULT_CHARS]
    if not to_clear:
        return messages
    names = tool_names_by_id(messages)
    out = list(messages)
    for i, j in to_clear:
        block = out[i]["content"][j]
        size = len(tool_result_text(block))
        placeholder = dict(block, content=(
            f"[Earlier {names.get(block.get('tool_use_id'), 'tool')} output cleared to save context "
            f"({size:,} characters). Run the tool again if you need it.]"))
        content = list(out[i]["content"])
        content[j] = placeholder
        out[i] = {**out[i], "content": content}
    return out


__all__ = [
    "IN_PLACE_PREAMBLE",
    "SUMMARY_MAX_TOKENS",
    "SUMMARY_SYSTEM",
    "cleared_count",
    "finish_summary",
    "flatten_conversation",
    "history_chars",
    "in_place_summary",
    "micro_compact",
    "restored_oversized",
    "resume_window",
    "summary_instruction",
    "summary_request",
    "touched_files",
]
