#!/usr/bin/env python3
"""The team store's speed: push throughput, the turn-path cost of sync, resume from the store.

    python benchmarks/sync.py             (~1 min on 2 cores)
    python benchmarks/sync.py --million   also one store holding a million lines (~3 min more)

Runs its own throwaway PostgreSQL (tests/sync/pgcluster.py: Debian's server,
127.0.0.1, a temp dir removed at the end) and prints one table:

- push: lines/s and MB/s of `push_session` for a fresh 10 MB session (1 KB lines), and for the
  same session again (nothing behind: the cost of asking the store where it stands);
- turn path: the median wall time of a demo-provider turn (`Agent.run_turn`, records on disk,
  meta.json written) without sync, and with a configured sync whose background thread pushes
  each turn — the turn only sets an event, so the two should agree within noise;
- resume from the store: a 10 MB session that is not local, fetched into the local store
  (byte-identical files) and resumed, against resuming the same session when it is local;
- --million: the same queries against a store that holds 1,000,000 lines in 1,000 sessions
  (where the push resumes, a listing, one fetch, a full-text search) and its size on disk.
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
    rows = []
    for search_index in (True, False):
        sid = make_session(store, 10)
        size = (store.sessions_dir / sid / "messages.jsonl").stat().st_size
        with connect(cluster.new_database()) as conn:
            if not search_index:
                conn.execute("DROP INDEX evo_agent_lines_fts")
            t0 = time.perf_counter()
            report = push_session(conn, identity, store, sid)
            first = time.perf_counter() - t0
            t0 = time.perf_counter()
            push_session(conn, identity, store, sid)
            again = time.perf_counter() - t0
        label = "" if search_index else ", no search index"
        rows.append((f"push a new 10 MB session{label}", f"{report.lines:,} lines in {first * 1000:.0f} ms",
                     f"{report.lines / first:,.0f} lines/s, {size / first / 1e6:.1f} MB/s"))
    rows.append(("push it again (nothing behind)", f"{again * 1000:.1f} ms", "one index probe per file"))
    return rows


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


def bench_million(url: str, project: Path) -> list[tuple[str, str, str]]:
    import psycopg

    store = SessionStore(project, warn=quiet)
    identity = project_identity(project)
    ids = []
    t_make = time.perf_counter()
    for _ in range(1000):
        ids.append(make_session(store, 1000 * 300 / (1 << 20), line_bytes=300))  # ~1,000 lines of 300 B
    t_make = time.perf_counter() - t_make
    with connect(url) as conn:
        t0 = time.perf_counter()
        lines = sum(push_session(conn, identity, store, sid).lines for sid in ids)
        pushed = time.perf_counter() - t0
        conn.execute("ANALYZE")

        def timed(fn) -> float:  # noqa: ANN001
            best = float("inf")
            for _ in range(5):
                t = time.perf_counter()
                fn()
                best = min(best, time.perf_counter() - t)
            return best * 1000

        probe = timed(lambda: push_session(conn, identity, store, ids[500]))
        from evo_agent.sync.remote import _read_files, list_remote, search_remote

        listing = timed(lambda: list_remote(conn, identity, limit=50))
        fetch = timed(lambda: _read_files(conn, ids[500]))
        search = timed(lambda: search_remote(conn, identity, "message 777 uploads", limit=20))
        size = conn.execute("SELECT pg_total_relation_size('evo_agent_lines')").fetchone()[0]
        index = conn.execute("SELECT pg_relation_size('evo_agent_lines_fts')").fetchone()[0]
    del psycopg
    return [
        ("million: push 1,000 sessions", f"{lines:,} lines in {pushed:.0f} s",
         f"{lines / pushed:,.0f} lines/s (generating them: {t_make:.0f} s)"),
        ("million: a push with nothing behind", f"{probe:.1f} ms", "index probe per file"),
        ("million: sessions list --remote (50)", f"{listing:.1f} ms", "(repo, subdir, updated_ms) index"),
        ("million: fetch one 1,000-line session", f"{fetch:.1f} ms", "primary-key range scan"),
        ("million: full-text search", f"{search:.1f} ms", "GIN index, 20 hits"),
        ("million: lines table on disk", f"{size / 1e6:.0f} MB", f"of which the search index {index / 1e6:.0f} MB"),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--million", action="store_true", help="also measure a store holding a million lines")
    parser.add_argument("--turns", type=int, default=25)
    args = parser.parse_args()
    bin_dir = find_bin_dir()
    if bin_dir is None:
        print("benchmarks/sync.py: PostgreSQL server binaries are not installed (apt-get install postgresql)")
        return 1
    cluster = PgCluster(bin_dir).init().start()
    rows: list[tuple[str, str, str]] = []
    try:
        with tempfile.TemporaryDirectory(prefix="evo-sync-bench-") as tmp_name:
            tmp = Path(tmp_name)
            project = make_git_project(tmp)
            subprocess_origin(project)
            rows += bench_push(cluster, project)
            rows += bench_turn_path(cluster.new_database(), project, args.turns)
            rows += bench_resume(cluster.new_database(), tmp)
            if args.million:
                (tmp / "m").mkdir()
                big = make_git_project(tmp / "m")
                subprocess_origin(big)
                rows += bench_million(cluster.new_database(), big)
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
