"""The interactive TUI: an inline Textual app around an `AgentLike` (see bridge.py).

    run_tui(agent)      # returns once the app has left the screen; the caller prints the exit hint

Layout, top to bottom: the conversation (blocks), the slash-command
completions, the prompt box, the status line.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any, Callable, Sequence

from rich.text import Text
from textual import events, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Collapsible, Markdown, Static, TextArea
from textual.widgets.markdown import MarkdownStream

from evo_agent.session import SessionStore

from .bridge import AgentLike
from .picker import SessionPicker, truncate_cells
from .signals import exit_on_signals

__all__ = ["AgentApp", "run_tui", "SLASH_COMMANDS", "HELP_TEXT"]

SLASH_COMMANDS: list[tuple[str, str]] = [
    ("/resume", "[ID]  resume a session (no id: pick one)"),
    ("/clear", "start a fresh session (the old one stays resumable)"),
    ("/compact", "[focus]  summarise the conversation now"),
    ("/cost", "tokens spent in this session"),
    ("/help", "commands and keys"),
    ("/exit", "quit"),
]

HELP_TEXT = """\
Commands:
  /resume [ID]      resume a session; without an id, pick one from a list
  /clear            start a fresh session (the old one stays resumable)
  /compact [focus]  summarise the conversation now, optionally focused
  /cost             tokens spent in this session
  /help             this text
  /exit             quit (also Ctrl+D in an empty box)
Keys:
  Enter sends · Shift+Enter / Alt+Enter / Ctrl+J new line · ↑/↓ history (in an empty box)
  Tab completes a command · Ctrl+C cancels the running turn · Ctrl+C twice quits"""

DOUBLE_CTRL_C_SECONDS = 2.0
TOOL_INPUT_MAX = 120
RESULT_MAX_CHARS = 20_000


def _plain(text: str) -> Content:
    return Content(text)


def summarize_input(name: str, tool_input: Any) -> str:
    """A one-line view of a tool call's input: `bash(ls -la)`, `read_file(src/x.py)`."""
    if isinstance(tool_input, dict):
        for key in ("command", "path", "pattern", "description", "focus"):
            value = tool_input.get(key)
            if isinstance(value, str) and value:
                arg = value
                break
        else:
            arg = json.dumps(tool_input, ensure_ascii=False) if tool_input else ""
    else:
        arg = str(tool_input)
    arg = " ".join(arg.split())
    return f"{name}({truncate_cells(arg, TOOL_INPUT_MAX)})"


# Blocks -----------------------------------------------------------------------


class UserBlock(Static):
    DEFAULT_CSS = """
    UserBlock { margin: 1 0 0 0; padding: 0 1; color: $text; background: $boost; text-style: bold; }
    """

    def __init__(self, prompt: str, **kwargs: Any) -> None:
        super().__init__(Text("› " + prompt), **kwargs)
        self.prompt = prompt


class NoticeBlock(Static):
    DEFAULT_CSS = """
    NoticeBlock { padding: 0 1; color: $text-muted; }
    NoticeBlock.-error { color: $error; }
    """

    def __init__(self, text: str, *, error: bool = False, **kwargs: Any) -> None:
        super().__init__(Text(text), **kwargs)
        self.text = text
        if error:
            self.add_class("-error")


class AssistantBlock(Markdown):
    """The model's text, streamed in as Markdown."""

    DEFAULT_CSS = """
    AssistantBlock { margin: 0; padding: 0 1; background: transparent; }
    """

    def __init__(self, text: str = "", **kwargs: Any) -> None:
        super().__init__(text, **kwargs)
        self.text = text
        self._stream: MarkdownStream | None = None

    async def add(self, fragment: str) -> None:
        self.text += fragment
        if self._stream is None:
            self._stream = Markdown.get_stream(self)
        await self._stream.write(fragment)

    async def finish(self) -> None:
        if self._stream is not None:
            stream, self._stream = self._stream, None
            await stream.stop()


