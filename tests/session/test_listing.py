"""meta.json is a cache: the list is right whatever state it is in."""

import json
import os
import subprocess
import threading
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evo_agent.session import SessionStore
from evo_agent.session.admin import read_meta, rebuild_meta
from evo_agent.session.jsonio import encode_line
from tests.builders import assistant_text, quiet_store, user_text


def _session(store: SessionStore, prompts: list[str], tokens: int = 5, meta_interval: float = 0.0):
    rec = store.create(model="m", provider="demo", meta_interval=meta_interval)
    for p in prompts:
        rec.user(user_text(p))
        rec.assistant(assistant_text("answer to " + p), input_tokens=tokens, output_tokens=1)
    rec.checkpoint()
    return rec


def test_meta_fields_after_a_conversation(project):
    store = quiet_store(project)
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


def test_a_boundarys_usage_is_kept_apart_from_the_totals_and_one_without_it_still_folds(project):
    """`total_*` sum the assistant records only (SPEC §3); the summary calls' tokens go to `summary_*`."""
    store = quiet_store(project)
    rec = _session(store, ["first"], tokens=7)  # 7 in, 1 out
    rec.compact_boundary("old style", 1, "auto", input_tokens=50, output_tokens=5)  # before `usage`: not counted
    rec.compact_boundary("s", 2, "manual", usage={"input_tokens": 100, "output_tokens": 20,
                                                   "cache_creation_input_tokens": 30, "cache_read_input_tokens": 400})
    rec.compact_boundary("damaged", 3, "auto", usage=[1, 2])  # not a mapping: ignored
    rec.compact_boundary("negative", 4, "auto", usage={"input_tokens": -5, "output_tokens": "9"})
    rec.checkpoint()
    meta = json.loads((rec.session_dir / "meta.json").read_text())
    assert (meta["total_input_tokens"], meta["total_output_tokens"]) == (7, 1)
    assert (meta["total_cache_creation_tokens"], meta["total_cache_read_tokens"]) == (0, 0)
    assert (meta["summary_input_tokens"], meta["summary_output_tokens"]) == (100, 20)
    assert (meta["summary_cache_creation_tokens"], meta["summary_cache_read_tokens"]) == (30, 400)
    assert meta["compact_count"] == 4 and meta["message_count"] == 2
    rebuilt = rebuild_meta(rec.session_dir, rec.id, int(rec.id[:13]), None)
    assert (rebuilt.total_input_tokens, rebuilt.summary_input_tokens, rebuilt.summary_cache_read_tokens) == (7, 100, 400)
    assert rebuilt.to_json() == {**meta, "messages_bytes": rebuilt.messages_bytes}


def test_a_meta_json_written_before_the_summary_totals_reads_them_as_0_and_bad_ones_are_refused(project):
    store = quiet_store(project)
    rec = _session(store, ["first"], tokens=7)
    path = rec.session_dir / "meta.json"
    meta = json.loads(path.read_text())
    older = {k: v for k, v in meta.items() if not k.startswith("summary_")}
    path.write_text(json.dumps(older))
    read = read_meta(rec.session_dir, rec.id)
    assert read is not None and read.summary_output_tokens == 0 and read.total_input_tokens == 7
    for bad in (-1, "3", None, 1.5):
        path.write_text(json.dumps({**meta, "summary_output_tokens": bad}))
        assert read_meta(rec.session_dir, rec.id) is None, bad


def test_newest_update_first_and_empty_sessions_hidden_unless_asked(project):
    store = quiet_store(project)
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
    store = quiet_store(project)
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
    store = quiet_store(project)
    rec = store.create(model="m", provider="demo", meta_interval=3600)
    rec.user(user_text("only on disk in the transcript"))
    # no checkpoint: as if killed. The meta on disk says 0 messages.
    assert json.loads((rec.session_dir / "meta.json").read_text())["message_count"] == 0
    assert store.list() == []  # a prompt no model answered yet: no exchange of its own (hidden like an empty one)
    rec.assistant(assistant_text("an answer, also only in the transcript"))
    [row] = store.list()
    assert row.id == rec.id and row.meta.first_prompt == "only on disk in the transcript"
    assert row.meta.answer_count == 1


