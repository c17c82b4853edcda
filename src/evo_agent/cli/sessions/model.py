"""One session read back as a conversation: the model that `show` and every export render.

Records become items in file order. A tool call carries its result (which
arrives later, in a user record) and the subagent runs it started, so every
renderer can nest them under the call without pairing anything itself.
Restored records (the copy a resume writes) are kept apart, and the resume
lineage is followed through the sessions that still exist.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from evo_agent.session import (
    MESSAGES_NAME,
    REMINDER_CLOSE,
    REMINDER_OPEN,
    SIDECHAIN_SUFFIX,
    SessionMeta,
    SessionStore,
    first_records,
    is_reminder_block,
    is_session_id,
    is_sidechain_path,
    iter_transcript,
    open_sidechain,
    probe_live,
    sidechain_paths,
    summary_message,
)

# The synthetic message that stands for a compacted past (SPEC §4), split around its summary.
SUMMARY_OPEN, SUMMARY_CLOSE = summary_message("\0")["content"][0]["text"].split("\0")
MAX_SUBAGENT_DEPTH = 3
MAX_LINEAGE = 100


@dataclass
class Tokens:
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_creation: int = 0

    def add(self, other: Tokens) -> None:
        self.input += other.input
        self.output += other.output
        self.cache_read += other.cache_read
        self.cache_creation += other.cache_creation

    @property
    def total(self) -> int:
        return self.input + self.output

    def __bool__(self) -> bool:
        return bool(self.input or self.output or self.cache_read or self.cache_creation)


@dataclass
class Text:
    text: str
    kind: str = "text"  # "text", "thinking", "summary" (the synthetic message standing for a compacted past),
    # or "reminder" (context evo-agent gave the model inside a user message: the plan's state, …)


@dataclass
class Other:
    """A content block this viewer does not render in full (an image, redacted thinking, a future type)."""

    type: str
    description: str


@dataclass
class ResultView:
    """A tool_result as the viewers show it (not `evo_agent.tools.ToolResult`, what a tool returns)."""

    content: object  # a string or a list of content blocks, as the API took it
    is_error: bool
    timestamp: str | None

    @property
    def text(self) -> str:
        return shown_text(self.content)


@dataclass
class ToolCall:
    id: str
    name: str
    input: object
    result: ResultView | None = None
    runs: list[SubagentRun] = field(default_factory=list)

    @property
    def input_json(self) -> str:
        return json.dumps(self.input, ensure_ascii=False, indent=2, default=str)


@dataclass
class OrphanResult:
    """A tool_result whose call is not in this transcript (e.g. compacted away or lost to a bad line)."""

    tool_use_id: str
    result: ResultView


Block = Text | Other | ToolCall | OrphanResult


@dataclass
class Turn:
    """One user or assistant record."""

    role: str
    timestamp: str | None
    blocks: list[Block]
    tokens: Tokens
    restored: bool = False

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [b for b in self.blocks if isinstance(b, ToolCall)]


@dataclass
class Boundary:
    summary: str
    compact_count: int | None
    trigger: str | None
    timestamp: str | None
    tokens: Tokens = field(default_factory=Tokens)  # the summary calls' (`usage`; none in older transcripts)


@dataclass
class PlanChange:
    """A `plan_update` record: what a plan tool changed in the Session Plan, and the task's new state."""

    plan: str
    op: str
    task: dict | None
    timestamp: str | None

    @property
    def line(self) -> str:
        """`plan 2026-…-port: task_update #1 [completed] Port the lexer`."""
        what = self.op
        task = self.task
        if isinstance(task, dict):
            what += f" #{task.get('id', '?')} [{task.get('status', '?')}] {task.get('subject', '')}"
        return f"plan {self.plan}: {what}".rstrip()


