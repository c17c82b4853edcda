"""What tokens cost: the one dated price table, and the dollars of a usage.

Prices are the providers' public list prices in US dollars per million tokens,
as of PRICES_AS_OF. A model is matched by its name or a dated variant of it
(`claude-sonnet-4-5-20250929` is `claude-sonnet-4-5`), the longest name
winning. A model not in the table (a local Ollama model, the demo provider)
has no price: `/cost` shows its tokens only, never a made-up figure.

Token kinds follow the Anthropic convention every provider is mapped to
(providers/): `input_tokens` excludes the cached part, which is counted in
`cache_read_input_tokens` (and, for Anthropic, `cache_creation_input_tokens`).
"""

from __future__ import annotations

from evo_agent.session import plain_dataclass as dataclass

PRICES_AS_OF = "2025-11-01"


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens."""

    input: float
    output: float
    cache_write: float
    cache_read: float


def _anthropic(input_: float, output: float) -> Price:
    return Price(input_, output, cache_write=input_ * 1.25, cache_read=input_ * 0.1)


def _openai(input_: float, output: float, cached: float) -> Price:
    return Price(input_, output, cache_write=input_, cache_read=cached)


PRICES: dict[str, Price] = {
    # Anthropic (5-minute cache writes: 1.25× input; cache reads: 0.1× input)
    "claude-opus-4-5": _anthropic(5.0, 25.0),
    "claude-opus-4-1": _anthropic(15.0, 75.0),
    "claude-opus-4": _anthropic(15.0, 75.0),
    "claude-sonnet-4-5": _anthropic(3.0, 15.0),
    "claude-sonnet-4": _anthropic(3.0, 15.0),
    "claude-3-7-sonnet": _anthropic(3.0, 15.0),
    "claude-3-5-sonnet": _anthropic(3.0, 15.0),
    "claude-haiku-4-5": _anthropic(1.0, 5.0),
    "claude-3-5-haiku": _anthropic(0.8, 4.0),
    "claude-3-haiku": _anthropic(0.25, 1.25),
    "claude-3-opus": _anthropic(15.0, 75.0),
    # OpenAI (cached input at its own price)
    "gpt-5": _openai(1.25, 10.0, 0.125),
    "gpt-5-mini": _openai(0.25, 2.0, 0.025),
    "gpt-5-nano": _openai(0.05, 0.40, 0.005),
    "gpt-4.1": _openai(2.0, 8.0, 0.50),
    "gpt-4.1-mini": _openai(0.40, 1.60, 0.10),
    "gpt-4.1-nano": _openai(0.10, 0.40, 0.025),
    "gpt-4o": _openai(2.50, 10.0, 1.25),
    "gpt-4o-mini": _openai(0.15, 0.60, 0.075),
    "o3": _openai(2.0, 8.0, 0.50),
    "o3-mini": _openai(1.10, 4.40, 0.55),
    "o3-pro": _openai(20.0, 80.0, 20.0),
    "o4-mini": _openai(1.10, 4.40, 0.275),
}


def price_of(model: str | None) -> Price | None:
    """The table's price for `model` (exact, or a dated/suffixed variant such as `-20250929`), else None."""
    if not model:
        return None
    name = model.strip().lower().rsplit("/", 1)[-1]  # `anthropic/claude-…` as routers spell it
    best = None
    for key in PRICES:
        if (name == key or name.startswith(key + "-")) and (best is None or len(key) > len(best)):
            best = key
    return PRICES[best] if best is not None else None


def cost_usd(model: str | None, *, input_tokens: int = 0, output_tokens: int = 0,
             cache_creation_input_tokens: int = 0, cache_read_input_tokens: int = 0) -> float | None:
    """The dollars of a usage of `model`, or None when its price is unknown."""
    price = price_of(model)
    if price is None:
        return None
    return (input_tokens * price.input + output_tokens * price.output
            + cache_creation_input_tokens * price.cache_write + cache_read_input_tokens * price.cache_read) / 1e6


def format_usd(amount: float) -> str:
    """$0.0042 for small sums (cents hide them), $1.23 otherwise."""
    return f"${amount:.4f}" if amount < 1 else f"${amount:,.2f}"
