"""The Anthropic <-> chat completions translation, as pure functions (property tests, no network)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evo_agent.providers import TextDelta
from evo_agent.providers.openai_stream import ChatStreamAssembler, assemble, map_stop_reason, map_usage
from evo_agent.providers.openai_translate import (
    INVALID_ARGUMENTS_KEY,
    TOOL_ERROR_PREFIX,
    from_openai_messages,
    history_tool_ids,
    parse_arguments,
    to_openai_messages,
    to_openai_tools,
    tool_message_text,
    wire_tool_call_id,
)
from tests.api_rules import check_request
from tests.fake_openai_server import InvalidChatRequest, check_chat_messages, validate_chat_request

TOOL_NAMES = ["bash", "read_file", "write_file", "edit_file", "glob", "grep", "task", "compact"]
TOOLS = [{"name": n, "description": f"the {n} tool", "input_schema": {"type": "object", "properties": {}}} for n in TOOL_NAMES]

# --------------------------------------------------------------------------- strategies

texts = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=24)
json_scalars = st.none() | st.booleans() | st.integers(-(10**12), 10**12) | st.floats(allow_nan=False, allow_infinity=False) | texts
json_values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3), max_leaves=5)
tool_inputs = st.dictionaries(texts, json_values, max_size=4)
# Ids as the APIs send them, and ids this provider must hash before sending (too long, odd characters).
ID_FORMATS = ["toolu_{n:04d}", "call_{n}", "functions.bash:{n}", "chatcmpl-tool-" + "0" * 30 + "{n}", "{n}"]


@st.composite
def tool_result_blocks(draw, tool_use_id: str) -> dict:
    is_error = draw(st.booleans())
    content = draw(
        texts.filter(lambda t: is_error or not t.startswith(TOOL_ERROR_PREFIX))
        | st.just("")
        | st.lists(st.builds(lambda t: {"type": "text", "text": t}, texts), max_size=3)
    )
    if not is_error and isinstance(content, list) and content and content[0]["text"].startswith(TOOL_ERROR_PREFIX):
        content[0]["text"] = "ok " + content[0]["text"]
    block = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}
    if is_error or draw(st.booleans()):
        block["is_error"] = is_error
    return block


def _split(draw, role: str, blocks: list[dict]) -> list[dict]:
    """One turn as one or more consecutive messages; a lone text block is sometimes a plain string."""
    cuts = sorted(draw(st.sets(st.integers(1, max(1, len(blocks) - 1)), max_size=2))) if len(blocks) > 1 else []
    out, start = [], 0
    for cut in cuts + [len(blocks)]:
        part = blocks[start:cut]
        start = cut
        if not part:
            continue
        if len(part) == 1 and part[0]["type"] == "text" and draw(st.booleans()):
            out.append({"role": role, "content": part[0]["text"]})
        else:
            out.append({"role": role, "content": part})
    return out


@st.composite
def histories(draw) -> list[dict]:
    """API-valid Anthropic histories: text, thinking, tool_use with results in any order, split turns."""
    counter = iter(range(10**6))
    messages: list[dict] = []
    pending: list[str] = []
    turns = draw(st.integers(1, 5))
    for turn in range(turns):
        results = [draw(tool_result_blocks(i)) for i in draw(st.permutations(pending))] if pending else []
        user_texts = draw(st.lists(st.builds(lambda t: {"type": "text", "text": t}, texts), min_size=0 if results else 1, max_size=2))
        messages += _split(draw, "user", results + user_texts)
        pending = []
        if turn == turns - 1 and draw(st.booleans()):
            break
        blocks: list[dict] = []
        for kind in draw(st.lists(st.sampled_from(["text", "tool_use", "thinking"]), min_size=1, max_size=4)):
            if kind == "text":
                blocks.append({"type": "text", "text": draw(texts)})
            elif kind == "thinking":
                blocks.append({"type": "thinking", "thinking": draw(texts), "signature": "sig"})
            else:
                block_id = draw(st.sampled_from(ID_FORMATS)).format(n=next(counter))
                pending.append(block_id)
                blocks.append({"type": "tool_use", "id": block_id, "name": draw(st.sampled_from(TOOL_NAMES)), "input": draw(tool_inputs)})
        messages += _split(draw, "assistant", blocks)
    if pending:
        messages += _split(draw, "user", [draw(tool_result_blocks(i)) for i in pending])
    return messages


systems = st.just("") | texts


# --------------------------------------------------------------------------- a canonical form


def canonical(messages: list[dict]) -> list[tuple[str, list]]:
    """What the translation promises to keep: merged turns, tool results first, texts joined, thinking gone."""
    turns: list[tuple[str, list[dict]]] = []
    for message in messages:
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        kept = []
        for b in blocks:
            if b["type"] == "text" and b["text"]:
                kept.append(("text", b["text"]))
            elif b["type"] == "tool_use":
                kept.append(("tool_use", wire_tool_call_id(b["id"]), b["name"], json.dumps(b["input"], sort_keys=True)))
            elif b["type"] == "tool_result":
                body = tool_message_text(dict(b, is_error=False))
                kept.append(("tool_result", wire_tool_call_id(b["tool_use_id"]), body, bool(b.get("is_error"))))
        if not kept:
            continue
        if turns and turns[-1][0] == message["role"]:
            turns[-1][1].extend(kept)
        else:
            turns.append((message["role"], kept))
    out = []
    for role, kept in turns:
        text = "\n\n".join(k[1] for k in kept if k[0] == "text")
        others = [k for k in kept if k[0] != "text"]
        first = [k for k in others if k[0] == "tool_result"]
        rest = [k for k in others if k[0] == "tool_use"]
        if role == "user":
            out.append((role, first + ([("text", text)] if text else [])))
        else:
            out.append((role, ([("text", text)] if text else []) + rest))
    return out


# --------------------------------------------------------------------------- properties


@settings(max_examples=120, deadline=None)
@given(histories())
def test_generated_histories_are_api_valid(history):
    check_request(history)


@settings(max_examples=120, deadline=None)
@given(systems, histories())
def test_request_for_a_valid_history_passes_the_strict_server(system, history):
    body = {"model": "m", "messages": to_openai_messages(system, history), "tools": to_openai_tools(TOOLS), "stream": True,
            "stream_options": {"include_usage": True}, "max_tokens": 100}  # fmt: skip
    validate_chat_request(body)
    json.dumps(body)  # serialisable as is


@settings(max_examples=120, deadline=None)
@given(systems, histories())
def test_round_trip_keeps_everything_the_chat_api_can_carry(system, history):
    wire = to_openai_messages(system, history)
    back_system, back = from_openai_messages(wire)
    assert back_system == system
    assert canonical(back) == canonical(history)
    check_request(back)  # what comes back is a valid Anthropic history again
    assert to_openai_messages(back_system, back) == wire  # and translating it again is a fixed point


@st.composite
def answers(draw):
    """An assistant answer as a server would stream it: text, calls, random chunking and interleaving."""
    text = draw(st.one_of(st.just(""), texts))
    calls = []
    for n in range(draw(st.integers(0, 4))):
        arguments = draw(tool_inputs.map(json.dumps) | st.sampled_from(['{"command": "ls', "", "[1]", "null"]))
        call_id = draw(st.sampled_from([f"call_{n}", "", "call_dup", "bad id!"]))
        calls.append({"id": call_id, "name": draw(st.sampled_from(TOOL_NAMES)), "arguments": arguments})
    deltas: list[dict] = []
    for piece in _pieces(draw, text):
        deltas.append({"content": piece})
    streams = []
    for index, call in enumerate(calls):
        start = {"index": index, "type": "function", "function": {"name": call["name"], "arguments": ""}}
        if call["id"]:
            start["id"] = call["id"]
        streams.append([start] + [{"index": index, "function": {"arguments": p}} for p in _pieces(draw, call["arguments"])])
    while any(streams):
        live = [s for s in streams if s]
        chosen = draw(st.sampled_from(live)) if draw(st.booleans()) else live[0]
        deltas.append({"tool_calls": [chosen.pop(0)]})
    finish = "tool_calls" if calls else draw(st.sampled_from(["stop", "length"]))
    chunks = [{"choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    chunks.append({"choices": [], "usage": {"prompt_tokens": 11, "completion_tokens": 3}})
    return text, calls, chunks


def _pieces(draw, value: str) -> list[str]:
    if not value:
        return []
    cuts = sorted(draw(st.sets(st.integers(1, len(value)), max_size=4)) | {len(value)})
    out, start = [], 0
    for cut in cuts:
        if cut > start:
            out.append(value[start:cut])
            start = cut
    return out


@settings(max_examples=120, deadline=None)
@given(histories(), answers())
def test_any_streamed_answer_becomes_a_valid_assistant_turn(history, answer):
    text, calls, chunks = answer
    # the model answers the history (closed with a user turn first when it ends on the assistant)
    if history[-1]["role"] == "assistant":
        history = history + [{"role": "user", "content": "go on"}]
    used = history_tool_ids(history) | {"call_dup"}
    streamed = []
    assembler = ChatStreamAssembler(used, seed=len(history))
    for chunk in chunks:
        streamed += [event.text for event in assembler.feed(chunk) if isinstance(event, TextDelta)]
    response = assembler.response()
    assert "".join(streamed) == text
    blocks = response.message["content"]
    expected_text = [text] if text.strip() else []
    assert [b["text"] for b in blocks if b["type"] == "text"] == expected_text
    uses = [b for b in blocks if b["type"] == "tool_use"]
    assert [u["name"] for u in uses] == [c["name"] for c in calls]
    assert [u["input"] for u in uses] == [parse_arguments(c["arguments"]) for c in calls]
    assert all(isinstance(u["input"], dict) for u in uses)
    ids = [u["id"] for u in uses]
    assert len(set(ids)) == len(ids) and not (set(ids) & used)
    assert response.stop_reason == ("tool_use" if calls else {"stop": "end_turn", "length": "max_tokens"}[chunks[-2]["choices"][0]["finish_reason"]])
    assert (response.input_tokens, response.output_tokens) == (11, 3)
    # Deterministic: the same stream gives the same message.
    assert assemble(chunks, used, seed=len(history)).message == response.message
    # The answer, once its tools are answered, makes a history both APIs accept.
    if blocks:
        follow = history + [response.message]
        if uses:
            follow.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": i, "content": "r"} for i in ids]})
        else:
            follow.append({"role": "user", "content": "thanks"})
        check_request(follow)
        check_chat_messages(to_openai_messages("s", follow))


# --------------------------------------------------------------------------- examples


def test_tools_translation():
    assert to_openai_tools([{"name": "glob", "input_schema": {"type": "object", "properties": {"pattern": {"type": "string"}}}}]) == [
        {"type": "function", "function": {"name": "glob", "parameters": {"type": "object", "properties": {"pattern": {"type": "string"}}}}}
    ]


def test_tool_results_are_sent_before_the_text_of_their_turn():
    history = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "bash", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "x"}, {"type": "text", "text": "and?"}]},
    ]
    assert to_openai_messages("", history)[1:] == [
        {"role": "assistant", "content": None, "tool_calls": [{"id": "a", "type": "function", "function": {"name": "bash", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "a", "content": "x"},
        {"role": "user", "content": "and?"},
    ]


def test_a_tool_use_in_a_later_message_of_the_turn_is_still_followed_by_its_results():
    history = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "bash", "input": {}}]},
        {"role": "assistant", "content": [{"type": "text", "text": "running it"}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "x"}]},
    ]
    check_request(history)
    wire = to_openai_messages("", history)
    check_chat_messages(wire)
    assert wire[1]["content"] == "running it" and len(wire) == 3


def test_images_and_errors_in_tool_results():
    block = {"type": "tool_result", "tool_use_id": "a", "is_error": True,
             "content": [{"type": "text", "text": "see"}, {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA=="}}]}  # fmt: skip
    assert tool_message_text(block) == "Error: see\n[image omitted]"
    user = {"role": "user", "content": [{"type": "text", "text": "look"}, {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA=="}}]}
    assert to_openai_messages("", [user]) == [
        {"role": "user", "content": [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA=="}}]}
    ]
    assert from_openai_messages(to_openai_messages("", [user]))[1] == [user]


@pytest.mark.parametrize(
    "raw,expected",
    [
        (None, {}),
        ("", {}),
        ("  ", {}),
        ('{"a": 1}', {"a": 1}),
        ('"{\\"a\\": 1}"', {"a": 1}),
        ({"a": 1}, {"a": 1}),
        ("{bad", {INVALID_ARGUMENTS_KEY: "{bad"}),
        ("42", {INVALID_ARGUMENTS_KEY: "42"}),
        ('"just text"', {INVALID_ARGUMENTS_KEY: '"just text"'}),
    ],
)
def test_parse_arguments(raw, expected):
    assert parse_arguments(raw) == expected


def test_stop_reasons_and_usage():
    assert [map_stop_reason(r, False) for r in ("stop", "tool_calls", "length", "content_filter", None, "eos")] == [
        "end_turn", "tool_use", "max_tokens", "refusal", None, "eos"
    ]  # fmt: skip
    assert map_stop_reason("stop", True) == "tool_use" and map_stop_reason("length", True) == "max_tokens"
    assert map_usage({"prompt_tokens": 10, "completion_tokens": 2, "prompt_tokens_details": {"cached_tokens": 4}}) == {
        "input_tokens": 6, "output_tokens": 2, "cache_read_input_tokens": 4
    }  # fmt: skip
    assert map_usage(None) == {"input_tokens": 0, "output_tokens": 0, "cache_read_input_tokens": None}
    assert map_usage({"prompt_tokens": 3, "completion_tokens": 1, "prompt_tokens_details": None})["cache_read_input_tokens"] is None


def test_wire_ids():
    assert wire_tool_call_id("toolu_01ABC-x_y") == "toolu_01ABC-x_y"
    odd = wire_tool_call_id("functions.bash:0")
    assert odd == wire_tool_call_id("functions.bash:0") and odd.startswith("call_") and len(odd) <= 40
    assert wire_tool_call_id("x" * 41) != "x" * 41


def test_odd_server_tool_names_are_made_safe_for_the_anthropic_api():
    chunks = [
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "c1", "function": {"name": "functions.bash", "arguments": "{}"}}]}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ]
    assert assemble(chunks).message["content"] == [{"type": "tool_use", "id": "c1", "name": "invalid-name_functions_bash", "input": {}}]


def test_calls_without_index_are_told_apart_by_id():
    chunks = [
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"id": "c1", "function": {"name": "bash", "arguments": '{"command":'}}]}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"function": {"arguments": ' "ls"}'}}]}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"id": "c2", "function": {"name": "glob", "arguments": '{"pattern": "*"}'}}]}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ]
    assert [(b["id"], b["input"]) for b in assemble(chunks).message["content"]] == [("c1", {"command": "ls"}), ("c2", {"pattern": "*"})]


def test_the_strict_validator_refuses_what_a_strict_server_refuses():
    call = {"role": "assistant", "content": None, "tool_calls": [{"id": "a", "type": "function", "function": {"name": "bash", "arguments": "{}"}}]}
    cases = [
        [{"role": "user", "content": "x"}, {"role": "system", "content": "late"}],
        [{"role": "assistant", "content": "first"}],
        [{"role": "user", "content": "x"}, call, {"role": "user", "content": "skipped the tool"}],
        [{"role": "user", "content": "x"}, call],
        [{"role": "user", "content": "x"}, {"role": "tool", "tool_call_id": "a", "content": "orphan"}],
        [{"role": "user", "content": "x"}, call, {"role": "tool", "tool_call_id": "a", "content": "r"}, {"role": "tool", "tool_call_id": "a", "content": "again"}],
        [{"role": "user", "content": "x"}, {"role": "assistant", "content": None}],
        [{"role": "user", "content": 5}],
        [{"role": "user", "content": "x"}, dict(call, tool_calls=[dict(call["tool_calls"][0], function={"name": "bash", "arguments": "{bad"})]), {"role": "tool", "tool_call_id": "a", "content": "r"}],
    ]
    for messages in cases:
        with pytest.raises(InvalidChatRequest):
            check_chat_messages(messages)
    check_chat_messages([{"role": "system", "content": "s"}, {"role": "user", "content": "x"}, call, {"role": "tool", "tool_call_id": "a", "content": "r"}])
