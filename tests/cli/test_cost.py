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


def test_json_output_of_a_continued_session_reports_this_run_as_its_cost_does(cli, model_server):
    """`-c -p --output-format json`: usage, the hit rate and total_cost_usd are of one scope, this run's
    session (as /cost's first line), so a script that sums them over its runs counts each token once."""
    import json

    model_server.script(reply(text("one"), usage=CACHED))
    first = cli.run("-p", "one", "--output-format", "json", "--model", MODEL)
    assert first.rc == 0, first.err
    model_server.script(reply(text("two"), usage={"input_tokens": 500, "output_tokens": 50,
                                                  "cache_creation_input_tokens": 0, "cache_read_input_tokens": 9_500}))
    second = cli.run("-c", "-p", "two", "--output-format", "json", "--model", MODEL)
    assert second.rc == 0, second.err
    out = json.loads(second.out)
    assert out["usage"] == {"input_tokens": 500, "output_tokens": 50, "cache_creation_input_tokens": 0,
                            "cache_read_input_tokens": 9_500, "cache_hit_rate": 0.95}
    assert out["total_cost_usd"] == pytest.approx((500 * 3 + 50 * 15 + 9_500 * 0.3) / 1e6)
    assert out["num_turns"] == 1


def _cost_counts(line: str) -> dict[str, int]:
    """input, output, cache read and write of a /cost line ('session …: 1,000 input + 100 output … (cache: …)')."""
    import re

    def number(pattern: str) -> int:
        found = re.search(pattern, line)
        return int(found.group(1).replace(",", "")) if found else 0

    return {"input": number(r": ([\d,]+) input"), "output": number(r"\+ ([\d,]+) output"),
            "cache_read": number(r"cache: ([\d,]+) read"), "cache_write": number(r"([\d,]+) written")}


def _meta_counts(cli, sid: str) -> dict[str, int]:
    """The same four counts from `sessions show --json`'s meta: the turns' totals plus the summary calls'."""
    import json

    meta = json.loads(cli.run("sessions", "show", sid, "--json").out)["meta"]
    return {"input": meta["total_input_tokens"] + meta["summary_input_tokens"],
            "output": meta["total_output_tokens"] + meta["summary_output_tokens"],
            "cache_read": meta["total_cache_read_tokens"] + meta["summary_cache_read_tokens"],
            "cache_write": meta["total_cache_creation_tokens"] + meta["summary_cache_creation_tokens"]}


def test_a_compactions_summary_call_is_counted_on_disk_as_live(cli, model_server):
    """meta.json, `sessions show` and a resume's chain totals count the summary call, as /cost does live."""

    from tests.agent.helpers import summarizer, summary_requests
    from tests.prompt_cache import PromptCache

    model_server.prompt_cache = PromptCache()
    model_server.default = summarizer("S: the number is 42")
    first = cli.run("--plain", "--model", MODEL, input="remember the number 42\n/compact\nwhich number?\n/cost\n")
    assert first.rc == 0 and "compaction #1, manual" in first.out, first.err
    assert len(summary_requests(model_server)) == 1
    live = _cost_counts(next(line for line in first.out_lines if line.startswith("session ")))
    sid = first.hint_id()

    (boundary,) = [r for r in cli.records(sid) if r["type"] == "compact_boundary"]
    assert boundary["summary"] == "S: the number is 42" and boundary["compact_count"] == 1
    usage = boundary["usage"]
    assert usage["output_tokens"] > 0 and usage["cache_read_input_tokens"] > 0  # the summary call read the cache
    answers = [r for r in cli.records(sid) if r["type"] == "assistant"]
    assert live["output"] == usage["output_tokens"] + sum(r["output_tokens"] for r in answers)

    assert _meta_counts(cli, sid) == live
    shown = cli.run("sessions", "show", sid).out
    assert f"tokens {live['input']:,} in / {live['output']:,} out ({live['cache_read']:,} cache read" in shown
    assert "compacted · #1 · manual" in shown and "summary " in shown

    second = cli.run("--plain", "--model", MODEL, "--resume", sid, input="and now?\n/cost\n")
    own = _cost_counts(next(line for line in second.out_lines if line.startswith("session ")))
    chain = next(line for line in second.out_lines if line.startswith("with the 1 session it continues"))
    assert f": {sum(live.values()) + sum(own.values()):,} tokens" in chain, chain


