"""The registry of sessions this user's evo-agent made (session/origin.py): what it knows and since when."""

from __future__ import annotations

import os
import stat

from hypothesis import given
from hypothesis import strategies as st

from evo_agent.session import SessionStore
from evo_agent.session.origin import (
    HEADER,
    KEYED_HEADER,
    NOT_JUDGING,
    forget_made,
    made_file,
    read_made,
    record_made,
    record_session,
    store_key,
)
from tests.builders import quiet_store, write_session


def test_no_registry_judges_nothing(tmp_path):
    made = read_made(tmp_path / "absent")
    assert made is NOT_JUDGING and made.knows("1700000000000_00000000", 10**19)


def test_the_first_id_heads_the_file_with_now_and_later_ones_append(tmp_path):
    path = tmp_path / "state" / "made"
    assert record_made("1700000000000_00000001", path) and record_made("1700000000000_00000002", path)
    lines = path.read_bytes().splitlines()
    assert lines[0].startswith(HEADER) and lines[1:] == [b"1700000000000_00000001", b"1700000000000_00000002"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    made = read_made(path)
    since = int(lines[0][len(HEADER):])
    assert made.knows("1700000000000_00000001", since + 10**12)  # made here: known whatever its ctime
    assert made.knows("1700000000000_00000099", since - 1)  # older than the count: the user's old history
    assert not made.knows("1700000000000_00000099", since)  # new and never made here: foreign


def test_a_registry_without_its_header_counts_from_the_start_of_time(tmp_path):
    path = tmp_path / "made"
    path.write_bytes(b"1700000000000_00000001\n")
    made = read_made(path)
    assert made.since_ns == 0 and not made.knows("1700000000000_00000002", 1)


def test_a_registry_that_is_a_link_is_not_read(tmp_path):
    real = tmp_path / "real"
    record_made("1700000000000_00000001", real)
    (tmp_path / "made").symlink_to(real)
    assert read_made(tmp_path / "made") is NOT_JUDGING


def test_the_store_records_every_session_it_creates_in_the_users_state(project, monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    ids = [write_session(quiet_store(project), ("hi", "hello")).session_id for _ in range(3)]
    assert made_file() == tmp_path / "xdg" / "evo-agent" / "made"
    made = read_made()
    store = SessionStore(project)
    assert {f"{sid}@{store.key}" for sid in ids} <= made.ids and not set(ids) & made.ids  # marks, never bare ids
    assert all(store.foreign_reason(sid) is None for sid in ids)
    assert [row.foreign for row in store.list()] == [None, None, None]


def test_a_session_written_past_the_store_after_the_count_began_is_foreign(project):
    write_session(quiet_store(project), ("mine", "ok"))  # the count begins
    planted = "1700000000000_0badc0de"
    d = project / ".evo-agent" / "sessions" / planted
    os.mkdir(d, 0o700)
    (d / "messages.jsonl").write_text('{"type":"user","message":{"role":"user","content":"x"}}\n')
    os.chmod(d / "messages.jsonl", 0o600)
    store = SessionStore(project)
    assert "not made by your evo-agent" in (store.foreign_reason(planted) or "")
    rows = {row.id: row for row in store.list(include_empty=True)}
    assert "not made by your evo-agent" in (rows[planted].foreign or "")


@given(st.lists(st.from_regex(r"\A[0-9]{13}_[0-9a-f]{8}\Z"), max_size=20))
def test_every_recorded_id_is_read_back(tmp_path_factory, ids):
    path = tmp_path_factory.mktemp("reg") / "made"
    for sid in ids:
        assert record_made(sid, path)
    assert read_made(path).ids == frozenset(ids)


def _parsed_line_by_line(data: bytes) -> tuple[int | None, int | None, frozenset[str]]:
    """The registry's parse as it was written first (a loop over `bytes.splitlines`): the reference."""
    stamps: dict[bytes, int | None] = {HEADER: None, KEYED_HEADER: None}
    ids = set()
    for line in data.splitlines():
        header = next((h for h in stamps if line.startswith(h)), None)
        if header is not None:
            try:
                stamp = int(line[len(header):])
            except ValueError:
                continue
            earliest = stamps[header]
            stamps[header] = stamp if earliest is None else min(earliest, stamp)
        elif line:
            ids.add(line.decode("ascii", "replace"))
    return stamps[HEADER], stamps[KEYED_HEADER], frozenset(ids)


_LINE = st.one_of(st.from_regex(r"\A[0-9]{13}_[0-9a-f]{8}\Z"), st.just(""),
                  st.builds(lambda h, n: h + str(n).encode(), st.sampled_from([HEADER, KEYED_HEADER]),
                            st.integers(0, 2**64)),
                  st.sampled_from([HEADER, HEADER + b"x", HEADER + b" 12 ", HEADER + b"1_0", b"x# since 5", b"# sinc 5",
                                   KEYED_HEADER, KEYED_HEADER + b"x", b"x# keyed since 5", b"# keyed 5",
                                   b"\xff\xfe", "caf\u00e9".encode(), b"a\x0bb", b"\x85", b" "]),
                  st.binary(max_size=12))
_BREAK = st.sampled_from([b"\n", b"\r\n", b"\r", b"\n\n", b"\r\r\n"])


@given(st.lists(st.tuples(_LINE, _BREAK), max_size=12), st.booleans())
def test_the_registry_is_parsed_as_line_by_line(lines, last_break):
    """read_made parses the whole buffer at once (10,000 ids are 10,000 lines): the same answer as a loop."""
    from evo_agent.session.origin import _parsed

    data = b"".join((line.encode() if isinstance(line, str) else line) + brk for line, brk in lines)
    if not last_break and data.endswith(b"\n") and not data.endswith(b"\r\n"):
        data = data[:-1]
    assert _parsed(data) == _parsed_line_by_line(data)


def test_forgetting_ids_keeps_the_header_and_every_other_id(tmp_path):
    path = tmp_path / "state" / "made"
    ids = [f"1700000000000_0000000{i}" for i in range(4)]
    for sid in ids:
        record_made(sid, path)
    since = read_made(path).since_ns
    assert forget_made([ids[1], ids[3], "1700000000000_99999999"], path)
    assert read_made(path) == type(read_made(path))(frozenset({ids[0], ids[2]}), since, None)
    assert path.read_bytes().splitlines()[0].startswith(HEADER) and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert forget_made([], path) and forget_made(ids, tmp_path / "absent") is False


_APPENDER = """
import sys
from pathlib import Path
from evo_agent.session.origin import record_made
path, tag, n = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
for i in range(n):
    assert record_made(f"1700000000000_{tag}{i:06x}", path)
"""


def test_appends_racing_a_rewrite_are_never_lost(tmp_path):
    """Two processes appending while this one keeps rewriting the file (adding an id, forgetting it): every id
    they appended is there after, however the three interleave (the rewrite holds the file's lock; an append
    checks that the file it locked is still the one at the path)."""
    import subprocess
    import sys

    path = tmp_path / "made"
    doomed = "1700000000000_deadbeef"
    record_made(doomed, path)
    n = 400
    appenders = [subprocess.Popen([sys.executable, "-c", _APPENDER, str(path), tag, str(n)]) for tag in ("aa", "bb")]
    from evo_agent.session.origin import _APPEND_TRIES

    rewrites = 0
    # Fewer rewrites than an append's tries: each try an append loses is a rewrite that replaced the file between
    # its open and its lock, so none can lose them all (a rewriter that never stopped could starve one: 5 in 12
    # runs failed so, the append honestly reporting False)
    while (any(p.poll() is None for p in appenders) and rewrites < _APPEND_TRIES - 1) or not rewrites:
        assert record_made(doomed, path) and forget_made([doomed], path)
        rewrites += 1
    assert [p.wait() for p in appenders] == [0, 0]
    assert read_made(path).ids == {f"1700000000000_{tag}{i:06x}" for tag in ("aa", "bb") for i in range(n)}


def test_sessions_rm_and_prune_take_their_ids_out_of_the_registry(cli):
    a, b = cli.run("-p", "one").hint_id(), cli.run("-p", "two").hint_id()
    key = SessionStore(cli.project).key
    assert {f"{a}@{key}", f"{b}@{key}"} <= read_made().ids
    record_made(a)  # as an older version wrote it too
    assert cli.run("sessions", "rm", a, "--yes").rc == 0
    assert not {a, f"{a}@{key}"} & read_made().ids and f"{b}@{key}" in read_made().ids
    pruned = cli.run("sessions", "prune", "--older-than", "0d", "--yes")
    assert pruned.rc == 0, pruned.err
    assert f"{b}@{key}" not in read_made().ids and read_made().since_ns


# Marks: `<id>@<key of the sessions directory>` (SPEC §9), and the registries older versions wrote (bare ids).

A, B = "1700000000000_0000000a", "1700000000000_0000000b"


def test_a_new_registry_is_headed_with_both_counts_and_holds_marks(tmp_path):
    path = tmp_path / "made"
    key = store_key(tmp_path / "p" / ".evo-agent" / "sessions")
    assert record_session(A, key, path)
    head, keyed, mark = path.read_bytes().splitlines()
    assert head.startswith(HEADER) and keyed == KEYED_HEADER + head[len(HEADER):] and mark == f"{A}@{key}".encode()
    made = read_made(path)
    late = made.since_ns + 10**12
    assert made.knows_session(A, key, late)  # made here: known whatever its ctime
    assert not made.knows_session(A, store_key(tmp_path / "elsewhere"), late)  # the same id in another store
    assert not made.knows_session(B, key, late)


def test_a_session_made_by_this_version_is_the_users_own(project):
    sid = write_session(quiet_store(project), ("mine", "ok")).session_id
    store = SessionStore(project)
    assert store.foreign_reason(sid) is None and [row.foreign for row in store.list()] == [None]


def _older_registry(path, since_ns, *ids):
    """A registry as versions before marks wrote it: `# since` and bare ids."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(HEADER + str(since_ns).encode() + b"\n" + b"".join(i.encode() + b"\n" for i in ids))
    path.chmod(0o600)


def _plant(project, sid):
    """A session directory as tar leaves it: the user's owner, 0700/0600, and a fresh ctime."""
    d = project / ".evo-agent" / "sessions" / sid
    d.mkdir(mode=0o700, parents=True)
    (d / "messages.jsonl").write_text('{"type":"user","message":{"role":"user","content":"x"}}\n')
    os.chmod(d / "messages.jsonl", 0o600)
    return d / "messages.jsonl"


def _filesystem_clock_past(ns, where):
    """Return once a new file's ctime is at least `ns`: the kernel stamps inodes with a clock coarser than
    time.time_ns() (a tick behind), so a file made right after a header may be dated just before it."""
    probe = where / "clock-probe"
    while True:
        probe.write_bytes(b"")
        if probe.stat().st_ctime_ns >= ns:
            probe.unlink()
            return
        probe.unlink()


def test_after_the_upgrade_the_users_older_sessions_stay_theirs_and_a_planted_copy_is_not(project, tmp_path):
    old_sid = write_session(quiet_store(project), ("from the old version", "ok")).session_id
    _older_registry(made_file(), 0, old_sid, A)  # as the old version wrote it: A was made in another project
    assert read_made().keyed_ns is None and SessionStore(project).foreign_reason(old_sid) is None
    write_session(quiet_store(project), ("the first with this version", "ok"))  # puts `# keyed since` on top
    data = made_file().read_bytes()
    assert data.startswith(KEYED_HEADER) and data.count(KEYED_HEADER) == 1 and old_sid.encode() + b"\n" in data
    made = read_made()
    assert made.since_ns == 0 and made.keyed_ns is not None
    _filesystem_clock_past(made.keyed_ns, tmp_path)
    leaked = _plant(tmp_path / "downloads", A)  # an id the old version listed bare, unpacked after the upgrade
    assert leaked.stat().st_ctime_ns >= made.keyed_ns  # what unpacking gives it (the clock waited for above)
    store = SessionStore(project)
    assert store.foreign_reason(old_sid) is None and all(row.foreign is None for row in store.list())
    assert "not made by your evo-agent" in (SessionStore(tmp_path / "downloads").foreign_reason(A) or "")
    write_session(quiet_store(project), ("and one more", "ok"))
    assert made_file().read_bytes().count(KEYED_HEADER) == 1  # put there once


def test_forgetting_a_deleted_session_takes_out_its_bare_line_and_its_mark(tmp_path):
    path = tmp_path / "made"
    here, there = store_key(tmp_path / "here"), store_key(tmp_path / "there")
    _older_registry(path, 0, A, B)
    for sid in (A, B):
        record_session(sid, here, path)
    record_session(A, there, path)
    assert forget_made([A], path, key=here)
    assert read_made(path).ids == {B, f"{B}@{here}", f"{A}@{there}"}  # another store's mark of the id stays
    assert path.read_bytes().startswith(KEYED_HEADER) and read_made(path).since_ns == 0


_CREATOR = """
import sys
from pathlib import Path
from evo_agent.session.origin import record_session
path, key, tag, n = Path(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
for i in range(n):
    assert record_session(f"1700000000000_{tag}{i:06x}", key, path)
"""


def test_two_processes_creating_sessions_in_an_older_registry_both_end_up_own(tmp_path):
    """Both race to put `# keyed since` on top of an older registry, and on appending after it: every mark they
    wrote is there, the header once, and every session they made is the user's own whatever its ctime."""
    import subprocess
    import sys

    path = tmp_path / "made"
    _older_registry(path, 5, A)
    key = store_key(tmp_path / "p")
    n = 200
    creators = [subprocess.Popen([sys.executable, "-c", _CREATOR, str(path), key, tag, str(n)]) for tag in ("aa", "bb")]
    assert [p.wait() for p in creators] == [0, 0]
    made = read_made(path)
    sids = {f"1700000000000_{tag}{i:06x}" for tag in ("aa", "bb") for i in range(n)}
    assert made.ids == {A} | {f"{sid}@{key}" for sid in sids} and path.read_bytes().count(KEYED_HEADER) == 1
    assert all(made.knows_session(sid, key, 10**19) for sid in sids)
