"""The fast read path and the copy-on-write repair return exactly what the naive reference returns.

`tests/session/reference.py` reads a transcript the obvious way (all of it, forward) and repairs
by rebuilding every message. The library reads backwards in blocks, replays each block as it is
read and keeps messages that need no repair as they are: on any transcript — torn, corrupted,
with boundaries, markers and lines longer than a block — the two must agree field by field.
"""

from __future__ import annotations

import copy

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evo_agent.session import SessionStore, load_for_resume, repair_history
from evo_agent.session import resume as resume_mod
from evo_agent.session.jsonio import encode_line

from .reference import reference_load, reference_repair

FIELDS = ("messages", "skipped_lines", "repairs", "compact_count", "summary", "first_prompt", "records", "file_size")

words = st.text(alphabet="ab c\n\"\\{}中", min_size=0, max_size=12)
ids = st.sampled_from(["t1", "t2", "t3", "t4", ""])


@st.composite
def transcripts(draw) -> list[tuple]:
    """Recorder calls, legal or not, as a crashing agent (or a hand edit) could leave them."""
    ops: list[tuple] = []
    for _ in range(draw(st.integers(min_value=0, max_value=16))):
        kind = draw(st.sampled_from(["prompt", "prompt", "assistant", "assistant", "results", "boundary",
                                     "marker", "odd"]))
        if kind == "prompt":
            content = draw(st.one_of(words, st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": words}),
                                                     max_size=2)))
            ops.append(("user", {"role": "user", "content": content}))
        elif kind == "assistant":
            blocks = [{"type": "text", "text": draw(words)}]
            for tid in draw(st.lists(ids, max_size=3)):
                block = {"type": "tool_use", "id": tid, "name": "bash", "input": {"command": draw(words)}}
                if draw(st.integers(0, 9)) == 0:
                    del block["name"]
                blocks.append(block)
            ops.append(("assistant", {"role": "assistant", "content": blocks}))
        elif kind == "results":
            ops.append(("user", {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": tid, "content": draw(words)}
                for tid in draw(st.lists(ids, min_size=1, max_size=3))]}))
        elif kind == "boundary":
            fields = {"summary": draw(words), "compact_count": draw(st.integers(0, 4)), "trigger": "auto"}
            if draw(st.integers(0, 4)) == 0:
                del fields["summary"]  # not a valid boundary: must not become the watermark
            ops.append(("compact_boundary", fields))
        elif kind == "marker":
            fields = {"from_session_id": "1780227556183_b525857d", "restored_count": 0,
                      "compact_count": draw(st.integers(0, 6))}
            if draw(st.booleans()):
                fields["first_prompt"] = draw(words)
            ops.append(("resume_marker", fields))
        else:
            ops.append(draw(st.sampled_from([
                ("user", {"role": "user", "content": 'says "compact_boundary" in text'}),
                ("assistant", {"role": "assistant", "content": [
                    {"type": "tool_use", "id": "tx", "name": "x", "input": {"type": "compact_boundary"}}]}),
                ("user", {"role": "assistant", "content": "role does not match the record"}),
                ("future_kind", {"x": 1}),
                ("user", {"role": "user", "content": "x" * 300}),  # longer than the small blocks
            ])))
    return ops


def damage(data: bytes, draw) -> bytes:
    out = bytearray(data)
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(["cut", "insert", "flip"]))
        at = draw(st.integers(0, 1 << 20)) % (len(out) + 1)  # the length varies with the temp dir's name
        if kind == "cut":
            del out[at:]
        elif kind == "insert":
            out[at:at] = draw(st.sampled_from([b"\n", b"garbage\n", b"  \n", b"\r\n", b"[1,2]\n", b"null\n",
                                               b'{"type":"compact_boundary"}\n',
                                               b'{"type":"compact_boundary","summary":"injected"}\n',
                                               b'{"type":"compact_\\u0062oundary","summary":"escaped"}\n',
                                               # what the recorder's stdlib fallback writes: orjson refuses it
                                               b'{"type":"user","message":{"role":"user","content":"\\udcff"}}\n',
                                               b'{"type":"user","message":{"role":"user","content":"n"},"x":NaN}\n',
                                               b"[" * 5000 + b"\n"]))
        elif out:
            out[min(at, len(out) - 1)] = draw(st.integers(0, 255))
    return bytes(out)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=transcripts(), block=st.sampled_from([7, 64, 1 << 20]), data=st.data())
