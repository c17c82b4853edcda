"""Search inside sessions (issue #19): the byte test never loses a hit that decoding would find."""

from __future__ import annotations

import json
import re

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from evo_agent.session.search import record_texts, search_sessions
from tests.builders import assistant_text, quiet_store, user_text
from tests.cli.sessions_helpers import rich_session


def _rows(project):
    store = quiet_store(project)
    rows = store.list()
    ids = {r.id for r in rows}
    return [(r.id, r.dir, r.meta.resumed_from) for r in rows], ids.__contains__


def _search(project, needle, **kw):
    rows, exists = _rows(project)
    return list(search_sessions(rows, needle, exists=exists, **kw))


def test_finds_summaries_tool_inputs_and_subagents(tmp_path):
    rich = rich_session(tmp_path)
    summary = _search(tmp_path, "instead of waiting for the retry")
    assert [(h.session_id, h.kind) for h in summary] == [(rich.source, "summary")]
    call = _search(tmp_path, "pytest -q tests/test_upload")
    assert [(h.session_id, h.kind) for h in call] == [(rich.source, "tool call")]
    side = _search(tmp_path, "sleep(0.1)")
    assert {(h.file, h.kind) for h in side} == {(rich.sidechain, "tool result")}
    result = _search(tmp_path, "sleeps instead of waiting")
    kinds = {(h.file, h.kind) for h in result}
    assert ("messages.jsonl", "subagent result") in kinds and (rich.sidechain, "answer") in kinds


def test_a_resumed_copy_is_not_a_second_hit_while_its_source_exists(tmp_path):
    rich = rich_session(tmp_path)
    hits = _search(tmp_path, "Fix it")
    assert [h.session_id for h in hits] == [rich.source]
    new = _search(tmp_path, "Did it pass")
    assert [h.session_id for h in new] == [rich.resumed]
    # Once the source is gone, the copy is where the conversation lives.
    rows, _ = _rows(tmp_path)
    alone = [r for r in rows if r[0] == rich.resumed]
    assert [h.session_id for h in search_sessions(alone, "Fix it")] == [rich.resumed]


def test_newest_session_first_and_limit(tmp_path):
    store = quiet_store(tmp_path)
    made = []
    for i in range(3):
        rec = store.create(model="m", provider="demo")
        rec.user(user_text(f"deploy step {i}"))
        rec.assistant(assistant_text("ok"))
        rec.checkpoint()
        made.append(rec.session_id)
    hits = _search(tmp_path, "DEPLOY STEP")
    assert [h.session_id for h in hits] == made[::-1]
    assert len(_search(tmp_path, "deploy", limit=2)) == 2


def test_escaped_and_non_ascii_needles(tmp_path):
    store = quiet_store(tmp_path)
    rec = store.create(model="m", provider="demo")
    rec.user(user_text('He said "ship it" \\ then\nleft. Größe'))
    rec.assistant(assistant_text("ok"))
    rec.checkpoint()
    assert len(_search(tmp_path, 'said "ship it" \\ then')) == 1
    assert len(_search(tmp_path, "then\nleft")) == 1
    assert len(_search(tmp_path, "GRÖßE")) == 1
    assert len(_search(tmp_path, r"ship\s+it", regex=True)) == 1


def test_damaged_lines_are_skipped_not_fatal(tmp_path):
    store = quiet_store(tmp_path)
    rec = store.create(model="m", provider="demo")
    rec.user(user_text("before the damage: needle one"))
    rec.checkpoint()
    with open(rec.path, "ab") as f:
        f.write(b'{"type":"user","message":{"role":"user","content":"needle in garbage\n')  # unterminated JSON
        f.write(b"\x00\xff needle \n")
    rec.user(user_text("after the damage: needle two"))
    rec.assistant(assistant_text("ok"))
    rec.checkpoint()
    with open(rec.path, "ab") as f:
        f.write(b'{"type":"user","message":{"role":"user","content":"torn needle')  # torn last line
    hits = _search(tmp_path, "needle")
    assert [h.snippet for h in hits] == ["before the damage: needle one", "after the damage: needle two"]


_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(prompts=st.lists(_text, min_size=1, max_size=5), pick=st.integers(0, 4), start=st.integers(0, 40),
       length=st.integers(2, 12))
@example(prompts=["0\x7f"], pick=0, start=0, length=2)  # DEL: json escapes it, orjson writes it raw
@example(prompts=["a\tb"], pick=0, start=0, length=3)  # a control character every encoder escapes
def test_byte_test_finds_what_decoding_finds(tmp_path_factory, prompts, pick, start, length):
    project = tmp_path_factory.mktemp("p")
    store = quiet_store(project)
    rec = store.create(model="m", provider="demo")
    for text in prompts:
        rec.user(user_text(text or "x"))
        rec.assistant(assistant_text("ok"))
    rec.checkpoint()
    source = prompts[pick % len(prompts)] or "x"
    needle = source[start % max(1, len(source)):][:length]
    if not needle.strip():
        return
    pattern = re.compile(re.escape(needle), re.IGNORECASE)  # the oracle: decode every record, then search
    expected = []
    with open(rec.path, "rb") as f:
        for number, raw in enumerate(f, 1):
            record = json.loads(raw)
            if record.get("type") in ("user", "assistant") and any(
                    pattern.search(text) for _, text in record_texts(record)):
                expected.append(number)
    found = _search(project, needle, limit=None)
    assert expected and [h.line for h in found] == expected
