"""`evo-agent sessions show`: a session rendered for a terminal.

Plain lines with indentation (colour only on a terminal, never with
NO_COLOR), so the output pipes, greps and diffs well. Control characters
in the transcript are made visible: a transcript holds whatever a command
printed, and printing that raw could drive the terminal.
"""

from __future__ import annotations

import json
import re
from typing import ClassVar

from evo_agent.safe_text import terminal_line, terminal_safe

from .common import fmt_ms, fmt_stamp, plural
from .model import (
    NOTES,
    Boundary,
    Item,
    OrphanResult,
    Other,
    Restored,
    ResultView,
    ResumeMarker,
    SessionView,
    Skipped,
    SubagentRun,
    Text,
    Tokens,
    ToolCall,
    Transcript,
    Turn,
)

RESULT_LINES = 10
INPUT_LINES = 12
THINKING_LINES = 3
INLINE_INPUT = 100


class Style:
    """ANSI styling that can be switched off (pipes, NO_COLOR, snapshots)."""

    CODES: ClassVar[dict[str, str]] = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33",
                                       "blue": "34",
             "magenta": "35", "cyan": "36"}

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, text: str, *styles: str) -> str:
        if not self.enabled or not styles or not text:
            return text
        codes = ";".join(self.CODES[s] for s in styles)
        return f"\x1b[{codes}m{text}\x1b[0m"


def fmt_tokens(tokens: Tokens) -> str:
    text = f"{tokens.input:,} in / {tokens.output:,} out"
    extra = []
    sent = tokens.input + tokens.cache_read + tokens.cache_creation
    if tokens.cache_read:  # with the share of the input it is: the cache's hit rate
        extra.append(f"{tokens.cache_read:,} cache read: {tokens.cache_read / sent:.0%} of the input")
    if tokens.cache_creation:
        extra.append(f"{tokens.cache_creation:,} cache write")
    return text + (f" ({', '.join(extra)})" if extra else "")


def session_cost(model: str | None, tokens: Tokens) -> str:
    """'$0.0421 (cache reads and writes at their own prices, list prices of …)', or '' when the price is unknown."""
    from evo_agent.agent.pricing import PRICES_AS_OF, cost_usd, format_usd

    dollars = cost_usd(model, input_tokens=tokens.input, output_tokens=tokens.output,
                       cache_creation_input_tokens=tokens.cache_creation, cache_read_input_tokens=tokens.cache_read)
    if dollars is None:
        return ""
    return f"{format_usd(dollars)} (cache writes and reads at their own prices; list prices of {PRICES_AS_OF})"


def input_text(call: ToolCall) -> str:
    compact = json.dumps(call.input, ensure_ascii=False, default=str)
    return compact if len(compact) <= INLINE_INPUT and "\n" not in compact else call.input_json


