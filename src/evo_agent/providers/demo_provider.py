"""The demo provider: offline, deterministic, no network, and says so.

It lets anyone try evo-agent (sessions, tools, resume, the picker) without an API
key. It understands a handful of plain requests and calls the real tools for them:

    list the files          -> glob {"pattern": "**/*"}   (bash `ls` when there is no glob tool)
    read <path>             -> read_file {"path": ...}
    run <command>           -> bash {"command": ...}
    search for <text>       -> grep {"pattern": ...}
    delegate <text>         -> task {description, prompt, subagent_type: "general-purpose"}
    summarize ...           -> a short summary of the conversation (compaction's request: flattened without
                               tools, or `text_only` after the conversation itself)

After a tool ran it answers with a short text summarising the tool output. Same input,
same output: ids and token counts are derived from the conversation itself.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Callable
from typing import Any

from evo_agent.session import (
    SUMMARY_PREFIX,
    content_blocks,
    content_text,
    is_reminder_block,
    text_block,
    tool_names_by_id,
    tool_result_text,
    tool_results,
)

from .base import END_TURN, TOOL_USE, ModelResponse, ProviderCancelled, StreamCallbacks, TextDelta, ToolNamed
from .registry import default_model

DEMO_LABEL = "[demo provider — offline, no model is called]"
SUMMARY_LINES = 8
LINE_CHARS = 200
Answer = tuple[str, list[tuple[str, dict[str, Any]]]]  # (text, [(tool name, input), ...])

HELP = (
    "I am the offline demo provider, so I only understand a few plain requests:\n"
    "- list the files\n"
    "- read PATH\n"
    "- run COMMAND\n"
    "- search for TEXT\n"
    "- delegate TASK (to a subagent)\n"
    "\n"  # Markdown: without it the sentence continues the last item; `<path>` was read as an HTML tag, unshown
    "Set ANTHROPIC_API_KEY (or use --provider anthropic) to talk to a real model."
)

_LIST = re.compile(r"^(?:please\s+)?(?:list|show)(?:\s+(?:me|all|of))*(?:\s+the)?\s+files\b", re.I)
_READ = re.compile(r"^(?:please\s+)?(?:read|open|show|cat)\s+(?:the\s+file\s+)?(?P<path>\S+)\s*$", re.I)
_RUN = re.compile(r"^(?:please\s+)?run\s+(?P<command>.+)$", re.I | re.S)
_SEARCH = re.compile(r"^(?:please\s+)?(?:search|grep|look)(?:\s+for)?\s+(?P<text>.+)$", re.I | re.S)
_DELEGATE = re.compile(r"^(?:please\s+)?delegate\s*:?\s+(?P<text>.+)$", re.I | re.S)
_SUMMARY = re.compile(r"\bsummar(?:y|ise|ize|izing|ising)\b", re.I)
# The agent's compaction request (agent/compaction.py):
#   "<conversation>\n[user]\n…\n\n[tool call: bash]\n…</conversation>"
_FLATTENED = re.compile(r"<conversation>\n(.*)\n</conversation>", re.S)
_PART = re.compile(r"^\[([^\]\n]+)\]\n(.*?)(?=\n\n\[[^\]\n]+\]\n|\Z)", re.S | re.M)


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "`'\"":
        value = value[1:-1].strip()
    return value


def _text_of(content: object) -> str:
    """What was typed: reminders evo-agent put in the message (the plan's state, …) are not the request."""
    if isinstance(content, list):
        content = [b for b in content if not is_reminder_block(b)]
    return content_text(content, "\n").strip()


def _head(text: str) -> str:
    lines = text.splitlines() or [""]
    shown = [line if len(line) <= LINE_CHARS else line[: LINE_CHARS - 1] + "…" for line in lines[:SUMMARY_LINES]]
    out = "\n".join("    " + line for line in shown)
    if len(lines) > SUMMARY_LINES:
        out += f"\n    … ({len(lines) - SUMMARY_LINES} more lines)"
    return out


def _chunks(text: str, parts: int = 4) -> list[str]:
    size = max(1, -(-len(text) // parts))
    return [text[i : i + size] for i in range(0, len(text), size)]


def _is_summary_request(messages: list[dict[str, Any]], tool_names: set[str]) -> bool:
    """Compaction's request: its summary is stored, so it carries no demo label."""
    last = messages[-1] if messages and isinstance(messages[-1], dict) else {}
    return not tool_names and bool(_FLATTENED.search(_text_of(last.get("content"))))


class DemoProvider:
    name = "demo"

    def __init__(self, model: str | None = None) -> None:
        self.model = model or default_model(self.name)

    def complete(
        self,
        *,
        system: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        max_tokens: int = 8192,
        callbacks: StreamCallbacks | None = None,
        cancel: threading.Event | None = None,
        cache_key: str | None = None,  # noqa: ARG002 - nothing to cache offline
        text_only: bool = False,
    ) -> ModelResponse:
        callbacks = callbacks or StreamCallbacks()
        if cancel is not None and cancel.is_set():
            raise ProviderCancelled()
        tool_names = {name for t in tools or [] if isinstance(t, dict) and isinstance(name := t.get("name"), str)}
        uses: list[tuple[str, dict[str, Any]]]
        if text_only:  # compaction's summary call sent in place of the next request: the instruction is last
            text, uses = self._summarise_conversation(messages), []
        else:
            text, uses = self._answer(messages, tool_names)
        first_answer = not any(m.get("role") == "assistant" for m in messages if isinstance(m, dict))
        if first_answer and not text_only and not _is_summary_request(messages, tool_names):
            text = f"{DEMO_LABEL}\n{text}" if text else DEMO_LABEL

        digest = hashlib.sha256(_dumps(messages).encode()).hexdigest()[:6]
        content: list[dict[str, Any]] = [text_block(text)] if text else []
        for i, (name, tool_input) in enumerate(uses):
            tool_id = f"toolu_demo_{len(messages):04d}_{i}_{digest}"
            content.append({"type": "tool_use", "id": tool_id, "name": name, "input": tool_input})

        for piece in _chunks(text) if text else []:
            if cancel is not None and cancel.is_set():
                raise ProviderCancelled()
            callbacks.emit(TextDelta(piece))
        for block in content:
            if block["type"] == "tool_use":
                callbacks.emit(ToolNamed(block["id"], block["name"]))

        return ModelResponse(
            message={"role": "assistant", "content": content},
            input_tokens=len(_dumps(messages)) // 4,
            output_tokens=max(1, len(_dumps(content)) // 4),
            stop_reason=TOOL_USE if uses else END_TURN,
        )

    # ------------------------------------------------------------------ the "model"
    def _answer(self, messages: list[dict[str, Any]], tool_names: set[str]) -> Answer:
        last = next((m for m in reversed(messages) if isinstance(m, dict) and m.get("role") == "user"), None)
        if last is None:
            return HELP, []
        results = tool_results(last)
        if results:
            return self._summarise_results(messages, results), []
        prompt = _text_of(last.get("content"))
        if not tool_names and _SUMMARY.search(prompt):
            flat = _FLATTENED.search(prompt)
            if flat:
                return self._summarise_flattened(flat.group(1)), []
            return self._summarise_conversation(messages), []
        return self._understand(prompt, tool_names)

    def _summarise_results(self, messages: list[dict[str, Any]], results: list[dict[str, Any]]) -> str:
        names = tool_names_by_id(messages)
        parts = []
        for block in results:
            tid = block.get("tool_use_id")
            name = names.get(tid, "tool") if isinstance(tid, str) else "tool"
            output = tool_result_text(block).strip()
            if block.get("is_error"):
                parts.append(f"The `{name}` tool reported an error:\n{_head(output or '(no details)')}")
            elif not output:
                parts.append(f"The `{name}` tool finished with no output.")
            else:
                count = len(output.splitlines())
                parts.append(f"The `{name}` tool returned {count} line{'s' if count != 1 else ''}:\n{_head(output)}")
        return "\n\n".join(parts)

    def _summarise_flattened(self, conversation: str) -> str:
        """A summary of the agent's compaction request: the conversation arrives as tagged text."""
        asked, tools_used = [], []
        for part in _PART.finditer(conversation):
            tag, body = part.group(1), part.group(2).strip()
            if tag == "user" and body and not body.startswith(SUMMARY_PREFIX):
                asked.append(body.splitlines()[0][:LINE_CHARS])
            elif tag.startswith("tool call: "):
                tools_used.append(tag[len("tool call: "):])
        lines = [f"Demo summary of {len(asked)} request{'s' if len(asked) != 1 else ''} "
                 f"and {len(tools_used)} tool call{'s' if len(tools_used) != 1 else ''}."]
        if asked:
            lines.append("The user asked: " + "; ".join(asked[-10:]))
        if tools_used:
            lines.append("Tools used: " + ", ".join(sorted(set(tools_used))))
        return "\n".join(lines)

    def _summarise_conversation(self, messages: list[dict[str, Any]]) -> str:
        prompts, tools_used = [], []
        for message in messages:
            if not isinstance(message, dict):
                continue
            for b in content_blocks(message.get("content")):
                if message.get("role") == "user" and b.get("type") == "text" and b.get("text"):
                    first = b["text"].strip().splitlines()[0] if b["text"].strip() else ""
                    if first and not first.startswith(SUMMARY_PREFIX):
                        prompts.append(first[:LINE_CHARS])
                if message.get("role") == "assistant" and b.get("type") == "tool_use":
                    tools_used.append(b.get("name", "tool"))
        # the last user text is the summary request itself
        asked = prompts[:-1] if prompts else []
        lines = [f"Demo summary of {len(messages)} messages."]
        if asked:
            lines.append("The user asked: " + "; ".join(asked[-10:]))
        if tools_used:
            lines.append("Tools used: " + ", ".join(sorted(set(tools_used))))
        return "\n".join(lines)

    def _understand(self, prompt: str, tool_names: set[str]) -> Answer:
        line = prompt.strip().rstrip(".!?").strip()
        for pattern, whole_prompt, answer in _REQUESTS:
            m = pattern.match(prompt.strip() if whole_prompt else line)
            if m:
                return answer(m, tool_names)
        echo = " ".join(prompt.split())
        if len(echo) > LINE_CHARS:
            echo = echo[: LINE_CHARS - 1] + "…"
        said = f"You said: «{echo}»\n\n" if echo else ""
        return said + HELP, []


# ---------------------------------------------------------------------- the requests it understands

def _unavailable(tool: str) -> Answer:
    return f"I would use the `{tool}` tool for that, but it is not available here.", []


def _list_files(_m: re.Match[str], tool_names: set[str]) -> Answer:
    if "glob" in tool_names:
        return "Listing the files.", [("glob", {"pattern": "**/*"})]
    if "bash" in tool_names:
        return "Listing the files.", [("bash", {"command": "ls -la"})]
    return _unavailable("glob")


def _delegate(m: re.Match[str], tool_names: set[str]) -> Answer:
    task = _unquote(m.group("text"))
    if "task" not in tool_names:
        return "I cannot delegate from here: the `task` tool is not available (a subagent cannot start another).", []
    words = task.split()
    description = " ".join(words[:6])[:60] + ("…" if len(words) > 6 else "")
    return (
        "Delegating to a general-purpose subagent.",
        [("task", {"description": description, "prompt": task, "subagent_type": "general-purpose"})],
    )


def _run(m: re.Match[str], tool_names: set[str]) -> Answer:
    command = _unquote(m.group("command"))
    if "bash" not in tool_names:
        return _unavailable("bash")
    return f"Running `{command}`.", [("bash", {"command": command})]


def _search(m: re.Match[str], tool_names: set[str]) -> Answer:
    needle = _unquote(m.group("text"))
    if "grep" not in tool_names:
        return _unavailable("grep")
    try:
        re.compile(needle)
        pattern = needle
    except re.error:
        pattern = re.escape(needle)
    return f"Searching for {needle!r}.", [("grep", {"pattern": pattern})]


def _read(m: re.Match[str], tool_names: set[str]) -> Answer:
    path = _unquote(m.group("path"))
    if "read_file" not in tool_names:
        return _unavailable("read_file")
    return f"Reading {path}.", [("read_file", {"path": path})]


# In order; `whole_prompt`: matched against the prompt as typed (a command may end in "." or "?"),
# the others against it without its final punctuation.
_REQUESTS: list[tuple[re.Pattern[str], bool, Callable[[re.Match[str], set[str]], Answer]]] = [
    (_LIST, False, _list_files),
    (_DELEGATE, False, _delegate),
    (_RUN, True, _run),
    (_SEARCH, False, _search),
    (_READ, False, _read),
]