def test_with_a_compaction_meta_totals_are_the_sums_over_the_assistant_records(cli, model_server):
    """SPEC §3: `total_*` sum this file's assistant records; the summary call's tokens are in `summary_*` only."""
    import json

    from tests.agent.helpers import summarizer
    from tests.prompt_cache import PromptCache

    model_server.prompt_cache = PromptCache()
    model_server.default = summarizer("S: the number is 42")
    run = cli.run("--plain", "--model", MODEL, input="remember the number 42\n/compact\nwhich number?\n")
    assert run.rc == 0 and "compaction #1, manual" in run.out, run.err
    sid = run.hint_id()
    records = cli.records(sid)
    answers = [r for r in records if r["type"] == "assistant"]
    (boundary,) = [r for r in records if r["type"] == "compact_boundary"]
    names = {"input": "input_tokens", "output": "output_tokens", "cache_creation": "cache_creation_input_tokens",
             "cache_read": "cache_read_input_tokens"}
    assert boundary["usage"]["output_tokens"] > 0
    on_disk = json.loads((cli.sessions_dir / sid / "meta.json").read_text())
    shown = json.loads(cli.run("sessions", "show", sid, "--json").out)["meta"]
    for meta in (on_disk, shown):
        for short, field in names.items():
            assert meta[f"total_{short}_tokens"] == sum(r.get(field, 0) for r in answers), short
            assert meta[f"summary_{short}_tokens"] == boundary["usage"][field], short


def test_a_failed_compactions_paid_summary_call_is_counted_on_disk_as_live(cli, model_server):
    """A summary call that was paid for but gave nothing to compact (an empty answer) leaves a `compact_failed`
    record with its usage: meta.json, `sessions show` and a resume's chain totals agree with /cost."""

    from tests.agent.helpers import summarizer, summary_requests
    from tests.prompt_cache import PromptCache

    model_server.prompt_cache = PromptCache()
    model_server.default = summarizer("")  # the summary comes back empty: the compaction fails
    first = cli.run("--plain", "--model", MODEL, input="remember the number 42\n/compact\nwhich number?\n/cost\n")
    assert first.rc == 0 and "empty summary" in first.out + first.err, first.err
    assert len(summary_requests(model_server)) == 1
    live = _cost_counts(next(line for line in first.out_lines if line.startswith("session ")))
    sid = first.hint_id()

    records = cli.records(sid)
    assert not [r for r in records if r["type"] == "compact_boundary"]
    (failed,) = [r for r in records if r["type"] == "compact_failed"]
    assert failed["trigger"] == "manual" and "empty summary" in failed["error"]
    usage = failed["usage"]
    assert usage["output_tokens"] > 0 and usage["cache_read_input_tokens"] > 0
    answers = [r for r in records if r["type"] == "assistant"]
    assert live["output"] == usage["output_tokens"] + sum(r["output_tokens"] for r in answers)

    assert _meta_counts(cli, sid) == live
    shown = cli.run("sessions", "show", sid).out
    assert f"tokens {live['input']:,} in / {live['output']:,} out ({live['cache_read']:,} cache read" in shown
    assert "compaction failed (manual)" in shown

    second = cli.run("--plain", "--model", MODEL, "--resume", sid, input="and now?\n/cost\n")
    own = _cost_counts(next(line for line in second.out_lines if line.startswith("session ")))
    chain = next(line for line in second.out_lines if line.startswith("with the 1 session it continues"))
    assert f": {sum(live.values()) + sum(own.values()):,} tokens" in chain, chain
