"""The agent loop: prompt -> model -> tools -> model ... until the model stops asking for tools.

`Agent` holds the conversation (`history`, Anthropic MessageParam dicts), a
provider, the tools, and the session `Recorder` that writes every message.
The four write points of SPEC §2 are kept in order, each record on disk
before the step that depends on it:

    user prompt      recorded, then the model is called
    assistant reply  recorded (with its token counts), then its tools run
    tool results     one user message with every tool_result, recorded, then
                     the next model call

Invariant: the history in memory is, message for message, what the session
transcript restores (`load_for_resume`) — the live process and a resumed one
send the model the same thing next. Every change to `history` goes through
`_add()`, which records the message and appends it.

Cancellation (Ctrl+C, the `cancel` event):

- during a model call: the partial answer is dropped (it was shown, never
  stored), and a user message `[Request interrupted by user]` is recorded. The
  history ends with the user role, which the API accepts (consecutive user
  messages form one turn), and the model learns why its answer is missing;
- during tools: the tool that was running returns (bash kills its process
  group) with its own result; every tool_use that did not run gets an
  `is_error` tool_result saying so; all results plus the same interruption
  text go into the one user message, recorded. Every tool_use is answered.

A `ProviderError` (API refused, network down) ends the turn and propagates:
nothing is recorded for the failed call, the history ends with the user's
message (or tool results) and stays valid and resumable.

Compaction (compaction.py) replaces the history with the one synthetic
summary message that resume builds from a `compact_boundary`; the boundary
is recorded first. It runs on `/compact` (`compact()`), after a `compact`
tool call (before the next model call), and automatically when the
history's JSON size passes `compact_threshold` — checked before the user's
prompt is added (so a new prompt is not summarised before the model saw it)
and before every further model call of a turn, not counting the tool
results the model has yet to read. Requests are built by `request_messages()`,
a pure view of the history (micro-compaction), never a change to it.

Subagents (subagents.py): `task` calls run a child Agent recorded in a
sidechain file; several task calls of one response run in parallel threads.

Permissions (permissions.py): before a tool runs, `_gate` asks the shared
`PermissionGate` whether the mode and rules let it run, ask the front end
(`on_approval`, one question at a time, labelled with a subagent's name), or
refuse it. The decision is recorded as a `permission` record (except in bypass
mode) before the tool runs; a refused call gets an `is_error` tool_result that
tells the model it was not run and why, and the turn goes on.
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evo_agent.providers.base import Provider, ProviderCancelled, ProviderError, StreamCallbacks
from evo_agent.session import Recorder, ResumedSession, SessionStore, SidechainRecorder, clean_name, summary_message
from evo_agent.session.file_history import FileHistory
from evo_agent.tools import BASIC_TOOLS, Tool, ToolContext, ToolResult, run_tool, validate_input
from evo_agent.tools.runner import INVALID_ARGUMENTS_KEY

from .compaction import (
    SUMMARY_MAX_TOKENS,
    SUMMARY_SYSTEM,
    finish_summary,
    history_chars,
    micro_compact,
    resume_window,
    summary_request,
)
from .permissions import INTERNAL_TOOLS, Asker, GateResult, PermissionGate, Policy
from .pricing import PRICES_AS_OF, cost_usd, format_usd
from .prompt import build_system_prompt
from .restored import settle_restored
from .subagents import task_tool
from .usage_chain import chain_usage

MAX_MODEL_CALLS = 50
DEFAULT_MAX_TOKENS = 8192
DEFAULT_COMPACT_CHARS = 50_000

INTERRUPTED_MARKER = "[Request interrupted by user]"
TOOL_INTERRUPTED_TEXT = "Not run: the user interrupted the turn (Ctrl+C) before this tool started."

PARALLEL_TOOLS = frozenset({"task"})  # several calls of these in one response run at once

COMPACT_SCHEMA = {
    "type": "object",
    "properties": {"focus": {"type": "string", "description": "What the summary should concentrate on."}},
}
COMPACT_DESCRIPTION = (
    "Summarise the conversation so far and continue from the summary, freeing context. Use it when the "
    "history is long and mostly done with; the summary keeps goals, decisions, files and remaining work."
)
COMPACT_SCHEDULED = "Compaction scheduled: the conversation will be summarised before the next model call."


class CompactionFailed(Exception):
    """The summary could not be made; history and transcript are as they were. One printable line."""


@dataclass
class CompactResult:
    summary: str
    compact_count: int
    trigger: str
    messages_before: int
    chars_before: int
    chars_after: int

    def describe(self) -> str:
        return (f"Compacted {self.messages_before} message{'s' if self.messages_before != 1 else ''} "
                f"({self.chars_before:,} characters) into a summary of {self.chars_after:,} characters "
                f"(compaction #{self.compact_count}, {self.trigger})")


@dataclass
class TurnResult:
    """How a turn ended. A failed model call raises ProviderError instead."""

    status: str  # "done" | "cancelled" | "limit"
    text: str = ""  # the text of the last assistant message of the turn
    model_calls: int = 0

    @property
    def cancelled(self) -> bool:
        return self.status == "cancelled"


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    model_calls: int = 0

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens

    def add(self, other: Usage) -> None:
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cache_creation_input_tokens += other.cache_creation_input_tokens
        self.cache_read_input_tokens += other.cache_read_input_tokens
        self.model_calls += other.model_calls


class _Callbacks:
    """Calls the UI's callbacks if it has them; a failing UI never breaks the loop's records."""

    def __init__(self, target: Any) -> None:
        self.target = target

    def _call(self, name: str, *args: Any) -> None:
        fn = getattr(self.target, name, None) if self.target is not None else None
        if fn is None:
            return
        try:
            fn(*args)
        except Exception:  # noqa: BLE001 - display problems must not corrupt the turn
            pass

    def text(self, text: str) -> None:
        self._call("on_text", text)

    def thinking(self, text: str) -> None:
        self._call("on_thinking", text)

    def tool_start(self, tool_id: str, name: str, tool_input: dict) -> None:
        self._call("on_tool_start", tool_id, name, tool_input)

    def tool_end(self, tool_id: str, text: str, is_error: bool, duration: float) -> None:
        self._call("on_tool_end", tool_id, text, is_error, duration)

    def notice(self, text: str) -> None:
        self._call("on_notice", text)

    @property
    def asker(self) -> Asker | None:
        """The front end's `on_approval`, or None when it cannot ask (print mode)."""
        fn = getattr(self.target, "on_approval", None) if self.target is not None else None
        return fn if callable(fn) else None


