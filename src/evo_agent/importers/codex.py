"""Codex CLI (0.17x) rollouts: `~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`.

Lines are `{timestamp, type, payload}`. What becomes what:
- `session_meta` gives the id, cwd and version; `turn_context` the model.
- `response_item` `message`s of role user/assistant are the conversation; role developer and the
  `<environment_context>`/`<user_instructions>` user messages are Codex's own instructions: skipped. A
  developer message of the user's hooks (a hook's `additionalContext`, its parts marked `hooks.*`) is a user
  message where the model read it; a Stop hook's refusal is already a user message (`<hook_prompt>`).
- `function_call`/`custom_tool_call` become tool_use blocks of the assistant message (arguments
  parsed; `exec_command`/`shell` map to `bash` with `cmd` as `command`), their outputs tool_result
  blocks of a user message; an output that is a list of content items (code mode's `exec`, the
  default model's one tool, and `view_image`) becomes text and image blocks, part for part.
- `tool_search_call`/`tool_search_output` (a search for deferred tools, MCP ones among them) are a call
  and its result (the tools found, as JSON); a call with a `namespace` is named `<namespace>__<name>`.
- `agent_message` (mail between Codex's agents: a spawned agent's final answer in its parent's rollout)
  is a user message of its texts; its encrypted parts are counted as left out.
- `additional_tools` (code mode's tool catalogue), `configuration_update` (the reasoning effort the
  built-in `openai` provider notes) and `ghost_snapshot` (0.5x-0.7x in a git repository: a commit per turn for
  `/undo`, never sent to the model) are Codex's own: skipped like developer messages.
- A `compacted` record of the server's own compaction (the `openai` provider) holds no summary, only an
  encrypted `compaction` item: it is left out (counted) and the conversation before it is kept whole.
- A forked rollout (`codex fork`) and a rewind's segment (the TUI's Esc Esc) hold only their new turns
  and name the file they continue (`history_base`): its first records come first (`_history`), found
  beside them or under `$CODEX_HOME/sessions`. A thread is listed once, by its newest segment.
- Threads Codex ran for another (`/review`'s reviewer, spawned agents) are not listed.
- `reasoning` items are encrypted for OpenAI's servers only: skipped and counted.
- `compacted` becomes a `compact_boundary` (its `message` as the summary) followed by its
  `replacement_history` — what Codex sends after the compaction.
- `token_usage_record` tokens go to the assistant message they paid for; rollouts that keep usage
  only in `event_msg` `token_count` events (running totals) give the same from those totals;
  other `event_msg`s, `world_state` and other bookkeeping are skipped quietly.
"""

from __future__ import annotations

import json
import os
import re
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .claude_code import _Builder
from .model import (
    Compaction,
    Event,
    ImportedSession,
    Message,
    head_records,
    read_lines,
    stamp_of,
    too_deep,
)

AGENT = "codex"
TOOL_NAMES = {"exec_command": "bash", "shell": "bash", "shell_command": "bash", "local_shell": "bash"}
_INSTRUCTION_PREFIXES = ("<environment_context>", "<user_instructions>", "<permissions instructions>",
                         "<skills_instructions>", "# AGENTS.md instructions")
_QUIET = {"event_msg", "turn_context", "world_state", "token_usage_record", "session_meta",
          "inter_agent_communication_metadata"}


def codex_home() -> Path:
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")


def _meta(path: Path) -> dict[str, Any]:
    for line in head_records(path, 20):
        if line.get("type") == "session_meta" and isinstance(line.get("payload"), dict):
            payload: dict[str, Any] = line["payload"]
            return payload
        if _legacy_meta(line):  # 2025 rollouts (codex 0.2x) start with the bare meta object
            return line
    return {}


def _legacy_meta(line: object) -> bool:
    return (isinstance(line, dict) and "type" not in line and "payload" not in line
            and isinstance(line.get("id"), str) and isinstance(line.get("timestamp"), str))


def source_id_of(path: Path) -> str:
    meta_id = _meta(path).get("id")
    return meta_id if isinstance(meta_id, str) else path.stem