@dataclass
class InstructionsNote:
    """An `instructions` record: the project instruction files the model was given, and where its tools ran."""

    paths: list[str]
    start_dir: str
    cut: str
    timestamp: str | None

    @property
    def line(self) -> str:
        """`instructions: AGENTS.md, pkg/web/AGENTS.md · working directory pkg/web`."""
        text = "instructions: " + (", ".join(self.paths) or "none")
        if self.start_dir not in ("", "."):
            text += f" · working directory {self.start_dir}"
        return text + (f" · {self.cut}" if self.cut else "")


@dataclass
class MemoryWrite:
    """A `memory_write` record: a change to Auto Memory, with its diff (SPEC §11)."""

    scope: str
    path: str
    op: str
    diff: str
    timestamp: str | None
    by: str | None = None  # "user" for /remember; else the model's memory tool

    @property
    def line(self) -> str:
        """`memory: create /memories/project/testing.md (+6 −0)`."""
        added = sum(1 for x in self.diff.splitlines() if x.startswith("+") and not x.startswith("+++"))
        removed = sum(1 for x in self.diff.splitlines() if x.startswith("-") and not x.startswith("---"))
        who = " (by the user)" if self.by == "user" else ""
        return f"memory: {self.op} {self.path} (+{added} −{removed}){who}"


@dataclass
class CompactFailed:
    """A `compact_failed` record: a compaction whose summary call was paid for but compacted nothing."""

    trigger: str
    error: str
    tokens: Tokens
    timestamp: str | None

    @property
    def line(self) -> str:
        """`compaction failed (manual): the model returned an empty summary; … · 1,200 in / 3 out`."""
        spent = f" · {self.tokens.input:,} in / {self.tokens.output:,} out" if self.tokens else ""
        return f"compaction failed ({self.trigger}): {self.error}{spent}"


@dataclass
class ResumeMarker:
    from_session_id: str | None
    restored_count: int | None
    timestamp: str | None


@dataclass
class Restored:
    """The messages a resume copied from its source, as one group."""

    source: str | None
    items: list[Item]
    message_count: int = 0  # restored records, including those holding only tool results


@dataclass
class Skipped:
    """A line that does not parse; shown where it was, never guessed at."""

    file: str
    line: int
    size: int
    torn: bool


@dataclass
class SubagentRun:
    agent_name: str
    path: str  # relative to the session directory
    tool_use_id: str | None
    started: str | None = None
    ended: str | None = None
    result: str | None = None
    transcript: Transcript | None = None
    problem: str | None = None  # why the sidechain could not be shown

    @property
    def finished(self) -> bool:
        return self.ended is not None


# A record `sessions show` presents as one line of its own (`line`, `timestamp`): every renderer shows any of
# them alike, so a new type of note is one class and one NOTE_BUILDERS entry (docs/architecture.md).
Note = PlanChange | InstructionsNote | MemoryWrite | CompactFailed
NOTES = (PlanChange, InstructionsNote, MemoryWrite, CompactFailed)
Item = Turn | Boundary | ResumeMarker | Restored | SubagentRun | Skipped | Note


@dataclass
class Transcript:
    """One transcript file (the main one or a sidechain) as items."""

    file: str
    items: list[Item]
    start: dict | None  # the session_start record
    tokens: Tokens
    message_count: int
    records: list[dict]
    skipped: list[Skipped]

    def runs(self) -> list[SubagentRun]:
        """Every subagent run of this transcript, nested under calls or standing alone, in order."""
        out: list[SubagentRun] = []
        for item in self.items:
            if isinstance(item, SubagentRun):
                out.append(item)
            elif isinstance(item, Turn):
                for call in item.tool_calls:
                    out.extend(call.runs)
            elif isinstance(item, Restored):
                for sub in item.items:
                    if isinstance(sub, Turn):
                        for call in sub.tool_calls:
                            out.extend(call.runs)
        return out


