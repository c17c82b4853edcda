"""The table of record types (session/records.py) yields the very sets the modules spelled out before it."""

from __future__ import annotations

from evo_agent.session import SCENE_TYPES, records
from evo_agent.session import search as search_module
from evo_agent.session.records import RECORD_TYPES


def test_the_derived_sets_equal_the_literals_they_replaced() -> None:
    # The values as the modules wrote them before the table (search.py, recorder.py, meta.py, resume.py, store.py).
    before = {
        "SEARCHED_TYPES": frozenset(
            {"user", "assistant", "compact_boundary", "subagent_end", "plan_update", "memory_write"}),
        "SCENE_TYPES": ("memory_index", "system_prompt"),
        "HELD_UNTIL_SAID": frozenset({"session_start", "reminder", "instructions", "memory_index", "system_prompt"}),
        "NOT_ACTIVITY": frozenset({"session_name"}),
        "MESSAGE_TYPES": frozenset({"user", "assistant"}),
        "CONVERSATION_TYPES": frozenset({"user", "assistant", "compact_boundary"}),
        "META_AT_ONCE": frozenset({"session_start", "resume_marker"}),
        "ENVELOPE_FIELDS": frozenset({"type", "timestamp", "agent_version", "session_id", "cwd", "prompt_id",
                                      "git_branch"}),
    }
    assert {name: getattr(records, name) for name in before} == before


def test_the_modules_use_the_tables_sets() -> None:
    assert search_module.SEARCHED_TYPES is records.SEARCHED_TYPES
    assert SCENE_TYPES is records.SCENE_TYPES


def test_one_row_per_type_and_every_type_of_spec_section_2() -> None:
    names = [t.name for t in RECORD_TYPES]
    assert len(names) == len(set(names))
    spec = {"session_start", "user", "assistant", "compact_boundary", "resume_marker", "subagent_start",
            "subagent_end", "session_name", "file_backup", "file_written", "permission", "instructions",
            "plan_update", "memory_write", "reminder"}
    assert spec <= set(names)


def test_every_searched_type_gives_search_some_text() -> None:
    samples = {
        "user": {"message": {"role": "user", "content": "needle"}},
        "assistant": {"message": {"role": "assistant", "content": [{"type": "text", "text": "needle"}]}},
        "compact_boundary": {"summary": "needle"},
        "subagent_end": {"result": "needle"},
        "plan_update": {"plan": "needle", "op": "create", "task": {"subject": "s"}},
        "memory_write": {"op": "create", "path": "needle.md", "diff": "+x"},
    }
    assert set(samples) == records.SEARCHED_TYPES
    for rtype, fields in samples.items():
        texts = list(search_module.record_texts({"type": rtype, **fields}))
        assert any("needle" in text for _, text in texts), rtype


def test_every_field_of_the_search_table_is_searched_and_each_searched_type_is_in_it() -> None:
    """The non-message searched types are the table's rows, and each field a row names finds its needle alone."""
    table = search_module._RECORD_TEXT_FIELDS
    assert set(table) | {"user", "assistant"} == records.SEARCHED_TYPES
    for rtype, (kind, fields) in table.items():
        for path in fields:
            record: dict = {"type": rtype}
            *outer, last = path.split(".")
            inner = record
            for key in outer:
                inner = inner.setdefault(key, {})
            inner[last] = "needle"
            assert list(search_module.record_texts(record)) == [(kind, "needle")], (rtype, path)
        assert list(search_module.record_texts({"type": rtype, "task": "not an object"})) == [], rtype


def test_a_record_whose_type_is_not_a_string_is_folded_as_an_unknown_type() -> None:
    from evo_agent.session.meta import empty_meta, fold_record

    meta = empty_meta("x", 0)
    for rtype in (["user"], {"type": "assistant"}, None, 3):
        fold_record(meta, {"type": rtype, "timestamp": "2026-05-31T19:58:42.705+08:00", "input_tokens": 5})
    assert meta.message_count == 0 and meta.total_input_tokens == 0 and meta.updated_ms > 0