@dataclass
class FrontEnd:
    """How a turn reaches the user for approvals and notices; a subagent borrows its parent's."""

    ask: Asker | None = None
    notice: Any = None  # Callable[[str], None] | None


def text_of(message: dict) -> str:
    """The visible text of a message (text blocks joined)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")


def tool_result_block(tool_use_id: str, content: str, is_error: bool = False) -> dict:
    block: dict = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content or "(no output)"}
    if is_error:
        block["is_error"] = True
    return block


def _clean_assistant(message: dict) -> dict:
    """The assistant message as it is stored and sent back: blocks only, no empty text.

    The same cleaning the resume path applies, so live and restored histories agree.
    """
    content = message.get("content")
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    blocks = [
        b for b in (content or [])
        if isinstance(b, dict) and isinstance(b.get("type"), str)
        and not (b["type"] == "text" and not (isinstance(b.get("text"), str) and b["text"]))
    ]
    return {"role": "assistant", "content": blocks}


class Agent:
    """One conversation with a model, recorded into one session at a time.

    Shaped like `evo_agent.ui.bridge.AgentLike`, so the TUI can drive it.
    """

    def __init__(
        self,
        *,
        provider: Provider,
        recorder: Recorder | SidechainRecorder,
        project_dir: Path | str,
        store: SessionStore | None = None,
        tools: list[Tool] | None = None,
        history: list[dict] | None = None,
        system_prompt: str | None = None,
        system_note: str = "",
        max_model_calls: int = MAX_MODEL_CALLS,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        compact_threshold: int | None = None,
        compact_count: int = 0,
        allow_subagents: bool = True,
        usage: Usage | None = None,
        file_history: FileHistory | None = None,
        permissions: PermissionGate | None = None,
        agent_label: str = "",
        front_end: FrontEnd | None = None,
        sandbox: Any = None,
    ) -> None:
        self.provider = provider
        self._file_history = file_history  # a subagent keeps its file backups in the main session
        self.recorder = recorder
        self.project_dir = Path(project_dir)
        self.store = store
        # The file and shell tools, then the tools that need the agent itself.
        self.tools: list[Tool] = list(BASIC_TOOLS if tools is None else tools)
        self.tools.append(Tool("compact", COMPACT_DESCRIPTION, COMPACT_SCHEMA, self._compact_tool))
        if allow_subagents:
            self.tools.append(task_tool(self))
        self.history: list[dict] = list(history or [])
        self._system_prompt = system_prompt
        self._system_note = system_note
        self.max_model_calls = max_model_calls
        self.max_tokens = max_tokens
        self.usage = usage or Usage()  # a resumed session continues its sources' totals (resumed_usage)
        self.compact_threshold = compact_threshold or default_compact_threshold()
        self.compact_count = compact_count  # compactions so far, counted across resumes
        self._compact_request: str | None = None  # the focus of a `compact` tool call, until it runs
        self._cleared_holder: str | None = None  # who held the conversation before /clear (holder_session_id)
        self._wrote_own = False  # this process added a message or a compaction to the current session
        self.turn_callbacks: Any = None  # the running turn's front-end callbacks (subagents nest theirs under it)
        self._lock = threading.Lock()  # one turn, compaction or session switch at a time
        self._usage_lock = threading.Lock()  # parallel subagents add their usage here
        # Called with the agent after each turn, its records on disk (e.g. the team store's push).
        # They run on the turn's thread: each must return at once and never raise.
        self.turn_listeners: list[Callable[[Agent], None]] = []
        # Who may run what: shared with subagents, so their approvals queue on one lock.
        self.permissions = permissions or PermissionGate(Policy(self.project_dir))
        self.agent_label = agent_label  # "" for the main agent; a subagent's name labels its requests
        self._inherited_front = front_end  # a subagent asks through its parent's front end
        self.front_end = front_end or FrontEnd()
        self.sandbox = sandbox  # a tools.sandbox.Sandbox: bash runs inside bubblewrap

    @property
    def permission_mode(self) -> str:
        """ask | accept-edits | read-only | bypass (shown in the status line and by /permissions)."""
        return self.permissions.mode

    def permissions_text(self) -> str:
        """What `/permissions` shows: the mode and the allow rules in force (may span lines)."""
        return self.permissions.policy.describe()

    # ---- what the UI reads (AgentLike)
    @property
    def session_id(self) -> str:
        return self.recorder.session_id

    @property
    def model(self) -> str:
        return self.provider.model

    @property
    def messages(self) -> list[dict]:
        return self.history

    @property
    def total_tokens(self) -> int:
        return self.usage.total

    @property
    def context_chars(self) -> int:
        """The history's JSON size: what is compared with `compact_threshold`."""
        return history_chars(self.history)

    # ---- what the model sees
    def tool_specs(self) -> list[dict]:
        return [t.api_spec() for t in self.tools]

    @property
    def system_prompt(self) -> str:
        if self._system_prompt is None:
            self._system_prompt = build_system_prompt(self.project_dir, self.tool_specs()) + self._system_note
        return self._system_prompt

    def request_messages(self) -> list[dict]:
        """The messages of the next request: a pure view of `history` (never a change to it)."""
        return micro_compact(self.history)

    # ---- sessions
    def switch_session(self, recorder: Recorder, history: list[dict], compact_count: int = 0) -> None:
        """Continue in another session (/resume ID, /clear): its recorder, its history, fresh totals."""
        with self._lock:
            try:
                self.recorder.checkpoint()
            except Exception:  # noqa: BLE001 - the recorder never raises; be sure anyway
                pass
            self.recorder = recorder
            self.history = list(history)
            self.usage = Usage()
            self.compact_count = compact_count
            self._compact_request = None
            self._cleared_holder = None
            self._wrote_own = False

    def _require_store(self) -> SessionStore:
        if self.store is None:
            raise RuntimeError("this agent has no session store")
        return self.store

    def resume(self, session_id: str, *, allow_foreign: bool = False) -> ResumedSession:
        """Switch to a new session holding the restored history of `session_id` (id or unique prefix).

        Raises a SessionError (one printable line) for a bad, ambiguous or unknown id, and
        ForeignSession for a session this user did not record here unless `allow_foreign`
        (the user confirmed it: "recorded elsewhere: … — resume anyway?").
        """
        store = self._require_store()
        source = store.resolve(session_id)
        resumed = store.resume(source, model=self.provider.model, provider=self.provider.name,
                               allow_foreign=allow_foreign, copy=False, window=resume_window(self.compact_threshold))
        self.switch_session(resumed.recorder, resumed.loaded.messages, resumed.loaded.compact_count)
        self.usage = resumed_usage(store, source)
        resumed.notice = settle_restored(self, resumed)  # restored.py: a copy, or (over the threshold) a summary
        return resumed

    @property
    def file_history(self) -> FileHistory | None:
        """Where the file tools keep what they change (for rewinds): the live session's directory."""
        if self._file_history is not None:
            return self._file_history
        if isinstance(self.recorder, Recorder):
            return FileHistory(self.recorder.session_dir, self.recorder.append)
        return None

    @property
    def name(self) -> str | None:
        """The live session's name (set by -n or /rename, or inherited by a resume), if any."""
        meta = getattr(self.recorder, "meta", None)
        return getattr(meta, "name", None)

    def rename(self, name: str) -> str:
        """Name the live session (`/rename NAME`); returns the name as stored. ValueError for an empty one."""
        cleaned = clean_name(name)
        if not cleaned:
            raise ValueError("a session name needs at least one visible character")
        self.recorder.session_name(cleaned)
        self.recorder.checkpoint()
        return cleaned

    def rewind(self, turn: int) -> ResumedSession:
        """Continue in a new session whose history ends just before user turn `turn` of this one (/rewind)."""
        store = self._require_store()
        source = self.session_id
        self.recorder.checkpoint()
        resumed = store.resume(source, model=self.provider.model, provider=self.provider.name, before_turn=turn)
        self.switch_session(resumed.recorder, resumed.loaded.messages, resumed.loaded.compact_count)
        self.usage = resumed_usage(store, source)
        self.hold_conversation()
        return resumed

    def hold_conversation(self) -> None:
        """This session holds the conversation even before anything is said in it (a rewind: not the source's)."""
        self._wrote_own = True

    def clear(self) -> Recorder:
        """Start a fresh, empty session; the old one stays resumable."""
        store = self._require_store()
        previous = self.holder_session_id()
        recorder = store.create(model=self.provider.model, provider=self.provider.name)
        self.switch_session(recorder, [])
        self._cleared_holder = previous
        return recorder

    def holder_session_id(self) -> str:
        """The session a user should resume to get this conversation back (what the exit hint names).

        The live session once anything was said in it (even a prompt the API
        refused: resuming it keeps that prompt); before that, the session it
        was resumed from (resume-then-exit adds nothing), or after /clear the
        one that held the conversation before; else the live one.
        """
        meta = getattr(self.recorder, "meta", None)
        if meta is None or self._wrote_own or meta.has_conversation:
            return self.session_id
        return meta.resumed_from or self._cleared_holder or self.session_id

    # ---- compaction
    def compact(self, focus: str | None = None, cancel: threading.Event | None = None, *,
                trigger: str = "manual") -> CompactResult:
        """Summarise the history now (`/compact [focus]`; "auto" for a resumed history over the threshold).

        Raises CompactionFailed (one line).
        """
        with self._lock:
            self.recorder.prompt_id = str(uuid.uuid4())  # its own "turn", not the previous prompt's
            return self._compact(focus, trigger, cancel or threading.Event())

    def _compact(self, focus: str | None, trigger: str, cancel: threading.Event) -> CompactResult:
        """One summary call; then the boundary is recorded and only then the history replaced."""
        if not self.history:
            raise CompactionFailed("there is nothing to compact yet")
        if len(self.history) == 1 and self.history[0] == summary_message(_summary_text(self.history[0])):
            raise CompactionFailed("there is nothing to compact: the conversation is already one summary")
        try:
            response = self.provider.complete(
                system=SUMMARY_SYSTEM,
                messages=summary_request(self.history, focus),
                tools=[],
                max_tokens=SUMMARY_MAX_TOKENS,
                cancel=cancel,
            )
        except ProviderCancelled:
            raise CompactionFailed("the summary was interrupted; nothing was compacted") from None
        except ProviderError as exc:
            raise CompactionFailed(f"the summary call failed ({exc}); nothing was compacted") from None
        self._count(response)
        model_text = text_of(response.message).strip()
        if not model_text:
            raise CompactionFailed("the model returned an empty summary; nothing was compacted")
        summary = finish_summary(model_text, self.history)
        before, chars_before = len(self.history), history_chars(self.history)
        count = self.compact_count + 1
        if not self.recorder.compact_boundary(summary, count, trigger, input_tokens=response.input_tokens,
                                              output_tokens=response.output_tokens):
            # Replacing the history now would make the live session differ from what resume restores.
            raise CompactionFailed("the summary could not be saved to the transcript; nothing was compacted")
        self.history = [summary_message(summary)]
        self.compact_count = count
        self._wrote_own = True
        return CompactResult(summary, count, trigger, before, chars_before, history_chars(self.history))

    def _compact_tool(self, tool_input: dict, ctx: ToolContext) -> ToolResult:
        """The `compact` tool: the compaction itself runs once this response's tools are answered."""
        self._compact_request = str(tool_input.get("focus") or "")
        return ToolResult(COMPACT_SCHEDULED)

    def _compact_if_due(self, cb: _Callbacks, cancel: threading.Event, turn: dict, *, mid_turn: bool) -> None:
        """Run a compaction the `compact` tool asked for, or an automatic one when the history is too big.

        Mid-turn, the newest message (tool results the model has not seen yet)
        does not count towards the threshold: one large result can then never
        be summarised away before the model reads it, and a model that runs the
        tool again cannot be caught in a compact-and-reread loop.
        """
        if self._compact_request is not None:
            focus, self._compact_request = self._compact_request, None
            trigger = "tool"
        else:
            seen = self.history[:-1] if mid_turn else self.history
            if turn.get("auto_failed") or len(seen) < 2 or history_chars(seen) <= self.compact_threshold:
                return
            focus, trigger = None, "auto"
        try:
            cb.notice(self._compact(focus or None, trigger, cancel).describe())
        except CompactionFailed as exc:
            if trigger == "auto":
                turn["auto_failed"] = True  # warn once per turn, not before every call
            cb.notice(f"evo-agent: {trigger} compaction failed: {exc}")

    def add_usage(self, usage: Usage) -> None:
        """Add a subagent's usage to this agent's totals (thread safe)."""
        with self._usage_lock:
            self.usage.add(usage)

    def _chain(self) -> list:
        """The metas of the sessions this one continues (nearest first); [] when it is not a resume."""
        if self.store is None or not getattr(getattr(self.recorder, "meta", None), "resumed_from", None):
            return []
        try:
            return self.store.lineage(self.session_id)
        except OSError:
            return []

    def own_usage(self) -> Usage:
        """This session's own usage: `usage` less the resume chain's totals it started from (resumed_usage)."""
        u = self.usage
        chain_in = chain_out = 0
        if self.store is not None and getattr(getattr(self.recorder, "meta", None), "resumed_from", None):
            chain_in, chain_out = chain_usage(self.store, self.recorder.meta.resumed_from)
        return Usage(max(0, u.input_tokens - chain_in), max(0, u.output_tokens - chain_out),
                     u.cache_creation_input_tokens, u.cache_read_input_tokens, u.model_calls)

    def cost_usd(self) -> float | None:
        """This session's own dollars so far, None when the model's price is unknown."""
        u = self.own_usage()
        return cost_usd(self.model, input_tokens=u.input_tokens, output_tokens=u.output_tokens,
                        cache_creation_input_tokens=u.cache_creation_input_tokens,
                        cache_read_input_tokens=u.cache_read_input_tokens)

    def cost_text(self) -> str:
        """`/cost`: tokens and dollars of this session, then of the whole resume chain it continues."""
        u = self.own_usage()
        text = (f"session {self.session_id}: {u.input_tokens:,} input + {u.output_tokens:,} output "
                f"= {u.total:,} tokens in {u.model_calls} model call{'s' if u.model_calls != 1 else ''}")
        if u.cache_read_input_tokens or u.cache_creation_input_tokens:
            text += (f" (cache: {u.cache_read_input_tokens:,} read, "
                     f"{u.cache_creation_input_tokens:,} written)")
        dollars = self.cost_usd()
        text += f" · {format_usd(dollars)}" if dollars is not None else f" · no price known for {self.model}"
        chain = self._resume_chain_text(u, dollars)
        if chain:
            text += "\n" + chain
        if dollars is not None or chain:
            text += f"\n(list prices of {PRICES_AS_OF}; earlier sessions as their transcripts recorded them)"
        return text

    def _resume_chain_text(self, usage: Usage, dollars: float | None) -> str:
        """The totals across the sessions this one was resumed from, and this one: '' when it is not a resume."""
        chain = self._chain()
        if not chain:
            return ""
        tokens = usage.total + usage.cache_creation_input_tokens + usage.cache_read_input_tokens
        total = dollars
        for info in chain:
            m = info.meta
            tokens += m.total_input_tokens + m.total_output_tokens + m.total_cache_creation_tokens \
                + m.total_cache_read_tokens
            part = cost_usd(m.model, input_tokens=m.total_input_tokens, output_tokens=m.total_output_tokens,
                            cache_creation_input_tokens=m.total_cache_creation_tokens,
                            cache_read_input_tokens=m.total_cache_read_tokens)
            total = None if part is None or total is None else total + part
        n = len(chain)
        money = format_usd(total) if total is not None else "dollars unknown (a model without a known price)"
        return f"with the {n} session{'s' if n != 1 else ''} it continues: {tokens:,} tokens · {money}"

    # ---- the loop
    def _add(self, message: dict, **record_fields: Any) -> None:
        """Record `message` in the transcript, then append it to the history (one path for both)."""
        self._wrote_own = True
        if message["role"] == "user":
            self.recorder.user(message)
        else:
            self.recorder.assistant(message, **record_fields)
        self.history.append(message)

    def run_turn(
        self,
        prompt: str,
        callbacks: Any = None,
        cancel: threading.Event | None = None,
        *,
        prompt_id: str | None = None,
    ) -> TurnResult:
        """Run one user turn until the model stops asking for tools (or the turn is cancelled).

        `callbacks` may have any of on_text, on_thinking, on_tool_start,
        on_tool_end, on_notice (see `evo_agent.ui.bridge.TurnCallbacks`).
        `prompt_id` is for a subagent, whose records belong to its parent's turn.
        Raises ProviderError when the model cannot be reached or refuses.
        """
        if not isinstance(prompt, str) or not prompt.strip():
            raise ValueError("empty prompt")
        cb = _Callbacks(callbacks)
        cancel = cancel if cancel is not None else threading.Event()
        with self._lock:
            if callbacks is None and self._inherited_front is not None:
                self.front_end = self._inherited_front
            else:
                self.front_end = FrontEnd(cb.asker, cb.notice)
            self.recorder.prompt_id = prompt_id or str(uuid.uuid4())
            self.turn_callbacks = callbacks
            turn: dict = {}
            try:
                self._compact_if_due(cb, cancel, turn, mid_turn=False)  # before the prompt joins the history
                self._add({"role": "user", "content": prompt})
                return self._loop(cb, cancel, turn)
            finally:
                # A compaction the model asked for but that never ran (Ctrl+C, an API error) is
                # forgotten: the transcript has no trace of it, so a resume would not run it either.
                self._compact_request = None
                self.recorder.checkpoint()
                self._tell_turn_listeners()

    def _tell_turn_listeners(self) -> None:
        for listener in self.turn_listeners:
            try:
                listener(self)
            except Exception:  # noqa: BLE001 - a listener never breaks a turn
                pass

    def _loop(self, cb: _Callbacks, cancel: threading.Event, turn: dict) -> TurnResult:
        calls = 0
        last_text = ""
        stream = StreamCallbacks(on_text=cb.text, on_thinking=cb.thinking, on_retry=cb.notice)
        while True:
            if cancel.is_set():
                self._add({"role": "user", "content": INTERRUPTED_MARKER})
                return TurnResult("cancelled", last_text, calls)
            if calls >= self.max_model_calls:
                if self._compact_request is not None:  # the model's last act was to ask for it: do it now
                    self._compact_if_due(cb, cancel, turn, mid_turn=True)
                cb.notice(f"stopped after {calls} model calls in one turn; send a message to continue")
                return TurnResult("limit", last_text, calls)
            if calls:
                self._compact_if_due(cb, cancel, turn, mid_turn=True)
                if cancel.is_set():
                    continue
            calls += 1
            try:
                response = self.provider.complete(
                    system=self.system_prompt,
                    messages=self.request_messages(),
                    tools=self.tool_specs(),
                    max_tokens=self.max_tokens,
                    callbacks=stream,
                    cancel=cancel,
                )
            except ProviderCancelled:
                self._add({"role": "user", "content": INTERRUPTED_MARKER})
                return TurnResult("cancelled", last_text, calls)
            self._count(response)
            message = _clean_assistant(response.message)
            if not message["content"]:
                # Nothing the API would accept back: neither stored nor kept (resume drops it too).
                return TurnResult("done", last_text, calls)
            fields: dict[str, Any] = {"input_tokens": response.input_tokens, "output_tokens": response.output_tokens}
            if response.cache_creation_input_tokens is not None:
                fields["cache_creation_input_tokens"] = response.cache_creation_input_tokens
            if response.cache_read_input_tokens is not None:
                fields["cache_read_input_tokens"] = response.cache_read_input_tokens
            self._add(message, **fields)
            last_text = text_of(message)
            uses = [b for b in message["content"] if b.get("type") == "tool_use"]
            if not uses:
                return TurnResult("done", last_text, calls)
            results = self._run_tools(uses, cb, cancel)
            if cancel.is_set():
                self._add({"role": "user", "content": results + [{"type": "text", "text": INTERRUPTED_MARKER}]})
                return TurnResult("cancelled", last_text, calls)
            self._add({"role": "user", "content": results})

    def _count(self, response: Any) -> None:
        with self._usage_lock:
            u = self.usage
            u.model_calls += 1
            u.input_tokens += response.input_tokens or 0
            u.output_tokens += response.output_tokens or 0
            u.cache_creation_input_tokens += response.cache_creation_input_tokens or 0
            u.cache_read_input_tokens += response.cache_read_input_tokens or 0

    def _run_tools(self, uses: list[dict], cb: _Callbacks, cancel: threading.Event) -> list[dict]:
        """Run the tool_uses of one response; every one gets exactly one tool_result, in order.

        Calls of PARALLEL_TOOLS (subagents) run at once in threads when there
        are several; every other tool runs in order in this thread.
        """
        results: list[dict | None] = [None] * len(uses)

        def run_one(i: int) -> None:
            block = uses[i]
            tool_id, name = block.get("id", ""), block.get("name", "")
            tool_input = block.get("input") if isinstance(block.get("input"), dict) else {}
            if cancel.is_set():
                results[i] = tool_result_block(tool_id, TOOL_INTERRUPTED_TEXT, True)
                cb.tool_end(tool_id, TOOL_INTERRUPTED_TEXT, True, 0.0)
                return
            refusal = self._gate(tool_id, name, tool_input, cancel)
            cb.tool_start(tool_id, name, tool_input)
            started = time.monotonic()
            if refusal is not None:
                result = refusal
            else:
                ctx = ToolContext(project_dir=self.project_dir, cancel=cancel, tool_use_id=tool_id,
                                  file_history=self.file_history, sandbox=self.sandbox)
                result = run_tool(self.tools, name, tool_input, ctx)
            results[i] = tool_result_block(tool_id, result.content, result.is_error)
            cb.tool_end(tool_id, result.content, result.is_error, time.monotonic() - started)

        parallel = [i for i, b in enumerate(uses) if b.get("name") in PARALLEL_TOOLS]
        if len(parallel) < 2:
            parallel = []
        threads = [threading.Thread(target=run_one, args=(i,), name=f"evo-agent-{uses[i].get('name')}", daemon=True)
                   for i in parallel]
        for thread in threads:
            thread.start()
        for i in range(len(uses)):
            if i not in parallel:
                run_one(i)
        for thread in threads:
            thread.join()
        return [r for r in results if r is not None]

    def _gate(self, tool_id: str, name: str, tool_input: dict, cancel: threading.Event) -> ToolResult | None:
        """None when the call may run; else the `is_error` result that says why it did not.

        Every decision (outside bypass mode) is recorded as a `permission` record before the tool
        runs; a refused call's result says why it was not run.
        """
        if name in INTERNAL_TOOLS or not self._well_formed(name, tool_input):
            return None  # the tool refuses it itself, without running anything
        front = self.front_end
        outcome = self.permissions.decide(name, tool_input, front.ask, self.agent_label)
        if outcome.run and cancel.is_set():  # Ctrl+C while the user was being asked
            outcome = GateResult(False, "refused", "interrupted", TOOL_INTERRUPTED_TEXT)
        if self.permissions.mode != "bypass":  # bypass decides nothing; its start-up warning says so
            self.recorder.append("permission", tool_use_id=tool_id, tool=name, decision=outcome.decision,
                                 rule=outcome.rule, **({"agent_name": self.agent_label} if self.agent_label else {}))
        if outcome.notice and front.notice is not None:
            label = f"evo-agent: [{self.agent_label}]" if self.agent_label else "evo-agent:"
            try:
                front.notice(outcome.notice.replace("evo-agent:", label, 1))
            except Exception:  # noqa: BLE001
                pass
        return None if outcome.run else ToolResult(outcome.message, is_error=True)

    def _well_formed(self, name: str, tool_input: dict) -> bool:
        tool = next((t for t in self.tools if t.name == name), None)
        if tool is None or INVALID_ARGUMENTS_KEY in tool_input:
            return False
        return validate_input(tool, tool_input)[1] is None