@dataclass
class SessionView:
    id: str
    dir: Path
    meta: SessionMeta | None
    transcript: Transcript
    lineage: list[str]  # the sessions this one was resumed from, nearest first
    lineage_missing: bool  # the chain goes on to a session that no longer exists
    resumed_as: list[str]  # sessions started by resuming this one
    unlinked: list[SubagentRun]  # sidechain files no marker names
    live_pid: int | None
    live: bool

    @property
    def subagent_tokens(self) -> Tokens:
        total = Tokens()
        for run in self.transcript.runs() + self.unlinked:
            if run.transcript is not None:
                total.add(run.transcript.tokens)
        return total

    @property
    def all_tokens(self) -> Tokens:
        total = Tokens()
        total.add(self.transcript.tokens)
        total.add(self.subagent_tokens)
        return total


def shown_text(content: object) -> str:
    """A tool result's or message's content as plain text (non-text blocks named in brackets)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return "" if content is None else json.dumps(content, ensure_ascii=False, default=str)
    parts = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif isinstance(block, dict):
            parts.append(f"[{describe_block(block)}]")
    return "\n".join(parts)


def describe_block(block: dict) -> str:
    btype = str(block.get("type"))
    if btype in ("image", "document"):
        source = block.get("source")
        if not isinstance(source, dict):
            source = {}
        media = source.get("media_type") or source.get("type") or "?"
        data = source.get("data")
        size = f", {len(data) * 3 // 4:,} bytes" if isinstance(data, str) else ""
        return f"{btype}: {media}{size}"
    if btype == "redacted_thinking":
        return "redacted thinking"
    return btype


def _text(text: str, role: str) -> Text:
    if role == "user" and text.startswith(SUMMARY_OPEN) and text.endswith(SUMMARY_CLOSE):
        return Text(text[len(SUMMARY_OPEN):len(text) - len(SUMMARY_CLOSE)], kind="summary")
    return Text(text)


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def record_tokens(record: dict) -> Tokens:
    return Tokens(
        _int(record.get("input_tokens")), _int(record.get("output_tokens")),
        _int(record.get("cache_read_input_tokens")), _int(record.get("cache_creation_input_tokens")),
    )


class _Builder:
    """Turns one file's records into items, pairing tool calls with results and subagent runs."""

    def __init__(self, session_dir: Path, file: str, depth: int) -> None:
        self.session_dir = session_dir
        self.file = file
        self.depth = depth
        self.items: list[Item] = []
        self.calls: dict[str, ToolCall] = {}
        self.runs: dict[str, SubagentRun] = {}  # by subagent_path
        self.restored: Restored | None = None
        self.tokens = Tokens()
        self.message_count = 0
        self.start: dict | None = None

    def _place(self, item: Item) -> None:
        if self.restored is not None and isinstance(item, Turn) and item.restored:
            self.restored.items.append(item)
            return
        self.restored = None
        self.items.append(item)

    def add(self, record: dict) -> None:
        rtype = record.get("type")
        stamp = _str(record.get("timestamp"))
        if rtype == "session_start":
            self.start = self.start or record
        elif rtype in ("user", "assistant"):
            self._message(record, rtype, stamp)
        elif rtype == "compact_boundary":
            summary = record.get("summary")
            usage = record.get("usage")
            tokens = record_tokens(usage) if isinstance(usage, dict) else Tokens()
            self.tokens.add(tokens)
            self._place(Boundary(summary if isinstance(summary, str) else "", _int(record.get("compact_count")) or None,
                                 _str(record.get("trigger")), stamp, tokens))
        elif rtype == "resume_marker":
            source = _str(record.get("from_session_id"))
            count = record.get("restored_count")
            self._place(ResumeMarker(source, count if isinstance(count, int) else None, stamp))
            self.restored = Restored(source, [])
            self.items.append(self.restored)
        elif rtype == "subagent_start":
            self._subagent_start(record, stamp)
        elif rtype == "subagent_end":
            self._subagent_end(record, stamp)
        elif isinstance(rtype, str) and rtype in NOTE_BUILDERS:
            note = NOTE_BUILDERS[rtype](record, stamp)
            if isinstance(note, CompactFailed):  # its summary calls were paid for: they count as a boundary's
                self.tokens.add(note.tokens)
            self._place(note)
        # A `reminder` record is shown where the model read it: inside the next user message.
        # Types this viewer does not know are skipped, as SPEC §2 asks of readers.

    def _message(self, record: dict, role: str, stamp: str | None) -> None:
        self.message_count += 1
        tokens = record_tokens(record) if role == "assistant" else Tokens()
        self.tokens.add(tokens)
        message = record.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        blocks: list[Block] = []
        if isinstance(content, str):
            blocks.append(_text(content, role))
        elif isinstance(content, list):
            for block in content:
                if isinstance(block, dict):
                    self._block(block, blocks, stamp, role)
        turn = Turn(role, stamp, blocks, tokens, restored=record.get("restored") is True)
        if turn.restored and self.restored is not None:
            self.restored.message_count += 1
        if role == "user" and not blocks:
            return  # only tool results: they are shown under their calls
        self._place(turn)

    def _block(self, block: dict, blocks: list[Block], stamp: str | None, role: str) -> None:
        btype = block.get("type")
        if is_reminder_block(block):
            text = block["text"].removeprefix(REMINDER_OPEN).removesuffix(REMINDER_CLOSE).strip()
            blocks.append(Text(text, kind="reminder"))
        elif btype == "text" and isinstance(block.get("text"), str):
            if block["text"]:
                blocks.append(_text(block["text"], role))
        elif btype == "thinking" and isinstance(block.get("thinking"), str):
            blocks.append(Text(block["thinking"], kind="thinking"))
        elif btype == "tool_use":
            call = ToolCall(str(block.get("id") or "?"), str(block.get("name") or "?"), block.get("input"))
            self.calls[call.id] = call
            blocks.append(call)
        elif btype == "tool_result":
            result = ResultView(block.get("content"), block.get("is_error") is True, stamp)
            answered = self.calls.get(str(block.get("tool_use_id")))
            if answered is not None and answered.result is None:
                answered.result = result
            else:
                blocks.append(OrphanResult(str(block.get("tool_use_id")), result))
        else:
            blocks.append(Other(str(btype), describe_block(block)))

    def _run_for(self, record: dict) -> SubagentRun:
        path = record.get("subagent_path")
        key = path if isinstance(path, str) else f"?{len(self.runs)}"
        run = self.runs.get(key)
        if run is None:
            tool_use_id = _str(record.get("tool_use_id"))
            run = SubagentRun(_str(record.get("agent_name")) or "subagent", key, tool_use_id)
            self.runs[key] = run
            call = self.calls.get(tool_use_id or "")
            if call is not None:
                call.runs.append(run)
            else:
                self._place(run)
            run.transcript, run.problem = load_sidechain(self.session_dir, key, self.depth + 1)
        return run

    def _subagent_start(self, record: dict, stamp: str | None) -> None:
        self._run_for(record).started = stamp

    def _subagent_end(self, record: dict, stamp: str | None) -> None:
        run = self._run_for(record)
        run.ended = stamp
        run.result = record.get("result") if isinstance(record.get("result"), str) else None