def find_sources(project_dir: Path) -> list[Path]:
    """Codex rollouts recorded in this project or below it, oldest first: one a thread (the segment a
    rewind began last, which holds the conversation the user last saw), and not subagents' threads."""
    root = codex_home() / "sessions"
    project = str(project_dir)
    try:
        candidates = sorted(root.rglob("rollout-*.jsonl"), key=lambda p: p.stat().st_mtime)
    except OSError:
        return []
    latest: dict[object, Path] = {}  # a thread's files (its rewinds' segments share its id): the newest
    for path in candidates:
        meta = _meta(path)
        cwd = meta.get("cwd")
        if isinstance(cwd, str) and (cwd == project or cwd.startswith(project.rstrip("/") + "/")) \
                and not _subagent_thread(meta):
            thread = meta.get("id")
            latest[thread if isinstance(thread, str) else path] = path
    return sorted(latest.values(), key=lambda p: p.stat().st_mtime)


def _subagent_thread(meta: dict[str, Any]) -> bool:
    """Whether a rollout is a thread Codex ran for another one (`/review`'s reviewer, a spawned agent):
    what it found reached its parent's rollout, and Codex's own `resume` offers it to no one. Listed
    with the parent it would be a second, partial copy; it can still be imported by its path."""
    source = meta.get("source")
    return meta.get("thread_source") == "subagent" or (isinstance(source, dict) and "subagent" in source)


def _texts(content: object) -> list[str]:
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [c["text"] for c in content if isinstance(c, dict) and isinstance(c.get("text"), str)]


def _image(part: dict[str, Any]) -> dict[str, Any] | None:
    """An `input_image` as an Anthropic image block: a data URL becomes base64, another URL stays one."""
    url = part.get("image_url")
    if not isinstance(url, str):
        return None
    match = re.match(r"data:(image/[a-z0-9.+-]+);base64,", url)
    if match:
        return {"type": "image", "source": {"type": "base64", "media_type": match.group(1),
                                            "data": url[match.end():]}}
    if url.startswith(("https://", "http://")):
        return {"type": "image", "source": {"type": "url", "url": url}}
    return None


def _blocks(content: object) -> list[dict[str, Any]]:
    """A message's text and image parts, in order, as content blocks."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content.strip() else []
    out = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        if isinstance(part.get("text"), str) and part["text"].strip():
            out.append({"type": "text", "text": part["text"]})
        elif part.get("type") == "input_image" and (image := _image(part)) is not None:
            out.append(image)
    return out


def _output(output: object) -> str | list[dict[str, Any]]:
    """A tool's output as a tool_result's content. Code mode's `exec` (Codex's default model) and
    `view_image` answer with a list of content items (`input_text`, `input_image`): they become text and
    image blocks, part for part, as the model saw them, not the list's JSON."""
    if isinstance(output, str):
        return output
    if not isinstance(output, list):
        return json.dumps(output) if output is not None and not too_deep(output) else ""
    blocks = _blocks(output)
    if len(blocks) == 1 and blocks[0]["type"] == "text":
        return str(blocks[0]["text"])
    return blocks


def _tool_use(item: dict[str, Any]) -> dict[str, Any]:
    name = item.get("name")
    if not isinstance(name, str):
        name = "tool"
    if item.get("type") == "tool_search_call":
        name = "tool_search"
    namespace = item.get("namespace")
    if isinstance(namespace, str) and namespace not in ("", "functions"):  # an MCP server's: `mcp__<server>`
        name = f"{namespace}__{name}"
    raw = item.get("arguments") if item.get("type") in ("function_call", "tool_search_call") else item.get("input")
    action = item.get("action")
    if item.get("type") == "local_shell_call" and isinstance(action, dict):  # the model's built-in shell
        name, raw = "local_shell", {"command": action.get("command")}
    try:
        tool_input = json.loads(raw) if isinstance(raw, str) else raw
    except (ValueError, RecursionError):
        tool_input = {"input": raw}
    if not isinstance(tool_input, dict) or too_deep(tool_input):
        tool_input = {"input": tool_input} if isinstance(tool_input, str) else {}
    if name in TOOL_NAMES and "cmd" in tool_input and "command" not in tool_input:
        tool_input["command"] = tool_input.pop("cmd")
    if isinstance(tool_input.get("command"), list):  # `shell` takes argv
        tool_input["command"] = " ".join(str(a) for a in tool_input["command"])
    return {"type": "tool_use", "id": str(item.get("call_id") or item.get("id")), "name": TOOL_NAMES.get(name, name),
            "input": tool_input}


