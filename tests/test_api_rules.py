"""The checker itself must refuse what the Messages API refuses, or every test built on it is hollow."""

import pytest

from tests.api_rules import InvalidConversation, check_conversation, check_request

U = {"role": "user", "content": "q"}
A_TOOL = {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "bash", "input": {}}]}
RESULT = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]}


@pytest.mark.parametrize("messages,rule", [
    ([], "at least one"),
    ([{"role": "assistant", "content": "hi"}], "first message"),
    ([U, A_TOOL, U], "without tool_result"),
    ([U, RESULT], "unexpected tool_use_id"),
    ([U, A_TOOL, {"role": "user", "content": [{"type": "text", "text": "a"}, RESULT["content"][0]]}], "come first"),
    ([{"role": "user", "content": [{"type": "text", "text": ""}]}], "non-empty"),
    ([{"role": "user", "content": []}], "must not be empty"),
    ([U, A_TOOL, RESULT, {"role": "user", "content": RESULT["content"]}], "duplicate"),
])
def test_refuses_what_the_api_refuses(messages, rule):
    with pytest.raises(InvalidConversation, match=rule):
        check_request(messages)


def test_accepts_merged_turns_and_answered_tools():
    check_request([U, U, A_TOOL, RESULT, {"role": "user", "content": "more"}])
    check_conversation([U, A_TOOL])  # a stored history may end mid-tool; a request may not
    with pytest.raises(InvalidConversation):
        check_request([U, A_TOOL])


def test_cache_control_rules_are_those_of_the_api():
    from tests.api_rules import check_cache_control

    mark = {"type": "ephemeral"}
    text = {"type": "text", "text": "x", "cache_control": mark}
    assert check_cache_control({"system": [text], "messages": [{"role": "user", "content": [text, text]}]}) == 3
    assert check_cache_control({"tools": [{"name": "t", "cache_control": {"type": "ephemeral", "ttl": "1h"}}]}) == 1
    refused = [
        {"messages": [{"role": "user", "content": [text] * 5}]},  # more than 4
        {"messages": [{"role": "assistant", "content": [{"type": "thinking", "thinking": "t", "signature": "s",
                                                         "cache_control": mark}]}]},
        {"messages": [{"role": "user", "content": [{"type": "text", "text": "", "cache_control": mark}]}]},
        {"system": [{"type": "text", "text": "s", "cache_control": {"type": "persistent"}}]},
        {"system": [{"type": "text", "text": "s", "cache_control": {"type": "ephemeral", "ttl": "2h"}}]},
    ]
    for body in refused:
        with pytest.raises(InvalidConversation):
            check_cache_control(body)
