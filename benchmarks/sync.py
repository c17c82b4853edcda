#!/usr/bin/env python3
"""The team store's speed: push throughput, concurrent pushers, the turn-path cost, resume, a big store.

    python benchmarks/sync.py                       (~2 min on 2 cores)
    python benchmarks/sync.py --lines 1000000       also a store holding that many lines (~4 min more at 1M)
    python benchmarks/sync.py --pushers 100         concurrent pushers (default 50)
    python benchmarks/sync.py --pushers 0 --turns 0 --members 50000
                                                    a repository of 50,000 sessions, as the owner and as a member

Runs its own throwaway PostgreSQL (tests/sync/pgcluster.py: Debian's server,
127.0.0.1, a temp dir removed at the end) and prints one table:

- push: lines/s and MB/s of `push_session` for a fresh 10 MB session (1 KB lines, chunk rows), and for
  the same session again (nothing behind: one query for the store's offsets);
- concurrent pushers: N threads, each its own session and connection, each "turn" appending a few
  ~2.5 KB lines and pushing them (what N agents do), for a fixed time: lines/s, MB/s, push latency;
- turn path: the median wall time of a demo-provider turn with and without sync (the turn only sets an event);
- resume from the store: a 10 MB session that is not local, fetched and resumed, against a local resume;
- --lines N: a store holding N lines (1,000-line sessions over 10 repositories, written by SQL at
  server speed), then the derived search index built over it (`evo_agent_index`, what `sync index`
  runs), and the queries: a listing, a fetch, searches for a common and a rare word in one
  repository, and the sizes on disk per million lines.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the benchmarks package; it puts src/ first

from benchmarks.harness import median
from evo_agent.session import SessionStore
from evo_agent.sync.db import connect
from evo_agent.sync.identity import project_identity
from evo_agent.sync.push import push_session
from tests.builders import make_git_project
from tests.sync.helpers import migrated
from tests.sync.pgcluster import PgCluster, find_bin_dir


def quiet(line: str) -> None:
    pass


def make_session(store: SessionStore, megabytes: float, line_bytes: int = 1024) -> str:
    rec = store.create(model="m", provider="demo")
    filler = "z" * (line_bytes - 300)
    count = int(megabytes * (1 << 20) / line_bytes)
    for start in range(0, count, 2000):
        rec.append_many((("user" if i % 2 == 0 else "assistant"),
                         {"message": {"role": "user" if i % 2 == 0 else "assistant",
                                      "content": f"message {i} about uploads and retries {filler}"}})
                        for i in range(start, min(count, start + 2000)))
    rec.checkpoint()
    return rec.session_id


def bench_push(cluster: PgCluster, project: Path) -> list[tuple[str, str, str]]:
    store = SessionStore(project, warn=quiet)
    identity = project_identity(project)
    sid = make_session(store, 10)
    size = (store.sessions_dir / sid / "messages.jsonl").stat().st_size
    with connect(migrated(cluster.new_database())) as conn:
        t0 = time.perf_counter()
        report = push_session(conn, identity, store, sid)
        first = time.perf_counter() - t0
        t0 = time.perf_counter()
        push_session(conn, identity, store, sid)
        again = time.perf_counter() - t0
        chunks = conn.execute("SELECT count(*) FROM evo_agent_chunks").fetchone()[0]
    return [(f"push a new 10 MB session ({chunks} chunk rows)", f"{report.lines:,} lines in {first * 1000:.0f} ms",
             f"{report.lines / first:,.0f} lines/s, {size / first / 1e6:.1f} MB/s"),
            ("push it again (nothing behind)", f"{again * 1000:.1f} ms", "one query for the store's offsets")]


def bench_concurrent(url: str, tmp: Path, pushers: int, seconds: float) -> list[tuple[str, str, str]]:
    """N agents at once: each appends a turn's lines to its own session and pushes them, over and over."""
    import threading

    (tmp / "concurrent").mkdir()
    project = make_git_project(tmp / "concurrent")
    subprocess_origin(project)
    store = SessionStore(project, warn=quiet)
    identity = project_identity(project)
    filler = "y" * 2300  # ~2.5 KB lines: 6 GB / 2.4M lines a day (issue #33's organisation)
    recs = [store.create(model="m", provider="demo") for _ in range(pushers)]
    latencies: list[float] = []
    totals = {"lines": 0, "bytes": 0, "errors": 0}
    lock = threading.Lock()
    start = threading.Barrier(pushers + 1)
    stop = threading.Event()

    def agent(rec) -> None:  # noqa: ANN001
        conn = connect(url)
        try:
            start.wait()
            turn = 0
            while not stop.is_set():
                rec.append_many((("user" if i % 2 == 0 else "assistant"),
                                 {"message": {"role": "user" if i % 2 == 0 else "assistant",
                                              "content": f"turn {turn} line {i} uploads {filler}"}})
                                for i in range(6))
                rec.checkpoint()  # meta.json after the turn, as the agent writes it
                t = time.perf_counter()
                try:
                    report = push_session(conn, identity, store, rec.session_id)
                except Exception:
                    with lock:
                        totals["errors"] += 1
                    continue
                with lock:
                    latencies.append(time.perf_counter() - t)
                    totals["lines"] += report.lines
                    totals["bytes"] += report.bytes
                turn += 1
        finally:
            conn.close()

    threads = [threading.Thread(target=agent, args=(rec,), daemon=True) for rec in recs]
    for t in threads:
        t.start()
    start.wait()
    t0 = time.perf_counter()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join(120)
    elapsed = time.perf_counter() - t0
    latencies.sort()
    p95 = latencies[int(len(latencies) * 0.95)] if latencies else 0.0
    return [(f"{pushers} concurrent pushers, {seconds:.0f} s", f"{totals['lines'] / elapsed:,.0f} lines/s",
             f"{totals['bytes'] / elapsed / 1e6:.1f} MB/s; {len(latencies):,} pushes, median "
             f"{median(latencies) * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms; {totals['errors']} failed")]