def _stored(rec) -> dict:
    return json.loads((rec.session_dir / "meta.json").read_bytes())


def _truth(rec) -> dict:
    return rebuild_meta(rec.session_dir, rec.id, int(rec.id[:13]), None).to_json()


def test_listing_writes_back_a_meta_it_had_to_rebuild_once(project):
    store = quiet_store(project)
    missing, stale = _session(store, ["a"]), _session(store, ["b"], meta_interval=3600)
    (missing.session_dir / "meta.json").unlink()
    stale.user(user_text("after the last meta"))
    assert _stored(stale)["message_count"] == 2
    store.list()
    for rec in (missing, stale):
        path = rec.session_dir / "meta.json"
        assert _stored(rec) == _truth(rec)
        assert path.stat().st_mode & 0o777 == 0o600 and not path.is_symlink()
        assert sorted(os.listdir(rec.session_dir)) == ["messages.jsonl", "meta.json"]  # no temp file left
    inodes = [(r.session_dir / "meta.json").stat().st_ino for r in (missing, stale)]
    store.list()
    store.latest()
    assert [(r.session_dir / "meta.json").stat().st_ino for r in (missing, stale)] == inodes  # not rewritten


def test_a_read_only_store_never_writes(project):
    rec = _session(quiet_store(project), ["a"])
    (rec.session_dir / "meta.json").unlink()
    store = SessionStore(project, warn=lambda _: None, write_back=False)
    assert [r.meta.message_count for r in store.list()] == [2]
    assert sorted(os.listdir(rec.session_dir)) == ["messages.jsonl"]


def test_write_back_never_follows_a_symlinked_meta(project, tmp_path):
    store = quiet_store(project)
    rec = _session(store, ["a"])
    target = tmp_path / "elsewhere.json"
    target.write_text("not a meta")
    (rec.session_dir / "meta.json").unlink()
    (rec.session_dir / "meta.json").symlink_to(target)
    [row] = store.list()
    assert row.meta.message_count == 2
    assert target.read_text() == "not a meta"  # the link's target is untouched ...
    assert not (rec.session_dir / "meta.json").is_symlink() and _stored(rec) == _truth(rec)  # ... the link replaced


def test_write_back_never_writes_through_a_symlinked_session_directory(project, tmp_path):
    store = quiet_store(project)
    outside = _session(SessionStore(tmp_path / "elsewhere", warn=lambda _: None), ["secret"])
    (outside.session_dir / "meta.json").unlink()
    store.ensure_sessions_dir()
    (store.sessions_dir / outside.id).symlink_to(outside.session_dir)
    store.list()
    store.info(outside.id)  # asked for directly, it may read through the link, but never write there
    assert sorted(os.listdir(outside.session_dir)) == ["messages.jsonl"]


def _read_only(path):
    """Make `path` unwritable even for root (a read-only bind mount); undo with the returned function."""
    if os.geteuid() != 0:
        path.chmod(0o500)
        return lambda: path.chmod(0o700)
    try:
        subprocess.run(["mount", "--bind", str(path), str(path)], check=True, capture_output=True)
        subprocess.run(["mount", "-o", "remount,bind,ro", str(path)], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError):
        subprocess.run(["umount", "-l", str(path)], check=False, capture_output=True)
        pytest.skip("cannot make a read-only bind mount here")
    return lambda: subprocess.run(["umount", "-l", str(path)], check=False)


def test_listing_a_read_only_session_neither_fails_nor_leaves_anything(project):
    store = quiet_store(project)
    rec = _session(store, ["a"], meta_interval=3600)
    rec.user(user_text("after the last meta"))
    undo = _read_only(rec.session_dir)
    try:
        with pytest.raises(OSError):
            (rec.session_dir / "probe").write_text("x")  # really read-only
        [row] = store.list()
        assert row.meta.to_json() == _truth(rec)
        assert sorted(os.listdir(rec.session_dir)) == ["messages.jsonl", "meta.json"]
    finally:
        undo()
    assert _stored(rec)["message_count"] == 2  # the lagging meta stayed as it was


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a directory to another user needs root")
def test_write_back_never_writes_into_another_users_directory(project):
    store = quiet_store(project)
    rec = _session(store, ["a"])
    (rec.session_dir / "meta.json").unlink()
    os.chown(rec.session_dir, 54321, 54321)
    assert store.list()[0].meta.message_count == 2
    assert sorted(os.listdir(rec.session_dir)) == ["messages.jsonl"]


