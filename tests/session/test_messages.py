"""The message-shape vocabulary (evo_agent.session.messages): what each question answers,
including for the malformed messages a transcript on disk may hold."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from evo_agent.session import messages as m

USE = {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a.py"}}
RESULT = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "line 1"}


def test_string_content_is_one_text_block():
    assert m.blocks({"role": "user", "content": "hi"}) == [{"type": "text", "text": "hi"}]
    assert m.content_blocks("") == [{"type": "text", "text": ""}]


def test_blocks_skip_what_is_not_a_block():
    message = {"role": "assistant", "content": [{"type": "text", "text": "a"}, "junk", None, USE]}
    assert m.blocks(message) == [{"type": "text", "text": "a"}, USE]
    assert m.blocks({"role": "user"}) == []
    assert m.blocks({"role": "user", "content": 5}) == []
    assert m.blocks("not a message") == []


def test_text_joins_text_blocks_only():
    message = {"role": "assistant", "content": [
        {"type": "text", "text": "one"}, {"type": "thinking", "thinking": "hmm"}, USE,
        {"type": "text", "text": 7}, {"type": "text", "text": "two"}]}
    assert m.text_of(message) == "onetwo"
    assert m.text_of(message, "\n") == "one\ntwo"
    assert m.text_of({"role": "user", "content": "plain"}, "\n") == "plain"
    assert m.text_of(None) == ""
    assert m.content_text(None) == ""


def test_tool_result_text():
    assert m.tool_result_text(RESULT) == "line 1"
    nested = {**RESULT, "content": [{"type": "text", "text": "a"}, {"type": "image", "source": {}},
                                    {"type": "text", "text": "b"}]}
    assert m.tool_result_text(nested) == "a\nb"
    assert m.tool_result_text({"type": "tool_result", "tool_use_id": "x"}) == ""


def test_tool_uses_and_results():
    assistant = {"role": "assistant", "content": [{"type": "text", "text": "reading"}, USE]}
    user = {"role": "user", "content": [RESULT, {"type": "text", "text": "and more"}]}
    assert m.tool_uses(assistant) == [USE]
    assert m.tool_results(user) == [RESULT]
    assert m.has_tool_results(user) and not m.has_tool_results(assistant)
    assert not m.has_tool_results({"role": "user", "content": "tool_result"})


def test_tool_uses_by_id_pairs_results_with_their_calls():
    second = {**USE, "id": "toolu_2", "name": "bash"}
    history = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [USE, {"type": "tool_use", "id": 3, "name": "odd"}]},
        {"role": "user", "content": [RESULT]},
        {"role": "assistant", "content": [second, {"type": "tool_use", "id": "toolu_3"}]},
    ]
    assert m.tool_uses_by_id(history) == {"toolu_1": USE, "toolu_2": second,
                                          "toolu_3": {"type": "tool_use", "id": "toolu_3"}}
    assert m.tool_names_by_id(history) == {"toolu_1": "read_file", "toolu_2": "bash", "toolu_3": "tool"}
    # A tool_use in a user message is not a call.
    assert m.tool_uses_by_id([{"role": "user", "content": [USE]}]) == {}


def test_block_builders():
    assert m.text_block("x") == {"type": "text", "text": "x"}
    assert m.tool_result_block("t", "out") == {"type": "tool_result", "tool_use_id": "t", "content": "out"}
    assert m.tool_result_block("t", "bad", is_error=True)["is_error"] is True


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(["type", "text", "id"]), inner,
                                                                 max_size=3),
    max_leaves=12,
)
block_types = st.sampled_from(["text", "tool_use", "tool_result", "thinking", "image"])
well_formed_blocks = st.lists(st.builds(lambda t, s: {"type": t, "text": s}, block_types, st.text(max_size=5)),
                              max_size=6)


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_never_raises_on_any_json(value):
    """A transcript line can hold anything: every question has an answer, none raises."""
    message = {"role": "user", "content": value}
    for f in (m.blocks, m.text_of, m.tool_uses, m.tool_results, m.has_tool_results):
        f(message)
        f(value)
    m.tool_result_text({"content": value})
    m.tool_uses_by_id([message, {"role": "assistant", "content": value}])


@settings(max_examples=200, deadline=None)
@given(well_formed_blocks, st.sampled_from(["", "\n", " "]))
def test_text_is_the_text_blocks_in_order(content, sep):
    message = {"role": "assistant", "content": content}
    assert m.text_of(message, sep) == sep.join(b["text"] for b in content if b["type"] == "text")
    assert m.blocks(message) == content
    # Each block is exactly one of: a call, a result, or something else.
    kinds = len(m.tool_uses(message)) + len(m.tool_results(message))
    assert kinds == sum(b["type"] in ("tool_use", "tool_result") for b in content)


@given(st.text(max_size=20))
def test_string_shorthand_reads_as_its_one_block(text):
    assert m.text_of({"role": "user", "content": text}) == text
    assert m.text_of({"role": "user", "content": m.blocks({"content": text})}) == text


def test_one_line_folds_whitespace_and_cuts_with_an_ellipsis():
    from evo_agent.session import one_line

    assert one_line("  a\n\tb  c \r\n") == "a b c"
    assert one_line("abcdef", 4) == "abc…" and len(one_line("x" * 500, 300)) == 300
    assert one_line("abcd", 4) == "abcd" and one_line("abc", 0) == "…"
    assert one_line(ValueError("bad\nthing")) == "bad thing"
