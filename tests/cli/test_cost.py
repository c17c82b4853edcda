"""/cost in dollars for models with a known price, per session and across a resume chain."""

from __future__ import annotations

import pytest

from evo_agent.agent.pricing import PRICES_AS_OF, cost_usd, price_of
from tests.fake_model_server import reply, text

MODEL = "claude-sonnet-4-5-20250929"  # $3 in / $15 out per million tokens


def test_prices_match_dated_variants_and_the_longest_name():
    assert price_of("claude-sonnet-4-5-20250929") == price_of("claude-sonnet-4-5")
    assert price_of("claude-opus-4-5") != price_of("claude-opus-4")
    assert price_of("gpt-4o-mini-2024-07-18") == price_of("gpt-4o-mini") != price_of("gpt-4o")
    assert price_of("llama3.1:8b") is None and price_of("demo") is None and price_of(None) is None
    assert cost_usd("claude-sonnet-4-5", input_tokens=1_000_000, output_tokens=1_000_000) == 18.0
    assert cost_usd("claude-sonnet-4-5", cache_read_input_tokens=1_000_000) == pytest.approx(0.3)


def test_cost_in_dollars_per_session_and_across_the_resume_chain(cli, model_server):
    model_server.script(reply(text("one"), usage={"input_tokens": 10_000, "output_tokens": 1_000}))
    first = cli.run("--plain", "--model", MODEL, input="question one\n/cost\n")
    assert first.rc == 0, first.err
    line = next(line for line in first.out_lines if line.startswith("session "))
    assert "10,000 input + 1,000 output = 11,000 tokens in 1 model call · $0.0450" in line  # 0.03 + 0.015
    assert f"list prices of {PRICES_AS_OF}" in first.out
    source = first.hint_id()

    model_server.script(reply(text("two"), usage={"input_tokens": 20_000, "output_tokens": 2_000}))
    second = cli.run("--plain", "--model", MODEL, "--resume", source, input="question two\n/cost\n")
    assert second.rc == 0, second.err
    assert "20,000 input + 2,000 output = 22,000 tokens in 1 model call · $0.0900" in second.out
    assert "with the 1 session it continues: 33,000 tokens · $0.1350" in second.out


def test_an_unknown_model_shows_tokens_only(cli, model_server):
    model_server.script(reply(text("hi"), usage={"input_tokens": 50, "output_tokens": 5}))
    result = cli.run("--plain", "--model", "my-local-llama", input="hello\n/cost\n")
    line = next(line for line in result.out_lines if line.startswith("session "))
    assert line.endswith("50 input + 5 output = 55 tokens in 1 model call · no price known for my-local-llama")
    assert "$" not in result.out


CACHED = {"input_tokens": 1_000, "output_tokens": 100, "cache_creation_input_tokens": 2_000,
          "cache_read_input_tokens": 8_000}
CACHED_USD = (1_000 * 3 + 100 * 15 + 2_000 * 3.75 + 8_000 * 0.3) / 1e6  # writes 1.25x, reads 0.1x of $3


def test_cost_shows_cache_reads_writes_the_hit_rate_and_dollars_at_cache_prices(cli, model_server):
    model_server.script(reply(text("one"), usage=CACHED))
    result = cli.run("--plain", "--model", MODEL, input="question\n/cost\n")
    line = next(line for line in result.out_lines if line.startswith("session "))
    assert "(cache: 8,000 read, 2,000 written, 73% of the input read from it)" in line, line
    assert line.endswith(f"· ${CACHED_USD:.4f}") and pytest.approx(0.0144) == CACHED_USD

    show = cli.run("sessions", "show", result.hint_id())
    assert "1,000 in / 100 out (8,000 cache read: 73% of the input, 2,000 cache write)" in show.out
    assert f"cost     ${CACHED_USD:.4f} (cache writes and reads at their own prices" in show.out


def test_json_output_reports_cache_tokens_with_claude_codes_names_and_the_hit_rate(cli, model_server):
    import json

    model_server.script(reply(text("four"), usage=CACHED))
    result = cli.run("-p", "2+2?", "--output-format", "json", "--model", MODEL)
    out = json.loads(result.out)
    assert out["usage"] == {"input_tokens": 1_000, "output_tokens": 100, "cache_creation_input_tokens": 2_000,
                            "cache_read_input_tokens": 8_000, "cache_hit_rate": 0.7273}
    assert out["total_cost_usd"] == pytest.approx(CACHED_USD)