class TextRenderer:
    def __init__(self, *, style: Style, full: bool = False, restored: bool = False) -> None:
        self.s = style
        self.full = full
        self.show_restored = restored
        self.lines: list[str] = []

    # -- output helpers
    def emit(self, prefix: str, text: str = "") -> None:
        self.lines.append((prefix + text).rstrip())

    def block(self, prefix: str, text: str, limit: int | None, *styles: str) -> None:
        """Multi-line text under `prefix`, cut to `limit` lines unless --full."""
        lines = terminal_safe(text).split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        shown = lines if self.full or limit is None or len(lines) <= limit else lines[:limit]
        for line in shown:
            self.emit(prefix, self.s(line, *styles))
        if len(shown) < len(lines):
            more = plural(len(lines) - len(shown), "more line")
            self.emit(prefix, self.s(f"… {more} (--full shows everything)", "dim"))

    # -- the session
    def session(self, view: SessionView) -> str:
        meta = view.meta
        live = self.s("  ● live" + (f" (pid {view.live_pid})" if view.live_pid else ""), "green") if view.live else ""
        self.emit("", self.s(f"Session {view.id}", "bold") + live)
        if meta is not None:
            if meta.name:
                self.emit("  ", f"name     {terminal_line(meta.name)}")
            self.emit("  ", f"created  {fmt_ms(meta.created_ms)}   updated {fmt_ms(meta.updated_ms)}")
            model = meta.model or "?"
            if meta.provider:
                model += f" ({meta.provider})"
            self.emit("  ", f"model    {terminal_line(model)}   branch {terminal_line(meta.git_branch or '-')}")
            self.emit("  ", f"cwd      {terminal_line(meta.cwd or '?')}")
        tokens = f"tokens {fmt_tokens(view.transcript.tokens)}"
        sub = view.subagent_tokens
        if sub:
            tokens += f"   subagents {fmt_tokens(sub)}   total {view.all_tokens.total:,}"
        self.emit("  ", f"messages {view.transcript.message_count:,}   {tokens}")
        dollars = session_cost(meta.model if meta is not None else None, view.all_tokens)
        if dollars:
            self.emit("  ", f"cost     {dollars}")
        if view.lineage:
            chain = " ← ".join(terminal_line(s) for s in view.lineage) + (
                " ← …" if view.lineage_missing else "")
            self.emit("  ", f"resumed from {chain}")
        if view.resumed_as:
            self.emit("  ", f"resumed as   {', '.join(terminal_line(s) for s in view.resumed_as)}")
        self.transcript(view.transcript, "")
        for run in view.unlinked:
            self.emit("")
            self.emit("", self.s("sidechain without a marker in the transcript:", "yellow"))
            self.run(run, "")
        return "\n".join(self.lines) + "\n"

    def transcript(self, transcript: Transcript, prefix: str) -> None:
        for item in transcript.items:
            self.item(item, prefix)

    def item(self, item: Item, prefix: str) -> None:
        if isinstance(item, Turn):
            self.turn(item, prefix)
        elif isinstance(item, Boundary):
            self.emit(prefix)
            head = " · ".join(p for p in ("compacted", f"#{item.compact_count}" if item.compact_count else "",
                                          item.trigger or "", fmt_stamp(item.timestamp),
                                          f"summary {fmt_tokens(item.tokens)}" if item.tokens else "") if p)
            self.emit(prefix, self.s(f"── {terminal_line(head)} ──", "magenta"))
            self.block(prefix + "  ", item.summary, None)
        elif isinstance(item, ResumeMarker):
            self.emit(prefix)
            count = f" · {plural(item.restored_count, 'message')} restored" if item.restored_count is not None else ""
            source = terminal_line(item.from_session_id or "?")
            self.emit(prefix, self.s(f"── resumed from {source}{count} ──", "blue"))
        elif isinstance(item, Restored):
            if not item.items:
                return
            if self.show_restored:
                for sub in item.items:
                    self.item(sub, prefix + "┆ ")
                self.emit(prefix, self.s("── end of the restored messages ──", "blue"))
            else:
                self.emit(prefix, self.s(f"   ({plural(item.message_count, 'restored message')} not shown: "
                                         "--restored shows them)", "dim"))
        elif isinstance(item, SubagentRun):
            self.run(item, prefix)
        elif isinstance(item, NOTES):
            self.emit(prefix, self.s(f"◆ {terminal_line(item.line)}", "blue")
                      + self.s(f" · {fmt_stamp(item.timestamp)}", "dim"))
        elif isinstance(item, Skipped):
            what = "torn last line (an interrupted write)" if item.torn else "unreadable line"
            self.emit(prefix, self.s(f"⚠ {item.file} line {item.line}: {what}, {item.size:,} bytes, skipped", "red"))

    def turn(self, turn: Turn, prefix: str) -> None:
        self.emit(prefix)
        head = f"{turn.role} · {fmt_stamp(turn.timestamp)}"
        if turn.tokens:
            head += f" · {fmt_tokens(turn.tokens)}"
        if turn.restored:
            head += " · restored"
        self.emit(prefix, self.s(head, "bold", "cyan" if turn.role == "user" else "green"))
        inner = prefix + "  "
        for block in turn.blocks:
            if isinstance(block, Text):
                if block.kind == "thinking":
                    self.emit(inner, self.s("thinking:", "dim"))
                    self.block(inner + "  ", block.text, THINKING_LINES, "dim")
                elif block.kind == "summary":
                    self.emit(inner, self.s("summary of the earlier conversation:", "magenta"))
                    self.block(inner + "  ", block.text, None)
                elif block.kind == "reminder":
                    self.emit(inner, self.s("reminder (evo-agent told the model):", "blue"))
                    self.block(inner + "  ", block.text, None, "dim")
                else:
                    self.block(inner, block.text, None)
            elif isinstance(block, ToolCall):
                self.call(block, inner)
            elif isinstance(block, OrphanResult):
                call_id = terminal_line(block.tool_use_id)
                self.emit(inner, self.s(f"result for {call_id} (its call is not in this file)", "dim"))
                self.result(block.result, inner, None)
            elif isinstance(block, Other):
                self.emit(inner, self.s(f"[{terminal_line(block.description)}]", "dim"))

    def call(self, call: ToolCall, prefix: str) -> None:
        self.emit(prefix, self.s(f"▸ {terminal_line(call.name)}", "bold", "yellow")
                  + self.s(f" ({terminal_line(call.id)})", "dim"))
        self.block(prefix + "    ", input_text(call), INPUT_LINES)
        for run in call.runs:
            self.run(run, prefix + "  ")
        self.result(call.result, prefix + "  ", call)

    def result(self, result: ResultView | None, prefix: str, call: ToolCall | None) -> None:
        if result is None:
            self.emit(prefix, self.s("… no result (the tool was interrupted, or is still running)", "red"))
            return
        mark = self.s("✗ error", "red") if result.is_error else self.s("✓ result", "green")
        self.emit(prefix, f"{mark} · {fmt_stamp(result.timestamp)}")
        self.block(prefix + "  ", result.text or "(empty)", RESULT_LINES)

    def run(self, run: SubagentRun, prefix: str) -> None:
        head = f"┌ subagent {terminal_line(run.agent_name)} · {terminal_line(run.path)}"
        if run.transcript is not None:
            head += f" · {plural(run.transcript.message_count, 'message')}"
            if run.transcript.tokens:
                head += f" · {fmt_tokens(run.transcript.tokens)}"
        self.emit(prefix, self.s(head, "magenta"))
        inner = prefix + self.s("│ ", "magenta")
        if run.problem:
            self.emit(inner, self.s(f"⚠ {run.problem}", "red"))
        if run.transcript is not None:
            self.transcript(run.transcript, inner)
            self.emit(inner)
        if run.finished:
            self.emit(prefix, self.s(f"└ finished · {fmt_stamp(run.ended)}", "magenta"))
        else:
            self.emit(prefix, self.s("└ never finished (interrupted, or still running)", "magenta"))


# The only escape sequences `show` ever prints: its own colours (Style.CODES) and the reset.
_OWN_SGR_RE = re.compile(r"(\x1b\[(?:0|[123]|3[1-6])(?:;(?:[12]|3[1-6]))*m)")


def safe_output(text: str, *, color: bool) -> str:
    """The rendered page with every control sequence made visible but `show`'s own colours.

    Fields are sanitised where they are formatted too; doing it once more on
    the whole page means a field that was missed (a compaction's trigger, a
    resume marker's id, whatever a future change adds) still cannot reach the
    terminal raw.
    """
    if not color:
        return terminal_safe(text)
    parts = _OWN_SGR_RE.split(text)
    return "".join(part if i % 2 else terminal_safe(part) for i, part in enumerate(parts))


def render_show(view: SessionView, *, color: bool, full: bool, restored: bool) -> str:
    page = TextRenderer(style=Style(color), full=full, restored=restored).session(view)
    return safe_output(page, color=color)