class ThinkingBlock(Collapsible):
    DEFAULT_CSS = """
    ThinkingBlock { background: transparent; border-top: none; padding: 0; color: $text-muted; }
    ThinkingBlock Static { color: $text-muted; text-style: italic; }
    """

    def __init__(self, text: str = "") -> None:
        self.text = text
        self._body = Static(Text(text))
        super().__init__(self._body, title=_plain("thinking"), collapsed=True)

    def add(self, fragment: str) -> None:
        self.text += fragment
        self._body.update(Text(self.text))
        self.title = _plain(f"thinking ({len(self.text):,} chars)")


class ToolBlock(Collapsible):
    """One tool call: its input, status, duration and (collapsed) result."""

    DEFAULT_CSS = """
    ToolBlock { background: transparent; border-top: none; padding: 0; }
    ToolBlock .tool-input { color: $text-muted; padding: 0 0 0 2; }
    ToolBlock .tool-result { padding: 0 0 0 2; }
    ToolBlock.-error .tool-result { color: $error; }
    """

    def __init__(self, tool_id: str, name: str, tool_input: Any) -> None:
        self.tool_id = tool_id
        self.tool_name = name
        self.tool_input = tool_input
        self.status = "running"
        self.result_text: str | None = None
        self.duration: float | None = None
        self.summary = summarize_input(name, tool_input)
        try:
            full_input = json.dumps(tool_input, ensure_ascii=False, indent=2)
        except (TypeError, ValueError):
            full_input = str(tool_input)
        self._result = Static(Text(""), classes="tool-result")
        super().__init__(Static(Text(full_input), classes="tool-input"), self._result,
                         title=self._make_title(), collapsed=True)

    def _make_title(self) -> Content:
        if self.status == "running":
            tail = "running…"
        else:
            mark = "✗ error" if self.status == "error" else "✓"
            tail = f"{mark} {self.duration:.1f}s" if self.duration is not None else mark
        return _plain(f"⏺ {self.summary}  {tail}")

    def finish(self, result_text: str, is_error: bool, duration: float) -> None:
        self.status = "error" if is_error else "done"
        self.result_text = result_text
        self.duration = duration
        shown = result_text if len(result_text) <= RESULT_MAX_CHARS else (
            result_text[:RESULT_MAX_CHARS] + f"\n… ({len(result_text) - RESULT_MAX_CHARS:,} more characters)")
        self._result.update(Text(shown))
        if is_error:
            self.add_class("-error")
        self.title = self._make_title()

    def interrupt(self) -> None:
        if self.status == "running":
            self.status = "error"
            self.result_text = "interrupted"
            self._result.update(Text("interrupted"))
            self.add_class("-error")
            self.title = self._make_title()


# Input ------------------------------------------------------------------------