class _Prompts:
    """The user's recent prompts, which Codex before 0.5x carried over a compaction itself (its
    `compacted` record then holds only the summary): the newest ones, up to what Codex kept."""

    LIMIT = 80_000  # characters: Codex kept ~20,000 tokens of them

    def __init__(self) -> None:
        self.texts: deque[str] = deque()
        self.size = 0

    def add(self, item: dict[str, Any]) -> None:
        if item.get("type") != "message" or item.get("role") != "user":
            return
        for text in _texts(item.get("content")):
            if text.strip() and not text.lstrip().startswith(_INSTRUCTION_PREFIXES):
                self.texts.append(text)
                self.size += len(text)
        while self.size > self.LIMIT and len(self.texts) > 1:
            self.size -= len(self.texts.popleft())


def _from_hooks(item: dict[str, Any]) -> bool:
    """Whether a developer message is what the user's hooks (`$CODEX_HOME/hooks.json`, 0.17x) told the model (a
    hook's `additionalContext`), not Codex's own instructions: its metadata names every part `hooks.*`."""
    meta = item.get("internal_chat_message_metadata_passthrough")
    kinds = meta.get("content_item_kinds") if isinstance(meta, dict) else None
    return isinstance(kinds, list) and bool(kinds) and all(isinstance(k, str) and k.startswith("hooks.") for k in kinds)


def _add_item(builder: _Builder, item: dict[str, Any], stamp: str | None, imported: ImportedSession) -> None:
    itype = item.get("type")
    if itype == "message":
        role = item.get("role")
        blocks = _blocks(item.get("content"))
        texts = [b["text"] for b in blocks if b["type"] == "text"]
        if role == "developer" and _from_hooks(item):  # what the user's hooks added: the model read it
            role = "user"
        if role == "developer" or role == "system" or not blocks:
            return
        if role == "user" and texts and len(texts) == len(blocks) \
                and all(t.lstrip().startswith(_INSTRUCTION_PREFIXES) for t in texts):
            return
        if role not in ("user", "assistant"):
            imported.not_understood(f"message/{role}")
            return
        if role == "assistant":
            blocks = [{"type": "text", "text": t} for t in texts]  # a model sends no images
        builder.add(role, blocks, stamp, {}, None)
    elif itype == "web_search_call":  # searched on OpenAI's servers: the results never reach the rollout
        action = item.get("action")
        query = action.get("query") if isinstance(action, dict) else None
        note = f"[searched the web for {query!r}]" if isinstance(query, str) else "[searched the web]"
        builder.add("assistant", [{"type": "text", "text": note}], stamp, {}, builder._response_id)
    elif itype in ("function_call", "custom_tool_call", "local_shell_call", "tool_search_call"):
        builder.add("assistant", [_tool_use(item)], stamp, {}, builder._response_id)
    elif itype == "tool_search_output":  # the tool definitions the search gave the model
        tools = item.get("tools")
        found = json.dumps(tools, ensure_ascii=False) if isinstance(tools, list) and not too_deep(tools) else "[]"
        builder.add("user", [{"type": "tool_result", "tool_use_id": str(item.get("call_id")), "content": found}],
                    stamp, {}, None)
    elif itype in ("function_call_output", "custom_tool_call_output"):
        output = item.get("output")
        if isinstance(output, dict):  # older rollouts: {"content": ..., "success": ...}
            is_error = output.get("success") is False
            output = output.get("content")
        else:
            is_error = False
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": str(item.get("call_id")),
                                 "content": _output(output)}
        if is_error:
            block["is_error"] = True
        builder.add("user", [block], stamp, {}, None)
    elif itype == "reasoning":
        imported.left_out["encrypted reasoning items"] += 1  # only OpenAI can read them
    elif itype == "agent_message":  # another agent's mail (a spawned agent's final answer): the model reads it
        content = item.get("content")
        parts = content if isinstance(content, list) else []
        hidden = sum(1 for part in parts if isinstance(part, dict) and part.get("type") == "encrypted_content")
        if hidden:
            imported.left_out["encrypted parts of agents' messages"] += hidden
        blocks = [b for b in _blocks(parts) if b["type"] == "text"]
        if blocks:
            builder.add("user", blocks, stamp, {}, None)
    elif itype in ("additional_tools", "configuration_update", "ghost_snapshot"):
        return  # Codex's own: its tools, its reasoning effort, a git snapshot per turn for /undo (0.5x-0.7x)
    elif itype == "compaction":  # an encrypted summary only OpenAI reads (see _sealed)
        imported.left_out["encrypted compactions (the conversation before them kept whole)"] += 1
    else:
        imported.not_understood(f"response_item/{itype}")


