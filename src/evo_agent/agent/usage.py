"""Tokens and dollars: what a conversation spent, counted across the sessions it was resumed from.

`Usage` is the running total an `Agent` keeps (each model call adds its response's counts).
A resumed session's restored records carry no token counts (SPEC §4), so its own meta.json sums
only what it spent itself; the totals a user expects after `--resume`, `-c` or `/resume` are those
of the whole chain — this session's source, that one's source, and so on (`resumed_from` in each
meta). So a resumed agent starts from `resumed_usage` (the chain's totals), and `/cost`
(`cost_report`) shows this session's own share, then the chain's.
"""

from __future__ import annotations

from evo_agent.session import plain_dataclass as dataclass

# the price table (pricing.py, ~1 M instructions to build) is imported when a cost is asked for, after a model
# call: not before -p's first request (issue #30)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)
if TYPE_CHECKING:
    from typing import Any

    from evo_agent.providers.base import ModelResponse
    from evo_agent.session import SessionMeta, SessionStore

__all__ = ["MAX_CHAIN", "Usage", "cache_hit_rate", "cache_text", "chain_usage", "cost_report", "meta_usage",
           "own_usage", "resumed_usage", "usage_cost"]

MAX_CHAIN = 1000  # a resume chain longer than this is not summed further (and a cycle ends here too)


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

    @property
    def prompt_tokens(self) -> int:
        """Every input token sent: uncached, written to the cache, and read from it."""
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens

    def add(self, other: Usage) -> None:
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cache_creation_input_tokens += other.cache_creation_input_tokens
        self.cache_read_input_tokens += other.cache_read_input_tokens
        self.model_calls += other.model_calls

    def record_fields(self) -> dict[str, int]:
        """The token counts as a transcript holds them (an assistant record's names; SPEC §2)."""
        return {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "cache_creation_input_tokens": self.cache_creation_input_tokens,
                "cache_read_input_tokens": self.cache_read_input_tokens}

    @classmethod
    def of_response(cls, response: ModelResponse) -> Usage:
        """One model call's usage (counts a provider did not give are 0)."""
        return cls(response.input_tokens or 0, response.output_tokens or 0,
                   response.cache_creation_input_tokens or 0, response.cache_read_input_tokens or 0, 1)


def meta_usage(meta: SessionMeta) -> Usage:
    """Everything one session spent as its meta.json says: its assistant records' totals (`total_*`, SPEC §3)
    plus its compaction summary calls' (`summary_*`, kept apart), so on-disk cost is what /cost counted live."""
    return Usage(meta.total_input_tokens + meta.summary_input_tokens,
                 meta.total_output_tokens + meta.summary_output_tokens,
                 meta.total_cache_creation_tokens + meta.summary_cache_creation_tokens,
                 meta.total_cache_read_tokens + meta.summary_cache_read_tokens)


def chain_usage(store: Any, session_id: str) -> Usage:
    """The tokens spent by `session_id` and every session it was resumed from (model calls not counted).

    Reads meta.json files only (rebuilt from the transcript where one lags, never written back);
    a missing link ends the chain.
    """
    total = Usage()
    seen: set[str] = set()
    current: str | None = session_id
    while current and current not in seen and len(seen) < MAX_CHAIN:
        seen.add(current)
        try:
            info = store.info(current, write_back=False)
        except Exception:  # noqa: BLE001 - totals are a courtesy; a damaged meta must not stop a resume
            break
        if info is None:
            break
        total.add(meta_usage(info.meta))
        current = info.meta.resumed_from
    return total


def resumed_usage(store: SessionStore, source: str) -> Usage:
    """The totals a session resumed from `source` starts with: everything its resume chain spent."""
    return chain_usage(store, source)


def own_usage(total: Usage, store: SessionStore | None, resumed_from: str | None) -> Usage:
    """A session's own usage: `total` less the resume chain's totals it started from (resumed_usage)."""
    chain = chain_usage(store, resumed_from) if store is not None and resumed_from else Usage()
    return Usage(max(0, total.input_tokens - chain.input_tokens), max(0, total.output_tokens - chain.output_tokens),
                 max(0, total.cache_creation_input_tokens - chain.cache_creation_input_tokens),
                 max(0, total.cache_read_input_tokens - chain.cache_read_input_tokens), total.model_calls)


def cache_hit_rate(usage: Usage) -> float | None:
    """The share of the input read from the prompt cache (0..1), None when nothing was sent."""
    sent = usage.prompt_tokens
    return usage.cache_read_input_tokens / sent if sent else None


def cache_text(usage: Usage) -> str:
    """'cache: 12,000 read, 1,500 written, 88% of the input read from it', or '' when the API reported no cache use."""
    if not (usage.cache_read_input_tokens or usage.cache_creation_input_tokens):
        return ""
    rate = cache_hit_rate(usage) or 0.0
    return (f"cache: {usage.cache_read_input_tokens:,} read, {usage.cache_creation_input_tokens:,} written, "
            f"{rate:.0%} of the input read from it")


def usage_cost(model: str | None, usage: Usage) -> float | None:
    """The dollars of `usage` of `model`, None when the model's price is unknown."""
    from .pricing import cost_usd

    return cost_usd(model, input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
                    cache_creation_input_tokens=usage.cache_creation_input_tokens,
                    cache_read_input_tokens=usage.cache_read_input_tokens)


def cost_report(session_id: str, model: str, own: Usage, chain: list[Any]) -> str:
    """`/cost`: tokens and dollars of this session (`own`), then of the resume `chain` it continues.

    `chain` holds the SessionInfos of the sessions this one continues, nearest first ([] when it is not a resume).
    """
    from .pricing import PRICES_AS_OF, format_usd

    text = (f"session {session_id}: {own.input_tokens:,} input + {own.output_tokens:,} output "
            f"= {own.total:,} tokens in {own.model_calls} model call{'s' if own.model_calls != 1 else ''}")
    cache = cache_text(own)
    if cache:
        text += f" ({cache})"
    dollars = usage_cost(model, own)
    text += f" · {format_usd(dollars)}" if dollars is not None else f" · no price known for {model}"
    chain_text = _chain_text(own, dollars, chain)
    if chain_text:
        text += "\n" + chain_text
    if dollars is not None or chain_text:
        text += (f"\n(list prices of {PRICES_AS_OF}, cache writes and reads at their own prices; "
                 "earlier sessions as their transcripts recorded them)")
    return text


def _chain_text(own: Usage, dollars: float | None, chain: list[Any]) -> str:
    """The totals across the sessions this one was resumed from, and this one: '' when it is not a resume."""
    if not chain:
        return ""
    tokens = own.total + own.cache_creation_input_tokens + own.cache_read_input_tokens
    total = dollars
    for info in chain:
        spent = meta_usage(info.meta)
        tokens += spent.total + spent.cache_creation_input_tokens + spent.cache_read_input_tokens
        part = usage_cost(info.meta.model, spent)
        total = None if part is None or total is None else total + part
    n = len(chain)
    from .pricing import format_usd

    money = format_usd(total) if total is not None else "dollars unknown (a model without a known price)"
    return f"with the {n} session{'s' if n != 1 else ''} it continues: {tokens:,} tokens · {money}"
