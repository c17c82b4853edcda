"""What Codex itself sent when it resumed a rollout (`<rollout>.sent.json`, recorded by
tests/fixtures/codex/make_fixtures.py --probe), and what an evo-agent request carries, in one shape.

Both become a list of atoms in order: ("text", text) for each prompt or answer text, ("image", data)
for each image, ("tool_use", id) for each call, ("tool_result", id, parts) for each output with its
text and image parts exactly, and ("web_search", query). Reasoning is left out (encrypted for OpenAI,
replayable to no other provider), and so are Codex's own messages to its model (its environment and
instructions, sent again by Codex on every resume): evo-agent sends its own.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from evo_agent.session.messages import SUMMARY_PREFIX, SUMMARY_SUFFIX
from evo_agent.session.repair import INTERRUPTED_TEXT

# The user-role texts that Codex writes for its model itself (not typed by the user).
CODEX_OWN = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<permissions instructions>",
             "<skills_instructions>")
# How Codex (0.5x on) begins the summary it sends after a compaction, among the user messages it kept.
CODEX_SUMMARY = "Another language model started to solve this problem"
_WEB = re.compile(r"\[searched the web for (.*)\]$", re.S)


def sent_by_codex(path: Path) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = json.loads(path.read_text())
    return items


def _image_data(url: object) -> str:
    text = str(url)
    return text.split(",", 1)[1] if text.startswith("data:") else text


def _output_parts(output: object) -> tuple[tuple[str, str], ...]:
    if isinstance(output, str):
        return (("text", output),)
    if isinstance(output, dict):  # older rollouts: {"content": ..., "success": ...}
        return _output_parts(output.get("content"))
    parts: list[tuple[str, str]] = []
    for part in output if isinstance(output, list) else []:
        if part.get("type") in ("input_text", "output_text", "text"):
            if part["text"].strip():  # the API takes no blank text block
                parts.append(("text", part["text"]))
        elif part.get("type") == "input_image":
            parts.append(("image", _image_data(part.get("image_url"))))
    return tuple(parts)


def codex_atoms(items: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """The conversation in a Responses-API `input` Codex sent. Codex sends its compaction's summary after
    the user prompts it kept; evo-agent sends its boundary's summary first: the summary becomes
    ("summary", text) at the front. Codex answers a call that a killed process left open with "aborted"
    when it resumes; evo-agent with its own note (INTERRUPTED_TEXT): both become ("interrupted", id)."""
    out = _codex_atoms(items)
    summaries = [a for a in out if a[0] == "text" and a[1].startswith(CODEX_SUMMARY)]
    if summaries:
        out.remove(summaries[-1])
        out.insert(0, ("summary", summaries[-1][1]))
    out = _after_outputs(out)
    return [("interrupted", a[1]) if a[0] == "tool_result" and a[2] == (("text", "aborted"),) else a for a in out]


def _after_outputs(atoms: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """A hook's context as ("text", …) after the tool outputs that follow it: Codex sends a PostToolUse hook's
    context between the call and its output, where an Anthropic-style request can hold no text."""
    out = list(atoms)
    for i in range(len(out) - 1, -1, -1):
        if out[i][0] == "hook":
            j = i
            while j + 1 < len(out) and out[j + 1][0] == "tool_result":
                out[j], out[j + 1] = out[j + 1], out[j]
                j += 1
            out[j] = ("text", out[j][1])
    return out


def _codex_atoms(items: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for item in items:
        kind = item.get("type")
        # (a developer message in a probe is a hook's context: the probe keeps no other)
        if (kind == "message" and item.get("role") in ("user", "assistant", "developer")) or kind == "agent_message":
            for part in item.get("content") or []:
                text = part.get("text")
                if isinstance(text, str) and text.strip() and not text.lstrip().startswith(CODEX_OWN):
                    out.append(("hook" if item.get("role") == "developer" else "text", text.strip()))
                elif part.get("type") == "input_image":
                    out.append(("image", _image_data(part.get("image_url"))))
        elif kind in ("function_call", "custom_tool_call", "local_shell_call", "tool_search_call"):
            out.append(("tool_use", item.get("call_id")))
        elif kind == "tool_search_output":  # the tools found, which evo-agent gives as their JSON
            out.append(("tool_result", item.get("call_id"), (("text", json.dumps(item.get("tools"), ensure_ascii=False)),)))
        elif kind in ("function_call_output", "custom_tool_call_output"):
            out.append(("tool_result", item.get("call_id"), _output_parts(item.get("output"))))
        elif kind == "compaction":  # the server's encrypted summary: evo-agent keeps what it replaced instead
            out.append(("sealed",))
        elif kind == "web_search_call":
            out.append(("web_search", repr((item.get("action") or {}).get("query"))))
    return out


def _block_parts(content: object) -> tuple[tuple[str, str], ...]:
    if isinstance(content, str):
        return (("text", content),)
    parts: list[tuple[str, str]] = []
    for block in content if isinstance(content, list) else []:
        if block.get("type") == "text":
            parts.append(("text", block["text"]))
        elif block.get("type") == "image":
            source = block.get("source", {})
            parts.append(("image", source.get("data") or source.get("url")))
    return tuple(parts)


def evo_atoms(messages: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """The conversation in the `messages` evo-agent sent, in the atoms of `codex_atoms`."""
    out: list[tuple[Any, ...]] = []
    for message in messages:
        content = message.get("content")
        for block in [{"type": "text", "text": content}] if isinstance(content, str) else content or []:
            kind = block.get("type")
            text = block.get("text", "")
            if kind == "text" and text.startswith(SUMMARY_PREFIX) and text.endswith(SUMMARY_SUFFIX):
                out.append(("summary", text[len(SUMMARY_PREFIX):-len(SUMMARY_SUFFIX)].strip()))
            elif kind == "text" and text.strip():
                web = _WEB.match(text.strip())
                out.append(("web_search", web.group(1)) if web else ("text", text.strip()))
            elif kind == "image":
                source = block.get("source", {})
                out.append(("image", source.get("data") or source.get("url")))
            elif kind == "tool_use":
                out.append(("tool_use", block["id"]))
            elif kind == "tool_result" and block.get("content") == INTERRUPTED_TEXT:
                out.append(("interrupted", block["tool_use_id"]))
            elif kind == "tool_result":
                out.append(("tool_result", block["tool_use_id"], _block_parts(block.get("content"))))
    return out
