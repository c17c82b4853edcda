"""The listing index (list_index.py): a cache of every meta.json that never changes what `list()` shows.

Every test compares a listing through the index with one that reads every meta.json (`without_index`),
after the change another process would make: a session added, renamed, deleted, its meta.json
rewritten or removed, the index itself corrupt or planted.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evo_agent.session import SessionStore
from evo_agent.session import list_index as list_index_module
from evo_agent.session.admin import rename_session
from tests.builders import quiet_store, write_session

RACY_NS = 10_000_000  # above the file clock's tick (the real window is 2 s); `settle()` waits it out


def settle() -> None:
    """Wait until what was just written is old enough to be cached (see list_index.RACY_NS)."""
    time.sleep(0.015)


@contextlib.contextmanager
def index_settings(min_sessions: int = 1, racy_ns: int = RACY_NS, resave_min: int = 1):
    """Index every listing (tests hold a handful of sessions), cache meta.json files 10 ms old, rewrite on any change."""
    names = ("MIN_SESSIONS", "RACY_NS", "RESAVE_MIN")
    saved = [getattr(list_index_module, name) for name in names]
    for name, value in zip(names, (min_sessions, racy_ns, resave_min), strict=True):  # rewrite it on any change
        setattr(list_index_module, name, value)
    try:
        yield
    finally:
        for name, value in zip(names, saved, strict=True):
            setattr(list_index_module, name, value)


@pytest.fixture
def indexed():
    with index_settings():
        yield


def rows(store: SessionStore, **kw) -> list[tuple]:
    return [(r.id, r.meta.to_json(), r.dir, r.foreign) for r in store.list(**kw)]


def without_index(project: Path, **kw) -> list[tuple]:
    """The listing as it is without an index: every meta.json read, nothing written."""
    with index_settings(min_sessions=10**9):
        return rows(SessionStore(project, warn=lambda _: None, write_back=False), **kw)


def index_path(project: Path) -> Path:
    return Path(list_index_module.index_path(str(project / ".evo-agent" / "sessions")))


def entries(project: Path) -> dict:
    return json.loads(index_path(project).read_bytes())["entries"]


def test_a_listing_writes_the_index_and_the_next_reads_it_instead_of_meta_json(project, indexed, monkeypatch):
    store = quiet_store(project)
    ids = {write_session(store, (f"prompt {i}", "ok")).session_id for i in range(3)}
    settle()
    first = rows(store)
    assert set(entries(project)) == ids and oct(index_path(project).stat().st_mode & 0o777) == "0o600"
    assert index_path(project).is_relative_to(os.environ["XDG_CACHE_HOME"])
    read = []
    real = list_index_module.read_meta_stat
    monkeypatch.setattr(list_index_module, "read_meta_stat", lambda d, sid: read.append(sid) or real(d, sid))
    assert rows(quiet_store(project)) == first == without_index(project)
    assert read == []  # every meta came from the index


def test_no_index_below_the_threshold_and_none_for_racy_meta_files(project):
    store = quiet_store(project)
    write_session(store, ("hello", "hi"))
    with index_settings(min_sessions=2):
        store.list()
    assert not index_path(project).exists()
    with index_settings(min_sessions=1, racy_ns=10**18):  # every meta.json "just changed": nothing cacheable
        store.list()
    assert not index_path(project).exists()


def test_a_session_added_renamed_or_deleted_is_listed_as_it_is_now(project, indexed):
    store = quiet_store(project)
    a = write_session(store, ("first", "ok")).session_id
    b = write_session(store, ("second", "ok")).session_id
    settle()
    rows(store)
    c = write_session(store, ("third", "ok")).session_id
    assert rows(store) == without_index(project) and {r[0] for r in rows(store)} == {a, b, c}
    rename_session(store, b, "the renamed one")
    listed = rows(store)
    assert listed == without_index(project) and dict((r[0], r[1]["name"]) for r in listed)[b] == "the renamed one"
    shutil.rmtree(store.sessions_dir / a)
    assert rows(store) == without_index(project) and a not in {r[0] for r in rows(store)}


def test_a_deleted_sessions_entry_leaves_the_index_at_the_next_listing(project):
    """Its first prompt must not outlive it in the user's cache, even when nothing else would rewrite the index."""
    with index_settings(resave_min=10**9):
        store = quiet_store(project)
        keep = write_session(store, ("keep me", "ok")).session_id
        gone = write_session(store, ("a secret-ish prompt", "ok")).session_id
        settle()
        rows(store)
        assert set(entries(project)) == {keep, gone}
        shutil.rmtree(store.sessions_dir / gone)
        rows(store)
        assert set(entries(project)) == {keep}
        assert b"secret-ish" not in index_path(project).read_bytes()
        rename_session(store, keep, "renamed")  # one changed entry: not worth a rewrite by itself
        settle()
        assert rows(store) == without_index(project)
        assert entries(project)[keep][1][list_index_module.FIELDS.index("name")] is None  # the old entry, unused