def test_write_back_next_to_a_live_writer_never_double_counts(project):
    """A listing may see a record half-written: what it stores ends at the last newline."""
    store = quiet_store(project)
    rec = store.create(model="m", provider="demo", meta_interval=3600)
    rec.user(user_text("first"))
    rec.checkpoint()
    line = encode_line({"type": "user", "message": {"role": "user", "content": "being written"}})
    for cut in (1, len(line) // 2, len(line) - 1):  # a reader sees a prefix of an append in progress
        with open(rec.path, "ab") as f:
            f.write(line[:cut])
        store.list(include_empty=True)
        assert _stored(rec)["messages_bytes"] == rec.path.read_bytes().rindex(b"\n") + 1
        with open(rec.path, "ab") as f:
            f.write(line[cut:])  # the append completes
        row = store.info(rec.id)
        assert row.meta.to_json() == _truth(rec) and _stored(rec) == _truth(rec)
    assert row.meta.message_count == 4


def test_listing_and_a_recorder_writing_in_threads_end_right(project):
    store = quiet_store(project)
    rec = store.create(model="m", provider="demo", meta_interval=0.0)  # the recorder rewrites meta.json per record
    stop = threading.Event()

    def list_forever():
        while not stop.is_set():
            store.list(include_empty=True)

    lister = threading.Thread(target=list_forever)
    lister.start()
    try:
        for i in range(300):
            rec.user(user_text(f"prompt {i}"))
            rec.assistant(assistant_text("ok"), input_tokens=2, output_tokens=1)
    finally:
        stop.set()
        lister.join()
    assert store.info(rec.id).meta.to_json() == _truth(rec)
    rec.checkpoint()
    stored = _stored(rec)
    assert stored == _truth(rec) and stored["message_count"] == 600
    assert not [n for n in os.listdir(rec.session_dir) if n.endswith(".tmp")]


def test_symlinked_session_directory_is_not_listed_or_loaded(project, tmp_path):
    store = quiet_store(project)
    outside = _session(SessionStore(tmp_path / "elsewhere", warn=lambda _: None), ["secret"])
    link = store.sessions_dir / outside.id
    store.ensure_sessions_dir()
    link.symlink_to(outside.session_dir)
    assert store.list() == []
    from evo_agent.session import SessionNotFound
    with pytest.raises(SessionNotFound, match="symbolic link"):
        store.resolve(outside.id)


def _prefix_truth(rec, nbytes: int, scratch) -> dict:
    """The meta of the first `nbytes` of the transcript, rebuilt from nothing."""
    d = scratch / rec.id
    d.mkdir(exist_ok=True)
    (d / "messages.jsonl").write_bytes(rec.path.read_bytes()[:nbytes])
    meta = rebuild_meta(d, rec.id, int(rec.id[:13]), None)
    return meta.to_json()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    prompts=st.lists(st.text(min_size=1, max_size=30), min_size=1, max_size=6),
    checkpoint_after=st.integers(min_value=0, max_value=12),
    damage=st.sampled_from(["none", "missing", "garbage", "truncated", "stale", "torn", "stale+torn"]),
)
def test_property_listed_meta_equals_a_full_rebuild(project, tmp_path_factory, prompts, checkpoint_after, damage):
    """Whatever became of meta.json, the row equals what the transcript says, and what is stored stays true."""
    store = quiet_store(project)
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
    if damage.startswith("stale"):
        rec.user(user_text("late"))
    if damage.endswith("torn"):
        with open(rec.path, "ab") as f:
            f.write(encode_line({"type": "user", "message": user_text("torn")})[:25])
    truth = rebuild_meta(rec.session_dir, rec.id, int(rec.id[:13]), None)
    for _ in range(2):  # the first may write back, the second reads what was written
        row = store.info(rec.id)
        assert row.meta.to_json() == truth.to_json()
        stored = read_meta(rec.session_dir, rec.id)
        assert stored is not None and stored.to_json() == _prefix_truth(rec, stored.messages_bytes,
                                                                         tmp_path_factory.mktemp("prefix"))


