"""Claude Code (2.1.x) transcripts: `~/.claude/projects/<cwd, "/" and "." as "-">/<uuid>.jsonl`.

What becomes what:
- `user`/`assistant` records carry API messages. Claude Code writes one line per content block of
  a response (each repeating the response's usage); lines of one response (same `message.id`) are
  merged into one assistant message. Consecutive messages of one role are merged too, as the API
  would see them.
- `isMeta` user records and local-command records (`<command-name>`, `<local-command-stdout>`,
  the caveat) are the UI's, not the conversation: skipped (not counted as "not understood"); but the
  `isMeta` record a slash command of prompts writes after it (`/review app.py` → "Review the file app.py…")
  is the request the model answered: a user message.
- A `system` record with subtype `compact_boundary` plus the next `isCompactSummary` user record
  become one evo-agent `compact_boundary` whose summary is the source's own summary text (so a
  resume sends it wrapped as evo-agent's summary message), followed again by the messages Claude
  Code kept (`compactMetadata.preservedMessages`), as Claude Code sends them after a compaction.
  `/rewind`'s "Summarize from here" keeps the start and summarises what came after it: its summary stays a
  user message after the kept start (what it summarised is off the branch), where Claude Code sends it.
- A subagent (`<uuid>/subagents/agent-<id>.jsonl`, its `.meta.json` naming the `toolUseId`)
  becomes a sidechain file with `subagent_start`/`subagent_end` before its tool_result.
- Tool names map to evo-agent's where there is an equivalent (`Bash`→`bash`, `Read`→`read_file`,
  `Agent`/`Task`→`task`, ...; `file_path` becomes `path`); others keep their names.
- A `queued_command` attachment (2.1.3xx) is something the model read in the middle of a turn: a prompt
  the user typed while it worked (`commandMode` "prompt": the user's own words) or a background agent's
  completion notice (the text Claude Code rendered for the model, else its prompt): a user message there.
  So is what a prompt's @-mention attached (a file, a directory's listing, an MCP resource: the text
  Claude Code rendered for the model).
- What the user's hooks told the model is a user message where the model read it: a hook's output or
  `additionalContext` (an attachment: the text Claude Code rendered, without its `<system-reminder>` tags), and
  a Stop hook's feedback that refused a stop (an `isMeta` `hookText` user record, with the lead Claude Code
  sends before it): the model's next answer is its reply.
- Every other record type (other attachments: Claude Code's own context, queue-operation,
  file-history-snapshot, last-prompt, mode, the request log `api-request*`, summary, ...) is UI or
  bookkeeping: skipped and counted by type.
Unreadable lines (a torn last line after a kill) are counted and skipped; a trailing tool_use
without its result is left for the usual resume repair.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Container, Iterable, Iterator
from pathlib import Path
from typing import Any

from evo_agent.session import blocks, content_text, seal_summary, text_block, tool_uses

from .model import (
    Compaction,
    Event,
    ImportedSession,
    Message,
    Subagent,
    head_records,
    read_lines,
    recorded_within,
    stamp_of,
    too_deep,
)

AGENT = "claude-code"
TOOL_NAMES = {"Bash": "bash", "Read": "read_file", "Write": "write_file", "Edit": "edit_file", "Glob": "glob",
              "Grep": "grep", "Agent": "task", "Task": "task"}
_UI_TEXT = re.compile(r"\A\s*<(command-name|command-message|local-command-stdout|local-command-stderr|"
                      r"local-command-caveat)>")
# Claude Code's own bookkeeping (the record types its session loader reads besides messages, 2.1.x).
_QUIET_TYPES = {"attachment", "queue-operation", "file-history-snapshot", "last-prompt", "mode", "permission-mode",
                "summary", "custom-title", "ai-title", "tag", "relocated", "agent-name", "agent-color",
                "agent-setting", "isolation-latch", "worktree-state", "pr-link", "bridge-session",
                "attribution-snapshot", "content-replacement", "fork-context-ref", "marble-origami-commit",
                "marble-origami-snapshot", "marble-origami-reset", "progress",
                # 2.1.3xx: the log of every request (its shape, message blobs by hash), tools and cost so far,
                # and the other kinds its session loader reads besides messages (2.1.332's own table)
                "api-request", "api-request-blob", "api-request-shape", "api-request-resumed", "tools-used",
                "atis-latch", "cost-state", "artifact-autoreact-ledger", "artifact-comment-monitor", "continued-in",
                "data-flow-incomplete", "data-flow-records", "derived-from", "dev-mods", "ended-by-model",
                "file-history-delta", "frame-link", "history-suppression", "memory-mode", "observer-ref",
                "resume-head-vouch", "session-owner"}


_FOLDER_MAX = 200  # Claude Code shortens a longer folder name and adds a hash of the whole path


def project_folder(cwd: str | os.PathLike[str]) -> str:
    """The folder name Claude Code keeps a directory's sessions under: every UTF-16 code unit of the path
    that is not an ASCII letter or digit becomes "-" (`my_app`, `my.app` and `my-app` all give `-…-my-app`);
    past 200 units, the first 200, "-", and the base-36 of the path's 32-bit string hash (its
    `replace(/[^a-zA-Z0-9]/g, "-")` and `Math.abs(hash).toString(36)`, 2.1.x)."""
    units = str(cwd).encode("utf-16-le", "surrogatepass")
    codes = [int.from_bytes(units[i:i + 2], "little") for i in range(0, len(units), 2)]
    name = "".join(chr(c) if c < 128 and chr(c).isalnum() else "-" for c in codes)
    if len(name) <= _FOLDER_MAX:
        return name
    digest = 0
    for code in codes:
        digest = (digest * 31 + code) & 0xFFFFFFFF
    digest = abs(digest - (1 << 32) if digest >= 1 << 31 else digest)
    return f"{name[:_FOLDER_MAX]}-{_base36(digest)}"


def _base36(number: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        number, digit = divmod(number, 36)
        out = digits[digit] + out
        if not number:
            return out


def claude_home() -> Path:
    return Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude")


def find_sources(project_dir: Path) -> list[Path]:
    """This project's Claude Code transcripts (sessions recorded in it or below it), oldest first.

    A folder's name cannot tell `/work/app/x` from `/work/app-x` or `/work/app_x`: a transcript is this
    project's when the directory it recorded (`cwd`) is the project or below it; one that records none,
    when it lies in the project's own folder."""
    root = claude_home() / "projects"
    own = project_folder(project_dir)
    stem = own[:_FOLDER_MAX]
    try:
        folders = [p for p in root.iterdir() if p.name == own or p.name.startswith(stem + "-")]
    except OSError:
        return []
    files = [f for folder in folders for f in folder.glob("*.jsonl")
             if f.is_file() and _recorded_here(f, project_dir, folder.name == own)]
    return sorted(files, key=lambda f: f.stat().st_mtime)