def test_a_meta_json_rewritten_by_another_process_is_read_again(project, indexed):
    store = quiet_store(project)
    sid = write_session(store, ("hello there", "ok")).session_id
    settle()
    rows(store)
    assert sid in entries(project)
    meta_path = store.sessions_dir / sid / "meta.json"
    data = json.loads(meta_path.read_text())
    data["first_prompt"] = "HELLO THERE"  # the same size, written in place: only the times say it changed
    meta_path.write_text(json.dumps(data))
    listed = rows(store)
    assert listed == without_index(project) and listed[0][1]["first_prompt"] == "HELLO THERE"
    meta_path.unlink()  # gone: rebuilt from the transcript, as without the index
    assert rows(quiet_store(project)) == without_index(project)


@pytest.mark.parametrize("content", [
    b"", b"\x00\xff garbage", b"[]", b'{"version": 1}', b'{"version": 99, "fields": [], "entries": {}}',
    b"truncated", "a planted entry", "wrong types", "another id",
])
def test_a_corrupt_or_planted_index_is_ignored_and_rebuilt(project, indexed, content):
    store = quiet_store(project)
    sids = [write_session(store, (f"prompt {i}", "ok")).session_id for i in range(2)]
    settle()
    rows(store)
    good = json.loads(index_path(project).read_bytes())
    if content == b"truncated":
        content = index_path(project).read_bytes()[:-40]
    elif isinstance(content, str):
        entry = good["entries"][sids[0]]
        if content == "a planted entry":  # a key that cannot match: the entry is never used
            entry[0] = [0, 0, 0, 0, 0]
            entry[1][good["fields"].index("first_prompt")] = "planted"
        elif content == "wrong types":
            entry[1][good["fields"].index("message_count")] = "many"
        else:
            entry[1][0] = sids[1]
        content = json.dumps(good).encode()
    index_path(project).write_bytes(content)
    assert rows(store) == without_index(project)
    assert rows(store) == without_index(project)


def test_an_index_that_is_a_link_or_someone_elses_path_is_not_followed(project, indexed, tmp_path):
    store = quiet_store(project)
    write_session(store, ("hello", "ok"))
    settle()
    rows(store)
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_bytes(index_path(project).read_bytes())
    index_path(project).unlink()
    index_path(project).symlink_to(elsewhere)
    before = elsewhere.read_bytes()
    assert rows(store) == without_index(project)
    assert elsewhere.read_bytes() == before  # replaced the link, never wrote through it
    assert not index_path(project).is_symlink()


def test_the_index_lives_in_the_users_cache_never_in_the_project(project, indexed):
    """A repository cannot plant one, and a version that knows nothing of it finds nothing new in the project."""
    store = quiet_store(project)
    sid = write_session(store, ("hello", "ok")).session_id
    before = sorted(p.relative_to(project) for p in project.rglob("*") if ".git" not in p.parts)
    settle()
    rows(store)
    assert index_path(project).exists() and sid in entries(project)
    assert sorted(p.relative_to(project) for p in project.rglob("*") if ".git" not in p.parts) == before
    assert store.check_dir() is None


