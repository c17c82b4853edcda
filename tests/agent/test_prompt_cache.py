"""SPEC §12 end to end: the requests an agent sends carry cache breakpoints where intended, the
transcript never does, the prefix only grows, and a resumed session repeats its source's bytes.

Against the loopback Messages API fake, which validates every request like the real API (at most
4 breakpoints, none on thinking blocks) and prices the cache as the API documents it
(tests/prompt_cache.py).
"""

from __future__ import annotations

import itertools
import json

from evo_agent.session import load_for_resume, summary_message
from tests.agent.helpers import conversation_of, is_summary_request, model_requests, summary_requests
from tests.builders import make_agent, server_provider
from tests.fake_model_server import FakeModelServer, text, thinking, tool_use
from tests.prompt_cache import PromptCache, breakpoints, plain, prompt_units


def big_file(project, name="data.txt", size=4096):
    (project / name).write_text(("lorem ipsum dolor sit amet " * (size // 27 + 1))[:size])
    return name


def cat_then_answer(body: dict):
    """A turn: the model reads the file with bash, then answers."""
    last = body["messages"][-1]
    content = last["content"]
    if isinstance(content, list) and any(b.get("type") == "tool_result" for b in content):
        return text("The file holds lorem ipsum.")
    return [thinking("let me look"), tool_use("bash", {"command": "cat data.txt"})]


def prefix_units(body: dict, upto_last_mark: bool = True) -> list[bytes]:
    units = prompt_units(body)
    marks = [i for i, u in enumerate(units) if u.ttl is not None]
    end = marks[-1] + 1 if (marks and upto_last_mark) else len(units)
    return [u.data for u in units[:end]]


def test_breakpoints_sit_on_system_previous_and_newest_and_never_reach_the_transcript(project, model_server):
    big_file(project)
    model_server.default = cat_then_answer
    agent, _ = make_agent(project, server_provider(model_server), compact_threshold=10**9)
    for prompt in ("what is in data.txt?", "and now?", "once more"):
        agent.run_turn(prompt)
    requests = model_requests(model_server)
    assert len(requests) == 6
    model_server.assert_all_valid()  # the fake refuses > 4 marks and marks on thinking blocks
    assert breakpoints(requests[0]) == ["system.0", "messages.0.content.0"]
    # after the tool call: the newest message (the tool result) and the end of the previous request
    assert breakpoints(requests[1]) == ["system.0", "messages.0.content.0", "messages.2.content.0"]
    # a new prompt: the previous request's end is the tool result before the last answer
    assert breakpoints(requests[2]) == ["system.0", "messages.2.content.0", "messages.4.content.0"]
    for body in requests:
        assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
        assert "cache_control" not in json.dumps(body["tools"])
        assert len(breakpoints(body)) <= 4
        # never on a thinking block: the assistant messages carry none at all
        assert all("cache_control" not in json.dumps(m) for m in body["messages"] if m["role"] == "assistant")
    raw = agent.recorder.path.read_bytes()
    assert b"cache_control" not in raw
    assert b"cache_control" not in json.dumps(agent.history).encode()


def test_each_request_begins_with_the_bytes_of_the_one_before_up_to_its_breakpoint(project, model_server):
    big_file(project)
    model_server.default = cat_then_answer
    agent, _ = make_agent(project, server_provider(model_server), compact_threshold=10**9)
    for i in range(8):
        agent.run_turn(f"question {i}")
    requests = model_requests(model_server)
    for before, after in itertools.pairwise(requests):
        shared = prefix_units(before)
        assert prefix_units(after, upto_last_mark=False)[: len(shared)] == shared


def sent(usage: dict) -> int:
    return usage["input_tokens"] + usage["cache_creation_input_tokens"] + usage["cache_read_input_tokens"]


def test_every_request_reads_all_the_previous_one_sent_from_the_cache(project):
    big_file(project)
    with FakeModelServer() as server:
        server.prompt_cache = PromptCache()
        server.default = cat_then_answer
        agent, _ = make_agent(project, server_provider(server), compact_threshold=10**9)
        for i in range(5):
            agent.run_turn(f"question {i}")
        usages = [entry["usage"] for entry in server.log if entry.get("answer") == "message"]
    assert usages[0]["cache_read_input_tokens"] == 0 and usages[0]["cache_creation_input_tokens"] > 0
    for before, usage in itertools.pairwise(usages):
        # all of the previous request is read back; only what this one adds is written
        assert usage["cache_read_input_tokens"] == sent(before), usages
        assert usage["input_tokens"] == 0
    # SPEC §12: every request after the first reads >= 80% of its input from the cache — even the second,
    # which adds a 4 KB tool output to no more than the fixed prefix (tools + system prompt, agent/prompt.py)
    assert all(u["cache_read_input_tokens"] >= 0.8 * sent(u) for u in usages[1:]), usages
    # the counts reach the assistant records (SPEC §2), and the agent's totals
    records = [json.loads(line) for line in agent.recorder.path.read_bytes().splitlines()]
    answers = [r for r in records if r["type"] == "assistant"]
    assert [r["cache_read_input_tokens"] for r in answers] == [u["cache_read_input_tokens"] for u in usages]
    assert [r["cache_creation_input_tokens"] for r in answers] == [u["cache_creation_input_tokens"] for u in usages]
    assert agent.usage.cache_read_input_tokens == sum(u["cache_read_input_tokens"] for u in usages)


def test_a_resumed_session_first_request_is_what_its_source_would_have_sent_next(project):
    big_file(project)
    with FakeModelServer() as server:
        server.prompt_cache = PromptCache()
        server.default = cat_then_answer
        source, store = make_agent(project, server_provider(server), compact_threshold=10**9)
        for i in range(3):
            source.run_turn(f"question {i}")
        resumed, _ = make_agent(project, server_provider(server), compact_threshold=10**9)
        resumed.resume(source.session_id)
        assert resumed.conversation_id == source.session_id
        assert resumed.system_prompt == source.system_prompt
        before = len(server.log)
        resumed.run_turn("after the resume")
        from_resumed = server.log[before]
        # the source goes on with the same prompt: its next request, byte for byte
        source.run_turn("after the resume")
        from_source = next(e for e in server.log[before + 2:] if e.get("answer") == "message")
        # a resume of the resume keeps the conversation's root, hence the same prompt
        again, _ = make_agent(project, server_provider(server), compact_threshold=10**9)
        again.resume(resumed.session_id)
        assert again.conversation_id == source.session_id and again.system_prompt == source.system_prompt
    assert json.dumps(from_resumed["body"]) == json.dumps(from_source["body"])
    usage = from_resumed["usage"]
    assert usage["cache_read_input_tokens"] >= 0.8 * sent(usage)  # the first request after a resume reads the cache


def share(usage: dict) -> float:
    return usage["cache_read_input_tokens"] / sent(usage)


def summary_entries(server) -> list[dict]:
    return [e for e in server.log if e.get("answer") == "message" and is_summary_request(e["body"])]


def test_the_summary_call_repeats_the_conversation_and_reads_it_from_the_cache(project):
    """Issue #30: the compaction's summary call is the next request plus the instruction, so it reads
    the cache (the flattened call read 0%); the boundary and the history after it are as before."""
    big_file(project)
    with FakeModelServer() as server:
        server.prompt_cache = PromptCache()
        plain_turns = cat_then_answer
        server.default = lambda body: text("S1") if is_summary_request(body) else plain_turns(body)
        agent, _ = make_agent(project, server_provider(server), compact_threshold=10**9)
        for i in range(3):
            agent.run_turn(f"question {i}")
        before = list(agent.history)
        agent.compact("the data")
        agent.run_turn("go on")
        (entry,) = summary_entries(server)
        conversation = [e for e in server.log if e.get("answer") == "message" and e not in (entry,)]
    server.assert_all_valid()
    body, usage = entry["body"], entry["usage"]
    previous = conversation[5]["body"]  # the last request before the compaction
    assert conversation_of(body) == plain(before) and body["tools"] == previous["tools"]
    assert body["system"] == previous["system"] and "tool_choice" not in body
    # the whole of the previous request is read back; only the last answer and the instruction are new
    assert usage["cache_read_input_tokens"] == sent(conversation[5]["usage"]), usage
    assert share(usage) >= 0.8, usage
    assert breakpoints(body)[-2:] == [f"messages.{len(before) - 2}.content.0", f"messages.{len(before)}.content.0"]
    # the boundary holds the model's text, and the next request starts from the summary as before
    assert agent.history[0] == summary_message("S1")
    after = conversation[6]["body"]
    assert breakpoints(after) == ["system.0", "messages.0.content.0", "messages.1.content.0"]
    assert plain(load_for_resume(agent.recorder.path).messages[:2]) == plain(after["messages"])


def test_a_compaction_between_the_calls_of_a_turn_reads_the_cache_too(project):
    """Mid-turn the newest message holds tool results the model has not read: the instruction follows them."""
    big_file(project)
    calls = itertools.count()

    def answer(body):
        if is_summary_request(body):
            return text("S-mid")
        return tool_use("bash", {"command": "cat data.txt"}) if next(calls) < 9 else text("done")

    with FakeModelServer() as server:
        server.prompt_cache = PromptCache()
        server.default = answer
        agent, _ = make_agent(project, server_provider(server), compact_threshold=30_000)
        agent.run_turn("read it nine times")
        (entry,) = summary_entries(server)
    server.assert_all_valid()
    last = entry["body"]["messages"][-1]["content"]
    assert [b["type"] for b in last] == ["tool_result", "text"]
    assert share(entry["usage"]) >= 0.8, entry["usage"]


def test_a_tool_call_in_the_summary_answer_falls_back_to_the_flattened_call(project, model_server):
    def answer(body):
        if is_summary_request(body) and body.get("tools"):
            return tool_use("bash", {"command": "ls"})  # the model ignored the instruction
        return text("S-flat") if is_summary_request(body) else text("ok")

    model_server.default = answer
    agent, _ = make_agent(project, server_provider(model_server), compact_threshold=10**9)
    agent.run_turn("hello")
    usage_before = agent.usage.output_tokens
    result = agent.compact()
    in_place, flattened = summary_requests(model_server)
    assert in_place.get("tools") and not flattened.get("tools")
    assert "<conversation>" in flattened["messages"][0]["content"]
    assert result.summary == "S-flat" and agent.history == [summary_message("S-flat")]
    assert agent.usage.output_tokens == usage_before + 2 * model_server.output_tokens  # both answers are paid for
    model_server.assert_all_valid()


def test_a_summary_refused_as_too_long_falls_back_and_other_failures_do_not(project, model_server):
    from tests.fake_model_server import error

    model_server.default = text("ok")
    agent, _ = make_agent(project, server_provider(model_server), compact_threshold=10**9)
    agent.run_turn("hello")
    model_server.script(error(400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"),
                        text("S-short"))
    assert agent.compact().summary == "S-short"
    assert [bool(b.get("tools")) for b in summary_requests(model_server)] == [True, False]


def test_the_fake_cache_keeps_messages_under_their_tool_choice():
    """The invalidation table: a change of tool_choice costs the messages, not tools and system."""
    cache = PromptCache()
    tools = [{"name": "t", "description": "d" * 6000, "input_schema": {"type": "object"}}]
    system = [{"type": "text", "text": "s" * 100, "cache_control": {"type": "ephemeral"}}]
    messages = [{"role": "user", "content": [{"type": "text", "text": "m" * 8000, "cache_control": {"type": "ephemeral"}}]}]
    body = {"model": "m", "tools": tools, "system": system, "messages": messages}
    cache.usage(body)
    assert cache.usage(body)["input_tokens"] == 0
    other = cache.usage({**body, "tool_choice": {"type": "none"}})
    assert 0 < other["cache_read_input_tokens"] < 2000 and other["cache_creation_input_tokens"] > 1900
