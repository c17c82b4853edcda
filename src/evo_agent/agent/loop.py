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

Compaction replaces the history with the one synthetic summary message that
resume builds from a `compact_boundary`; the boundary is recorded first. When
it runs is compaction_state.py's business (`/compact`, the `compact` tool, the
size threshold), the summary's text compaction.py's. Requests are built by
`request_messages()`, a pure view of the history (micro-compaction), never a
change to it. Tokens and dollars are counted in usage.py; what the loop calls
on its front end is events.py (text deltas, tools, notices) and callbacks.py (`on_event`, approvals).

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
from collections.abc import Callable
from pathlib import Path

from evo_agent.providers.base import ModelResponse, Provider, ProviderCancelled, StreamCallbacks
from evo_agent.session import (
    INTERRUPTED_MARKER,
    INVALID_ARGUMENTS_KEY,
    Recorder,
    SidechainRecorder,
    blocks,
    clean_name,
    content_blocks,
    created_ms_of,
    has_tool_results,
    reminder_block,
    summary_message,
    text_of,
    tool_result_block,
    tool_uses,
)
from evo_agent.session import plain_dataclass as dataclass
from evo_agent.tools import BASIC_TOOLS, Tool, ToolContext, ToolResult, facts_of, run_tool, validate_input

from .callbacks import FrontEnd, SafeCallbacks, TurnCallbacks
from .compaction import history_chars, micro_compact
from .compaction_state import (
    CompactionFailed,
    CompactionState,
    CompactResult,
    ConversationPrefix,
    PromptTooLarge,
    check_compactable,
    default_compact_threshold,
    prompt_refusal,
    request_summary,
    summary_of,
)
from .events import ToolFinished, ToolStarted
from .instructions import Instructions, InstructionsWatch, begin_instructions, work_dir
from .memory_context import MemoryContext
from .permissions import GateResult, PermissionGate, Policy
from .plan_context import PlanContext
from .prompt import build_system_prompt, date_reminder, prompt_version
from .subagents import task_tool
from .usage import Usage, cost_report, own_usage, resumed_usage, usage_cost

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)
if TYPE_CHECKING:
    from typing import Any

    from evo_agent.session import FileHistory, ResumedSession, SessionStore

    from .resuming import Confirm, Resumed

MAX_MODEL_CALLS = 50
DEFAULT_MAX_TOKENS = 8192

TOOL_INTERRUPTED_TEXT = "Not run: the user interrupted the turn (Ctrl+C) before this tool started."


@dataclass
class TurnResult:
    """How a turn ended. A failed model call raises ProviderError instead."""

    status: str  # "done" | "cancelled" | "limit"
    text: str = ""  # the text of the last assistant message of the turn
    model_calls: int = 0

    @property
    def cancelled(self) -> bool:
        return self.status == "cancelled"