def default_compact_threshold() -> int:
    """The history size (JSON characters) that triggers automatic compaction: EVO_AGENT_COMPACT_CHARS."""
    return _env_int("EVO_AGENT_COMPACT_CHARS", DEFAULT_COMPACT_CHARS)


def resumed_usage(store: SessionStore, source: str) -> Usage:
    """The totals a session resumed from `source` starts with: everything its resume chain spent."""
    input_tokens, output_tokens = chain_usage(store, source)
    return Usage(input_tokens=input_tokens, output_tokens=output_tokens)


def _summary_text(message: dict) -> str:
    """The summary inside a synthetic summary message (or '' for any other message)."""
    content = text_of(message)
    prefix, suffix = "<previous-conversation-summary>\n", "\n</previous-conversation-summary>"
    if message.get("role") == "user" and content.startswith(prefix) and content.endswith(suffix):
        return content[len(prefix):-len(suffix)]
    return ""


def _env_int(name: str, default: int) -> int:
    try:
        value = int(os.environ.get(name, ""))
    except ValueError:
        return default
    return value if value > 0 else default


__all__ = [
    "Agent",
    "default_compact_threshold",
    "CompactResult",
    "CompactionFailed",
    "INTERRUPTED_MARKER",
    "MAX_MODEL_CALLS",
    "TOOL_INTERRUPTED_TEXT",
    "TurnResult",
    "Usage",
    "resumed_usage",
    "text_of",
    "tool_result_block",
]