def bench_turn_path(url: str, project: Path, turns: int) -> list[tuple[str, str, str]]:
    from evo_agent.agent import Agent
    from evo_agent.providers import make_provider
    from evo_agent.sync.background import BackgroundSync

    def run(with_sync: bool, pause: float) -> tuple[list[float], float]:
        store = SessionStore(project, warn=quiet)
        provider = make_provider("demo")
        agent = Agent(provider=provider, recorder=store.create(model=provider.model, provider="demo"),
                      project_dir=project, store=store)
        sync = None
        notify: list[float] = []
        if with_sync:
            sync = BackgroundSync(url, store, quiet)

            def listener(a: Agent) -> None:
                t = time.perf_counter()
                sync.notify(a.session_id)
                notify.append(time.perf_counter() - t)

            agent.turn_listeners.append(listener)
        times = []
        for i in range(turns):
            t0 = time.perf_counter()
            agent.run_turn(f"hello number {i}")
            times.append(time.perf_counter() - t0)
            time.sleep(pause)  # a person reading, a model thinking: the push happens meanwhile
        if sync is not None:
            sync.close(wait=30)
        return times[3:], median(notify) if notify else 0.0

    run(False, 0)  # warm-up: imports, the page cache
    rows = []
    for pause in (0.1, 0.0):
        off: list[float] = []
        on: list[float] = []
        for _ in range(3):  # interleaved rounds: the shared machine's load drifts
            off += run(False, pause)[0]
            times, notify = run(True, pause)
            on += times
        off_ms, on_ms = median(off) * 1000, median(on) * 1000
        when = "back to back (worst case)" if pause == 0 else f"{pause * 1000:.0f} ms apart"
        rows += [
            (f"demo turn, {when}, sync off", f"{off_ms:.2f} ms", f"median of 3×{turns - 3} turns, interleaved"),
            (f"demo turn, {when}, sync on", f"{on_ms:.2f} ms", f"ratio {on_ms / off_ms:.2f}×"),
        ]
    rows.append(("the hook on the turn's path", f"{notify * 1e6:.1f} µs", "BackgroundSync.notify: an event, no I/O"))
    return rows


def bench_resume(url: str, tmp: Path) -> list[tuple[str, str, str]]:
    import subprocess

    from evo_agent.sync.hooks import RemoteAwareStore

    (tmp / "source-parent").mkdir()
    source = make_git_project(tmp / "source-parent")
    # clones' origin is the source's path: give the source the same identity
    subprocess.run(["git", "-C", str(source), "remote", "add", "origin", str(source)], check=True)
    store = SessionStore(source, warn=quiet)
    sid = make_session(store, 10)
    with connect(url) as conn:
        push_session(conn, project_identity(source), store, sid)
    local = []
    for _ in range(3):
        t0 = time.perf_counter()
        resumed = store.resume(sid, model="m", provider="demo")
        local.append(time.perf_counter() - t0)
        resumed.recorder.checkpoint()
    remote = []
    for n in range(3):
        clone = tmp / f"clone{n}"
        clone.mkdir()
        subprocess.run(["git", "clone", "-q", str(source), str(clone / "p")], check=True)
        other = RemoteAwareStore(clone / "p", sync_url=url, warn=quiet)
        t0 = time.perf_counter()
        found = other.resolve(sid)
        other.resume(found, model="m", provider="demo")
        remote.append(time.perf_counter() - t0)
        other.release()
    return [
        ("resume a local 10 MB session", f"{median(local) * 1000:.0f} ms",
         "store.resume: copy + new session"),
        ("resume it from the store (not local)", f"{median(remote) * 1000:.0f} ms",
         f"fetch + the same resume; {median(remote) / median(local):.1f}× local"),
    ]