def _plan_change(record: dict, stamp: str | None) -> PlanChange:
    task = record.get("task")
    return PlanChange(str(record.get("plan") or "?"), str(record.get("op") or "?"),
                      task if isinstance(task, dict) else None, stamp)


def _instructions_note(record: dict, stamp: str | None) -> InstructionsNote:
    sources = record.get("sources")
    if not isinstance(sources, list):
        sources = []
    paths = [s["path"] for s in sources
             if isinstance(s, dict) and isinstance(s.get("path"), str) and s.get("loaded") != 0]
    return InstructionsNote(paths, _str(record.get("start_dir")) or ".", _str(record.get("cut")) or "", stamp)


def _memory_write(record: dict, stamp: str | None) -> MemoryWrite:
    diff = record.get("diff")
    return MemoryWrite(str(record.get("scope") or "?"), str(record.get("path") or "?"), str(record.get("op") or "?"),
                       diff if isinstance(diff, str) else "", stamp, _str(record.get("by")))


def _compact_failed(record: dict, stamp: str | None) -> CompactFailed:
    usage = record.get("usage")
    return CompactFailed(_str(record.get("trigger")) or "?", _str(record.get("error")) or "",
                         record_tokens(usage) if isinstance(usage, dict) else Tokens(), stamp)


# record type -> its note (the types whose row in session/records.py says shown="note")
NOTE_BUILDERS: dict[str, Callable[[dict, str | None], Note]] = {
    "plan_update": _plan_change,
    "instructions": _instructions_note,
    "memory_write": _memory_write,
    "compact_failed": _compact_failed,
}


