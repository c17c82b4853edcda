"""Cache breakpoints as a pure decoration of the request (providers/anthropic_cache.py), over generated
conversations with tool results, thinking blocks, summaries and batched clearing (SPEC §12, §4)."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from evo_agent.agent.compaction import CLEAR_RESULT_CHARS, cleared_count, micro_compact
from evo_agent.providers.anthropic_cache import strip_cache_control
from evo_agent.providers.anthropic_provider import AnthropicProvider
from evo_agent.session import summary_message, tool_result_text
from tests.api_rules import check_cache_control
from tests.fake_model_server import validate_request
from tests.prompt_cache import PromptCache, prompt_units

TOOLS = [{"name": "bash", "description": "run a command",
          "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}}]
SYSTEM = "You are a test agent. " * 300  # over the 1024-token minimum on its own
TRIGGER = 3 * CLEAR_RESULT_CHARS  # small, so clearings happen inside short generated conversations


def provider() -> AnthropicProvider:
    return AnthropicProvider("claude-sonnet-4", api_key="k", base_url="http://127.0.0.1:9", max_retries=0)


def request(history: list[dict]) -> dict:
    body = provider().build_body(system=SYSTEM, messages=micro_compact(history, trigger=TRIGGER), tools=TOOLS,
                                 max_tokens=100, cache_key="conversation")
    return json.loads(body)


turn = st.fixed_dictionaries({
    "prompt": st.text(min_size=1, max_size=30).filter(str.strip),
    "thinking": st.booleans(),
    "calls": st.lists(st.lists(st.integers(0, 3 * CLEAR_RESULT_CHARS), min_size=1, max_size=3), max_size=4),
    "listed": st.booleans(),  # a tool result whose content is a list of text blocks
    "interrupted": st.booleans(),
})


def conversations(turns: list[dict], summary: bool) -> list[list[dict]]:
    """The history at each request the agent would send for these turns, in order."""
    history: list[dict] = [summary_message("earlier work")] if summary else []
    points: list[list[dict]] = []
    ids = iter(range(10**6))
    for t in turns:
        history.append({"role": "user", "content": t["prompt"]})
        points.append(list(history))
        for sizes in t["calls"]:
            blocks = [{"type": "thinking", "thinking": "hm", "signature": "sig"}] if t["thinking"] else []
            uses = [{"type": "tool_use", "id": f"t{next(ids)}", "name": "bash", "input": {"command": "x"}}
                    for _ in sizes]
            history.append({"role": "assistant", "content": blocks + uses})
            results = []
            for use, size in zip(uses, sizes):
                content = [{"type": "text", "text": "r" * size}] if t["listed"] and size else "r" * size
                results.append({"type": "tool_result", "tool_use_id": use["id"], "content": content})
            history.append({"role": "user", "content": results})
            points.append(list(history))
        if t["interrupted"]:
            history.append({"role": "user", "content": "[Request interrupted by user]"})
        else:
            history.append({"role": "assistant", "content": [{"type": "text", "text": "done"}]})
    return points


def result_sizes(history: list[dict]) -> list[int]:
    return [len(tool_result_text(b)) for m in history if isinstance(m["content"], list)
            for b in m["content"] if b.get("type") == "tool_result"]


@settings(max_examples=60, deadline=None)
@given(st.lists(turn, min_size=1, max_size=6), st.booleans())
def test_marks_are_valid_few_never_stored_and_the_prefix_only_grows_between_clearings(turns, summary):
    points = conversations(turns, summary)
    snapshots = [json.dumps(h) for h in points]
    bodies = [request(h) for h in points]
    cache = PromptCache(clock=lambda: 0.0)
    for history, snapshot, body in zip(points, snapshots, bodies):
        assert json.dumps(history) == snapshot and "cache_control" not in snapshot  # never into the history
        validate_request(body)  # the API's rules, the cache's included
        assert 2 <= check_cache_control(body) <= 4
        assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
        last = body["messages"][-1]["content"]
        assert last[-1].get("cache_control") == {"type": "ephemeral"}  # the newest message's end
        if summary:
            assert body["messages"][0]["content"][0].get("cache_control") == {"type": "ephemeral"}
        # apart from the marks, the request is the history as micro-compaction shows it
        shown = micro_compact(history, trigger=TRIGGER)
        assert strip_cache_control(body["messages"]) == [
            {**m, "content": [{"type": "text", "text": m["content"]}]} if isinstance(m["content"], str) else m
            for m in shown]
    for (h0, b0), (h1, b1) in zip(zip(points, bodies), zip(points[1:], bodies[1:])):
        u0, u1 = prompt_units(b0), prompt_units(b1)
        end = max(i for i, u in enumerate(u0) if u.ttl is not None) + 1
        if cleared_count(result_sizes(h0), TRIGGER) == cleared_count(result_sizes(h1), TRIGGER):
            # between clearings: the whole previous request, byte for byte, begins this one
            assert [u.data for u in u1[:end]] == [u.data for u in u0[:end]]
        else:
            # a clearing rewrites from the first result it clears on, never the tools, system or summary
            assert [u.data for u in u1[:2 + summary]] == [u.data for u in u0[:2 + summary]]
    for h0, h1, b1 in zip(points, points[1:], bodies[1:]):
        cache.usage(request(h0))
        usage = cache.usage(b1)
        if cleared_count(result_sizes(h0), TRIGGER) == cleared_count(result_sizes(h1), TRIGGER):
            previous = cache.log[-2]
            assert usage["cache_read_input_tokens"] == sum(
                previous[k] for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"))


def test_no_cache_key_means_a_one_off_request_without_marks():
    body = json.loads(provider().build_body(system=SYSTEM, messages=[{"role": "user", "content": "hi"}], tools=[],
                                            max_tokens=10))
    assert body["system"] == SYSTEM and body["messages"] == [{"role": "user", "content": "hi"}]
    assert "cache_control" not in json.dumps(body)


def test_a_tool_list_without_system_marks_the_last_tool():
    body = json.loads(provider().build_body(system="", messages=[{"role": "user", "content": "hi"}], tools=TOOLS,
                                            max_tokens=10, cache_key="c"))
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"} and "cache_control" not in TOOLS[-1]
    assert check_cache_control(body) == 2