def _stamp(rec, mtime_ms: int) -> None:
    os.utime(rec.path, ns=(mtime_ms * 1_000_000, mtime_ms * 1_000_000))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    sessions=st.lists(st.tuples(st.integers(0, 3),  # messages (0: empty, hidden)
                                st.integers(-1500, 10**7)),  # how much later than its last record its mtime is
                      min_size=0, max_size=8),
    damage=st.lists(st.sampled_from(["missing", "stale", "none"]), min_size=8, max_size=8),
)
def test_property_newest_and_latest_agree_with_the_full_list(tmp_path_factory, sessions, damage):
    """However the transcripts' mtimes fall (not older than their last record, give or take the slack)."""
    store = quiet_store(tmp_path_factory.mktemp("proj"))
    for i, (messages, lag_ms) in enumerate(sessions):
        rec = store.create(model="m", provider="demo", git_branch=None, meta_interval=3600)
        for j in range(messages):
            rec.user(user_text(f"s{i} m{j}"))
        rec.checkpoint()
        if damage[i] == "missing":
            (rec.session_dir / "meta.json").unlink()
        elif damage[i] == "stale" and messages:
            rec.user(user_text("late"))
        _stamp(rec, store.info(rec.id).meta.updated_ms + lag_ms)
    full = store.list()
    for count in range(1, len(sessions) + 2):
        assert [r.id for r in store.newest(count)] == [r.id for r in full[:count]]
        assert [r.meta for r in store.newest(count)] == [r.meta for r in full[:count]]
    assert [r.id for r in store.newest(len(sessions) + 1, include_empty=True)] == \
        [r.id for r in store.list(include_empty=True)]
    assert (store.latest().id if full else None) == (full[0].id if full else None)


def _after_this_millisecond(session):
    """The session, once the clock has left the millisecond it ended in: no two then share a time."""
    ended = int(time.time() * 1000)
    while int(time.time() * 1000) <= ended:
        time.sleep(0.0005)
    return session


def test_newest_reads_only_the_metas_it_needs(project, monkeypatch):
    import evo_agent.session.store as store_mod
    store = quiet_store(project)
    recs = [_after_this_millisecond(_session(store, [f"p{i}"])) for i in range(12)]
    for rec in recs:
        _stamp(rec, store.info(rec.id).meta.updated_ms)
    monkeypatch.setattr(store_mod, "MTIME_SLACK_MS", 0)  # these sessions are milliseconds apart
    read: list[str] = []
    real = store_mod.read_meta
    monkeypatch.setattr(store_mod, "read_meta", lambda d, sid: read.append(sid) or real(d, sid))
    assert store.latest().id == recs[-1].id and read == [recs[-1].id]
    read.clear()
    assert [r.id for r in store.newest(3)] == [r.id for r in reversed(recs[-3:])] and len(read) == 3


def test_newest_learns_a_clock_skew_between_records_and_mtimes(project):
    """A file server whose clock is a minute behind stamps every mtime a minute early."""
    store = quiet_store(project)
    recs = [_session(store, [f"p{i}"]) for i in range(6)]
    for i, rec in enumerate(recs):  # a minute behind, jittered by more than the sessions are apart
        _stamp(rec, store.info(rec.id).meta.updated_ms - 60_000 - (1500 if i % 2 else 0))
    full = store.list()
    assert [r.id for r in full] == [r.id for r in reversed(recs)]
    for count in range(1, 7):
        assert [r.id for r in store.newest(count)] == [r.id for r in full[:count]]