def read_codex(path: Path) -> ImportedSession:
    """One Codex rollout. Only reads; `events` streams the file (bounded memory)."""
    meta = _meta(path)
    imported = ImportedSession(AGENT, path.resolve(), source_id_of(path))
    imported.cwd = meta.get("cwd") if isinstance(meta.get("cwd"), str) else None
    imported.version = meta.get("cli_version") if isinstance(meta.get("cli_version"), str) else None
    git = meta.get("git")
    if not isinstance(git, dict):
        git = {}
    imported.git_branch = git.get("branch") if isinstance(git.get("branch"), str) else None
    imported.model = _first_model(path)
    imported.events = _events(path, imported)
    return imported


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


class _Tokens:
    """Tokens given to assistant messages, from `token_usage_record`s or `token_count` events.

    Codex 0.17x writes a `token_usage_record` per response (and `token_count`s too): once one is
    seen, records alone count. Older rollouts have only `token_count`: the response's usage
    (`last_token_usage`) beside running totals that restart in each process (a resume starts
    again from zero; 0.6x-0.7x mark the start with a count holding no usage, after which the same
    totals as before are new) and that a repeated event leaves unmoved (skipped). 0.4x-0.6x write a
    response's count before its items, 0.7x after them: a process whose first count comes before anything
    the model said (`ahead`) gives each count to the answer that follows it, else to the one before it.
    """

    def __init__(self) -> None:
        self.from_records = False
        self.previous: tuple[int, int] | None = None
        self.pending = (0, 0)
        self.ahead: bool | None = None  # this process writes a response's count before its items
        self.answered = False  # the model said something since this process began

    def add(self, messages: list[Any], input_tokens: int, output_tokens: int) -> None:
        last = next((m for m in reversed(messages) if m.message["role"] == "assistant"), None)
        input_tokens, output_tokens = input_tokens + self.pending[0], output_tokens + self.pending[1]
        if last is None:
            self.pending = (input_tokens, output_tokens)
            return
        self.pending = (0, 0)
        if input_tokens or output_tokens:
            last.tokens["input_tokens"] = last.tokens.get("input_tokens", 0) + input_tokens
            last.tokens["output_tokens"] = last.tokens.get("output_tokens", 0) + output_tokens

    def said(self, messages: list[Any]) -> None:
        """The model's answer or call was just added (the last assistant message of `messages` holds it): a
        count written ahead of it is its usage."""
        self.answered = True
        if self.ahead and self.pending != (0, 0):
            self.add(messages, 0, 0)

    def record(self, messages: list[Any], usage: object) -> None:
        if isinstance(usage, dict) and isinstance(usage.get("input_tokens"), int):
            self.from_records = True
            self.add(messages, _count(usage["input_tokens"]), _count(usage.get("output_tokens")))

    def count(self, messages: list[Any], info: object) -> None:
        if info is None and not self.from_records:  # a process starting (0.6x-0.7x: no usage yet): its totals
            self.previous, self.ahead, self.answered = None, None, False  # restart, maybe to the last ones
            return
        total = info.get("total_token_usage") if isinstance(info, dict) else None
        if self.from_records or not isinstance(info, dict) or not isinstance(total, dict):
            return
        now = (_count(total.get("input_tokens")), _count(total.get("output_tokens")))
        previous, self.previous = self.previous, now
        if now == previous:
            return
        last = info.get("last_token_usage")
        if isinstance(last, dict):
            spent = (_count(last.get("input_tokens")), _count(last.get("output_tokens")))
        elif previous is None or now[0] < previous[0]:  # the first count of this process
            spent = now
        else:
            spent = (now[0] - previous[0], max(0, now[1] - previous[1]))
        if self.ahead is None:
            self.ahead = not self.answered
        if self.ahead:  # the answer it paid for comes next
            self.pending = (self.pending[0] + spent[0], self.pending[1] + spent[1])
        else:
            self.add(messages, *spent)