def build_transcript(path: Path, session_dir: Path, file: str, depth: int = 0) -> Transcript:
    """Read one transcript file into items; an unreadable line stays where it was. Raises OSError."""
    builder = _Builder(session_dir, file, depth)
    records: list[dict] = []
    skipped: list[Skipped] = []
    for line in iter_transcript(path):
        if line.record is None:
            gap = Skipped(file, line.number, len(line.raw), line.torn)
            skipped.append(gap)
            builder.restored = None
            builder.items.append(gap)
        else:
            records.append(line.record)
            builder.add(line.record)
    return Transcript(file, builder.items, builder.start, builder.tokens, builder.message_count, records, skipped)


def load_sidechain(session_dir: Path, relative: str, depth: int) -> tuple[Transcript | None, str | None]:
    if not is_sidechain_path(relative):
        return None, f"the marker names {relative!r}, which is not a sidechain file name; not opened"
    if depth > MAX_SUBAGENT_DEPTH:
        return None, "nested too deep; not opened"
    path = open_sidechain(session_dir, relative)
    if path is None:
        missing = not (session_dir / relative).exists() and not (session_dir / relative).is_symlink()
        return None, "the sidechain file is missing" if missing else "not a regular file; not opened"
    try:
        return build_transcript(path, session_dir, relative, depth), None
    except OSError as exc:
        return None, f"cannot read it: {exc.strerror or exc}"


def _lineage(store: SessionStore, transcript: Transcript) -> tuple[list[str], bool]:
    chain: list[str] = []
    source = next((i.from_session_id for i in transcript.items if isinstance(i, ResumeMarker)), None)
    while source and len(chain) < MAX_LINEAGE:
        if not is_session_id(source) or source in chain:
            return chain, True
        chain.append(source)
        path = store.sessions_dir / source / MESSAGES_NAME
        if (store.sessions_dir / source).is_symlink() or not path.is_file():
            return chain, True
        marker = next((r for r in first_records(path, 3) if r.get("type") == "resume_marker"), None)
        source = _str(marker.get("from_session_id")) if marker else None
    return chain, False


def load_session(store: SessionStore, session_id: str) -> SessionView:
    """The whole session `session_id` (already resolved), sidechains included. Raises OSError."""
    session_dir = store.session_dir(session_id)
    transcript = build_transcript(session_dir / MESSAGES_NAME, session_dir, MESSAGES_NAME)
    linked = {run.path for run in transcript.runs()}
    unlinked = []
    for relative in sidechain_paths(session_dir):
        if relative not in linked and relative.endswith(SIDECHAIN_SUFFIX):
            run = SubagentRun(relative.split("_")[1] if relative.count("_") >= 2 else "subagent", relative, None)
            run.transcript, run.problem = load_sidechain(session_dir, relative, 1)
            unlinked.append(run)
    info = store.info(session_id)
    lineage, missing = _lineage(store, transcript)
    # A foreign session (committed in the repository) that says it resumed one of the user's is not listed as its
    # continuation: the claim is a field of the stranger's own transcript, and session ids are no secret.
    rows = store.list(include_empty=True)
    shown_foreign = any(r.id == session_id and r.foreign for r in rows)
    resumed_as = sorted(r.id for r in rows if r.meta.resumed_from == session_id and (shown_foreign or not r.foreign))
    live = probe_live(session_dir)
    return SessionView(
        session_id, session_dir, info.meta if info else None, transcript, lineage, missing, resumed_as,
        unlinked, live.pid, live.live,
    )