@given(mtimes=st.lists(st.integers(0, 50), max_size=60), head=st.integers(0, 70))
def test_newest_first_is_the_whole_order_however_far_it_is_read(mtimes, head):
    """newest() sorts only as far as it reads (a heap of the first `head`, then the rest): the order is sort's."""
    from evo_agent.session.store import _newest_first

    found = [(mtime, f"{i:013d}_0000000{i % 10}", os.stat_result((0,) * 10)) for i, mtime in enumerate(mtimes)]
    assert list(_newest_first(found, head)) == sorted(found, key=lambda item: item[:2], reverse=True)


def test_newest_reads_past_its_first_heap_when_the_newest_transcripts_are_empty(project):
    """The newest 24 transcripts are of empty sessions (hidden): newest(1) must go beyond the first 2 × 1 + 16."""
    store = quiet_store(project)
    said = [_after_this_millisecond(_session(store, [f"p{i}"])) for i in range(3)]
    for _ in range(24):
        store.create(model="m", provider="demo", git_branch=None).checkpoint()
    full = store.list()
    assert [r.id for r in full] == [rec.id for rec in reversed(said)]
    for count in (1, 2, 3, 4):
        assert [r.id for r in store.newest(count)] == [r.id for r in full[:count]]
    assert len(store.newest(30, include_empty=True)) == 27


def test_a_listing_right_after_check_dir_reads_the_names_the_check_judged(project, tmp_path):
    """check_dir's one pass serves the listing that follows: the same rows as a listing that scans for itself,
    a link, a file or a FIFO under a session's name skipped alike; the pass is used once, then listings scan again."""
    store = quiet_store(project)
    ours = [_after_this_millisecond(_session(store, [f"p{i}"])).id for i in range(3)]
    outside = _session(SessionStore(tmp_path / "elsewhere", warn=lambda _: None), ["secret"])
    (store.sessions_dir / outside.id).symlink_to(outside.session_dir)  # an id naming a link to a session
    (store.sessions_dir / "1780227556183_0000000f").write_text("")  # an id naming a file
    fifo = store.sessions_dir / "1780227556184_0000000f"
    fifo.mkdir(mode=0o700)
    os.mkfifo(fifo / "messages.jsonl", 0o600)  # a transcript that is not a regular file
    expected = [r.id for r in quiet_store(project).list()]
    assert expected == list(reversed(ours))
    for listing in (lambda s: s.list(), lambda s: s.newest(10), lambda s: s.newest(1)):
        checked = quiet_store(project)
        assert checked.check_dir() is None
        assert [r.id for r in listing(checked)] == expected[:len(listing(quiet_store(project)))]
    checked = quiet_store(project)
    checked.check_dir()
    assert [r.id for r in checked.list()] == expected
    later = _session(store, ["later"]).id
    assert checked.list()[0].id == later  # scanned again: the check's pass served one listing


def test_check_dir_still_refuses_what_a_repository_planted_beside_thousands_of_sessions(project):
    """The planted-entry check and the listing share one pass: a planted name among many sessions is still refused."""
    from evo_agent.session import SessionsDirRefused

    store = quiet_store(project)
    _session(store, ["one"])
    for i in range(300):
        (store.sessions_dir / f"{1780227556000 + i:013d}_{i:08x}").mkdir(mode=0o700)
    for planted in ("HEAD", "objects", "1780227556183_b525857", "1780227556183_B525857D", ".1780227556183_b525857d",
                    "1780227556183_b525857d ", "1780227556183_b525857d\n"):
        path = store.sessions_dir / planted
        path.mkdir(mode=0o700)
        with pytest.raises(SessionsDirRefused, match="not a session"):
            quiet_store(project).check_dir()
        path.rmdir()
    assert quiet_store(project).check_dir() is None


def test_a_session_made_after_check_dir_by_the_same_store_is_listed(project):
    """The check's pass serves a listing only while it holds every session this store made."""
    store = quiet_store(project)
    first = _after_this_millisecond(_session(store, ["first"])).id
    store.check_dir()
    second = _session(store, ["second"]).id
    assert [r.id for r in store.newest(5)] == [second, first]