# Response items that put the model's words or calls in an assistant message (reasoning adds none).
_SAID = frozenset({"function_call", "custom_tool_call", "local_shell_call", "tool_search_call", "web_search_call"})


def _said(item: dict[str, Any]) -> bool:
    return item.get("type") in _SAID or (item.get("type") == "message" and item.get("role") == "assistant")


def _first_model(path: Path, look: int = 400) -> str | None:
    for line in head_records(path, look):
        payload = line.get("payload")
        if line.get("type") == "turn_context" and isinstance(payload, dict) and isinstance(payload.get("model"), str):
            model: str = payload["model"]
            return model
    return None


def _events(path: Path, imported: ImportedSession) -> Iterator[Event]:
    builder = _Builder()
    tokens = _Tokens()
    prompts = _Prompts()
    # Finished messages wait here until the next response starts: a `token_count` for a response
    # comes after its tool outputs, when the assistant message is already finished.
    held: list[Any] = []
    for line in _history(path, imported):
        if "payload" not in line and isinstance(line.get("type"), str):  # 2025 rollouts: bare items
            line = {"type": "response_item", "payload": line}
        elif "payload" not in line and (line.get("record_type") == "state" or _legacy_meta(line)):
            continue
        if not isinstance(line.get("payload"), dict):
            imported.skipped["unreadable line"] += 1
            continue
        ltype, payload, stamp = line.get("type"), line["payload"], stamp_of(line)
        if ltype == "response_item":
            _add_item(builder, payload, stamp, imported)
            prompts.add(payload)
            if _said(payload):
                tokens.said(held + builder.messages)
        elif ltype == "compacted" and _sealed(payload):
            imported.left_out["encrypted compactions (the conversation before them kept whole)"] += 1
        elif ltype == "compacted":
            summary = payload.get("message")
            if not isinstance(summary, str):
                summary = ""
            spent = _drop_summary_answer(builder, summary)
            tokens.pending = (tokens.pending[0] + spent[0], tokens.pending[1] + spent[1])
            yield from _release(held, builder.finished(everything=True))
            yield Compaction(summary, "auto", stamp)
            history = payload.get("replacement_history")
            if not isinstance(history, list):  # before 0.5x: Codex sent the recent prompts with the summary
                history = [{"type": "message", "role": "user",
                            "content": [{"type": "input_text", "text": t} for t in prompts.texts]}]
            for item in history:
                if isinstance(item, dict) and not (item.get("type") == "message"
                                                   and _texts(item.get("content")) == [summary]):
                    _add_item(builder, item, stamp, imported)
        elif ltype == "token_usage_record":
            tokens.record(held + builder.messages, payload.get("usage"))
        elif ltype == "event_msg" and payload.get("type") == "token_count":
            tokens.count(held + builder.messages, payload.get("info"))
        elif ltype not in _QUIET:
            imported.not_understood(ltype)
        held.extend(builder.finished())
        if builder.messages and builder.messages[-1].message["role"] == "assistant":
            yield from _release(held, [])  # a new response began: the held ones are complete
    tokens.add(held + builder.messages, 0, 0)  # usage still waiting goes to the last answer
    yield from _release(held, builder.finished(everything=True))


_ID = re.compile(r"[0-9A-Za-z-]{8,64}")
MAX_FORKS = 32   # a chain of forks and rewinds deeper than this (or a cycle) is cut there


