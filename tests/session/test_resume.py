"""load_for_resume and resumed sessions (SPEC §4)."""

import hashlib
import json
import os
import tracemalloc

import pytest

from evo_agent.session import INTERRUPTED_TEXT, load_for_resume, repair_history
from evo_agent.session.jsonio import encode_line
from tests.api_rules import check_conversation
from tests.builders import assistant_text, assistant_tools, quiet_store, tool_results, user_text

SUMMARY = "<previous-conversation-summary>\n{}\n</previous-conversation-summary>"


def test_only_what_follows_the_last_boundary_is_replayed_behind_the_exact_summary(project):
    rec = quiet_store(project).create(model="m", provider="demo")
    rec.user(user_text("first"))
    rec.assistant(assistant_text("one"))
    rec.compact_boundary("summary one", 1, "auto")
    rec.user(user_text("second"))
    rec.compact_boundary("summary two", 2, "manual")
    rec.user(user_text("third"))
    rec.assistant(assistant_text("three"))
    loaded = load_for_resume(rec.path)
    assert loaded.messages == [
        {"role": "user", "content": [{"type": "text", "text": SUMMARY.format("summary two")}]},
        user_text("third"),
        assistant_text("three"),
    ]
    assert loaded.compact_count == 2 and loaded.skipped_lines == 0 and loaded.warning is None
    check_conversation(loaded.messages)


def test_dangling_tool_use_gets_an_interrupted_error_result(project):
    rec = quiet_store(project).create(model="m", provider="demo")
    rec.user(user_text("run two things"))
    rec.assistant(assistant_tools("sure", "t1", "t2"))
    rec.user({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "done"}]})
    messages = load_for_resume(rec.path).messages
    check_conversation(messages)
    assert messages[-1]["content"][0] == {"type": "tool_result", "tool_use_id": "t1", "content": "done"}
    assert messages[-1]["content"][1] == {
        "type": "tool_result", "tool_use_id": "t2", "content": INTERRUPTED_TEXT, "is_error": True}


def test_orphan_results_empty_messages_and_unparseable_lines(project):
    rec = quiet_store(project).create(model="m", provider="demo")
    rec.user(tool_results("ghost"))  # no tool_use before it
    rec.user(user_text(""))
    rec.user(user_text("real question"))
    rec.assistant({"role": "assistant", "content": [{"type": "text", "text": ""}, {"type": "text", "text": "ok"}]})
    with open(rec.path, "ab") as f:
        f.write(b'{"type":"user","message":{"role":"user","content":"torn\n')
        f.write(b"[1, 2]\n")
        f.write(b'{"type":"future_record_kind","x":1}\n')
        f.write(b'{"type":"user","message":{"role":"user","content":"torn at the en')
    loaded = load_for_resume(rec.path)
    assert loaded.messages == [user_text("real question"), assistant_text("ok")]
    assert loaded.skipped_lines == 3
    assert "skipped 3 unreadable lines" in loaded.warning


def test_a_message_with_keys_the_api_refuses_keeps_only_role_and_content(project):
    """A hand-edited or foreign transcript: `"extra"` in a message would make every request fail."""
    from tests.fake_model_server import validate_request

    rec = quiet_store(project).create(model="m", provider="demo")
    rec.user({"role": "user", "content": "hello", "id": "msg_1"})
    rec.assistant({"role": "assistant", "content": [{"type": "text", "text": "hi"}], "model": "x", "stop_reason": None})
    loaded = load_for_resume(rec.path)
    assert loaded.messages == [user_text("hello"), assistant_text("hi")] and loaded.repairs == 2
    validate_request({"model": "m", "max_tokens": 10, "messages": loaded.messages + [user_text("next")]})
    assert repair_history(loaded.messages) == (loaded.messages, 0)


def test_repair_is_idempotent_and_leaves_valid_histories_alone():
    valid = [user_text("a"), assistant_tools("", "x"), tool_results("x"), user_text("b"), assistant_text("c")]
    assert repair_history(valid) == (valid, 0)
    broken = [assistant_text("nobody asked"), tool_results("x"), user_text("a"), assistant_tools("", "y")]
    once, n = repair_history(broken)
    assert n > 0 and repair_history(once) == (once, 0)
    check_conversation(once)


def _sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_chain_a_b_c_restores_everything_in_order_and_never_touches_sources(project):
    store = quiet_store(project)
    a = store.create(model="m", provider="demo")
    a.user(user_text("a1"))
    a.assistant(assistant_tools("", "ta"))
    a.user(tool_results("ta"))
    a.assistant(assistant_text("a2"))
    a.compact_boundary("what happened in A", 3, "auto")
    a.user(user_text("a3"))
    a.checkpoint()
    a_hash, a_meta = _sha(a.path), _sha(a.session_dir / "meta.json")

    b = store.resume(a.id, model="m", provider="demo")
    assert b.recorder.id != a.id
    b.recorder.assistant(assistant_tools("", "tb"), input_tokens=9, output_tokens=1)  # dies while tb runs
    b_hash = _sha(b.recorder.path)

    c = store.resume(b.recorder.id, model="m", provider="demo")
    c.recorder.user(user_text("c1"))
    expected = [
        {"role": "user", "content": [{"type": "text", "text": SUMMARY.format("what happened in A")}]},
        user_text("a3"),
        assistant_tools("", "tb"),
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "tb",
                                      "content": INTERRUPTED_TEXT, "is_error": True}]},
        user_text("c1"),
    ]
    assert load_for_resume(c.recorder.path).messages == expected
    assert (_sha(a.path), _sha(a.session_dir / "meta.json"), _sha(b.recorder.path)) == (a_hash, a_meta, b_hash)

    records = [json.loads(x) for x in c.recorder.path.read_bytes().splitlines()]
    assert [r["type"] for r in records[:2]] == ["session_start", "resume_marker"]
    assert records[1]["from_session_id"] == b.recorder.id and records[1]["restored_count"] == 4
    assert all(r["restored"] is True and "input_tokens" not in r for r in records[2:6])
    meta = store.info(c.recorder.id).meta
    assert meta.resumed_from == b.recorder.id and meta.first_prompt == "a1" and meta.compact_count == 3
    assert (meta.total_input_tokens, meta.message_count) == (0, 5)
    assert store.info(b.recorder.id).meta.total_input_tokens == 9


