"""Properties: any live sequence of events, written then loaded, is what the model last saw.

The reference model below is deliberately naive: a list the live process
appends to, replaced by one summary message at a compaction. What the
loader returns must equal it (plus, when the process died mid-tool, the
interrupted results), and must be API-valid.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evo_agent.session import INTERRUPTED_TEXT, load_for_resume
from tests.api_rules import check_conversation
from tests.builders import quiet_store

SUMMARY = "<previous-conversation-summary>\n{}\n</previous-conversation-summary>"
texts = st.text(alphabet=st.characters(blacklist_categories=["Cs"]), min_size=1, max_size=40)


@st.composite
def live_sessions(draw):
    """A program of recorder calls a real agent could make, in a legal order."""
    ops: list[tuple] = []
    state = "idle"  # idle → user asked → (assistant) → tools pending → results → ...
    n_tool = 0
    for _ in range(draw(st.integers(min_value=0, max_value=14))):
        if state in ("idle", "answered"):
            choice = draw(st.sampled_from(["prompt", "prompt", "boundary", "subagent"] if state == "answered"
                                          else ["prompt", "prompt", "boundary"]))
        elif state == "pending":
            choice = draw(st.sampled_from(["results", "results", "subagent"]))
        else:  # "asked": the model is called next; compaction may come first
            choice = draw(st.sampled_from(["assistant", "assistant", "boundary"]))
        if choice == "prompt":
            ops.append(("user", {"role": "user", "content": draw(texts)}))
            state = "asked"
        elif choice == "assistant":
            k = draw(st.integers(min_value=0, max_value=3))
            ids = [f"toolu_{n_tool + j}" for j in range(k)]
            n_tool += k
            blocks = [{"type": "text", "text": draw(texts)}] if (k == 0 or draw(st.booleans())) else []
            if draw(st.booleans()):
                blocks.insert(0, {"type": "thinking", "thinking": draw(texts), "signature": "sig"})
            blocks += [{"type": "tool_use", "id": i, "name": "bash", "input": {"command": draw(texts)}} for i in ids]
            ops.append(("assistant", {"role": "assistant", "content": blocks}, ids))
            state = "pending" if ids else "answered"
        elif choice == "results":
            ids = ops_pending(ops)
            content = [{"type": "tool_result", "tool_use_id": i, "content": draw(texts),
                        **({"is_error": True} if draw(st.booleans()) else {})} for i in ids]
            ops.append(("user", {"role": "user", "content": content}))
            state = "asked"
        elif choice == "boundary":
            ops.append(("boundary", draw(texts)))
            state = "asked" if state == "asked" else "idle"
        else:
            ops.append(("subagent", draw(texts)))
    return ops


def ops_pending(ops) -> list[str]:
    for op in reversed(ops):
        if op[0] == "assistant":
            return op[2]
    return []


def reference_history(ops) -> list[dict]:
    history: list[dict] = []
    count = 0
    for op in ops:
        if op[0] in ("user", "assistant"):
            history.append(op[1])
        elif op[0] == "boundary":
            count += 1
            history = [{"role": "user", "content": [{"type": "text", "text": SUMMARY.format(op[1])}]}]
    if history and history[-1]["role"] == "assistant":
        ids = [b["id"] for b in history[-1]["content"] if b["type"] == "tool_use"]
        if ids:  # the process died while these tools ran
            history.append({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": i, "content": INTERRUPTED_TEXT, "is_error": True}
                for i in ids]})
    return history


def write(recorder, ops) -> list[int]:
    """Play `ops` into `recorder`; return, per op, how many main-file lines it wrote."""
    count = 0
    widths = []
    for op in ops:
        if op[0] == "user":
            recorder.user(op[1])
            widths.append(1)
        elif op[0] == "assistant":
            recorder.assistant(op[1], input_tokens=3, output_tokens=1)
            widths.append(1)
        elif op[0] == "boundary":
            count += 1
            recorder.compact_boundary(op[1], count, "auto")
            widths.append(1)
        else:
            side = recorder.start_subagent("explore", "toolu_x")
            side.user({"role": "user", "content": op[1]})
            recorder.end_subagent(side, "toolu_x", op[1])
            widths.append(2)
    return widths


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=live_sessions())
def test_written_then_loaded_equals_the_reference_and_is_valid(project, ops):
    store = quiet_store(project)
    rec = store.create(model="m", provider="demo")
    write(rec, ops)
    loaded = load_for_resume(rec.path)
    expected = reference_history(ops)
    assert loaded.messages == expected
    assert loaded.skipped_lines == 0
    if expected:
        check_conversation(expected)
    # and a resume of it restores the same again, through a chain
    resumed = store.resume(rec.id, model="m", provider="demo")
    assert load_for_resume(resumed.recorder.path).messages == expected


def every_byte(data: bytes, ends: list[int]) -> list[int]:
    """Every cut for small files, a dense sample (~1500) for larger ones, and the whole file."""
    step = max(1, len(data) // 1500)
    return [*range(0, len(data) + 1, step), len(data)]


def line_edges_and_a_sample(data: bytes, ends: list[int]) -> list[int]:
    """Where a cut can go wrong (a byte short of a line's end, at it, after its newline, one byte into
    the next line) and 64 evenly spaced cuts inside lines: the CI budget of `every_byte`."""
    edges = {cut for end in ends for cut in (end - 1, end, end + 1, end + 2)}
    sample = set(range(0, len(data) + 1, max(1, len(data) // 64)))
    return sorted(cut for cut in edges | sample | {0, len(data)} if 0 <= cut <= len(data))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=live_sessions())
def test_cut_at_line_edges_and_between_loads_valid_without_partial_records(project, ops):
    check_cuts(project, ops, line_edges_and_a_sample)


@pytest.mark.exhaustive
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=live_sessions())
def test_cut_at_every_byte_loads_valid_without_partial_records(project, ops):
    check_cuts(project, ops, every_byte)


def check_cuts(project, ops, cuts_of) -> None:
    """Write `ops`, then load the transcript cut at each offset `cuts_of(data, line_ends)` gives:
    exactly the ops whose lines are complete, API-valid, one skipped line for a torn record."""
    rec = quiet_store(project).create(model="m", provider="demo")
    widths = write(rec, ops)
    data = rec.path.read_bytes()
    ends = []  # byte offset at which each line's JSON is complete
    pos = 0
    for line in data.split(b"\n")[:-1]:
        pos += len(line)
        ends.append(pos)
        pos += 1
    cut_path = rec.path.with_name("cut.jsonl")
    for cut in cuts_of(data, ends):
        cut_path.write_bytes(data[:cut])
        loaded = load_for_resume(cut_path, rec.id)
        complete_lines = sum(1 for e in ends if e <= cut)
        # ops whose lines are all complete; line 0 is session_start
        done, lines = [], 1
        for op, w in zip(ops, widths):
            lines += w
            if lines <= complete_lines:
                done.append(op)
        expected = reference_history(done)
        assert loaded.messages == expected, (cut, complete_lines)
        if loaded.messages:
            check_conversation(loaded.messages)
        partial = cut not in ends and cut not in (0, len(data)) and (cut - 1) not in ends
        if partial:
            assert loaded.skipped_lines == 1
        json.dumps(loaded.messages)