def _uuid4() -> str:
    """`str(uuid.uuid4())`, without importing uuid (it loads `platform`: ~4 ms before the first request)."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40  # version 4
    raw[8] = (raw[8] & 0x3F) | 0x80  # the RFC 4122 variant
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _result_block(tool_use_id: str, result: ToolResult) -> dict[str, Any]:
    """The tool_result block of a tool's result; an empty output reads "(no output)".

    A result with blocks besides its text (an MCP tool's images) carries a list: the text first.
    """
    if result.blocks:
        content: str | list[Any] = [{"type": "text", "text": result.content or "(no output)"}, *result.blocks]
        return tool_result_block(tool_use_id, content, is_error=result.is_error)
    return tool_result_block(tool_use_id, result.content or "(no output)", is_error=result.is_error)


def _clean_assistant(message: dict[str, Any]) -> dict[str, Any]:
    """The assistant message as it is stored and sent back: blocks only, no empty text.

    The same cleaning the resume path applies, so live and restored histories agree.
    """
    kept = [b for b in blocks(message) if isinstance(b.get("type"), str)
            and not (b["type"] == "text" and not (isinstance(b.get("text"), str) and b["text"]))]
    return {"role": "assistant", "content": kept}


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
        history: list[dict[str, Any]] | None = None,
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
        sandbox: Any = None,  # a tools.sandbox.Sandbox: bash runs inside bubblewrap
        plan: bool = True,  # the Session Plan's tools and reminders (plan_context.py)
        plan_reason: str | None = None,  # why the first message announces the plan (default: start or resume)
        # The session's project instructions and start directory, as recorded (instructions.py); None: none,
        # tools at the project's root. The main agent (no `agent_label`) also watches the files for changes.
        instructions: Instructions | None = None,
        memory: Any = None,  # a session.MemoryStore: Auto Memory's tool and indexes (memory_context.py); None: off
        mcp: Any = None,  # a tools.mcp_client.McpManager: the MCP servers (mcp_context.py)
    ) -> None:
        self.provider = provider
        self._file_history = file_history  # a subagent keeps its file backups in the main session
        self.recorder = recorder
        self.project_dir = Path(project_dir)
        self.store = store
        # The file and shell tools, then the tools that need the agent itself.
        self.tools: list[Tool] = list(BASIC_TOOLS if tools is None else tools)
        self.compaction = CompactionState(compact_threshold or default_compact_threshold(), compact_count)
        self.tools.append(self.compaction.tool())
        # Reminders (SPEC §2 `reminder`, §12): context for the model that waits for the next user message.
        self._reminders: list[tuple[str, str]] = []
        self._reminder_lock = threading.Lock()  # queue_reminder may be called from another thread
        self.plan: PlanContext | None = PlanContext(self) if plan else None
        if self.plan is not None:
            self.tools.extend(self.plan.tools())
            self.plan.announce(plan_reason or ("resume" if history else "session_start"))
        if allow_subagents:
            self.tools.append(task_tool(self))
        self.history: list[dict[str, Any]] = list(history or [])
        self._fixed_system_prompt = system_prompt
        self._system_prompt: tuple[tuple[str, str], str] | None = None  # ((conversation id, memory), its prompt)
        self._prompt_version = 0  # the conversation's template (prompt.py), taken below once the scene is set
        self._system_note = system_note
        self.max_model_calls = max_model_calls
        self.max_tokens = max_tokens
        self.usage = usage or Usage()  # a resumed session continues its sources' totals (resumed_usage)
        self._cleared_holder: str | None = None  # who held the conversation before /clear (holder_session_id)
        self._wrote_own = False  # this process added a message or a compaction to the current session
        # The running turn's front-end callbacks (subagents nest theirs under it).
        self.turn_callbacks: TurnCallbacks | None = None
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
        self.sandbox = sandbox
        self.instructions = Instructions()
        self.cwd = self.project_dir  # where the tools run: the recorded start directory (instructions.py)
        self._instructions_watch: InstructionsWatch | None = None
        self._use_instructions(instructions)
        # Auto Memory (memory_context.py): the tool, and the indexes in the prefix, taken at session start.
        self.memory: MemoryContext | None = MemoryContext(self, memory) if memory is not None else None
        self._kept_memory = ""  # Auto Memory off: the memory section a resumed session's source had (its prefix)
        if self.memory is not None:
            self.permissions.policy.memory_store = memory
            self.memory.start()
        self._offer_memory_tool()
        self._take_prompt_version()
        from .mcp_context import McpContext

        # MCP tools join `tools` at the session's first request (tool_specs), fixed for the session (SPEC §12).
        self.mcp = McpContext(self, mcp)

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
    def main_recorder(self) -> Recorder:
        """The main transcript's recorder: naming, Auto Memory and subagents belong to the main agent only."""
        if not isinstance(self.recorder, Recorder):
            raise TypeError(f"the subagent {self.agent_label!r} writes a sidechain, not the main transcript")
        return self.recorder

    @property
    def model(self) -> str:
        return self.provider.model

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.history

    @property
    def total_tokens(self) -> int:
        return self.usage.total

    @property
    def compact_threshold(self) -> int:
        """context_chars at which auto-compaction starts (AgentLike)."""
        return self.compaction.threshold

    @property
    def compact_count(self) -> int:
        """Compactions so far, counted across resumes."""
        return self.compaction.count

    @property
    def context_chars(self) -> int:
        """The history's JSON size: what is compared with `compact_threshold`."""
        return history_chars(self.history)

    # ---- what the model sees
    def tool_specs(self, cancel: threading.Event | None = None) -> list[dict[str, Any]]:
        """The tools of every request of this session: fixed at its first (MCP servers start then;
        `cancel` interrupts the wait for them)."""
        self._fix_mcp_tools(cancel)
        return [t.api_spec() for t in self.tools]

    def _fix_mcp_tools(self, cancel: threading.Event | None = None) -> None:
        if self.mcp.defs is not None:
            return
        from .mcp_context import drop_mcp_tools

        added = self.mcp.fix(cancel)
        if added is not None:
            self.tools = drop_mcp_tools(self.tools) + added
        self.permissions.policy.read_only_tools = self.mcp.read_only_tools()

    # ---- MCP (/mcp)
    def mcp_text(self) -> str:
        """`/mcp`: each server's state and the tools this session has of it."""
        return self.mcp.describe()

    def mcp_reconnect(self, name: str) -> str:
        """`/mcp reconnect NAME`: one line saying how it went (waits at most the start timeout)."""
        return self.mcp.reconnect(name)

    def close(self) -> None:
        """Stop what the agent started outside its turns (MCP servers); leaving calls it."""
        self.mcp.close()

    @property
    def conversation_id(self) -> str:
        """The first session of this conversation's resume chain: the prompt's date and the cache key (SPEC §12)."""
        root = getattr(getattr(self.recorder, "meta", None), "root_session_id", None)
        return root if isinstance(root, str) and root else self.session_id

    @property
    def system_prompt(self) -> str:
        """The same bytes for every request of a conversation, resumed or not (prompt.py)."""
        if self._fixed_system_prompt is not None:
            return self._fixed_system_prompt
        conversation = self.conversation_id
        memory = self.memory.prefix if self.memory is not None else self._kept_memory
        if self._system_prompt is None or self._system_prompt[0] != (conversation, memory):
            try:
                started: int | None = created_ms_of(conversation)
            except ValueError:
                started = None
            text = build_system_prompt(self.project_dir, self.tool_specs(), started, cwd=self.cwd,
                                       context=[self.instructions.text, memory],
                                       version=self._prompt_version) + self._system_note
            self._system_prompt = ((conversation, memory), text)
        return self._system_prompt[1]

    def _take_prompt_version(self) -> None:
        """The current session's template version: the one its conversation recorded, else recorded now."""
        self._system_prompt = None
        self._prompt_version = prompt_version(self.recorder) if self._fixed_system_prompt is None else 0

    # ---- project instructions and the start directory (instructions.py)
    def _use_instructions(self, instructions: Instructions | None) -> None:
        """Take a session's recorded instructions: the system prompt's block, the tools' directory, the watch."""
        self.instructions = instructions or Instructions()
        self.cwd = work_dir(self.project_dir, self.instructions.start_dir)
        self.permissions.policy.cwd = self.cwd  # the gate judges relative paths where the tools run
        self._system_prompt = None
        redact = getattr(self.store, "redact", True)
        self._instructions_watch = (InstructionsWatch(self.project_dir, self.instructions, redact=redact,
                                                      history=self.history)
                                    if instructions is not None and not self.agent_label else None)

    def _offer_memory_tool(self) -> None:
        """The memory tool as the current session's conversation started with it (SPEC §12: its tools stay):
        none for a resume of one without it; with Auto Memory off, a resume of one with it keeps its definition
        and its prefix, every call refused."""
        from .memory_context import carried_prefix, kept_memory_tool

        tools = [t for t in self.tools if t.name != "memory"]
        self._kept_memory = ""
        if self.memory is not None:
            if self.memory.offered:
                tools.append(self.memory.tools()[0])
        elif not self.agent_label and (kept := carried_prefix(self.recorder)) is not None:
            self._kept_memory = kept
            tools.append(kept_memory_tool())
        self.tools = tools
        self._system_prompt = None

    def request_messages(self) -> list[dict[str, Any]]:
        """The messages of the next request: a pure view of `history` (never a change to it)."""
        return micro_compact(self.history)

    # ---- sessions
    def switch_session(self, recorder: Recorder, history: list[dict[str, Any]], compact_count: int = 0,
                       instructions: Instructions | None = None) -> None:
        """Continue in another session (/resume ID, /clear): its recorder, its history, fresh totals, and
        its recorded instructions (None: this session's stay)."""
        with self._lock:
            try:
                self.recorder.checkpoint()
            except Exception:  # noqa: BLE001 - the recorder never raises; be sure anyway
                pass
            self.recorder = recorder
            self.history = list(history)
            self.mcp.reset()  # the new session's tools are fixed at its first request
            from .mcp_context import drop_mcp_tools

            self.tools = drop_mcp_tools(self.tools)
            self._system_prompt = None
            self.usage = Usage()
            self.compaction.switch(compact_count)
            if instructions is not None:
                self._use_instructions(instructions)
            with self._reminder_lock:
                self._reminders = []  # meant for the conversation that was left
            if self.plan is not None:
                self.plan.announce("resume" if history else "session_start")
            if self.memory is not None:
                self.memory.start()  # the prefix of the session switched to: carried by a resume, else taken now
            self._offer_memory_tool()
            self._take_prompt_version()
            self._cleared_holder = None
            self._wrote_own = False

    def _require_store(self) -> SessionStore:
        if self.store is None:
            raise RuntimeError("this agent has no session store")
        return self.store

    def resume(self, session_id: str, *, confirm: Confirm | None = None, before_turn: int | None = None,
               load_whole: bool = True) -> Resumed:
        """Switch to a new session holding the restored history of `session_id` (id, unique prefix or name).

        The one resume path (resuming.py): a SessionError (one printable line) for a bad, ambiguous or
        unknown id; ForeignSession for a session this user did not record here unless `confirm` says yes.
        """
        from .resuming import resume_session  # a new session's launch never loads the resume path

        return resume_session(self, session_id, confirm=confirm, before_turn=before_turn, load_whole=load_whole)

    @property
    def file_history(self) -> FileHistory | None:
        """Where the file tools keep what they change (for rewinds): the live session's directory."""
        if self._file_history is not None:
            return self._file_history
        if isinstance(self.recorder, Recorder):
            from evo_agent.session import FileHistory  # at the first file tool: not before -p's request (issue #30)

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
        self.main_recorder.session_name(cleaned)
        self.recorder.checkpoint()
        return cleaned

    def rewind(self, turn: int) -> ResumedSession:
        """Continue in a new session whose history ends just before user turn `turn` of this one (/rewind)."""
        store = self._require_store()
        source = self.session_id
        self.recorder.checkpoint()
        resumed = store.resume(source, model=self.provider.model, provider=self.provider.name, before_turn=turn)
        self.switch_session(resumed.recorder, resumed.loaded.messages, resumed.loaded.compact_count,
                            Instructions.from_fields(resumed.instructions) or Instructions())
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
        recorder = store.create(model=self.provider.model, provider=self.provider.name, deferred=True)
        instructions = begin_instructions(recorder, self.project_dir, self.instructions.start_dir,
                                          redact=store.redact)  # read again: a new session, a new prefix
        self.switch_session(recorder, [], instructions=instructions)
        self._cleared_holder = previous
        return recorder

    def holder_session_id(self) -> str | None:
        """The session a user should resume to get this conversation back (what the exit hint names).

        The live session once anything was said in it (even a prompt the API
        refused: resuming it keeps that prompt); before that, the session it
        was resumed from (resume-then-exit adds nothing), or after /clear the
        one that held the conversation before; else the live one, or None when
        it was never written (a launch where nothing was said leaves no session). A resumed session none of
        whose records could be written (a full disk, a read-only directory), or whose copy is still staged,
        names its source instead: `--resume` could not open it. (A new one is still named, SPEC §5.)
        """
        meta = getattr(self.recorder, "meta", None)
        saved = getattr(self.recorder, "resumable", True)  # False: nothing of it landed, or its copy is staged
        if meta is None or (saved and (self._wrote_own or meta.has_conversation)):
            return self.session_id
        fallback = meta.resumed_from or getattr(self.recorder, "resumed_from", None) or self._cleared_holder
        if fallback:
            return fallback
        return self.session_id if getattr(self.recorder, "on_disk", True) else None

    # ---- compaction
    def compact(self, focus: str | None = None, cancel: threading.Event | None = None, *,
                trigger: str = "manual") -> CompactResult:
        """Summarise the history now (`/compact [focus]`; "auto" for a resumed history over the threshold).

        Raises CompactionFailed (one line).
        """
        with self._lock:
            self.recorder.prompt_id = _uuid4()  # its own "turn", not the previous prompt's
            return self._compact(focus, trigger, cancel or threading.Event())

    def _compact(self, focus: str | None, trigger: str, cancel: threading.Event) -> CompactResult:
        """One summary call; then the boundary is recorded and only then the history replaced.

        The boundary's `usage` holds every summary call paid for (a discarded in-place answer too), so
        meta.json's `summary_*` (kept apart from the SPEC's `total_*`), and so the resume chain's totals, count
        what /cost counted live. A compaction that fails after a paid call (an empty answer; the flattened
        call failing after a discarded in-place one) records that spend in a `compact_failed` record instead.
        """
        check_compactable(self.history)
        spent = Usage()

        def count_summary(response: ModelResponse) -> None:
            self._count(response)
            spent.add(Usage.of_response(response))

        count = self.compaction.count + 1
        before, chars_before = len(self.history), history_chars(self.history)
        try:
            response = request_summary(self.provider, self.history, focus, cancel, self._summary_prefix(),
                                       count_summary, agent_focus=trigger == "tool")
            summary = summary_of(text_of(response.message), self.history)
            if not self.recorder.compact_boundary(summary, count, trigger, input_tokens=response.input_tokens,
                                                  output_tokens=response.output_tokens, usage=spent.record_fields()):
                # Replacing the history now would make the live session differ from what resume restores.
                raise CompactionFailed("the summary could not be saved to the transcript; nothing was compacted")
        except CompactionFailed as exc:
            if spent.model_calls:  # paid for: on disk as /cost counted it live (meta.json's summary_*)
                self.recorder.append("compact_failed", trigger=trigger, error=str(exc), usage=spent.record_fields())
            raise
        self.history = [summary_message(summary)]
        if self._instructions_watch is not None:  # the model's copy is the system prompt's again
            self._instructions_watch.remind_again()
        if self.plan is not None:  # the summary is never the plan's source of truth: the files are
            self.plan.announce("compaction")
        if self.memory is not None:  # nor memory's: the prefix holds its indexes, a reminder what changed since
            self.memory.compacted()
        self.compaction.count = count
        self._wrote_own = True
        return CompactResult(summary, count, trigger, before, chars_before, history_chars(self.history))

    def _summary_prefix(self) -> ConversationPrefix | None:
        """The conversation's next request, which the summary call repeats to read the cache.

        None before the session's first request when its tools are not known yet: MCP servers are not
        started (and waited for) for a summary. A resumed session's are known (its source's list, or none
        without servers), so its first request — a `/compact` or the summary of a history over the
        threshold — repeats its source's prefix and reads the source's cache (SPEC §12). A windowed history
        (its middle never loaded) is not what the source sent: it goes flattened, around its gap."""
        if self.mcp.defs is None:
            if not self.mcp.known_without_waiting():
                return None
            from evo_agent.session import is_omitted_marker  # resume.py: loaded by a resume already

            if any(is_omitted_marker(m) for m in self.history):
                return None
        return ConversationPrefix(self.system_prompt, self.tool_specs(), self.request_messages(), self.conversation_id)

    def _compact_if_due(self, cb: SafeCallbacks, cancel: threading.Event, *, mid_turn: bool) -> None:
        """Run a compaction the `compact` tool asked for, or an automatic one when the history is too big."""
        due = self.compaction.due(self.history, mid_turn=mid_turn)
        if due is None:
            return
        focus, trigger = due
        try:
            cb.notice(self._compact(focus, trigger, cancel).describe())
        except CompactionFailed as exc:
            self.compaction.failed(trigger)
            cb.notice(f"evo-agent: {trigger} compaction failed: {exc}")

    # ---- usage (usage.py)
    def add_usage(self, usage: Usage) -> None:
        """Add a subagent's usage to this agent's totals (thread safe)."""
        with self._usage_lock:
            self.usage.add(usage)

    def _count(self, response: ModelResponse) -> None:
        with self._usage_lock:
            self.usage.add(Usage.of_response(response))

    def _resumed_from(self) -> str | None:
        return getattr(getattr(self.recorder, "meta", None), "resumed_from", None)

    def own_usage(self) -> Usage:
        """This session's own usage: `usage` less the resume chain's totals it started from (resumed_usage)."""
        return own_usage(self.usage, self.store, self._resumed_from())

    def cost_usd(self) -> float | None:
        """This session's own dollars so far, None when the model's price is unknown."""
        return usage_cost(self.model, self.own_usage())

    def cost_text(self) -> str:
        """`/cost`: tokens and dollars of this session, then of the whole resume chain it continues."""
        chain = []
        if self.store is not None and self._resumed_from():
            try:
                chain = self.store.lineage(self.session_id)
            except OSError:
                pass
        return cost_report(self.session_id, self.model, self.own_usage(), chain)

    # ---- the Session Plan, for a person (plan_context.py)
    def plan_text(self, *, compact: bool = False) -> str:
        """`/plan`: the active plan in full; `compact`: the app's Ctrl+T checklist."""
        if self.plan is None:
            return "The Session Plan is off for this agent."
        return self.plan.view(compact=compact)

    def plan_progress(self) -> tuple[int, int] | None:
        """(completed, total) tasks of the active plan (the status line's `plan 2/5`), None without one."""
        return self.plan.progress() if self.plan is not None else None

    # ---- Auto Memory, for a person (memory_context.py)
    def memory_text(self, name: str = "") -> str:
        """`/memory`: both indexes; `/memory NAME`: one memory file's text."""
        if self.memory is None:
            return "Auto Memory is off for this agent (EVO_AGENT_MEMORY=off)."
        if not name:
            return self.memory.view()
        from evo_agent.session import MemoryRefused

        try:
            scope, file = self.memory.store.resolve_name(name)
            from evo_agent.session import reveal_invisible

            return f"/memories/{scope}/{file}:\n{reveal_invisible(self.memory.store.read(scope, file))[0]}"
        except (MemoryRefused, OSError) as exc:
            return f"error: {exc}"

    def remember(self, text: str, *, scope: str = "project") -> str:
        """`/remember TEXT`: save what the user said as a `feedback` topic file, without the model (recorded
        as a `memory_write`; the model hears of it in the next message's reminder). Two lines, the second the
        file's path (shown whole, ui/commands.py); MemoryRefused."""
        if self.memory is None:
            raise RuntimeError("Auto Memory is off for this agent (EVO_AGENT_MEMORY=off)")
        change = self.memory.store.remember(text, scope=scope)
        self.memory.store.apply(change)
        extra = {"by": "user"}
        self.main_recorder.memory_write(change.scope, change.path, change.op, change.diff(), **extra)
        self.recorder.checkpoint()
        return f"Saved to {change.path}, the file:\n{self.memory.store.directory(change.scope) / change.file}"

    # ---- reminders
    def queue_reminder(self, text: str, reason: str) -> None:
        """Give the model `text` with the next user message (a prompt, tool results, or one of its own).

        For context that changes mid-session (the plan, a memory index, the date): the system prompt
        stays as it was at session start, so the prompt cache holds (SPEC §12). The reminder is
        recorded as a `reminder` record {text, reason} and travels as a `<system-reminder>` text block
        inside that user message, which is recorded too, so a resume replays it byte for byte.
        """
        if isinstance(text, str) and text.strip():
            with self._reminder_lock:
                self._reminders.append((text.strip(), str(reason)))

    def _take_reminders(self, *, prompt: bool) -> list[tuple[str, str]]:
        """The queued reminders and, from the plan, those due now (a prompt may also carry a nudge or a change)."""
        with self._reminder_lock:
            taken, self._reminders = self._reminders, []
        if prompt:
            taken = self._date_due() + taken
        watch = self._instructions_watch
        if watch is not None and (prompt or watch.mid_turn_due()):
            try:
                taken += watch.check()
            except Exception:  # noqa: BLE001 - instruction files that cannot be read never stop a turn
                pass
        if self.plan is not None:
            try:
                taken += self.plan.at_turn_start() if prompt else self.plan.mid_turn()
            except Exception:  # noqa: BLE001 - a plan that cannot be read never stops a turn
                pass
        if self.memory is not None:
            try:
                taken += self.memory.at_turn_start() if prompt else self.memory.mid_turn()
            except Exception:  # noqa: BLE001 - memory that cannot be read never stops a turn
                pass
        return taken

    def _date_due(self) -> list[tuple[str, str]]:
        """Today's date, when the model last heard of another day (the main agent's own prompt only)."""
        if self.agent_label or self._fixed_system_prompt is not None:
            return []
        try:
            started: int | None = created_ms_of(self.conversation_id)
        except ValueError:
            started = None
        text = date_reminder(self.history, started, int(time.time() * 1000))
        return [(text, "date")] if text else []

    def _with_reminders(self, message: dict[str, Any], *, prompt: bool) -> dict[str, Any]:
        """`message` carrying the reminders due now, each recorded first as a `reminder` record.

        Before what a person typed; after the tool results (which must open a user message).
        """
        due = self._take_reminders(prompt=prompt)
        if not due:
            return message
        for text, reason in due:
            self.recorder.append("reminder", text=text, reason=reason)
        carried = [reminder_block(text) for text, _ in due]
        own = content_blocks(message.get("content"))
        own = [b for b in own if not (b.get("type") == "text" and not b.get("text"))]
        content = own + carried if has_tool_results(message) else carried + own
        return {"role": message["role"], "content": content}

    def _deliver_reminders(self) -> None:
        """Reminders due before a model call with no new user message to carry them (after a compaction)."""
        watch = self._instructions_watch
        if self._reminders or (self.plan is not None and self.plan.mid_turn_due()) or (
                watch is not None and watch.mid_turn_due()) or (
                self.memory is not None and self.memory.mid_turn_due()):
            message = self._with_reminders({"role": "user", "content": []}, prompt=False)
            if message["content"]:
                self._add(message, remind=False)

    # ---- the loop
    def _add(self, message: dict[str, Any], *, prompt: bool = False, remind: bool = True, **record_fields: Any) -> None:
        """Record `message` in the transcript, then append it to the history (one path for both).

        A user message first takes the reminders due (`_with_reminders`); `prompt` says a person typed it.
        """
        self._wrote_own = True
        if message["role"] == "user":
            if remind:
                message = self._with_reminders(message, prompt=prompt)
            self.recorder.user(message)
        else:
            self.recorder.assistant(message, **record_fields)
        self.history.append(message)

    def run_turn(
        self,
        prompt: str,
        callbacks: TurnCallbacks | None = None,
        cancel: threading.Event | None = None,
        *,
        prompt_id: str | None = None,
    ) -> TurnResult:
        """Run one user turn until the model stops asking for tools (or the turn is cancelled).

        `callbacks` may have `on_event` (callbacks.TurnCallbacks) and `on_approval`; either may be missing.
        `prompt_id` is for a subagent, whose records belong to its parent's turn.
        Raises ProviderError when the model cannot be reached or refuses.
        """
        if not isinstance(prompt, str) or not prompt.strip():
            raise ValueError("empty prompt")
        refusal = prompt_refusal(prompt, self.compaction.threshold)
        if refusal is not None:  # never recorded: it would poison every later turn
            raise PromptTooLarge(refusal)
        cb = SafeCallbacks(callbacks)
        cancel = cancel if cancel is not None else threading.Event()
        with self._lock:
            inherited = self._inherited_front if callbacks is None else None
            self.front_end = inherited if inherited is not None else FrontEnd(cb.asker, cb.emit)
            self.recorder.prompt_id = prompt_id or _uuid4()
            self.turn_callbacks = callbacks
            self.compaction.start_turn()
            try:
                self._compact_if_due(cb, cancel, mid_turn=False)  # before the prompt joins the history
                self._add({"role": "user", "content": prompt}, prompt=True)
                return self._loop(cb, cancel)
            finally:
                if self.plan is not None:
                    self.plan.at_turn_end()
                self.compaction.end_turn()
                self.recorder.checkpoint()
                self._tell_turn_listeners()

    def _tell_turn_listeners(self) -> None:
        for listener in self.turn_listeners:
            try:
                listener(self)
            except Exception:  # noqa: BLE001 - a listener never breaks a turn
                pass

    def _loop(self, cb: SafeCallbacks, cancel: threading.Event) -> TurnResult:
        """Model call, its tools, their results; again until the model asks for no tool."""
        calls, last_text = 0, ""
        stream = StreamCallbacks(on_event=cb.emit)  # the provider's deltas and retries go on as they are
        while True:
            stop = self._stop_before_call(calls, cb, cancel)
            if stop is not None:
                return TurnResult(stop, last_text, calls)
            calls += 1
            self._deliver_reminders()
            message = self._call_model(stream, cancel, cb.notice)
            if message is None:
                self._add({"role": "user", "content": INTERRUPTED_MARKER})
                return TurnResult("cancelled", last_text, calls)
            if not message["content"]:  # nothing the API would accept back: not stored (resume drops it too)
                return TurnResult("done", last_text, calls)
            last_text = text_of(message)
            uses = tool_uses(message)
            if not uses:
                return TurnResult("done", last_text, calls)
            results = self._run_tools(uses, cb, cancel)
            if cancel.is_set():
                self._add({"role": "user", "content": results + [{"type": "text", "text": INTERRUPTED_MARKER}]})
                return TurnResult("cancelled", last_text, calls)
            self._add({"role": "user", "content": results})

    def _stop_before_call(self, calls: int, cb: SafeCallbacks, cancel: threading.Event) -> str | None:
        """"cancelled" or "limit" when the turn ends before its next model call; else None (a due compaction ran)."""
        if calls >= self.max_model_calls and not cancel.is_set():
            if self.compaction.requested is not None:  # the model's last act was to ask for it: do it now
                self._compact_if_due(cb, cancel, mid_turn=True)
            cb.notice(f"stopped after {calls} model calls in one turn; send a message to continue")
            return "limit"
        if calls and not cancel.is_set():
            self._compact_if_due(cb, cancel, mid_turn=True)
        if cancel.is_set():
            self._add({"role": "user", "content": INTERRUPTED_MARKER})
            return "cancelled"
        return None

    def _call_model(self, stream: StreamCallbacks, cancel: threading.Event,
                    notice: Callable[[str], None]) -> dict[str, Any] | None:
        """The model's answer, recorded with its token counts when it has content; None when cancelled."""
        tools = self.tool_specs(cancel)
        if cancel.is_set():  # Ctrl+C while the MCP servers were starting
            return None
        self.mcp.save()
        try:
            response = self.provider.complete(system=self.system_prompt, messages=self.request_messages(),
                                              tools=tools, max_tokens=self.max_tokens,
                                              callbacks=stream, cancel=cancel, cache_key=self.conversation_id)
        except ProviderCancelled:
            return None
        self.mcp.save(empty=True)
        self._count(response)
        message = _clean_assistant(response.message)
        if message["content"]:
            self._add(message, **_token_fields(response))
        cut = response.cut_notice(self.max_tokens)
        if cut:  # the end of the answer is missing: say so, in one line
            notice(cut)
        return message

    def _run_tools(
        self, uses: list[dict[str, Any]], cb: SafeCallbacks, cancel: threading.Event
    ) -> list[dict[str, Any]]:
        """Run the tool_uses of one response; every one gets exactly one tool_result, in order.

        Calls of parallel tools (their facts say so: subagents) run at once in threads when there
        are several; every other tool runs in order in this thread.
        """
        results: list[dict[str, Any] | None] = [None] * len(uses)

        def run(i: int) -> None:
            results[i] = self._run_tool(uses[i], cb, cancel)

        parallel = [i for i, b in enumerate(uses) if facts_of(str(b.get("name", ""))).parallel]
        if len(parallel) < 2:
            parallel = []
        threads = [threading.Thread(target=run, args=(i,), name=f"evo-agent-{uses[i].get('name')}", daemon=True)
                   for i in parallel]
        for thread in threads:
            thread.start()
        for i in range(len(uses)):
            if i not in parallel:
                run(i)
        for thread in threads:
            thread.join()
        done = [r for r in results if r is not None]
        if any(isinstance(r.get("content"), list) for r in done):  # images (MCP): the conversation's caps
            from .mcp_context import cap_images

            done = cap_images(self.history, done)
        return done

    def _run_tool(self, block: dict[str, Any], cb: SafeCallbacks, cancel: threading.Event) -> dict[str, Any]:
        """One tool_use: asked, gated, run and shown; its tool_result block."""
        tool_id, name = block.get("id", ""), block.get("name", "")
        tool_input = block.get("input")
        if not isinstance(tool_input, dict):
            tool_input = {}
        if cancel.is_set():
            cb.emit(ToolFinished(tool_id, TOOL_INTERRUPTED_TEXT, True, 0.0))
            return tool_result_block(tool_id, TOOL_INTERRUPTED_TEXT, is_error=True)
        ctx = ToolContext(project_dir=self.project_dir, cancel=cancel, tool_use_id=tool_id,
                          file_history=self.file_history, sandbox=self.sandbox, cwd=self.cwd)
        refusal, plan = self._precheck(name, tool_input, ctx), None
        if refusal is None:
            refusal, plan = self._gate(tool_id, name, tool_input, cancel, ctx)
        if isinstance(plan, str):  # a command a rule approved, as it runs (shell_readonly.plan_ruled_git)
            ctx.ruled_command = plan
        else:
            ctx.read_only = plan
        cb.emit(ToolStarted(tool_id, name, tool_input))
        started = time.monotonic()
        if refusal is not None:
            result = refusal
        else:
            result = run_tool(self.tools, name, tool_input, ctx)
            if result.notice:
                label = f"evo-agent: [{self.agent_label}]" if self.agent_label else "evo-agent:"
                self.front_end.tell(result.notice.replace("evo-agent:", label, 1))
        cb.emit(ToolFinished(tool_id, result.content, result.is_error, time.monotonic() - started))
        return _result_block(tool_id, result)

    def _precheck(self, name: str, tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult | None:
        """A call that cannot succeed (an edit whose old_string is not in the file) fails before anyone is asked."""
        tool = next((t for t in self.tools if t.name == name), None)
        if tool is None or tool.precheck is None or not self._well_formed(name, tool_input):
            return None
        try:
            return tool.precheck(tool_input, ctx)
        except Exception:  # noqa: BLE001 - a failing check decides nothing; the gate and the tool still run
            return None

    def _gate(self, tool_id: str, name: str, tool_input: dict[str, Any], cancel: threading.Event,
              ctx: ToolContext | None = None) -> tuple[ToolResult | None, object]:
        """(None when the call may run, else the `is_error` result that says why it did not; the
        ReadOnlyPlan of a bash call run unasked, else None).

        A file tool's checked path is handed to the tool in `ctx.checked_path`: it opens that, or refuses.

        Every decision (outside bypass mode) is recorded as a `permission` record before the tool
        runs; a refused call's result says why it was not run.
        """
        if facts_of(name).approval == "none" or not self._well_formed(name, tool_input):
            return None, None  # the tool refuses it itself, without running anything
        front = self.front_end
        outcome = self.permissions.decide(name, tool_input, front.ask, self.agent_label)
        if ctx is not None:
            ctx.checked_path = outcome.path
        if outcome.run and cancel.is_set():  # Ctrl+C while the user was being asked
            outcome = GateResult(False, "refused", "interrupted", TOOL_INTERRUPTED_TEXT)
        if self.permissions.mode != "bypass":  # bypass decides nothing; its start-up warning says so
            self.recorder.append("permission", tool_use_id=tool_id, tool=name, decision=outcome.decision,
                                 rule=outcome.rule, **({"agent_name": self.agent_label} if self.agent_label else {}))
        if outcome.notice:
            label = f"evo-agent: [{self.agent_label}]" if self.agent_label else "evo-agent:"
            front.tell(outcome.notice.replace("evo-agent:", label, 1))
        if not outcome.run:
            return ToolResult(outcome.message, is_error=True), None
        if outcome.plan is not None and not isinstance(outcome.plan, str):
            self._tell_if_no_backstop(front)
        return None, outcome.plan

    @property
    def read_only_backstop(self) -> bool | None:
        """Whether commands run unasked run in the read-only sandbox (None: none has run yet).

        False where bubblewrap cannot run: the allowlist still decides, but nothing backs it up.
        Front ends may show it (print mode and the app get a notice once, `_tell_if_no_backstop`).
        """
        from evo_agent.tools.sandbox import backstop_state

        return backstop_state(self.project_dir)

    def _tell_if_no_backstop(self, front: FrontEnd) -> None:
        """Once per process: say that commands run unasked are not sandboxed here."""
        from evo_agent.tools.sandbox import NO_BACKSTOP_NOTICE, claim_no_backstop_notice

        if claim_no_backstop_notice(self.project_dir):
            front.tell(NO_BACKSTOP_NOTICE)

    def _well_formed(self, name: str, tool_input: dict[str, Any]) -> bool:
        tool = next((t for t in self.tools if t.name == name), None)
        if tool is None or INVALID_ARGUMENTS_KEY in tool_input:
            return False
        return validate_input(tool, tool_input)[1] is None


def _token_fields(response: ModelResponse) -> dict[str, Any]:
    """The token counts an assistant record carries (cache counts only when the API gave them)."""
    fields = {"input_tokens": response.input_tokens, "output_tokens": response.output_tokens}
    if response.cache_creation_input_tokens is not None:
        fields["cache_creation_input_tokens"] = response.cache_creation_input_tokens
    if response.cache_read_input_tokens is not None:
        fields["cache_read_input_tokens"] = response.cache_read_input_tokens
    return fields


__all__ = [
    "Agent",
    "INTERRUPTED_MARKER",
    "MAX_MODEL_CALLS",
    "TOOL_INTERRUPTED_TEXT",
    "TurnResult",
]