def test_two_resumes_of_one_session_are_two_sessions(project):
    store = quiet_store(project)
    a = store.create(model="m", provider="demo")
    a.user(user_text("hello"))
    first = store.resume(a.id, model="m", provider="demo").recorder
    second = store.resume(a.id, model="m", provider="demo").recorder
    first.user(user_text("from terminal one"))
    second.user(user_text("from terminal two"))
    assert first.id != second.id
    assert [m["content"] for m in load_for_resume(first.path).messages] == ["hello", "from terminal one"]
    assert [m["content"] for m in load_for_resume(second.path).messages] == ["hello", "from terminal two"]


@pytest.mark.slow
def test_large_transcript_resumes_reading_only_its_tail(tmp_path):
    """300 MB of history, the last boundary in the final 100 KB: the loader reads the tail only."""
    path = tmp_path / "1780227556183_b525857d" / "messages.jsonl"
    path.parent.mkdir()
    filler = "lorem ipsum dolor sit amet " * 150  # ~4 KB of text per record
    records = []
    for i in range(600):
        records.append(encode_line({"type": "user", "message": user_text(f"{i} {filler}")}))
        records.append(encode_line({"type": "assistant", "message": assistant_text(f"{i} {filler}")}))
    chunk = b"".join(records)  # ~4.9 MB
    with open(path, "wb") as f:
        for _ in range(300 * 1024 * 1024 // len(chunk)):
            f.write(chunk)
        f.write(encode_line({"type": "compact_boundary", "summary": "late summary", "compact_count": 9}))
        for line in records[:20]:
            f.write(line)
    size = os.path.getsize(path)
    assert size > 300 * 1000 * 1000
    tracemalloc.start()
    loaded = load_for_resume(path)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert loaded.compact_count == 9 and len(loaded.messages) == 21
    assert loaded.messages[0]["content"][0]["text"] == SUMMARY.format("late summary")
    assert loaded.bytes_read < 3 * 1024 * 1024, loaded.bytes_read
    assert peak < 20 * 1024 * 1024, peak


from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_good = [encode_line({"type": "user", "message": user_text("q")}),
         encode_line({"type": "assistant", "message": assistant_tools("", "t")}),
         encode_line({"type": "user", "message": tool_results("t")}),
         encode_line({"type": "compact_boundary", "summary": "s", "compact_count": 1}),
         b'{"type":"compact_boundary"\n', b"\xff\xfe\n", b"\n"]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(chunks=st.lists(st.one_of(st.binary(max_size=64), st.sampled_from(_good)), max_size=30))
def test_fuzzed_bytes_never_raise_and_always_load_valid(tmp_path, chunks):
    path = tmp_path / "fuzz.jsonl"
    path.write_bytes(b"".join(chunks))
    loaded = load_for_resume(path, "1780227556183_b525857d")
    if loaded.messages:
        check_conversation(loaded.messages)


def test_lines_the_stdlib_fallback_wrote_are_restored_listed_and_checkpointed(project):
    """A lone surrogate (from a terminal's undecodable byte) or a NaN makes the recorder write
    through the stdlib encoder; those lines are valid JSON and must come back, not count as torn."""
    store = quiet_store(project)
    rec = store.create(model="m", provider="demo", meta_interval=0.0)
    prompt = "fix caf\udce9 please"
    assert rec.user(user_text(prompt)) is True
    rec.assistant(assistant_text("ok"), input_tokens=1, output_tokens=1, score=float("nan"))
    rec.checkpoint()  # must not raise (meta.json holds the surrogate too)
    loaded = load_for_resume(rec.path)
    assert loaded.skipped_lines == 0 and loaded.messages == [user_text(prompt), assistant_text("ok")]
    [row] = store.list()
    assert row.meta.first_prompt == prompt and row.meta.message_count == 2
    assert json.loads((rec.session_dir / "meta.json").read_bytes())["first_prompt"] == prompt


def test_a_line_nested_deeper_than_any_parser_goes_is_skipped_not_fatal(project):
    rec = quiet_store(project).create(model="m", provider="demo")
    rec.user(user_text("before"))
    with open(rec.path, "ab") as f:
        f.write(b"[" * 100_000 + b"\n")
    rec.user(user_text("after"))
    loaded = load_for_resume(rec.path)
    assert loaded.skipped_lines == 1 and [m["content"] for m in loaded.messages] == ["before", "after"]
    assert quiet_store(project).info(rec.id).meta.message_count == 2


def test_resuming_writes_nothing_into_the_source_even_when_its_meta_lags(project):
    store = quiet_store(project)
    a = store.create(model="m", provider="demo", meta_interval=3600)
    a.user(user_text("first"))
    a.checkpoint()
    a.assistant(assistant_text("answer"))  # the meta now lags the transcript
    before = {p.name: _sha(p) for p in a.session_dir.iterdir()}
    b = store.resume(a.id, model="m", provider="demo")
    assert len(b.loaded.messages) == 2
    assert {p.name: _sha(p) for p in a.session_dir.iterdir()} == before
