"""The summary request of a windowed resume (issue #14 item 4): head, the gap's own note, tail."""

from __future__ import annotations

from evo_agent.agent.compaction import SUMMARY_INPUT_CHARS, SUMMARY_INPUT_HEAD_CHARS, flatten_conversation
from evo_agent.session.resume import is_omitted_marker, omitted_marker


def turns(first: int, count: int, size: int = 3000) -> list[dict]:
    out = []
    for i in range(first, first + count):
        out += [{"role": "user", "content": f"task {i}: " + "p" * size},
                {"role": "assistant", "content": [{"type": "text", "text": f"done {i}"}]}]
    return out


def test_the_gap_note_stands_between_the_head_and_the_tail():
    text = flatten_conversation([*turns(0, 3), omitted_marker(123_456), *turns(9000, 3)])
    head, tail = text.split("[… 123,456 messages of the middle of this conversation were not loaded")
    assert "task 0:" in head and "done 2" in head and "task 9000:" in tail and "done 9002" in tail
    assert "characters of the middle" not in text  # nothing else was cut


def test_a_long_head_and_tail_keep_the_usual_caps_around_the_note():
    text = flatten_conversation([*turns(0, 100), omitted_marker(5), *turns(500, 200)])
    assert len(text) <= SUMMARY_INPUT_CHARS + 300
    head, tail = text.split("[… 5 messages of the middle")
    assert len(head) <= SUMMARY_INPUT_HEAD_CHARS + 2 and head.startswith("[user]\ntask 0:")
    assert tail.endswith("done 699") and "were clipped" in tail.splitlines()[0]


def test_only_the_marker_itself_is_taken_for_one():
    assert is_omitted_marker(omitted_marker(7))
    assert not is_omitted_marker({"role": "user", "content": omitted_marker(7)["content"][0]["text"] + " really"})
    assert not is_omitted_marker({"role": "assistant", "content": omitted_marker(7)["content"]})
