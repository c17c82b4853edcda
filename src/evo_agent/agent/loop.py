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
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from evo_agent.providers.base import Provider, ProviderCancelled, StreamCallbacks
from evo_agent.session import Recorder, ResumedSession, SessionStore
from evo_agent.tools import BASIC_TOOLS, Tool, ToolContext, ToolResult, run_tool

from .prompt import build_system_prompt

MAX_MODEL_CALLS = 50
DEFAULT_MAX_TOKENS = 8192
DEFAULT_COMPACT_CHARS = 50_000

INTERRUPTED_MARKER = "[Request interrupted by user]"
TOOL_INTERRUPTED_TEXT = "Not run: the user interrupted the turn (Ctrl+C) before this tool started."

# (tool input, context, tool_use_id) -> result: tools that need the agent itself (task, compact)
ToolHandler = Callable[[dict, ToolContext, str], ToolResult]


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
        recorder: Recorder,
        project_dir: Path | str,
        store: SessionStore | None = None,
        tools: list[Tool] | None = None,
        history: list[dict] | None = None,
        system_prompt: str | None = None,
        max_model_calls: int = MAX_MODEL_CALLS,
        max_tokens: int = DEFAULT_MAX_TOKENS,
    ) -> None:
        self.provider = provider
        self.recorder = recorder
        self.project_dir = Path(project_dir)
        self.store = store
        self.tools: list[Tool] = list(BASIC_TOOLS if tools is None else tools)
        # Tools that need the agent (task, compact): name -> (API spec, handler).
        self.agent_tools: dict[str, tuple[dict, ToolHandler]] = {}
        self.history: list[dict] = list(history or [])
        self._system_prompt = system_prompt
        self.max_model_calls = max_model_calls
        self.max_tokens = max_tokens
        self.usage = Usage()
        self.compact_threshold = _env_int("EVO_AGENT_COMPACT_CHARS", DEFAULT_COMPACT_CHARS)
        self._lock = threading.Lock()  # one turn or session switch at a time

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
        return len(json.dumps(self.request_messages(), ensure_ascii=False, separators=(",", ":")))

    # ---- what the model sees
    def tool_specs(self) -> list[dict]:
        return [t.api_spec() for t in self.tools] + [spec for spec, _ in self.agent_tools.values()]

    def add_agent_tool(self, spec: dict, handler: ToolHandler) -> None:
        """Register a tool that needs the agent loop itself (e.g. `task`, `compact`)."""
        self.agent_tools[spec["name"]] = (spec, handler)

    @property
    def system_prompt(self) -> str:
        if self._system_prompt is None:
            self._system_prompt = build_system_prompt(self.project_dir, self.tool_specs())
        return self._system_prompt

    def request_messages(self) -> list[dict]:
        """The messages of the next request: a pure view of `history` (never a change to it)."""
        return self.history

    def before_model_call(self, callbacks: _Callbacks, cancel: threading.Event) -> None:
        """Hook run before every model call (automatic compaction plugs in here)."""

    # ---- sessions
    def switch_session(self, recorder: Recorder, history: list[dict]) -> None:
        """Continue in another session (/resume ID, /clear): its recorder, its history, fresh totals."""
        with self._lock:
            try:
                self.recorder.checkpoint()
            except Exception:  # noqa: BLE001 - the recorder never raises; be sure anyway
                pass
            self.recorder = recorder
            self.history = list(history)
            self.usage = Usage()

    def _require_store(self) -> SessionStore:
        if self.store is None:
            raise RuntimeError("this agent has no session store")
        return self.store

    def resume(self, session_id: str) -> ResumedSession:
        """Switch to a new session holding the restored history of `session_id` (id or unique prefix).

        Raises a SessionError (one printable line) for a bad, ambiguous or unknown id.
        """
        store = self._require_store()
        source = store.resolve(session_id)
        resumed = store.resume(source, model=self.provider.model, provider=self.provider.name)
        self.switch_session(resumed.recorder, resumed.loaded.messages)
        return resumed

    def clear(self) -> Recorder:
        """Start a fresh, empty session; the old one stays resumable."""
        store = self._require_store()
        recorder = store.create(model=self.provider.model, provider=self.provider.name)
        self.switch_session(recorder, [])
        return recorder

    def compact(self, focus: str | None = None) -> None:
        raise RuntimeError("compaction is not available in this version yet")

    def cost_text(self) -> str:
        u = self.usage
        text = (f"session {self.session_id}: {u.input_tokens:,} input + {u.output_tokens:,} output "
                f"= {u.total:,} tokens in {u.model_calls} model call{'s' if u.model_calls != 1 else ''}")
        if u.cache_read_input_tokens or u.cache_creation_input_tokens:
            text += (f" (cache: {u.cache_read_input_tokens:,} read, "
                     f"{u.cache_creation_input_tokens:,} written)")
        return text

    # ---- the loop
    def _add(self, message: dict, **record_fields: Any) -> None:
        """Record `message` in the transcript, then append it to the history (one path for both)."""
        if message["role"] == "user":
            self.recorder.user(message)
        else:
            self.recorder.assistant(message, **record_fields)
        self.history.append(message)

    def run_turn(self, prompt: str, callbacks: Any = None, cancel: threading.Event | None = None) -> TurnResult:
        """Run one user turn until the model stops asking for tools (or the turn is cancelled).

        `callbacks` may have any of on_text, on_thinking, on_tool_start,
        on_tool_end, on_notice (see `evo_agent.ui.bridge.TurnCallbacks`).
        Raises ProviderError when the model cannot be reached or refuses.
        """
        if not isinstance(prompt, str) or not prompt.strip():
            raise ValueError("empty prompt")
        cb = _Callbacks(callbacks)
        cancel = cancel if cancel is not None else threading.Event()
        with self._lock:
            self.recorder.prompt_id = str(uuid.uuid4())
            try:
                self._add({"role": "user", "content": prompt})
                return self._loop(cb, cancel)
            finally:
                self.recorder.checkpoint()

    def _loop(self, cb: _Callbacks, cancel: threading.Event) -> TurnResult:
        calls = 0
        last_text = ""
        stream = StreamCallbacks(on_text=cb.text, on_thinking=cb.thinking)
        while True:
            if cancel.is_set():
                self._add({"role": "user", "content": INTERRUPTED_MARKER})
                return TurnResult("cancelled", last_text, calls)
            if calls >= self.max_model_calls:
                cb.notice(f"stopped after {calls} model calls in one turn; send a message to continue")
                return TurnResult("limit", last_text, calls)
            self.before_model_call(cb, cancel)
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
        u = self.usage
        u.model_calls += 1
        u.input_tokens += response.input_tokens or 0
        u.output_tokens += response.output_tokens or 0
        u.cache_creation_input_tokens += response.cache_creation_input_tokens or 0
        u.cache_read_input_tokens += response.cache_read_input_tokens or 0

    def _run_tools(self, uses: list[dict], cb: _Callbacks, cancel: threading.Event) -> list[dict]:
        """Run each tool_use in order; every one gets exactly one tool_result."""
        ctx = ToolContext(project_dir=self.project_dir, cancel=cancel)
        results = []
        for block in uses:
            tool_id, name = block.get("id", ""), block.get("name", "")
            tool_input = block.get("input") if isinstance(block.get("input"), dict) else {}
            if cancel.is_set():
                results.append(tool_result_block(tool_id, TOOL_INTERRUPTED_TEXT, True))
                cb.tool_end(tool_id, TOOL_INTERRUPTED_TEXT, True, 0.0)
                continue
            cb.tool_start(tool_id, name, tool_input)
            started = time.monotonic()
            result = self.run_tool_block(name, tool_input, ctx, tool_id)
            results.append(tool_result_block(tool_id, result.content, result.is_error))
            cb.tool_end(tool_id, result.content, result.is_error, time.monotonic() - started)
        return results

    def run_tool_block(self, name: str, tool_input: dict, ctx: ToolContext, tool_id: str) -> ToolResult:
        """Dispatch one tool call; never raises."""
        agent_tool = self.agent_tools.get(name)
        if agent_tool is None:
            return run_tool(self.tools, name, tool_input, ctx)
        try:
            return agent_tool[1](tool_input, ctx, tool_id)
        except Exception as exc:  # noqa: BLE001 - a failing tool never ends the loop
            return ToolResult(f"{name} failed: {type(exc).__name__}: {exc}", is_error=True)


def _env_int(name: str, default: int) -> int:
    try:
        value = int(os.environ.get(name, ""))
    except ValueError:
        return default
    return value if value > 0 else default


__all__ = [
    "Agent",
    "INTERRUPTED_MARKER",
    "MAX_MODEL_CALLS",
    "TOOL_INTERRUPTED_TEXT",
    "TurnResult",
    "Usage",
    "text_of",
    "tool_result_block",
]