def _recorded_here(path: Path, project_dir: Path, own_folder: bool) -> bool:
    """Whether the transcript at `path` is a session recorded in `project_dir` or a directory below it (its
    `cwd`). Not an empty transcript (2.0.x leaves one for each process that resumed another session), nor a
    subagent's (2.0.x keeps them beside the session, `agent-<id>.jsonl`, its warm-up agents' among them: their
    messages are a sidechain, `isSidechain`)."""
    records = head_records(path, 50)
    first = next((r for r in records if r.get("type") in ("user", "assistant")), None)
    if first is not None and first.get("isSidechain") is True:
        return False
    if not records:  # listed when it holds something, which the import then says it cannot read
        try:
            return path.stat().st_size > 0 and own_folder
        except OSError:
            return False
    for record in records:
        if isinstance(record.get("cwd"), str):
            return recorded_within(record["cwd"], project_dir)
    return own_folder


def source_id_of(path: Path, look: int = 50) -> str:
    """The session id Claude Code recorded first in a transcript (its file name when none is found)."""
    for record in head_records(path, look):
        if isinstance(record.get("sessionId"), str):
            session_id: str = record["sessionId"]
            return session_id
    return path.stem


def _lines(path: Path, imported: ImportedSession) -> Iterator[dict[str, Any]]:
    return read_lines(path, imported.skipped)


def _map_block(block: object) -> dict[str, Any] | None:
    if not isinstance(block, dict) or not isinstance(block.get("type"), str):
        return None
    btype = block["type"]
    if btype == "text":
        text = block.get("text")
        if not isinstance(text, str) or not text.strip() or _UI_TEXT.match(text):
            return None
        return {"type": "text", "text": text}
    if btype == "tool_use":
        name = block.get("name")
        if not isinstance(name, str):
            name = "tool"
        raw_input = block.get("input")
        tool_input = dict(raw_input) if isinstance(raw_input, dict) and not too_deep(raw_input) else {}
        if "file_path" in tool_input and "path" not in tool_input:
            tool_input["path"] = tool_input.pop("file_path")
        return {"type": "tool_use", "id": str(block.get("id")), "name": TOOL_NAMES.get(name, name), "input": tool_input}
    if btype == "tool_result":
        out = {"type": "tool_result", "tool_use_id": str(block.get("tool_use_id")), "content": _result_content(block)}
        if block.get("is_error"):
            out["is_error"] = True
        return out
    if btype == "thinking":
        thought = block.get("thinking")
        out = {"type": "thinking", "thinking": thought if isinstance(thought, str) else ""}
        if isinstance(block.get("signature"), str):
            out["signature"] = block["signature"]
        return out
    if btype in ("redacted_thinking", "image", "document") and not too_deep(block, 8):
        return {k: v for k, v in block.items() if k != "cache_control"}
    return None


