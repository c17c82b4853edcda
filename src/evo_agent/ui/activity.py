"""The one-line activity/status line under the prompt: what the agent is doing right now.

While a turn runs: `⠹ working 12 s · ~340 tokens · bash(npm test) · Esc interrupts`, and a retry
notice from the provider ("API overloaded (529), retrying in 4 s, attempt 2 of 5") takes the place of
the tool. When idle: model, session, tokens, context use and the permission mode. It fits 80 columns
by dropping the least important parts first, never the spinner and the elapsed time.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from rich.cells import cell_len

from evo_agent.session import one_line

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from .bridge import AgentLike

__all__ = ["Activity", "SPINNER", "cost_part", "fit"]

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
CHARS_PER_TOKEN = 4  # a rough, honest estimate while streaming ("~" says so)


def fit(parts: list[str], width: int, sep: str = " · ") -> str:
    """Join `parts`, dropping from the end (after the first two) until the line fits `width` cells."""
    parts = [p for p in parts if p]
    while len(parts) > 2 and cell_len(sep.join(parts)) > width:
        parts.pop()
    line = sep.join(parts)
    if cell_len(line) > width:
        line = line[: max(width - 1, 0)] + "…"
    return line


@dataclass
class Activity:
    """The state behind the line; the app updates it from callbacks and redraws it every tick."""

    running: bool = False
    label: str = "working"
    started: float = 0.0
    streamed_chars: int = 0
    tool: str = ""
    retry: str = ""
    frame: int = 0
    hint: str = "Esc interrupts"

    def start(self, label: str = "working", hint: str = "Esc interrupts") -> None:
        self.running, self.label, self.hint = True, label, hint
        self.started = time.monotonic()
        self.streamed_chars, self.tool, self.retry = 0, "", ""

    def stop(self) -> None:
        self.running, self.tool, self.retry = False, "", ""

    def text(self, fragment: str) -> None:
        self.streamed_chars += len(fragment)
        self.retry = ""  # the model answers again

    def tool_started(self, label: str) -> None:
        self.tool = label
        self.retry = ""

    def tool_finished(self) -> None:
        self.tool = ""

    def retrying(self, text: str) -> bool:
        """Take a retry of the model call (True: it is shown here while the turn runs, not printed)."""
        if self.running:
            self.retry = one_line(text, 120)
            return True
        return False

    def line(self, width: int, now: float | None = None) -> str:
        now = time.monotonic() if now is None else now
        self.frame += 1
        spinner = SPINNER[self.frame % len(SPINNER)]
        elapsed = int(now - self.started)
        parts = [f"{spinner} {self.label} {elapsed} s"]
        if self.retry:
            parts.append(self.retry)
        tokens = self.streamed_chars // CHARS_PER_TOKEN
        if self.tool:
            parts.append(self.tool)
        if self.hint:
            parts.append(self.hint)
        if tokens:
            parts.insert(1 + bool(self.retry), f"~{tokens:,} tokens")
        return fit(parts, width)


def short_count(n: int) -> str:
    """A token count in a few cells: 950, 8.0k, 1.2M."""
    if n < 1000:
        return str(n)
    return f"{n / 1000:.1f}k" if n < 1_000_000 else f"{n / 1_000_000:.1f}M"


def cost_part(agent: AgentLike) -> str:
    """The idle status line's money: '$0.0421 · cache 91% (12.0k read, 1.5k written)' ('' when the model's
    price and the cache are unknown): the dollars at the cache's prices, and what the cache did for them.

    From the agent's running totals only (no file is read: the status line is drawn often).
    """
    try:
        from evo_agent.agent.pricing import format_usd
        from evo_agent.agent.usage import cache_hit_rate, usage_cost

        usage = agent.usage
        dollars = usage_cost(agent.model, usage)
        rate = cache_hit_rate(usage) if usage.cache_read_input_tokens or usage.cache_creation_input_tokens else None
    except Exception:  # noqa: BLE001 - a status line never takes the app down
        return ""
    cache = (f"cache {rate:.0%} ({short_count(usage.cache_read_input_tokens)} read, "
             f"{short_count(usage.cache_creation_input_tokens)} written)") if rate is not None else ""
    parts = [format_usd(dollars) if dollars else "", cache]
    return " · ".join(p for p in parts if p)