_GEN_SESSIONS = """
DO $$
DECLARE s integer; c integer; pos bigint; body bytea; sid text;
BEGIN
  FOR s IN %(first)s .. %(last)s LOOP
    sid := (1796000000000 + s * 1000)::text || '_' || lpad(to_hex(s), 8, '0');
    INSERT INTO evo_agent_sessions (session_id, repo, subdir, user_name, host, created_ms, updated_ms,
                                    message_count, first_prompt)
      VALUES (sid, 'github.com/bench/repo' || (s %% 10), '', 'u' || (s %% 97), 'h', 1796000000000 + s * 1000,
              1796000000000 + s * 1000 + 999, 1000, 'session ' || s || ' about uploads');
    pos := 0;
    FOR c IN 0 .. 9 LOOP
      SELECT string_agg(convert_to(format(
        '{"type":"%%s","timestamp":"2026-12-04T10:00:00.000+00:00","agent_version":"0.1.0","session_id":"%%s",'
        '"cwd":"/home/dev/app","message":{"role":"%%s","content":"message %%s about uploads w%%s w%%s w%%s w%%s '
        'retry w%%s w%%s w%%s w%%s and the timeout in session %%s"}}',
        CASE WHEN i %% 2 = 0 THEN 'user' ELSE 'assistant' END, sid, CASE WHEN i %% 2 = 0 THEN 'user' ELSE 'assistant' END,
        i, (i * 7919 + s) %% 5000, (i * 104729 + s) %% 5000, (i * 1299709 + s) %% 5000, (i * 15485863 + s) %% 5000,
        (i * 32452843 + s) %% 20000, (i * 49979687 + s) %% 20000, (i * 67867967 + s) %% 20000,
        (i * 86028121 + s) %% 20000, s), 'UTF8') || '\\x0a'::bytea, ''::bytea ORDER BY i)
        INTO body FROM generate_series((c * 100)::bigint, c * 100 + 99) i;
      INSERT INTO evo_agent_chunks (session_id, file, start_offset, end_offset, checksum, body)
        VALUES (sid, 'messages.jsonl', pos, pos + octet_length(body), sha256(body), body);
      pos := pos + octet_length(body);
    END LOOP;
  END LOOP;
END $$"""