def _invokes_command(message: dict[str, Any]) -> bool:
    """Whether a user message is a slash command as typed (`<command-name>/review</command-name>…`): Claude Code
    writes the prompt a command of prompts expands to (a custom `.claude/commands/*.md`, a skill, `/init`) as the
    next record, `isMeta`, and sends it: the request the model answers."""
    content = message.get("content")
    text = content if isinstance(content, str) else next(
        (b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"), None) \
        if isinstance(content, list) else None
    return isinstance(text, str) and _COMMAND_TEXT.match(text) is not None


_COMMAND_TEXT = re.compile(r"\A\s*<command-(?:name|message)>")
_FEEDBACK_TEXT = re.compile(r"\A\s*\w+ hook (?:feedback|blocking error)")


def _hook_feedback(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The text of an `isMeta` user record a hook wrote (a Stop hook's feedback, a blocking error), with the
    lead Claude Code sends before it ([] for its other notes): the model goes on because of it. 2.1.3xx marks
    such a record `hookText`; an older one is known by its words ("Stop hook feedback:")."""
    message = record.get("message")
    if not isinstance(message, dict):
        return []
    said = [block for block in _content(message) if block["type"] == "text"]
    if record.get("hookText") is not True and not (said and _FEEDBACK_TEXT.match(said[0]["text"])):
        return []
    lead = record.get("hookTextLead")
    if isinstance(lead, str) and lead.strip() and said:
        said[0] = text_block(f"{lead.strip()}\n{said[0]['text']}")
    return said


# What a tool result's parts keep: a Read of a PDF gives a `document` (the PDF itself, base64), with its title.
_RESULT_PART_KEYS = frozenset({"type", "text", "source", "title", "context"})


def _result_part(part: dict[str, Any]) -> dict[str, Any]:
    """A part of a tool result as evo-agent keeps it. ToolSearch (2.1.3xx: deferred tools, MCP tools among them)
    answers with `tool_reference`s, which the API expands into the tools' definitions: a line naming each."""
    if part["type"] == "tool_reference":
        return {"type": "text", "text": f"Tool loaded: {part.get('tool_name')}"}
    return {k: v for k, v in part.items() if k in _RESULT_PART_KEYS}


def _result_content(block: dict[str, Any]) -> object:
    content = block.get("content")
    if isinstance(content, list):
        return [_result_part(part) for part in content if isinstance(part, dict)
                and part.get("type") in ("text", "image", "document", "tool_reference") and not too_deep(part, 8)]
    return content if isinstance(content, str) else ""


def _content(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [mapped for mapped in (_map_block(b) for b in blocks(message)) if mapped is not None]


# Attachments the user asked for, by an @-mention in a prompt: what Claude Code rendered for the model (a
# file's or a directory's listing, an MCP resource) is part of the conversation, as the prompt is.
_MENTIONED = frozenset({"file", "directory", "mcp_resource", "pdf_reference"})


# Attachments holding what the user's hooks told the model (2.1.3xx): a UserPromptSubmit or SessionStart hook's
# output, a hook's `additionalContext`. Claude Code renders them for the model (`rendered`), in a system-reminder;
# one it does not send (a PostToolUse hook's plain success) has no rendering.
_HOOK_OUTPUTS = frozenset({"hook_success", "hook_additional_context", "hook_blocking_error",
                           "hook_stopped_continuation", "async_hook_response"})
_REMINDER = re.compile(r"\A\s*<system-reminder>\n?(.*?)\n?</system-reminder>\s*\Z", re.DOTALL)


def _unwrapped(text: str) -> str:
    """`text` without the `<system-reminder>` tags Claude Code wraps its notes for the model in."""
    match = _REMINDER.match(text)
    return match.group(1).strip() if match else text


def _rendered_texts(record: dict[str, Any]) -> list[object]:
    rendered = record.get("rendered")
    return [entry.get("content") for entry in rendered if isinstance(entry, dict)] if isinstance(rendered, list) else []


# The hook events whose plain output Claude Code sends the model (2.1.x): a tool's hook's success stays in the UI.
_PROMPT_HOOKS = ("SessionStart", "UserPromptSubmit", "UserPromptExpansion")


def _hook_blocks(record: dict[str, Any]) -> list[dict[str, Any]]:
    """What a hook's attachment told the model: the text Claude Code rendered for it (2.1.3xx), untagged; an
    older attachment has no rendering, and Claude Code built the text from it as `_hook_text` does."""
    rendered = [text for text in _rendered_texts(record) if isinstance(text, str)]
    if "rendered" not in record:
        rendered = [_hook_text(record["attachment"])]
    return [text_block(_unwrapped(text)) for text in rendered if _unwrapped(text)]


def _hook_text(hook: dict[str, Any]) -> str:
    """The text Claude Code (2.1.x) sends the model for a hook's attachment ("" for none)."""
    kind, name = hook.get("type"), hook.get("hookName")
    content = hook.get("content")
    if kind == "hook_additional_context" and isinstance(content, list) and content:
        return f"{name} hook additional context: " + "\n".join(str(each) for each in content)
    if kind == "hook_success" and hook.get("hookEvent") in _PROMPT_HOOKS and isinstance(content, str) and content:
        return f"{name} hook success: {content}"
    blocking = hook.get("blockingError")
    if kind == "hook_blocking_error" and isinstance(blocking, dict):
        return (f"{name} hook blocking error from command: \"{blocking.get('command')}\": "
                f"{blocking.get('blockingError')}")
    if kind == "hook_stopped_continuation" and isinstance(hook.get("message"), str):
        return f"{name} hook stopped continuation: {hook['message']}"
    return ""


def _attached_blocks(record: dict[str, Any]) -> list[dict[str, Any]]:
    """What an attachment put before the model that is the conversation's, as user content ([] for Claude
    Code's own context): a prompt typed while the model worked is the user's own words (`queued_command`
    "prompt"); a background agent's completion notice, what an @-mention attached and what the user's hooks
    said are the text Claude Code rendered for the model (a notice without one: its prompt)."""
    attachment = record.get("attachment")
    if not isinstance(attachment, dict):
        return []
    kind = attachment.get("type")
    if kind in _HOOK_OUTPUTS:
        return _hook_blocks(record)
    if kind not in _MENTIONED and kind != "queued_command":
        return []
    prompt = attachment.get("prompt")
    if kind in _MENTIONED or attachment.get("commandMode", "prompt") != "prompt":
        said = [block for text in _rendered_texts(record) if isinstance(text, (str, list))
                for block in _user_blocks(text)]
        if said or kind in _MENTIONED:
            return said
    return _user_blocks(prompt) if isinstance(prompt, (str, list)) else []


def _user_blocks(content: str | list[Any]) -> list[dict[str, Any]]:
    """The text and images of `content`: what a prompt can hold (never a tool call in a user message)."""
    return [block for block in _content({"content": content}) if block["type"] in ("text", "image")]


def _tokens(usage: object) -> dict[str, Any]:
    if not isinstance(usage, dict):
        return {}
    out = {}
    for key in ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"):
        if isinstance(usage.get(key), int):
            out[key] = usage[key]
    return out


def _only_results(message: Message) -> bool:
    content = message.message["content"]
    return message.message["role"] == "user" and all(b.get("type") == "tool_result" for b in content)


class _Builder:
    """Merges Claude Code's per-block lines into API messages, one role at a time.

    One response is written a line per content block, and with parallel tool calls a tool's result
    can be written between two blocks of the response that called it: a block of the response just
    before those results joins it (the results stay after it), as the model sent it.
    """

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self._response_id: str | None = None

    def add(self, role: str, blocks: list[dict[str, Any]], timestamp: str | None, tokens: dict[str, Any],
            response_id: str | None) -> None:
        if not blocks:
            return
        last = self.messages[-1] if self.messages else None
        if (role == "assistant" and response_id is not None and response_id == self._response_id
                and last is not None and _only_results(last) and len(self.messages) >= 2
                and self.messages[-2].message["role"] == "assistant"):
            self.messages[-2].message["content"].extend(blocks)
            if tokens:
                self.messages[-2].tokens = dict(tokens)
            return
        if last is not None and last.message["role"] == role:
            last.message["content"].extend(blocks)
            if role == "assistant" and response_id != self._response_id:
                for key, value in tokens.items():  # another response merged in: its tokens were spent too
                    last.tokens[key] = last.tokens.get(key, 0) + value
            elif tokens:
                last.tokens = dict(tokens)  # the same response's usage, repeated per line: keep the last
        else:
            self.messages.append(Message({"role": role, "content": list(blocks)}, timestamp, dict(tokens)))
        if role == "assistant":
            self._response_id = response_id

    def finished(self, everything: bool = False) -> list[Message]:
        """Messages that can no longer grow (all but the last, or all of them), removed from the builder.

        An assistant message followed only by tool results is held too: its response may go on."""
        keep = 1
        if len(self.messages) >= 2 and _only_results(self.messages[-1]) \
                and self.messages[-2].message["role"] == "assistant":
            keep = 2
        cut = len(self.messages) if everything else max(0, len(self.messages) - keep)
        done, self.messages = self.messages[:cut], self.messages[cut:]
        return done


MAX_TREE = 1_000_000   # lines in the branch map (~170 bytes each); past it every branch is kept, in file order
MAX_HELD = 50_000      # lines held back (written before their parent, or a 1.x subagent's); past it they go on


class _Tree:
    """Claude Code's records form a tree (`parentUuid`): a rewind or an edited prompt starts a branch
    and the abandoned one stays in the file. The first pass keeps only this map (uuid -> parent) to
    pick the branch the user last saw: the ancestors of its end (`leaf`), plus what Claude Code
    writes as siblings of that path: the other lines of a response (parallel tool calls, each line
    parented on the one before) and the tool results parented on those lines.
    """

    def __init__(self) -> None:
        self.parent: dict[str, str | None] = {}
        self.jump: dict[str, str] = {}         # a record whose parent is unknown -> the message written before it
        self.response: dict[str, str] = {}     # assistant record -> its response (message.id)
        self.results: set[str] = set()         # user records holding only tool results
        self.messages: dict[str, None] = {}    # the messages' uuids, in file order
        self.repeated: set[str] = set()        # uuids written more than once
        self.calls: dict[str, tuple[str, ...]] = {}  # assistant record -> the ids of the tool calls it holds
        self.answered: set[str] = set()        # ids of the tool calls a result answers
        self.answers: dict[str, tuple[str, ...]] = {}  # result record -> the ids of the calls it answers
        self.dropped: set[str] = set()         # lines of calls Claude Code dropped unanswered (`_dropped`)
        self.overflow = False
        self._last_message: str | None = None

    def add(self, record: dict[str, Any]) -> None:
        uuid = record.get("uuid")
        if not isinstance(uuid, str) or record.get("isSidechain") is True or self.overflow:
            return
        if uuid in self.parent:  # the same line again (a file appended to itself by a copy or a sync)
            self.repeated.add(uuid)
            return
        if len(self.parent) >= MAX_TREE:
            self.overflow = True
            self.parent, self.jump, self.response, self.results, self.messages = {}, {}, {}, set(), {}
            self.repeated, self.calls, self.answered, self.answers = set(), {}, set(), {}
            return
        parent = record.get("parentUuid")
        if not isinstance(parent, str):
            parent = record.get("logicalParentUuid")  # a compact_boundary starts anew but names its past
        parent = parent if isinstance(parent, str) else None
        self.parent[uuid] = parent
        if (parent is None or parent not in self.parent) and self._last_message is not None:
            self.jump[uuid] = self._last_message  # a broken chain goes on from the line written before
        rtype = record.get("type")
        message = record.get("message")
        attachment = record.get("attachment")
        if rtype == "attachment" and isinstance(attachment, dict) and attachment.get("type") == "queued_command" \
                and _attached_blocks(record):
            # a prompt typed mid-turn (stamped when typed, before the tool result it follows): a message
            self._last_message = uuid
            self.messages[uuid] = None
            return
        if rtype not in ("user", "assistant") or not isinstance(message, dict):
            return
        self._last_message = uuid
        self.messages[uuid] = None
        if rtype == "assistant" and isinstance(message.get("id"), str):
            self.response[uuid] = message["id"]
        content = message.get("content")
        if (rtype == "user" and isinstance(content, list) and content
                and all(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)):
            self.results.add(uuid)
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                self.calls[uuid] = (*self.calls.get(uuid, ()), block["id"])
            elif isinstance(block, dict) and block.get("type") == "tool_result" \
                    and isinstance(block.get("tool_use_id"), str):
                self.answered.add(block["tool_use_id"])
                if uuid in self.results:
                    self.answers[uuid] = (*self.answers.get(uuid, ()), block["tool_use_id"])

    def _up(self, uuid: str) -> str | None:
        """The record `uuid` goes on from: its parent, or the message written before it when its parent is gone."""
        parent = self.parent.get(uuid)
        return parent if parent in self.parent else self.jump.get(uuid)

    def _message_at_or_above(self, start: str | None, memo: dict[str, str | None]) -> str | None:
        """The nearest message at `start` or above it (Claude Code's own lines between are passed over)."""
        path: list[str] = []
        on_path: set[str] = set()
        uuid, found = start, None
        while uuid is not None:
            if uuid in memo:
                found = memo[uuid]
                break
            if uuid in self.messages:
                found = uuid
                break
            if uuid in on_path:  # a cycle in a damaged file
                break
            path.append(uuid)
            on_path.add(uuid)
            uuid = self._up(uuid)
        for each in path:
            memo[each] = found
        return found

    def leaf(self) -> str | None:
        """The end of the conversation the user last saw: the last message written that no message follows.
        Claude Code (2.1.3xx) resumes from its last row too. Not the newest stamp: a clock set back mid-session
        (or one line stamped ahead) made an earlier message the end and everything after it a rewound branch;
        nor the newest leaf, which may be a tool result beside the path (parallel calls)."""
        memo: dict[str, str | None] = {}
        followed = {self._message_at_or_above(self._up(uuid), memo) for uuid in self.messages}
        return next((uuid for uuid in reversed(self.messages) if uuid not in followed), None)

    def once(self, records: Iterable[dict[str, Any]], imported: ImportedSession) -> Iterator[dict[str, Any]]:
        """`records` without the later copies of a conversation's line written more than once (its uuid again):
        Claude Code keeps one message per uuid, the first copy's place here. Copies are counted as left out;
        records of kinds not understood are counted as such, copies or not."""
        seen: set[str] = set()
        for record in records:
            uuid = record.get("uuid")
            if isinstance(uuid, str) and uuid in self.repeated and record.get("isSidechain") is not True \
                    and record.get("type") in ("user", "assistant", "attachment", "system"):
                if uuid in seen:
                    imported.left_out["lines written twice"] += 1
                    continue
                seen.add(uuid)
            yield record

    def in_order(self, records: Iterable[dict[str, Any]], branch: set[str] | None) -> Iterator[dict[str, Any]]:
        """`records` with each line of the branch after its parent: Claude Code's TUI writes a session's
        first prompt after the answer to it (after a /rewind, whose fork rewrites the file)."""
        if branch is None:
            yield from records
            return
        done: set[str] = set()
        waiting: dict[str, list[dict[str, Any]]] = {}
        holding = 0
        for record in records:
            uuid = record.get("uuid")
            parent = self.parent.get(uuid) if isinstance(uuid, str) and uuid in branch else None
            if parent is not None and parent in branch and parent not in done and holding < MAX_HELD:
                waiting.setdefault(parent, []).append(record)
                holding += 1
                continue
            ready = [record]
            while ready:
                first = ready.pop()
                yield first
                if isinstance(first.get("uuid"), str) and first["uuid"] in branch:
                    done.add(first["uuid"])
                    ready.extend(reversed(waiting.pop(first["uuid"], [])))
        for held in waiting.values():  # a parent that never came (a cycle in a damaged file)
            yield from held

    def branch(self) -> set[str] | None:
        """The uuids of the branch the user last saw (None: the file has no tree, keep every record)."""
        leaf = None if self.overflow else self.leaf()
        if leaf is None:
            return None
        keep: set[str] = set()
        uuid: str | None = leaf
        while uuid is not None and uuid not in keep:
            keep.add(uuid)
            uuid = self._up(uuid)
        responses = {self.response[u] for u in keep if u in self.response}
        beside = {u for u, response in self.response.items() if response in responses and u not in keep}
        self.dropped = {u for u in beside if self._dropped(u, leaf)}
        keep |= beside - self.dropped
        # the results of those lines' calls, each call's once: two processes on one session (`--continue` in
        # another terminal while a call ran) both answer it; the one the branch goes on from is what was read
        answered = {call for u in keep for call in self.answers.get(u, ())}
        for u in self.messages:
            calls = self.answers.get(u, ())
            if u in self.results and u not in keep and self.parent.get(u) in keep \
                    and not (calls and all(call in answered for call in calls)):
                keep.add(u)
                answered.update(calls)
        return keep

    def _dropped(self, line: str, leaf: str) -> bool:
        """Whether a line of a response beside the branch holds tool calls Claude Code dropped: none answered
        anywhere, and the conversation went on past the response (2.0.x, interrupted or killed while parallel
        calls ran, wrote no result for them and went on from the response's last line that had one: the model
        never saw them again). While the response is where the branch ends, they stay: resumed as interrupted."""
        calls = self.calls.get(line)
        if not calls or any(call in self.answered for call in calls):
            return False
        response = self.response.get(line)
        ends_here = self.response.get(leaf) == response or (
            leaf in self.results and self.response.get(self.parent.get(leaf) or "") == response)
        return not ends_here


def _kept_by(boundary: dict[str, Any] | None) -> list[str]:
    """The uuids a compact_boundary record says Claude Code kept (none when it is malformed)."""
    meta = (boundary or {}).get("compactMetadata")
    preserved = meta.get("preservedMessages") if isinstance(meta, dict) else None
    uuids = preserved.get("uuids") if isinstance(preserved, dict) else None
    return [u for u in uuids if isinstance(u, str)] if isinstance(uuids, list) else []


def _summary_follows_kept(boundary: dict[str, Any] | None) -> bool:
    """Whether the messages a compaction kept come before its summary: `/rewind`'s "Summarize from here"
    (2.1.3xx) keeps the start of the conversation and summarises the rest after it; its kept messages hang off
    the boundary itself (`anchorUuid`), where a `/compact`'s hang off the summary, after it."""
    meta = (boundary or {}).get("compactMetadata")
    preserved = meta.get("preservedMessages") if isinstance(meta, dict) else None
    anchor = preserved.get("anchorUuid") if isinstance(preserved, dict) else None
    return isinstance(anchor, str) and anchor == (boundary or {}).get("uuid")


def _preserved_uuids(records: Iterable[dict[str, Any]]) -> set[str]:
    """The uuids Claude Code kept across its compactions (named by its compact_boundary records)."""
    kept: set[str] = set()
    for record in records:
        if record.get("type") == "system" and record.get("subtype") == "compact_boundary":
            kept.update(_kept_by(record))
    return kept


def _conversation(records: Iterable[dict[str, Any]], imported: ImportedSession, preserved: set[str],
                  branch: set[str] | None = None, inline: _InlineSidechains | None = None,
                  dropped: Container[str] = frozenset()) -> Iterator[Event]:
    """The events in order, streamed: compactions, then messages as soon as they can no longer grow.

    Only the records a later compaction keeps (`preserved`) are held back in memory. With `branch`,
    records of other branches (and subagent lines written into the main file) are left out, counted.
    """
    kept_records: dict[str, dict[str, Any]] = {}
    builder = _Builder()
    command: object = None  # the uuid of the last slash command typed (`_invokes_command`)
    pending_boundary: dict[str, Any] | None = None
    for record in records:
        if isinstance(record.get("uuid"), str) and record["uuid"] in preserved:
            kept_records[record["uuid"]] = record
        rtype = record.get("type")
        if inline is not None and record.get("isSidechain") is True and rtype in ("user", "assistant"):
            if not inline.add(record):
                imported.left_out["subagent messages without their Task call"] += 1
            continue
        if branch is not None and isinstance(record.get("uuid"), str) and record["uuid"] not in branch:
            if rtype in ("user", "assistant") and not record.get("isMeta"):
                imported.left_out["subagent messages" if record.get("isSidechain") is True
                                  else "tool calls Claude Code dropped unanswered" if record["uuid"] in dropped
                                  else "messages of rewound branches"] += 1
            elif rtype not in _QUIET_TYPES and rtype not in ("system", "user", "assistant"):  # its notes are its own
                imported.not_understood(rtype)
            continue
        if rtype == "assistant" and record.get("isApiErrorMessage") is True:
            imported.left_out["API error notices"] += 1  # Claude Code's text, not the model's: never sent
            continue
        if rtype == "system" and record.get("subtype") == "compact_boundary":
            pending_boundary = record
            continue
        if rtype == "system":  # UI notes (turn_duration, api errors, ...): not conversation
            continue
        if rtype == "attachment":
            attached = _attached_blocks(record)
            if attached:
                builder.add("user", attached, stamp_of(record), {}, None)
                yield from builder.finished()
            continue
        if rtype not in ("user", "assistant"):
            if rtype not in _QUIET_TYPES:
                imported.not_understood(rtype)
            continue
        message = record.get("message")
        if not isinstance(message, dict):
            imported.not_understood(rtype)
            continue
        if rtype == "user" and record.get("isCompactSummary"):
            summary = content_text(_content(message), "\n")
            if branch is not None and _summary_follows_kept(pending_boundary):
                # what it summarised is off the branch (left out); the kept start is already here, before it:
                # the summary is read where Claude Code put it, a user message after them (sealed as ours are)
                builder.add("user", [text_block(seal_summary(summary))], stamp_of(record), {}, None)
                yield from builder.finished()
                pending_boundary = None
                continue
            meta = (pending_boundary or {}).get("compactMetadata")
            meta = meta if isinstance(meta, dict) else {}
            yield from builder.finished(everything=True)
            yield Compaction(summary, "auto" if meta.get("trigger") == "auto" else "manual", stamp_of(record))
            for uuid in _kept_by(pending_boundary):
                old = kept_records.get(uuid)
                if old and isinstance(old.get("message"), dict):
                    builder.add(old["type"], _content(old["message"]), stamp_of(old),
                                _tokens(old["message"].get("usage")) if old["type"] == "assistant" else {},
                                old["message"].get("id"))
            pending_boundary = None
            continue
        if record.get("isMeta") and _hook_feedback(record):  # a Stop hook refused to stop: the model answered it
            builder.add("user", _hook_feedback(record), stamp_of(record), {}, None)
            yield from builder.finished()
            continue
        if record.get("isMeta"):
            if record.get("parentUuid") == command and command is not None:  # the prompt a slash command sent
                builder.add("user", _content(message), stamp_of(record), {}, None)
                yield from builder.finished()
            continue
        if rtype == "user" and _invokes_command(message):
            command = record.get("uuid")
        builder.add(rtype, _content(message), stamp_of(record),
                    _tokens(message.get("usage")) if rtype == "assistant" else {}, message.get("id"))
        yield from builder.finished()
    yield from builder.finished(everything=True)


def _sidechain(records: list[dict[str, Any]], tool_use_id: str, name: str, imported: ImportedSession) -> Subagent:
    messages = [e for e in _conversation(records, imported, _preserved_uuids(records)) if isinstance(e, Message)]
    answer = next((content_text(m.message["content"], "\n") for m in reversed(messages)
                   if m.message["role"] == "assistant"), "")
    return Subagent(tool_use_id, name, messages, answer, messages[0].timestamp if messages else None)


class _InlineSidechains:
    """Claude Code 1.x wrote a subagent's lines into the main transcript (`isSidechain`), between the
    Task call and its result. They are gathered here by chain and matched to the call by its prompt."""

    def __init__(self) -> None:
        self.runs: list[list[dict[str, Any]]] = []
        self.held = 0
        self._run_of: dict[str, int] = {}

    def add(self, record: dict[str, Any]) -> bool:
        """Hold a subagent's line; False when too many are held already (the line is then left out)."""
        if self.held >= MAX_HELD:
            return False
        self.held += 1
        parent = record.get("parentUuid")
        index = self._run_of.get(parent) if isinstance(parent, str) else None
        if index is None:
            index = len(self.runs)
            self.runs.append([])
        self.runs[index].append(record)
        if isinstance(record.get("uuid"), str):
            self._run_of[record["uuid"]] = index
        return True

    def take(self, prompt: object) -> list[dict[str, Any]] | None:
        """The sidechain whose first prompt is `prompt`, removed (None when there is none)."""
        if not isinstance(prompt, str):
            return None
        for index, run in enumerate(self.runs):
            first = run[0].get("message") if run else None
            if isinstance(first, dict) and content_text(_content(first), "\n").strip() == prompt.strip():
                self.runs[index] = []
                return run
        return None

    def left(self) -> int:
        return sum(1 for run in self.runs for r in run if r.get("type") in ("user", "assistant"))


_AGENT_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")  # a name of a file beside the session: never a path
MAX_AGENTS = 10_000


def _agent_of(record: dict[str, Any]) -> tuple[str, str] | None:
    """(tool_use id, agent id) of a Task call's result record: 2.0.x keeps the subagent's transcript beside the
    session's as `agent-<agent id>.jsonl`, 2.1.50 in `<session>/subagents/`, and names it only there
    (`toolUseResult.agentId`)."""
    result = record.get("toolUseResult")
    agent = result.get("agentId") if isinstance(result, dict) else None
    message = record.get("message")
    if record.get("type") != "user" or not isinstance(agent, str) or not _AGENT_ID.fullmatch(agent) \
            or not isinstance(message, dict):
        return None
    ids = [b.get("tool_use_id") for b in blocks(message) if isinstance(b, dict) and b.get("type") == "tool_result"]
    return (ids[0], agent) if len(ids) == 1 and isinstance(ids[0], str) else None


def _subagents(path: Path, imported: ImportedSession, agents: dict[str, str]) -> dict[str, Subagent]:
    """Sidechains by the tool_use id that started them. 2.1.1xx-2.1.3xx keep them in `<session>/subagents/`, a
    `.meta.json` beside each naming its type and (later versions) the call; 2.1.50 writes no `.meta.json`, and
    2.0.x keeps them beside the session: then only the call's result names them (`agents`: tool_use id ->
    agent id). One nothing names (its call never answered: a kill while it ran) is left out and counted."""
    runs: dict[str, Subagent] = {}
    folder = path.with_suffix("") / "subagents"
    try:
        files = sorted(folder.glob("agent-*.jsonl"))
    except OSError:
        files = []
    kinds: dict[str, str] = {}  # file name -> the agent type its .meta.json names
    taken: set[str] = set()
    for file in files:
        meta = _meta_of(file)
        if meta is None:
            imported.skipped["subagent without its tool call"] += 1  # a .meta.json that is not one
            taken.add(file.name)
            continue
        kinds[file.name] = str(meta.get("agentType") or "subagent")
        tool_use_id = meta.get("toolUseId")
        if isinstance(tool_use_id, str):
            records = list(_lines(file, imported))  # a sidechain is one task's conversation: held whole
            runs[tool_use_id] = _sidechain(records, tool_use_id, kinds[file.name], imported)
            taken.add(file.name)
    for call, agent in agents.items():
        name = f"agent-{agent}.jsonl"
        for file in (folder / name, path.parent / name):
            if call not in runs and file.is_file():  # a file only: not a FIFO someone else's folder could hold
                runs[call] = _sidechain(list(_lines(file, imported)), call, kinds.get(name, "subagent"), imported)
                taken.add(name)
    unnamed = sum(1 for file in files if file.name not in taken)
    if unnamed:
        imported.left_out["subagents whose call has no result"] += unnamed
    return runs


def _meta_of(file: Path) -> dict[str, Any] | None:
    """A subagent's `.meta.json` ({} when there is none: 2.1.50), None when it is there but not readable as one."""
    try:
        with open(file.with_name(file.name[: -len(".jsonl")] + ".meta.json"), "rb") as f:
            meta = json.loads(f.read(1 << 20))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, RecursionError):
        return None
    return meta if isinstance(meta, dict) else None


def read_claude_code(path: Path) -> ImportedSession:
    """One Claude Code session (main transcript and its subagents). Only reads; `events` streams.

    A first pass reads what session_start needs (cwd, version, branch, model) and which messages
    a compaction keeps; the events then stream in a second pass, holding only those.
    """
    imported = ImportedSession(AGENT, path.resolve(), source_id_of(path))
    scan: Counter[str] = Counter()  # the first pass counts nothing: its skips are counted by the second
    preserved: set[str] = set()
    tree = _Tree()
    agents: dict[str, str] = {}
    for record in _lines(path, ImportedSession(AGENT, path, "", skipped=scan)):
        tree.add(record)
        agent = _agent_of(record) if len(agents) < MAX_AGENTS else None
        if agent is not None:
            agents[agent[0]] = agent[1]
        if imported.cwd is None and isinstance(record.get("cwd"), str):
            imported.cwd = record["cwd"]
        if imported.version is None and isinstance(record.get("version"), str):
            imported.version = record["version"]
        if imported.git_branch is None and isinstance(record.get("gitBranch"), str):
            imported.git_branch = record["gitBranch"]
        message = record.get("message")
        if (record.get("type") == "assistant" and isinstance(message, dict) and isinstance(message.get("model"), str)
                and message["model"] != "<synthetic>"):  # Claude Code's own notices name no model
            imported.model = message["model"]
        preserved |= _preserved_uuids((record,))
    imported.events = _with_subagents(path, imported, preserved, tree, agents)
    return imported


def _with_subagents(path: Path, imported: ImportedSession, preserved: set[str], tree: _Tree,
                    agents: dict[str, str]) -> Iterator[Event]:
    runs = _subagents(path, imported, agents)
    inline = _InlineSidechains()
    branch = tree.branch()
    records = tree.in_order(tree.once(_lines(path, imported), imported), branch)
    for event in _conversation(records, imported, preserved, branch, inline, tree.dropped):
        yield event
        if isinstance(event, Message) and event.message["role"] == "assistant":
            for block in tool_uses(event.message):
                if block.get("id") in runs:
                    run = runs.pop(block["id"])
                    kind = block["input"].get("subagent_type") if isinstance(block.get("input"), dict) else None
                    if run.agent_name == "subagent" and isinstance(kind, str):  # 2.0.x: no meta file names it
                        run.agent_name = kind
                    yield run
                elif block.get("name") == "task" and isinstance(block.get("input"), dict):
                    side = inline.take(block["input"].get("prompt"))
                    if side is not None:
                        kind = block["input"].get("subagent_type")
                        yield _sidechain(side, str(block["id"]), kind if isinstance(kind, str) else "subagent",
                                         imported)
    if inline.left():
        imported.left_out["subagent messages without their Task call"] += inline.left()