def test_load_for_resume_equals_the_forward_reference(tmp_path_factory, monkeypatch, ops, block, data):
    monkeypatch.setattr(resume_mod, "BLOCK", block)
    rec = SessionStore(tmp_path_factory.mktemp("p"), warn=lambda _: None).create(
        model="m", provider="demo", git_branch=None)
    for rtype, fields in ops:
        if rtype in ("user", "assistant"):
            rec.append(rtype, message=fields)
        else:
            rec.append(rtype, **fields)
    raw = damage(rec.path.read_bytes(), data.draw)
    rec.path.write_bytes(raw)
    got = load_for_resume(rec.path)
    want = reference_load(raw)
    for name in FIELDS:
        assert getattr(got, name) == want[name], name
    assert got.bytes_read <= len(raw)


def test_a_line_longer_than_many_blocks_and_a_boundary_at_every_position(tmp_path, monkeypatch):
    monkeypatch.setattr(resume_mod, "BLOCK", 16)
    long_line = encode_line({"type": "user", "message": {"role": "user", "content": "y" * 500}})
    boundary = encode_line({"type": "compact_boundary", "summary": "s", "compact_count": 2, "trigger": "auto"})
    answer = encode_line({"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "text", "text": "ok"}]}})
    lines = [long_line, answer, long_line, answer]
    for at in range(len(lines) + 1):
        raw = b"".join(lines[:at] + [boundary] + lines[at:])
        path = tmp_path / f"{at}.jsonl"
        path.write_bytes(raw)
        got, want = load_for_resume(path), reference_load(raw)
        assert [getattr(got, f) for f in FIELDS] == [want[f] for f in FIELDS], at
        # only the blocks from the end back to the boundary's are read
        assert got.bytes_read <= len(raw) - raw.rindex(b'{"type":"compact_boundary"') + 16


# The repair ----------------------------------------------------------------------------------

block = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": st.sampled_from(["", "hi", "there"])}),
    st.fixed_dictionaries({"type": st.just("tool_use"), "id": ids, "name": st.sampled_from(["bash", 3]),
                           "input": st.sampled_from([{}, {"a": 1}, "not an object"])}),
    st.fixed_dictionaries({"type": st.just("tool_result"), "tool_use_id": st.one_of(ids, st.just(["x"])),
                           "content": st.just("out")}),
    st.fixed_dictionaries({"type": st.just("thinking"), "thinking": st.just("hm"), "signature": st.just("s")}),
    st.sampled_from([{"type": 7}, {"no": "type"}, "a bare string", None]),
)
message = st.one_of(
    st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"]),
                           "content": st.one_of(st.sampled_from(["", "text"]), st.lists(block, max_size=4))}),
    st.fixed_dictionaries({"role": st.sampled_from(["system", None]), "content": st.just("x")}),
    st.sampled_from([None, "not a message", {"content": "no role"}]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(message, max_size=12))
def test_repair_equals_the_rebuilding_reference_and_copies_only_what_it_repairs(messages):
    check_repair(messages)


@pytest.mark.exhaustive
@settings(max_examples=1500, deadline=None)
@given(st.lists(message, max_size=12))
def test_repair_on_many_more_histories(messages):
    """The CI test's twin with five times the examples (`pytest -m exhaustive`)."""
    check_repair(messages)


def check_repair(messages: list) -> None:
    """The repair equals the reference's, mutates nothing, is idempotent and copies only what it repairs."""
    before = copy.deepcopy(messages)
    got, repairs = repair_history(messages)
    assert (got, repairs) == reference_repair(copy.deepcopy(messages))
    assert messages == before  # nothing was mutated
    again, more = repair_history(got)
    assert (again, more) == (got, 0)  # idempotent
    assert all(a is b for a, b in zip(again, got))  # a valid history passes through as the same objects
    if got == messages:  # nothing to repair: no copy either
        assert all(a is b for a, b in zip(got, messages))


@pytest.mark.parametrize("history", [
    [{"role": "user", "content": "a"}, {"role": "assistant", "content": [
        {"type": "tool_use", "id": "t", "name": "bash", "input": {}}]},
     {"role": "user", "content": [{"type": "text", "text": "first"}, {"type": "tool_result", "tool_use_id": "t"}]}],
])
def test_a_result_behind_text_moves_to_the_front_in_a_copy(history):
    got, repairs = repair_history(history)
    assert repairs == 1 and got[2]["content"][0]["type"] == "tool_result"
    assert history[2]["content"][0]["type"] == "text"  # the input is untouched
    assert got[0] is history[0] and got[1] is history[1] and got[2] is not history[2]