def bench_store(url: str, lines: int, tmp: Path) -> list[tuple[str, str, str]]:
    """A store of `lines` lines: generated at server speed, indexed, queried; sizes per million lines."""
    from evo_agent.sync.identity import Identity
    from evo_agent.sync.remote import fetch_session, list_remote, refresh_index, search_remote

    sessions = max(1, lines // 1000)
    with connect(url) as conn:
        t0 = time.perf_counter()
        for first in range(0, sessions, 50):
            conn.execute(_GEN_SESSIONS % {"first": first, "last": min(sessions, first + 50) - 1})
        made = time.perf_counter() - t0
        conn.execute("ANALYZE")
        t0 = time.perf_counter()
        indexed = refresh_index(conn, None, budget_s=3600, batch=20)
        index_s = time.perf_counter() - t0
        conn.execute("VACUUM ANALYZE evo_agent_search")
        conn.execute("ANALYZE")
        identity = Identity(repo="github.com/bench/repo3", subdir="", user="u", host="h")

        def timed(fn) -> float:  # noqa: ANN001
            best = float("inf")
            for _ in range(5):
                t = time.perf_counter()
                fn()
                best = min(best, time.perf_counter() - t)
            return best * 1000

        sid = conn.execute("SELECT session_id FROM evo_agent_sessions WHERE repo = %s ORDER BY session_id "
                           "LIMIT 1", (identity.repo,)).fetchone()[0]
        n = [0]

        def fetch() -> None:
            n[0] += 1
            dest = tmp / f"fetch{n[0]}"
            dest.mkdir()
            fetch_session(conn, sid, dest)

        listing = timed(lambda: list_remote(conn, identity))
        fetched = timed(fetch)
        common = timed(lambda: search_remote(conn, identity, "uploads", limit=20))
        rare = timed(lambda: search_remote(conn, identity, "w4242 w77", limit=20))
        missing = timed(lambda: search_remote(conn, identity, "zebra", limit=20))
        chunks = conn.execute("SELECT sum(pg_total_relation_size(inhrelid))::bigint FROM pg_inherits "
                              "WHERE inhparent = 'evo_agent_chunks'::regclass").fetchone()[0]
        raw = conn.execute("SELECT sum(octet_length(body))::bigint FROM evo_agent_chunks").fetchone()[0]
        search = conn.execute("SELECT pg_total_relation_size('evo_agent_search')").fetchone()[0]
        gin = conn.execute("SELECT pg_relation_size('evo_agent_search_tsv')").fetchone()[0]
    per_m = 1e6 / (sessions * 1000)
    return [
        (f"store of {sessions * 1000:,} lines: write by SQL", f"{made:.0f} s", f"{sessions:,} sessions, 10 repositories"),
        ("  build the search index (sync index)", f"{index_s:.0f} s",
         f"{sessions * 1000 / index_s:,.0f} lines/s, {indexed:,} sessions; never on the push path"),
        ("  sessions list --remote (100 newest)", f"{listing:.1f} ms", "best of 5"),
        ("  fetch one 1,000-line session", f"{fetched:.1f} ms", "10 chunks, checksums verified"),
        ("  search a word in every line, one repo", f"{common:.1f} ms", "20 newest hits"),
        ("  search two rare words, one repo", f"{rare:.1f} ms", "GIN (repo, tsv)"),
        ("  search a word in no line", f"{missing:.1f} ms", ""),
        ("  chunks on disk per million lines", f"{chunks * per_m / 1e6:,.0f} MB",
         f"raw bytes {raw * per_m / 1e6:,.0f} MB (TOAST compresses bodies)"),
        ("  search index per million lines", f"{search * per_m / 1e6:,.0f} MB", f"of which GIN {gin * per_m / 1e6:,.0f} MB"),
    ]


_GEN_MEMBERS = """
INSERT INTO evo_agent_sessions (session_id, repo, subdir, user_name, host, created_ms, updated_ms, message_count,
                                first_prompt)
SELECT (1796000000000 + s * 10)::text || '_' || lpad(to_hex(s), 8, '0'), 'github.com/bench/team', '', 'u', 'h',
       1796000000000 + s * 10, 1796000000000 + s * 10 + 5, 2, 'session ' || s
FROM generate_series(%(a)s, %(b)s) s"""
_GEN_MEMBER_CHUNKS = """
INSERT INTO evo_agent_chunks (session_id, file, start_offset, end_offset, checksum, body)
SELECT sid, 'messages.jsonl', 0, octet_length(b), sha256(b), b FROM (
  SELECT (1796000000000 + s * 10)::text || '_' || lpad(to_hex(s), 8, '0') AS sid,
         convert_to(format('{"type":"user","message":{"role":"user","content":"fix uploads w%%s retry"}}' || E'\\n'
                           || '{"type":"assistant","message":{"role":"assistant","content":[{"type":"text",'
                           || '"text":"done w%%s uploads"}]}}' || E'\\n', s %% 5000, s), 'UTF8') AS b
  FROM generate_series(%(a)s, %(b)s) s) x"""


def bench_members(url: str, sessions: int, tmp: Path) -> list[tuple[str, str, str]]:
    """One repository of `sessions` two-message sessions, indexed; each query best of 5 as the tables' owner (no
    policy binds it) and as a member bound by row-level security (one role per person, README "Team store")."""
    from evo_agent.session import MESSAGES_NAME
    from evo_agent.sync.identity import Identity
    from evo_agent.sync.push import verified_offsets
    from evo_agent.sync.remote import (
        fetch_session,
        list_remote,
        refresh_index,
        resolve_remote,
        search_remote,
        unindexed,
    )
    from tests.sync.pgcluster import add_teammate

    with connect(url) as conn:
        for a in range(0, sessions, 5000):
            bounds = {"a": a, "b": min(sessions, a + 5000) - 1}
            conn.execute(_GEN_MEMBERS % bounds)
            conn.execute(_GEN_MEMBER_CHUNKS % bounds)
        while refresh_index(conn, None, budget_s=3600, batch=500):
            pass
        conn.execute("VACUUM ANALYZE")
    identity = Identity(repo="github.com/bench/team", subdir="", user="u", host="h")
    _, member_url = add_teammate(url, [identity.repo])
    sid = f"{1796000000000 + 10 * 7}_{7:08x}"
    n = [0]

    def fetch(conn) -> Path:  # noqa: ANN001
        n[0] += 1
        dest = tmp / f"member-fetch{n[0]}"
        dest.mkdir()
        return fetch_session(conn, sid, dest)

    queries = [
        ("search a word in every line", lambda c: search_remote(c, identity, "uploads")),
        ("search two rare words", lambda c: search_remote(c, identity, "w4242 retry")),
        ("search a word in no line", lambda c: search_remote(c, identity, "zebra")),
        ("sessions not indexed yet (search's note)", lambda c: unindexed(c, identity.repo)),
        ("list --remote (100 newest)", lambda c: list_remote(c, identity)),
        ("list --remote --user U", lambda c: list_remote(c, identity, user="nobody")),
        ("resolve an id prefix (--resume)", lambda c: resolve_remote(c, identity, sid[:13])),
        ("fetch one session", fetch),
        ("a push's offsets query", lambda c: verified_offsets(c, sid, tmp / "member-fetch1" / sid, {
            MESSAGES_NAME: (tmp / "member-fetch1" / sid / MESSAGES_NAME).stat().st_size})),
    ]
    rows = []
    timings: dict[str, dict[str, float]] = {}
    for who, who_url in (("owner", url), ("member", member_url)):
        with connect(who_url) as conn:
            for label, fn in queries:
                best = float("inf")
                for _ in range(5):
                    t = time.perf_counter()
                    fn(conn)
                    best = min(best, time.perf_counter() - t)
                timings.setdefault(label, {})[who] = best * 1000
    rows.append((f"{sessions:,} sessions in one repository", "owner / member", "member: row-level security, "
                 "one role per person"))
    for label, _ in queries:
        t = timings[label]
        rows.append((f"  {label}", f"{t['owner']:.1f} / {t['member']:.1f} ms", "best of 5"))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=0, help="also measure a store holding this many lines")
    parser.add_argument("--pushers", type=int, default=50, help="concurrent pushers (threads, one connection each)")
    parser.add_argument("--seconds", type=float, default=20.0, help="how long the concurrent pushers run")
    parser.add_argument("--turns", type=int, default=25)
    parser.add_argument("--members", type=int, default=0,
                        help="also a repository of this many sessions, queried as the owner and as a member")
    args = parser.parse_args()
    bin_dir = find_bin_dir()
    if bin_dir is None:
        print("benchmarks/sync.py: PostgreSQL server binaries are not installed (apt-get install postgresql)")
        return 1
    cluster = PgCluster(bin_dir).init().start(max_connections=str(max(60, args.pushers + 20)))
    rows: list[tuple[str, str, str]] = []
    try:
        with tempfile.TemporaryDirectory(prefix="evo-sync-bench-") as tmp_name:
            tmp = Path(tmp_name)
            project = make_git_project(tmp)
            subprocess_origin(project)
            rows += bench_push(cluster, project)
            if args.pushers:
                rows += bench_concurrent(migrated(cluster.new_database()), tmp, args.pushers, args.seconds)
            if args.turns:
                rows += bench_turn_path(migrated(cluster.new_database()), project, args.turns)
                rows += bench_resume(migrated(cluster.new_database()), tmp)
            if args.lines:
                rows += bench_store(migrated(cluster.new_database()), args.lines, tmp)
            if args.members:
                rows += bench_members(migrated(cluster.new_database()), args.members, tmp)
    finally:
        cluster.remove()
    width = max(len(r[0]) for r in rows)
    mid = max(len(r[1]) for r in rows)
    print(f"{'what':<{width}}  {'measured':<{mid}}  note")
    for what, measured, note in rows:
        print(f"{what:<{width}}  {measured:<{mid}}  {note}")
    print(f"\n{os.cpu_count()} CPUs; PostgreSQL from {bin_dir}; fsync=off (a throwaway cluster)")
    return 0


def subprocess_origin(project: Path) -> None:
    import subprocess

    subprocess.run(["git", "-C", str(project), "remote", "add", "origin", "git@example.com:team/bench.git"],
                   check=True)


if __name__ == "__main__":
    sys.exit(main())