def test_two_listings_replacing_the_index_at_once_lose_only_cache(project, indexed):
    """Whichever index lands last, every entry is checked against its meta.json: listings stay exact."""
    store = quiet_store(project)
    sids = [write_session(store, (f"prompt {i}", "ok")).session_id for i in range(3)]
    settle()
    rows(store)
    old = index_path(project).read_bytes()
    rename_session(store, sids[1], "renamed meanwhile")
    rows(store)  # a second agent's listing writes the newer index...
    index_path(project).write_bytes(old)  # ...and the first agent's older one lands after it
    assert rows(store) == without_index(project)


# --------------------------------------------------------------------------- property: any history of changes

OPS = st.lists(st.one_of(
    st.tuples(st.just("add"), st.text(min_size=1, max_size=30)),
    st.tuples(st.just("rename"), st.integers(0, 9), st.text(min_size=1, max_size=20)),
    st.tuples(st.just("delete"), st.integers(0, 9)),
    st.tuples(st.just("rewrite_meta"), st.integers(0, 9), st.text(max_size=20)),
    st.tuples(st.just("drop_meta"), st.integers(0, 9)),
    st.tuples(st.just("append"), st.integers(0, 9), st.text(min_size=1, max_size=20)),
    st.tuples(st.just("corrupt_index"), st.binary(max_size=40)),
    st.tuples(st.just("old_index"), st.integers(0, 5)),
), min_size=1, max_size=10)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS, include_empty=st.booleans())
def test_listing_with_the_index_equals_listing_without_it(ops, include_empty):
    """After every change, a listing through the index (written back, then read) equals one without it."""
    with tempfile.TemporaryDirectory() as tmp, index_settings(), pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(Path(tmp) / "user-cache"))
        project = Path(tmp) / "project"
        store = quiet_store(project)
        sids = [write_session(store, (f"prompt {i}", "ok")).session_id for i in range(3)]
        saved: list[bytes] = []

        def pick(i: int) -> str | None:
            return sids[i % len(sids)] if sids else None

        for op, *args in ops:
            sid = pick(args[0]) if op in ("rename", "delete", "rewrite_meta", "drop_meta", "append") else None
            session = store.sessions_dir / sid if sid else None
            if op == "add":
                sids.append(write_session(store, (args[0], "ok")).session_id)
            elif session is None or not session.exists():
                pass
            elif op == "rename":
                if "".join(args[1].split()):
                    rename_session(store, sid, args[1])
            elif op == "delete":
                shutil.rmtree(session)
            elif op == "rewrite_meta":
                meta = session / "meta.json"
                if meta.exists():
                    data = json.loads(meta.read_text())
                    data["first_prompt"] = args[1] or None
                    meta.write_text(json.dumps(data))
            elif op == "drop_meta":
                (session / "meta.json").unlink(missing_ok=True)
            elif op == "append":  # a record another process appended, meta.json not caught up
                line = {"type": "user", "timestamp": "2030-01-01T00:00:00.000+00:00",
                        "message": {"role": "user", "content": args[1]}}
                with open(session / "messages.jsonl", "a") as f:
                    f.write(json.dumps(line) + "\n")
            if op == "corrupt_index":
                index_path(project).parent.mkdir(parents=True, exist_ok=True)
                index_path(project).write_bytes(args[0])
            elif op == "old_index" and saved:
                index_path(project).write_bytes(saved[args[0] % len(saved)])
            settle()
            expected = without_index(project, include_empty=include_empty)
            assert rows(store, include_empty=include_empty) == expected
            assert rows(quiet_store(project), include_empty=include_empty) == expected
            if index_path(project).exists():
                saved.append(index_path(project).read_bytes())