def _fork_base(meta: dict[str, Any]) -> tuple[str, int] | None:
    """(segment id, how many records of its whole history) a rollout continues (see `_history`)."""
    base = meta.get("history_base")
    parent, count = (base.get("thread_id"), base.get("end_ordinal_exclusive")) if isinstance(base, dict) \
        else (meta.get("forked_from_id"), meta.get("forked_from_ordinal_exclusive"))
    if isinstance(parent, str) and _ID.fullmatch(parent) and _count(count):
        return parent, _count(count)
    return None


def _parent_path(child: Path, parent_id: str) -> Path | None:
    """The rollout (or segment: `…_<id>.jsonl`) of `parent_id`: beside the child (the same day), else
    anywhere under Codex's sessions. A file only, as for the path the user gives: a rollout imported from a
    directory someone else filled could name a FIFO there (or a link to /dev/zero), read for ever."""
    for found in child.parent.glob(f"rollout-*{parent_id}.jsonl"):
        if found != child and found.is_file():
            return found
    try:
        return next((p for p in (codex_home() / "sessions").rglob(f"rollout-*{parent_id}.jsonl")
                     if p != child and p.is_file()), None)
    except OSError:
        return None


def _history(path: Path, imported: ImportedSession, limit: int | None = None,
             seen: frozenset[Path] = frozenset()) -> Iterator[dict[str, Any]]:
    """The records of a rollout's whole history, at most `limit` of them: first what its `history_base`
    names, then its own lines. Codex 0.17x writes history in segments: a fork (`codex fork`, a new
    thread) and a rewind in the TUI (Esc Esc, then an edited prompt: the same thread, a new file
    `rollout-…-<thread>_<segment>.jsonl`) each begin a file that names the segment it continues and how
    many records of that segment's own whole history come first."""
    count = 0
    base = _fork_base(_meta(path))
    here = path.resolve()
    if base is not None:
        # past MAX_FORKS segments (a long session rewound many times) the start is missing: said, as a gone parent
        parent = _parent_path(path, base[0]) if len(seen) < MAX_FORKS else None
        if parent is None or parent.resolve() in seen | {here}:
            imported.left_out["forked-from rollouts not found (their turns before the fork)"] += 1
        else:
            for record in _history(parent, imported, base[1] if limit is None else min(base[1], limit),
                                   seen | {here}):
                yield record
                count += 1
    for record in read_lines(path, imported.skipped):
        if limit is not None and count >= limit:
            return
        yield record
        count += 1


def _sealed(payload: dict[str, Any]) -> bool:
    """Whether a `compacted` record is OpenAI's own compaction (the built-in `openai` provider: Codex asks
    the server to compact): no summary text, only an encrypted `compaction` item that no other model can
    read. Replaced by it, the conversation would be lost; kept whole, nothing is (evo-agent compacts it
    itself when it must)."""
    history = payload.get("replacement_history")
    message = payload.get("message")
    return (not isinstance(message, str) or not message.strip()) and isinstance(history, list) \
        and any(isinstance(item, dict) and item.get("type") == "compaction" for item in history)


def _drop_summary_answer(builder: _Builder, summary: str) -> tuple[int, int]:
    """Codex records its summarizing request's answer as an assistant message before `compacted`:
    the summary is the boundary's, not something the model said in the conversation. Returns the
    tokens of a message so removed (the summary was paid for: they go to the next answer)."""
    last = builder.messages[-1] if builder.messages else None
    if last is None or last.message["role"] != "assistant" or not last.message["content"]:
        return 0, 0
    block = last.message["content"][-1]
    if block.get("type") == "text" and block["text"].strip() and summary.rstrip().endswith(block["text"].strip()):
        last.message["content"].pop()
        if not last.message["content"]:
            builder.messages.pop()
            return last.tokens.get("input_tokens", 0), last.tokens.get("output_tokens", 0)
    return 0, 0


def _release(held: list[Message], more: list[Message]) -> Iterator[Message]:
    """The held messages and `more`, those with content, in order; `held` is emptied."""
    out = held + more
    held.clear()
    return (m for m in out if m.message["content"])
