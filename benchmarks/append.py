"""Append: the cost of one 1 KB record with all bookkeeping, against a bare open/write/close of the same
bytes (SPEC §8: ≤ 3×), the seed's design, SQLiteSession and LangGraph, as the conversation grows.

Measured in this process (each system's loop is short and interleaved with the others), not in children.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

from benchmarks.harness import FL_APPEND, as_after_the_first_request, bare_appends, fmt_us, log, median
from benchmarks.peers import lg_checkpoint

RECORD_BYTES = 1024


def calibrated_text(cwd: str) -> str:
    """A user prompt whose record, as the Recorder writes it, is RECORD_BYTES long."""
    from evo_agent.session import SessionStore
    with tempfile.TemporaryDirectory(prefix="evo-bench-cal-", dir=cwd) as d:
        store = SessionStore(d, warn=lambda _: None)
        rec = store.create(model="claude-sonnet-4-5", provider="anthropic", git_branch="main")
        length = 800
        for _ in range(4):
            rec.user({"role": "user", "content": "p" * length})
            last = rec.path.read_bytes().splitlines(keepends=True)[-1]
            length += RECORD_BYTES - len(last)
        rec.user({"role": "user", "content": "p" * length})
        assert len(rec.path.read_bytes().splitlines(keepends=True)[-1]) == RECORD_BYTES
    return length


def prompt(i: int, length: int) -> str:
    tag = f" #{i:07d}"
    return ("please look at the failing test and fix it; " * 40)[: length - len(tag)] + tag


class SeedRecorder:
    """The seed's design: the same envelope and append, stdlib json, meta.json rewritten after every record."""

    def __init__(self, session_dir: Path, session_id: str, cwd: str):
        from evo_agent.session import now_iso
        self.now_iso = now_iso
        self.dir = str(session_dir)
        os.makedirs(self.dir, 0o700, exist_ok=True)
        self.path = os.path.join(self.dir, "messages.jsonl")
        self.meta_path = os.path.join(self.dir, "meta.json")
        self.tmp_path = os.path.join(self.dir, "meta.json.tmp")
        self.sid, self.cwd = session_id, cwd
        now = int(time.time() * 1000)
        self.meta = {"id": session_id, "created_ms": now, "updated_ms": now, "agent_version": "0.1.0", "cwd": cwd,
                     "git_branch": "main", "model": "claude-sonnet-4-5", "first_prompt": None,
                     "total_input_tokens": 0, "total_output_tokens": 0, "message_count": 0,
                     "compact_count": 0, "resumed_from": None}

    def user(self, message: dict) -> None:
        record = {"type": "user", "timestamp": self.now_iso(), "agent_version": "0.1.0", "session_id": self.sid,
                  "cwd": self.cwd, "git_branch": "main", "message": message}
        line = (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
        fd = os.open(self.path, FL_APPEND, 0o600)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)
        self.meta["message_count"] += 1
        self.meta["updated_ms"] = int(time.time() * 1000)
        if self.meta["first_prompt"] is None and isinstance(message.get("content"), str):
            self.meta["first_prompt"] = " ".join(message["content"].split())[:200]
        data = json.dumps(self.meta, ensure_ascii=False, indent=2).encode("utf-8")
        fd = os.open(self.tmp_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
        os.replace(self.tmp_path, self.meta_path)


def append_bare(workdir: Path, n: int, k: int, line: bytes, fsync: bool = False) -> float:
    path = str(workdir / "bare.jsonl")
    with open(path, "wb") as f:
        f.write(line * (n - k))
    return bare_appends(path, line, k, fsync)


def append_evo(workdir: Path, n: int, k: int, length: int, checkpoint_each: bool = False,
               previous_meta: bool = False) -> float:
    from evo_agent.session import recorder as recorder_mod
    if previous_meta:  # the meta writer as it was before this run's library (benchmarks/previous.py)
        from benchmarks.previous import write_meta_previous
        current, recorder_mod.write_meta = recorder_mod.write_meta, write_meta_previous
    try:
        return _append_evo(workdir, n, k, length, checkpoint_each)
    finally:
        if previous_meta:
            recorder_mod.write_meta = current


def _append_evo(workdir: Path, n: int, k: int, length: int, checkpoint_each: bool) -> float:
    from evo_agent.session import SessionStore
    store = SessionStore(workdir, warn=lambda _: None)
    rec = store.create(model="claude-sonnet-4-5", provider="anthropic", git_branch="main")
    as_after_the_first_request()
    rec.append_many(("user", {"message": {"role": "user", "content": prompt(i, length)}}) for i in range(n - k))
    rec.checkpoint()
    msgs = [{"role": "user", "content": prompt(i, length)} for i in range(n - k, n)]
    user = rec.user
    if checkpoint_each:
        checkpoint = rec.checkpoint
        t0 = time.perf_counter()
        for m in msgs:
            user(m)
            checkpoint()
    else:
        t0 = time.perf_counter()
        for m in msgs:
            user(m)
    elapsed = time.perf_counter() - t0
    assert rec.writer.failures == 0
    return elapsed


def append_seed(workdir: Path, n: int, k: int, length: int) -> float:
    rec = SeedRecorder(workdir / "seed", "1780227556183_b525857d", str(workdir))
    with open(rec.path, "wb") as f:  # the prefill: the same records, written at once
        for i in range(n - k):
            f.write((json.dumps({"type": "user", "message": {"role": "user", "content": prompt(i, length)}}) + "\n").encode())
    rec.meta["message_count"] = n - k
    msgs = [{"role": "user", "content": prompt(i, length)} for i in range(n - k, n)]
    t0 = time.perf_counter()
    for m in msgs:
        rec.user(m)
    return time.perf_counter() - t0


def append_sqlsession(workdir: Path, n: int, k: int, length: int) -> float:
    from agents import SQLiteSession

    async def go() -> float:
        session = SQLiteSession("bench", str(workdir / "agents.db"))
        try:
            if n - k:
                await session.add_items([{"role": "user", "content": prompt(i, length)} for i in range(n - k)])
            msgs = [{"role": "user", "content": prompt(i, length)} for i in range(n - k, n)]
            add = session.add_items
            t0 = time.perf_counter()
            for m in msgs:
                await add([m])
            return time.perf_counter() - t0
        finally:
            session.close()

    return asyncio.run(go())


def append_langgraph(workdir: Path, n: int, k: int, length: int) -> float:
    import sqlite3

    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.sqlite import SqliteSaver
    conn = sqlite3.connect(str(workdir / "langgraph.db"), check_same_thread=False)
    try:
        saver = SqliteSaver(conn)
        saver.setup()
        config = {"configurable": {"thread_id": "bench", "checkpoint_ns": ""}}
        messages = [HumanMessage(content=prompt(i, length)) for i in range(n - k)]
        step = 0
        if messages:
            step += 1
            config = saver.put(config, lg_checkpoint(step, messages), {"source": "loop", "step": step}, {"messages": step})
        texts = [prompt(i, length) for i in range(n - k, n)]
        put = saver.put
        t0 = time.perf_counter()
        for text in texts:
            messages.append(HumanMessage(content=text))  # add_messages turns input into message objects
            step += 1
            config = put(config, lg_checkpoint(step, messages), {"source": "loop", "step": step}, {"messages": step})
        return time.perf_counter() - t0
    finally:
        conn.close()


def bench_meta_writer(scratch: Path, rounds: int = 7, calls: int = 500) -> dict:
    """`write_meta` alone, current against previous, on tmpfs where there is one: the Python side of a checkpoint
    without the filesystem's rename (which dominates on ext4 and varies with other I/O)."""
    from benchmarks.previous import write_meta_previous
    from evo_agent.session.meta import SessionMeta, write_meta
    base = Path("/dev/shm") if Path("/dev/shm").is_dir() and os.access("/dev/shm", os.W_OK) else scratch
    meta = SessionMeta(id="1780227556183_b525857d", created_ms=1780227556183, updated_ms=1780227559000,
                       agent_version="0.1.0", cwd="/home/dev/projects/evo-agent", git_branch="main",
                       model="claude-sonnet-4-5", provider="anthropic", first_prompt="fix the flaky upload test " * 7,
                       total_input_tokens=12000, total_output_tokens=450, message_count=12, messages_bytes=48213)
    times: dict[str, list[float]] = {"current": [], "previous": []}
    with tempfile.TemporaryDirectory(prefix="evo-bench-meta-", dir=base) as d:
        for r in range(rounds):
            for name, fn in ((("current", write_meta), ("previous", write_meta_previous))[:: 1 if r % 2 else -1]):
                t0 = time.perf_counter()
                for _ in range(calls):
                    fn(d, meta)
                times[name].append((time.perf_counter() - t0) / calls)
    fs = subprocess.run(["df", "-T", str(base)], capture_output=True, text=True).stdout.splitlines()[-1].split()[1]
    return {"dir": f"{base} ({fs})", **{k: median(v) for k, v in times.items()}}


def bench_append(sizes: list[int], repeats: int, peers: dict, scratch: Path, min_small: int = 15) -> dict:
    length = calibrated_text(str(scratch))
    from evo_agent.session import SessionStore
    with tempfile.TemporaryDirectory(dir=scratch) as d:  # the exact bytes the Recorder writes, for the bare loop
        rec = SessionStore(d, warn=lambda _: None).create(model="claude-sonnet-4-5", provider="anthropic", git_branch="main")
        rec.user({"role": "user", "content": prompt(0, length)})
        line = rec.path.read_bytes().splitlines(keepends=True)[-1]
    systems = {
        "bare": lambda w, n, k: append_bare(w, n, k, line),
        "evo": lambda w, n, k: append_evo(w, n, k, length),
        "evo_ckpt": lambda w, n, k: append_evo(w, n, k, length, checkpoint_each=True),
        "evo_ckpt_prev": lambda w, n, k: append_evo(w, n, k, length, checkpoint_each=True, previous_meta=True),
        "seed": lambda w, n, k: append_seed(w, n, k, length),
        "fsync": lambda w, n, k: append_bare(w, n, k, line, fsync=True),
    }
    if peers["sqlsession"][0]:
        systems["sqlsession"] = lambda w, n, k: append_sqlsession(w, n, k, length)
    if peers["langgraph"][0]:
        systems["langgraph"] = lambda w, n, k: append_langgraph(w, n, k, length)

    def timed_count(name: str, n: int) -> int:
        if name in ("bare", "evo", "seed", "evo_ckpt", "evo_ckpt_prev"):
            return min(n, 2000)
        if name in ("sqlsession", "fsync"):
            return min(n, 100)
        return min(n, 20 if n <= 1000 else 5)  # langgraph: every put serializes the whole list

    results: dict = {"record_bytes": len(line), "sizes": sizes, "per_message": {}, "timed": {}}
    for n in sizes:
        per: dict[str, list[float]] = {name: [] for name in systems}
        reps = repeats if n >= 100 else max(repeats, min_small)  # a 10-message run is short: more of them
        target_reps = reps * 3 if min_small > 1 else reps  # the target pair (bare, evo) is cheap: sample it more
        order = list(systems)
        pairs: list[float] = []
        for r in range(target_reps):
            order = order[::-1]  # alternate so drift hits every system alike
            for name in order:
                if r >= reps and name not in ("bare", "evo"):
                    continue
                k = timed_count(name, n)
                with tempfile.TemporaryDirectory(prefix=f"evo-bench-{name}-", dir=scratch) as w:
                    gc.collect()
                    per[name].append(systems[name](Path(w), n, k) / k)
            pairs.append(per["evo"][-1] / per["bare"][-1])  # run back to back: the same machine state
        results["per_message"][n] = {name: median(v) for name, v in per.items()}
        results.setdefault("pair_ratio", {})[n] = {"median": median(pairs), "min": min(pairs), "max": max(pairs),
                                                   "n": len(pairs)}
        results["timed"][n] = {name: timed_count(name, n) for name in systems}
        log(f"append n={n}: " + ", ".join(f"{name}={fmt_us(v)}" for name, v in results["per_message"][n].items()))
    results["meta_writer"] = bench_meta_writer(scratch, rounds=7 if min_small > 1 else 1, calls=500 if min_small > 1 else 20)
    log(f"write_meta alone: {results['meta_writer']}")
    return results


# --------------------------------------------------------------------------- report

def verdicts(app: dict) -> list[dict]:
    """SPEC §8's append row: the verdict, what was measured and why it came out so."""
    out = []
    pm = app["per_message"]
    pr = app.get("pair_ratio") or {n: {"median": v["evo"] / v["bare"], "n": 1} for n, v in pm.items()}
    ratios = {n: pr[n]["median"] for n in pm}
    worst = max(ratios.values())
    n = max(pm)
    v = pm[n]
    why = (f"`Recorder.user()` costs {fmt_us(v['evo'])} against {fmt_us(v['bare'])} for the bare "
           f"open/write/close of the same {app['record_bytes']} bytes at N = {n:,} (the verdict uses the median "
           f"of the ratios of back-to-back runs, {ratios[n]:.2f}× here): the extra is "
           f"the envelope and its timestamp, orjson, the lock and the in-memory meta fold; the cost is flat in N. "
           f"meta.json is rewritten at most once a second and at `checkpoint()`, so in a tight loop it is "
           f"amortized away. When records are a second or more apart (a real conversation) each one is "
           f"followed by a meta rewrite, as the *checkpoint() after every record* row shows: "
           f"{fmt_us(v['evo_ckpt'])} per record against the seed's {fmt_us(v['seed'])} (both are mostly the "
           f"ext4 rename). `write_meta` now builds its dict directly, encodes with orjson and writes through "
           f"a fixed temp name under the recorder's lock; the previous writer (`dataclasses.asdict`, "
           f"`tempfile.mkstemp`, stdlib json; `benchmarks/previous.py`), measured in the same run: "
           f"{fmt_us(v['evo_ckpt_prev'])} per record, "
           + (f"so the change saves {fmt_us(v['evo_ckpt_prev'] - v['evo_ckpt'])} a checkpoint "
              if v['evo_ckpt_prev'] > v['evo_ckpt'] else "no saving this run could see through the rename's noise ")
           + ("(" + ", ".join(f"N = {m:,}: {fmt_us(pm[m]['evo_ckpt_prev'])} → {fmt_us(pm[m]['evo_ckpt'])}"
                             for m in pm) + ")")
           + ". It is bounded at one rewrite per second, not per record, so it never shows in throughput.")
    mw = app.get("meta_writer")
    if mw:
        why += (f" `write_meta` alone, on {mw['dir']} where no rename flush gets in the way: "
                f"{fmt_us(mw['current'])} a call against {fmt_us(mw['previous'])} before "
                f"({mw['previous'] / mw['current']:,.1f}× less).")
    if "sqlsession" in v:
        why += (f" The OpenAI Agents SDK's SQLiteSession costs {fmt_us(v['sqlsession'])} per message "
                f"({v['sqlsession'] / v['evo']:,.0f}× evo-agent): a worker-thread hop and an fsynced WAL commit "
                f"per call (the *fsync* row is {fmt_us(v['fsync'])}); flat in N.")
    if "langgraph" in v:
        lo = min(pm)
        why += (f" LangGraph's SqliteSaver re-serializes the whole message list in every checkpoint: "
                f"{fmt_us(pm[lo]['langgraph'])} per message at N = {lo:,}, {fmt_us(v['langgraph'])} at N = {n:,} "
                f"({v['langgraph'] / pm[lo]['langgraph']:,.0f}× more, linear in N, so a whole conversation "
                f"costs O(N²): about {v['langgraph'] * n / 2:,.0f} s of checkpointing for {n:,} messages).")
    out.append({"target": "append one 1 KB record, all bookkeeping ≤ 3× bare open/write/close",
                "measured": ", ".join(f"{r:.2f}× at N = {n:,}" + (f" [runs {pr[n]['min']:.2f}–{pr[n]['max']:.2f}×, "
                                                                       f"n={pr[n]['n']}]" if pr[n]["n"] > 1 else "")
                                      for n, r in ratios.items()),
                "met": worst <= 3.0, "case": None, "why": why})
    return out


def render(app: dict, peers: dict) -> list[str]:
    """The append table: cost per record at each conversation length, ratios to the bare write."""
    lines: list[str] = []
    add = lines.append
    add("## Append: cost per 1 KB record as the conversation grows\n")
    add(f"Each cell: median over repeats of (time for the last k messages of a conversation of N messages) / k; "
        f"the record is {app['record_bytes']} bytes as the Recorder writes it. Ratios are to the bare "
        f"open/write/close measured in the same run.\n")
    names = [("bare", "bare open/write/close (same bytes)"),
             ("evo", "**evo-agent** `Recorder.user()` (all bookkeeping)"),
             ("evo_ckpt", "evo-agent, `checkpoint()` after every record (meta.json each time)"),
             ("evo_ckpt_prev", "the same with the previous `write_meta` (asdict, mkstemp, stdlib json)"),
             ("seed", "seed design: append + meta.json rewritten per record (stdlib json)"),
             ("sqlsession", "OpenAI Agents SDK `SQLiteSession.add_items`"),
             ("langgraph", "LangGraph `SqliteSaver.put` (whole message list per checkpoint)"),
             ("fsync", "reference: bare open/write/**fsync**/close")]
    sizes = app["sizes"]
    add("| system | " + " | ".join(f"N = {n:,}" for n in sizes) + " | growth N=" + f"{sizes[0]:,}→{sizes[-1]:,} |")
    add("|---|" + "---|" * (len(sizes) + 1))
    for key, label in names:
        if key not in app["per_message"][sizes[0]]:
            why = peers.get(key, (None, ""))[1]
            add(f"| {label} | " + " | ".join("skipped" for _ in sizes) + f" | {why} |")
            continue
        cells = []
        for n in sizes:
            v = app["per_message"][n][key]
            bare = app["per_message"][n]["bare"]
            k = app["timed"][n][key]
            cells.append(f"{fmt_us(v)} ({v / bare:,.1f}×)" + (f" k={k}" if k < n else ""))
        growth = app["per_message"][sizes[-1]][key] / app["per_message"][sizes[0]][key]
        add(f"| {label} | " + " | ".join(cells) + f" | {growth:,.1f}× |")
    add("")

    return lines
