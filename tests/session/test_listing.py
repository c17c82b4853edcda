"""meta.json is a cache: the list is right whatever state it is in."""

import json
import os
import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evo_agent.session import SessionStore, rebuild_meta

from .helpers import assistant_text, store_for, user_text


def _session(store: SessionStore, prompts: list[str], tokens: int = 5, meta_interval: float = 0.0):
    rec = store.create(model="m", provider="demo", meta_interval=meta_interval)
    for p in prompts:
        rec.user(user_text(p))
        rec.assistant(assistant_text("answer to " + p), input_tokens=tokens, output_tokens=1)
    rec.checkpoint()
    return rec


def test_meta_fields_after_a_conversation(project):
    store = store_for(project)
    rec = _session(store, ["  fix the\n flaky   upload test " + "x" * 300, "second"], tokens=7)
    rec.compact_boundary("s", 1, "auto")
    rec.checkpoint()
    meta = json.loads((rec.session_dir / "meta.json").read_text())
    assert meta["id"] == rec.id and meta["created_ms"] == int(rec.id[:13])
    assert meta["first_prompt"].startswith("fix the flaky upload test x") and len(meta["first_prompt"]) == 200
    assert meta["message_count"] == 4
    assert (meta["total_input_tokens"], meta["total_output_tokens"]) == (14, 2)
    assert meta["compact_count"] == 1 and meta["resumed_from"] is None
    assert meta["git_branch"] == "main" and meta["model"] == "m" and meta["cwd"] == str(project)
    assert meta["updated_ms"] >= meta["created_ms"]
    assert meta["messages_bytes"] == rec.path.stat().st_size
    assert not [p for p in rec.session_dir.iterdir() if p.name.startswith(".meta.")]  # no temp left over


def test_newest_update_first_and_empty_sessions_hidden_unless_asked(project):
    store = store_for(project)
    old = _session(store, ["old"])
    empty = store.create(model="m", provider="demo")
    empty.checkpoint()
    time.sleep(0.01)
    new = _session(store, ["new"])
    time.sleep(0.01)
    old.user(user_text("old again"))  # now the most recently updated
    assert [r.id for r in store.list()] == [old.id, new.id]
    assert empty.id in [r.id for r in store.list(include_empty=True)]
    assert store.latest().id == old.id


def test_missing_broken_stale_or_directory_meta_still_lists_right(project):
    store = store_for(project)
    recs = [_session(store, [f"prompt {i}"], tokens=i + 1) for i in range(5)]
    truth = {r.id: store.info(r.id).meta for r in recs}
    (recs[0].session_dir / "meta.json").unlink()
    (recs[1].session_dir / "meta.json").write_text("{ not json")
    (recs[2].session_dir / "meta.json").unlink()
    (recs[2].session_dir / "meta.json").mkdir()
    meta3 = json.loads((recs[3].session_dir / "meta.json").read_text())
    (recs[3].session_dir / "meta.json").write_text(json.dumps({**meta3, "id": recs[0].id}))  # someone else's
    recs[4].user(user_text("written after the last meta"))  # stale: meta lags the transcript
    truth[recs[4].id].message_count += 1
    listed = {r.id: r.meta for r in store.list()}
    assert set(listed) == set(truth)
    for sid, meta in truth.items():
        got = listed[sid]
        assert (got.message_count, got.total_input_tokens, got.first_prompt) == (
            meta.message_count, meta.total_input_tokens, meta.first_prompt), sid


def test_session_killed_before_its_first_meta_with_messages_is_listed(project):
    store = store_for(project)
    rec = store.create(model="m", provider="demo", meta_interval=3600)
    rec.user(user_text("only on disk in the transcript"))
    # no checkpoint: as if killed. The meta on disk says 0 messages.
    assert json.loads((rec.session_dir / "meta.json").read_text())["message_count"] == 0
    [row] = store.list()
    assert row.id == rec.id and row.meta.first_prompt == "only on disk in the transcript"


def test_listing_never_writes(project):
    store = store_for(project)
    rec = _session(store, ["a"])
    (rec.session_dir / "meta.json").unlink()
    before = sorted(os.listdir(rec.session_dir))
    store.list()
    assert sorted(os.listdir(rec.session_dir)) == before


def test_symlinked_session_directory_is_not_listed_or_loaded(project, tmp_path):
    store = store_for(project)
    outside = _session(SessionStore(tmp_path / "elsewhere", warn=lambda _: None), ["secret"])
    link = store.sessions_dir / outside.id
    store.ensure_sessions_dir()
    link.symlink_to(outside.session_dir)
    assert store.list() == []
    import pytest
    from evo_agent.session import SessionNotFound
    with pytest.raises(SessionNotFound, match="symbolic link"):
        store.resolve(outside.id)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    prompts=st.lists(st.text(min_size=1, max_size=30), min_size=1, max_size=6),
    checkpoint_after=st.integers(min_value=0, max_value=12),
    damage=st.sampled_from(["none", "missing", "garbage", "truncated", "stale"]),
)
def test_property_listed_meta_equals_a_full_rebuild(project, prompts, checkpoint_after, damage):
    """Whatever became of meta.json, the row equals what the transcript says."""
    store = store_for(project)
    rec = store.create(model="m", provider="demo", meta_interval=3600)
    n = 0
    for p in prompts:
        for message, tokens in ((user_text(p), 0), (assistant_text("a"), 3)):
            if message["role"] == "user":
                rec.user(message)
            else:
                rec.assistant(message, input_tokens=tokens, output_tokens=1)
            n += 1
            if n == checkpoint_after:
                rec.checkpoint()
    meta_path = rec.session_dir / "meta.json"
    if damage == "missing":
        meta_path.unlink()
    elif damage == "garbage":
        meta_path.write_bytes(b"\x00\xff garbage")
    elif damage == "truncated":
        meta_path.write_bytes(meta_path.read_bytes()[:20])
    elif damage == "stale":
        rec.user(user_text("late"))
    truth = rebuild_meta(rec.session_dir, rec.id, int(rec.id[:13]), None)
    row = store.info(rec.id)
    assert row.meta.to_json() == truth.to_json()