class PromptInput(TextArea):
    """The prompt box: Enter sends, Shift+Enter/Alt+Enter/Ctrl+J insert a newline, ↑/↓ history."""

    DEFAULT_CSS = """
    PromptInput { height: auto; min-height: 3; max-height: 10; border: round $primary 60%; padding: 0 1; }
    PromptInput:focus { border: round $primary; }
    """

    NEWLINE_KEYS = frozenset({"shift+enter", "alt+enter", "ctrl+j", "ctrl+enter"})

    class Submitted(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class CompleteRequested(Message):
        pass

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(soft_wrap=True, show_line_numbers=False, tab_behavior="focus", **kwargs)
        self.prompt_history: list[str] = []
        self._hist_index: int | None = None
        self._draft = ""

    def remember(self, text: str) -> None:
        if text and (not self.prompt_history or self.prompt_history[-1] != text):
            self.prompt_history.append(text)
        self._hist_index = None

    def _set_text(self, text: str) -> None:
        self.text = text
        self.move_cursor(self.document.end)

    def _history_step(self, delta: int) -> bool:
        if not self.prompt_history:
            return False
        browsing = self._hist_index is not None and self.text == self.prompt_history[self._hist_index]
        if not browsing and self.text != "":
            return False
        if self._hist_index is None or not browsing:
            if delta > 0:
                return False
            self._hist_index = len(self.prompt_history) - 1
        else:
            new = self._hist_index + delta
            if new >= len(self.prompt_history):
                self._hist_index = None
                self._set_text("")
                return True
            self._hist_index = max(new, 0)
        self._set_text(self.prompt_history[self._hist_index])
        return True

    async def _on_key(self, event: events.Key) -> None:
        key = event.key
        if key == "enter":
            event.stop()
            event.prevent_default()
            self.post_message(self.Submitted(self.text))
            return
        if key in self.NEWLINE_KEYS:
            event.stop()
            event.prevent_default()
            start, end = self.selection
            self._replace_via_keyboard("\n", start, end)
            return
        if key == "tab" and self.text.startswith("/"):
            event.stop()
            event.prevent_default()
            self.post_message(self.CompleteRequested())
            return
        if key in ("up", "down"):
            if self._history_step(-1 if key == "up" else 1):
                event.stop()
                event.prevent_default()
                return
        await super()._on_key(event)


class StatusLine(Static):
    DEFAULT_CSS = """
    StatusLine { height: 1; padding: 0 1; color: $text-muted; }
    """


class Completions(Static):
    DEFAULT_CSS = """
    Completions { height: auto; padding: 0 2; color: $text-muted; display: none; }
    Completions.-visible { display: block; }
    """


def complete_command(text: str) -> list[tuple[str, str]]:
    """The slash commands that `text` (a prefix, no space yet) could become."""
    if not text.startswith("/") or any(ch.isspace() for ch in text):
        return []
    return [(name, desc) for name, desc in SLASH_COMMANDS if name.startswith(text)]


# Thread → UI ------------------------------------------------------------------


class _UICallbacks:
    """TurnCallbacks that forward each call from the worker thread to the app's loop."""

    def __init__(self, app: "AgentApp", turn: int) -> None:
        self._app = app
        self._turn = turn

    def _send(self, fn: Callable[..., Any], *args: Any) -> None:
        if self._app._turn != self._turn:
            return  # a cancelled turn's late output
        try:
            self._app.call_from_thread(self._app._deliver, self._turn, fn, *args)
        except RuntimeError:
            pass  # the app is gone

    def on_text(self, text: str) -> None:
        self._send(self._app._on_text, text)

    def on_thinking(self, text: str) -> None:
        self._send(self._app._on_thinking, text)

    def on_tool_start(self, tool_id: str, name: str, input: dict[str, Any]) -> None:
        self._send(self._app._on_tool_start, tool_id, name, input)

    def on_tool_end(self, tool_id: str, result_text: str, is_error: bool, duration: float) -> None:
        self._send(self._app._on_tool_end, tool_id, result_text, is_error, duration)

    def on_notice(self, text: str) -> None:
        self._send(self._app.add_notice, text)


# The app ----------------------------------------------------------------------


class AgentApp(App[None]):
    """The conversation, a prompt box and a status line, inline under the shell prompt."""

    CSS = """
    Screen:inline { height: auto; max-height: 100%; border-top: none; border-bottom: none; }
    #conversation { height: auto; max-height: 1fr; scrollbar-size-vertical: 1; }
    Screen:inline #conversation { max-height: 40; }
    """

    BINDINGS = [
        Binding("ctrl+c", "interrupt", "Cancel / quit", show=False, priority=True),
        Binding("ctrl+d", "eof", "Quit", show=False),
    ]

    def __init__(self, agent: AgentLike, *, store: SessionStore | None = None) -> None:
        super().__init__()
        self.agent = agent
        self.store = store
        self.cancel_event = threading.Event()
        self.running = False
        self._turn = 0
        self._last_ctrl_c = 0.0
        self._current_text: AssistantBlock | None = None
        self._current_thinking: ThinkingBlock | None = None
        self._tools: dict[str, ToolBlock] = {}
        self._busy_label = ""

    # Layout ---------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield VerticalScroll(id="conversation")
        yield Completions(id="completions")
        yield PromptInput(id="prompt")
        yield StatusLine(id="status")

    def on_mount(self) -> None:
        self.conversation.anchor()
        self.prompt_input.focus()
        self.refresh_status()
        exit_on_signals(self.quit)  # SIGTERM/SIGHUP leave like /exit (see signals.py)

    @property
    def conversation(self) -> VerticalScroll:
        return self.query_one("#conversation", VerticalScroll)

    @property
    def prompt_input(self) -> PromptInput:
        return self.query_one("#prompt", PromptInput)

    def blocks(self, kind: type[Widget] | None = None) -> list[Widget]:
        """The conversation's blocks, oldest first (optionally of one kind) — for tests too."""
        children = list(self.conversation.children)
        return [c for c in children if kind is None or isinstance(c, kind)]

    def _mount(self, widget: Widget) -> None:
        self.conversation.mount(widget)

    def add_notice(self, text: str, *, error: bool = False) -> None:
        self._end_segment()
        self._mount(NoticeBlock(text, error=error))

    def refresh_status(self) -> None:
        a = self.agent
        try:
            threshold = int(getattr(a, "compact_threshold", 0) or 0)
            chars = int(getattr(a, "context_chars", 0) or 0)
            pct = f" ({100 * chars // threshold}%)" if threshold else ""
            parts = [str(getattr(a, "model", "?")), f"session {getattr(a, 'session_id', '?')}",
                     f"tokens {int(getattr(a, 'total_tokens', 0) or 0):,}",
                     f"context {chars:,}/{threshold:,} chars{pct}"]
        except Exception:  # a status line never takes the app down
            parts = ["status unavailable"]
        if self.running:
            parts.append(self._busy_label or "working… (Ctrl+C cancels)")
        self.query_one("#status", StatusLine).update(Text("  ·  ".join(parts)))

    # Streaming handlers (main thread) -------------------------------------

    async def _deliver(self, turn: int, fn: Callable[..., Any], *args: Any) -> None:
        if turn != self._turn:
            return  # the turn was cancelled while this was on its way
        result = fn(*args)
        if hasattr(result, "__await__"):
            await result

    def _end_segment(self) -> None:
        if self._current_text is not None:
            block, self._current_text = self._current_text, None
            self.run_worker(block.finish(), exclusive=False)
        self._current_thinking = None

    async def _on_text(self, text: str) -> None:
        self._current_thinking = None
        if self._current_text is None:
            self._current_text = AssistantBlock()
            await self.conversation.mount(self._current_text)
        await self._current_text.add(text)

    def _on_thinking(self, text: str) -> None:
        if self._current_thinking is None:
            self._end_segment()
            self._current_thinking = ThinkingBlock()
            self._mount(self._current_thinking)
        self._current_thinking.add(text)

    def _on_tool_start(self, tool_id: str, name: str, tool_input: dict[str, Any]) -> None:
        self._end_segment()
        block = ToolBlock(tool_id, name, tool_input)
        self._tools[tool_id] = block
        self._mount(block)

    def _on_tool_end(self, tool_id: str, result_text: str, is_error: bool, duration: float) -> None:
        block = self._tools.get(tool_id)
        if block is None:
            block = ToolBlock(tool_id, "tool", {})
            self._tools[tool_id] = block
            self._mount(block)
        block.finish(result_text, is_error, duration)
        self.refresh_status()

    # Input ----------------------------------------------------------------

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        self._update_completions()

    def _update_completions(self) -> None:
        widget = self.query_one("#completions", Completions)
        matches = complete_command(self.prompt_input.text)
        if matches:
            widget.update(Text("\n".join(f"{name:<10} {desc}" for name, desc in matches)))
            widget.add_class("-visible")
        else:
            widget.remove_class("-visible")

    def on_prompt_input_complete_requested(self, event: PromptInput.CompleteRequested) -> None:
        box = self.prompt_input
        matches = complete_command(box.text)
        if not matches:
            return
        if len(matches) == 1:
            box._set_text(matches[0][0] + " ")
        else:
            names = [m[0] for m in matches]
            common = names[0]
            for n in names[1:]:
                while not n.startswith(common):
                    common = common[:-1]
            if len(common) > len(box.text):
                box._set_text(common)

    async def on_prompt_input_submitted(self, event: PromptInput.Submitted) -> None:
        text = event.text
        stripped = text.strip()
        if not stripped:
            return
        if self.running:
            self.add_notice("a turn is running: wait for it, or press Ctrl+C to cancel it")
            return
        box = self.prompt_input
        box.remember(text)
        box._set_text("")
        if stripped.startswith("/"):
            await self.handle_command(stripped)
        else:
            self.start_turn(text)

    # Turns ----------------------------------------------------------------

    def start_turn(self, prompt: str) -> None:
        self._end_segment()
        self._mount(UserBlock(prompt))
        self._turn += 1
        self.cancel_event = threading.Event()
        self._set_running(True)
        self._run_turn(prompt, self._turn, self.cancel_event)

    def _set_running(self, running: bool, label: str = "") -> None:
        self.running = running
        self._busy_label = label
        self.refresh_status()

    @work(thread=True, group="turn", exit_on_error=False)
    def _run_turn(self, prompt: str, turn: int, cancel: threading.Event) -> None:
        error: str | None = None
        try:
            self.agent.run_turn(prompt, _UICallbacks(self, turn), cancel)
        except Exception as exc:  # noqa: BLE001 - shown as one line, never a traceback
            error = f"error: {exc}" if str(exc) else f"error: {type(exc).__name__}"
        try:
            self.call_from_thread(self._turn_done, turn, error)
        except RuntimeError:
            pass

    def _turn_done(self, turn: int, error: str | None) -> None:
        if turn != self._turn:
            return  # already reported as cancelled
        self._end_segment()
        for block in self._tools.values():
            block.interrupt()  # a tool that never reported its end
        self._tools.clear()
        if error and not self.cancel_event.is_set():
            self.add_notice(error, error=True)
        self._set_running(False)

    def cancel_turn(self) -> None:
        """Ctrl+C during a turn: tell the agent, and free the prompt box at once."""
        if not self.running:
            return
        self.cancel_event.set()
        self._end_segment()
        for block in self._tools.values():
            block.interrupt()
        self._tools.clear()
        self._turn += 1  # late output of the cancelled turn is dropped
        self.add_notice("cancelled")
        self._set_running(False)

    # Keys -----------------------------------------------------------------

    def action_interrupt(self) -> None:
        now = time.monotonic()
        if now - self._last_ctrl_c < DOUBLE_CTRL_C_SECONDS:
            self.quit()
            return
        self._last_ctrl_c = now
        if self.running:
            self.cancel_turn()
            return
        box = self.prompt_input
        if box.text:
            box._set_text("")
        self.notify("Press Ctrl+C again to exit", timeout=DOUBLE_CTRL_C_SECONDS)

    def action_eof(self) -> None:
        if not self.prompt_input.text:
            self.quit()

    def quit(self, return_code: int = 0) -> None:
        self.cancel_event.set()
        self.clear_notifications()
        self.exit(return_code=return_code)

    # Slash commands -------------------------------------------------------

    async def handle_command(self, line: str) -> None:
        name, _, arg = line.partition(" ")
        arg = arg.strip()
        name = name.lower()
        if name in ("/exit", "/quit"):
            self.quit()
        elif name == "/help":
            self.add_notice(HELP_TEXT)
        elif name == "/cost":
            try:
                self.add_notice(self.agent.cost_text())
            except Exception as exc:  # noqa: BLE001
                self.add_notice(f"error: {exc}", error=True)
        elif name == "/clear":
            old = self.agent.session_id
            try:
                self.agent.clear()
            except Exception as exc:  # noqa: BLE001
                self.add_notice(f"error: {exc}", error=True)
                return
            await self.conversation.remove_children()
            self.add_notice(f"new session {self.agent.session_id} (the previous one: evo-agent --resume {old})")
            self.refresh_status()
        elif name == "/compact":
            self.cancel_event = threading.Event()  # Ctrl+C interrupts the summary call
            self._set_running(True, "compacting… (Ctrl+C cancels)")
            self._compact(arg or None, self.cancel_event)
        elif name == "/resume":
            if arg:
                self.resume_session(arg)
            else:
                self.open_picker()
        else:
            self.add_notice(f"unknown command {name} (try /help)", error=True)

    @work(thread=True, group="command", exit_on_error=False)
    def _compact(self, focus: str | None, cancel: threading.Event) -> None:
        try:
            result = self.agent.compact(focus, cancel)
            describe = getattr(result, "describe", None)
            message, error = (describe() if callable(describe) else "conversation compacted"), False
        except Exception as exc:  # noqa: BLE001
            message, error = f"error: cannot compact: {exc}", True
        try:
            self.call_from_thread(self._command_done, message, error)
        except RuntimeError:
            pass

    def _command_done(self, message: str, error: bool) -> None:
        self.add_notice(message, error=error)
        self._set_running(False)
        self.refresh_status()

    def open_picker(self) -> None:
        store = self.store or SessionStore(self.agent.project_dir)
        picker = SessionPicker(store, exclude=[self.agent.session_id])  # the first screen now, the rest after
        if not picker.all_rows:
            self.add_notice("no other session to resume in this project")
            return

        def chosen(session_id: str | None) -> None:
            self.prompt_input.focus()
            if session_id:
                self.resume_session(session_id)

        self.push_screen(picker, chosen)

    def resume_session(self, session_id: str) -> None:
        self._set_running(True, "resuming…")
        self._resume(session_id)

    @work(thread=True, group="command", exit_on_error=False)
    def _resume(self, session_id: str) -> None:
        error: str | None = None
        try:
            self.agent.resume(session_id)
        except Exception as exc:  # noqa: BLE001
            error = str(exc) or type(exc).__name__
        try:
            self.call_from_thread(self._resumed, session_id, error)
        except RuntimeError:
            pass

    async def _resumed(self, source: str, error: str | None) -> None:
        self._set_running(False)
        if error:
            self.add_notice(f"error: {error}", error=True)
            return
        await self.conversation.remove_children()
        messages = list(getattr(self.agent, "messages", []) or [])
        self.show_history(messages)
        self.add_notice(f"resumed {source}: {len(messages)} messages restored, "
                        f"now session {self.agent.session_id}")
        self.refresh_status()

    def show_history(self, messages: Sequence[dict[str, Any]]) -> None:
        """Render a restored history as blocks (text in full, tool calls as finished blocks)."""
        widgets: list[Widget] = []
        tools: dict[str, ToolBlock] = {}
        for message in messages:
            role = message.get("role") if isinstance(message, dict) else None
            content = message.get("content") if isinstance(message, dict) else None
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else (content or [])
            for b in blocks:
                if not isinstance(b, dict):
                    continue
                kind = b.get("type")
                if kind == "text" and isinstance(b.get("text"), str):
                    widgets.append(UserBlock(b["text"]) if role == "user" else AssistantBlock(b["text"]))
                elif kind == "thinking" and isinstance(b.get("thinking"), str):
                    widgets.append(ThinkingBlock(b["thinking"]))
                elif kind == "tool_use":
                    tb = ToolBlock(str(b.get("id")), str(b.get("name", "tool")), b.get("input", {}))
                    tools[str(b.get("id"))] = tb
                    widgets.append(tb)
                elif kind == "tool_result":
                    tb = tools.get(str(b.get("tool_use_id")))
                    if tb is not None:
                        result = b.get("content")
                        if isinstance(result, list):
                            result = "\n".join(x.get("text", "") for x in result if isinstance(x, dict))
                        tb.status = "error" if b.get("is_error") else "done"
                        tb.result_text = str(result or "")
                        tb._result.update(Text(tb.result_text[:RESULT_MAX_CHARS]))
                        tb.title = tb._make_title()
        if widgets:
            self.conversation.mount_all(widgets)


def run_tui(agent: AgentLike, *, inline: bool = True) -> int:
    """Run the TUI until the user quits; returns the exit code after the app has left the screen
    (0, or 128 + the signal that ended it).

    The caller prints the exit hint (`Resume this session with: evo-agent --resume <id>`,
    naming `agent.session_id`, which /resume and /clear may have changed).
    """
    app = AgentApp(agent)
    app.run(inline=inline, inline_no_clear=True)
    return app.return_code or 0
