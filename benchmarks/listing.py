"""Listing: 1,000–100,000 generated sessions, fresh and with 10% of meta.json missing or stale, listed
by the library's first screen `SessionStore.newest(30)` (SPEC §8: < 250 ms at 10,000), its whole
`list()`, the picker's first paint (`picker.py`) and the seed's read-every-meta.json; each in a fresh child.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import tempfile
import time
from datetime import datetime
from pathlib import Path

from benchmarks.harness import fmt_mib, fmt_ms, log, measure, run_child, spread
from benchmarks.texts import TZ, Texts

LIST_GEN_VERSION = 3  # bump when the generated session trees change shape (v3: damage recorded for re-damaging)
SCREEN_ROWS = 30


# --------------------------------------------------------------------------- inputs: generated session trees

def session_template(scratch: Path) -> tuple[list[dict], dict]:
    """One real session written by the library: its records and its meta.json."""
    from evo_agent.session import SessionStore
    from evo_agent.session.jsonio import decode
    with tempfile.TemporaryDirectory(dir=scratch) as d:
        store = SessionStore(d, warn=lambda _: None)
        rec = store.create(model="claude-sonnet-4-5", provider="anthropic", git_branch="main")
        rec.prompt_id = "0" * 32
        rec.user({"role": "user", "content": "fix the flaky upload test"})
        rec.assistant({"role": "assistant", "content": [
            {"type": "text", "text": "Let me run it."},
            {"type": "tool_use", "id": "toolu_01", "name": "bash", "input": {"command": "pytest -q", "timeout": 120}}]},
            input_tokens=1200, output_tokens=40)
        rec.user({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "1 failed"}]})
        rec.assistant({"role": "assistant", "content": [{"type": "text", "text": "Fixed."}]},
                      input_tokens=1500, output_tokens=300)
        rec.checkpoint()
        records = [decode(line) for line in rec.path.read_bytes().splitlines()]
        meta = decode((rec.session_dir / "meta.json").read_bytes())
    return records, meta


def generate_sessions(project: Path, n: int, stale: bool, scratch: Path, seed: int = 3) -> dict:
    """n sessions as the library leaves them; with `stale`, 5% lack meta.json and 5% have one that lags."""
    from evo_agent.session.jsonio import encode_line, encode_pretty
    from evo_agent.session.meta import SessionMeta, fold_record
    records, meta_json = session_template(scratch)
    assert set(meta_json) == set(SessionMeta("x", 0, 0).to_json()), "meta.json format changed"
    rng = random.Random(seed)
    texts = Texts(rng)
    sessions = project / ".evo-agent" / "sessions"
    sessions.mkdir(parents=True, mode=0o700)
    (sessions / ".gitignore").write_text("*\n")
    created = int(datetime(2026, 5, 31, tzinfo=TZ).timestamp() * 1000)
    W = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    counts = {"fresh": 0, "missing": 0, "stale": 0}
    damage: list[list] = []  # [id, None (no meta.json) or the lagging meta.json's text]
    total_bytes = 0
    for i in range(n):
        created -= rng.randint(60_000, 3 * 3600_000)
        sid = f"{created:013d}_{rng.getrandbits(32):08x}"
        t = created
        first = texts.take(rng.randint(20, 300)).replace("\n", " ")

        def stamp() -> str:
            nonlocal t
            t += rng.randint(200, 90_000)
            return datetime.fromtimestamp(t / 1000, TZ).isoformat(timespec="milliseconds")

        out = []
        for rec in records:
            rec = dict(rec, timestamp=stamp(), session_id=sid)
            if rec["type"] == "user" and isinstance(rec["message"]["content"], str):
                rec["message"] = {"role": "user", "content": first}
            elif rec["type"] == "user":
                rec["message"] = {"role": "user", "content": [dict(rec["message"]["content"][0],
                                                                   content=texts.take(rng.randint(100, 3000)))]}
            elif rec["type"] == "assistant":
                rec["input_tokens"] = rng.randint(500, 80000)
                rec["output_tokens"] = rng.randint(10, 4000)
            out.append(rec)
        meta = SessionMeta(id=sid, created_ms=created, updated_ms=created)
        for rec in out:
            fold_record(meta, rec)
        data = b"".join(encode_line(r) for r in out)
        meta.messages_bytes = len(data)
        kind = "fresh"
        if stale and i % 20 == 0:
            kind = "missing"
        elif stale and i % 20 == 10:
            kind = "stale"  # killed after more records landed, before the meta caught up
            extra = [dict(out[1], timestamp=stamp(), message={"role": "user", "content": "and the other test too"}),
                     dict(out[-1], timestamp=stamp())]
            data += b"".join(encode_line(r) for r in extra)
        counts[kind] += 1
        total_bytes += len(data)
        d = sessions / sid
        os.mkdir(d, 0o700)
        fd = os.open(d / "messages.jsonl", W, 0o600)
        os.write(fd, data)
        os.close(fd)
        os.utime(d / "messages.jsonl", ns=(t * 1_000_000, t * 1_000_000))  # as if last appended at its last record
        if kind != "missing":
            fd = os.open(d / "meta.json", W, 0o600)
            os.write(fd, encode_pretty(meta.to_json()))
            os.close(fd)
        if kind != "fresh":
            damage.append([sid, None if kind == "missing" else encode_pretty(meta.to_json()).decode("utf-8")])
    (project.parent / "damage.json").write_text(json.dumps(damage))
    return {"sessions": n, "counts": counts, "transcript_bytes": total_bytes}


def redamage(project: Path) -> int:
    """Put back the missing and lagging meta.json files a listing has since written back; how many it fixed."""
    damage = json.loads((project.parent / "damage.json").read_text())
    sessions = project / ".evo-agent" / "sessions"
    changed = 0
    for sid, meta in damage:
        path = sessions / sid / "meta.json"
        if meta is None:
            try:
                path.unlink()
                changed += 1
            except FileNotFoundError:
                pass
        elif path.read_text(encoding="utf-8") != meta:
            tmp = path.with_name("meta.json.bench-tmp")
            tmp.write_text(meta, encoding="utf-8")
            os.replace(tmp, path)
            changed += 1
    return changed


def session_tree(cache: Path, n: int, stale: bool, scratch: Path) -> tuple[Path, dict]:
    d = cache / f"list-v{LIST_GEN_VERSION}" / f"{n}-{'stale10' if stale else 'fresh'}"
    info_path = d / "info.json"
    if info_path.exists():
        return d / "project", json.loads(info_path.read_text())
    if d.exists():
        shutil.rmtree(d)
    log(f"generating {n:,} sessions ({'10% missing/stale meta' if stale else 'fresh meta'}) in {d} ...")
    t0 = time.perf_counter()
    info = generate_sessions(d / "project", n, stale, scratch)
    info["generated_s"] = time.perf_counter() - t0
    info_path.write_text(json.dumps(info))
    log(f"  done in {info['generated_s']:.1f} s")
    return d / "project", info


def picker_row(created_ms: int, tokens: int, first_prompt: str | None, width: int = 100) -> str:
    """A picker row as SPEC §5 draws it: `2026-05-31 19:58  tokens=12,450  「fix the flaky…」`."""
    when = datetime.fromtimestamp(created_ms / 1000).strftime("%Y-%m-%d %H:%M")
    head = f"{when}  tokens={tokens:,}  "
    text = first_prompt or "(no prompt)"
    room = max(10, width - len(head) - 2)
    if len(text) > room:
        text = text[: room - 1] + "…"
    return f"{head}「{text}」"


def seed_list(project: str) -> list[dict]:
    """The seed's listing: read every meta.json with stdlib json, newest update first."""
    base = os.path.join(project, ".evo-agent", "sessions")
    rows = []
    for name in os.listdir(base):
        try:
            with open(os.path.join(base, name, "meta.json"), encoding="utf-8") as f:
                rows.append(json.load(f))
        except (OSError, ValueError):
            continue  # the seed hides a session whose meta is missing or broken
    rows.sort(key=lambda m: m.get("updated_ms", 0), reverse=True)
    return rows


# --------------------------------------------------------------------------- in the child process

def child_work(spec: dict, out: dict):
    """The call a child times for `spec` (kind "list", every impl but the picker's)."""
    impl = spec["impl"]
    project = spec["project"]
    if impl == "evo":
        from evo_agent.session import SessionStore

        def work():
            rows = SessionStore(project, warn=lambda _: None).list()
            screen = [picker_row(r.meta.created_ms, r.meta.total_tokens, r.meta.first_prompt)
                      for r in rows[:SCREEN_ROWS]]
            out.update(rows=len(rows), screen=len(screen), first=screen[0] if screen else None,
                       ids=[r.id for r in rows[:SCREEN_ROWS]])
    elif impl == "evo_newest":
        from evo_agent.session import SessionStore

        def work():
            rows = SessionStore(project, warn=lambda _: None).newest(SCREEN_ROWS)
            screen = [picker_row(r.meta.created_ms, r.meta.total_tokens, r.meta.first_prompt) for r in rows]
            out.update(rows=len(rows), screen=len(screen), first=screen[0] if screen else None,
                       ids=[r.id for r in rows])
    else:
        def work():
            rows = seed_list(project)
            screen = [picker_row(m["created_ms"], m["total_input_tokens"] + m["total_output_tokens"],
                                 m.get("first_prompt")) for m in rows[:SCREEN_ROWS]]
            out.update(rows=len(rows), screen=len(screen))
    return work


# --------------------------------------------------------------------------- the benchmark

LIST_IMPLS = ("evo", "evo_newest", "picker", "seed")


def bench_list(counts: list[int], repeats: int, cache: Path, scratch: Path) -> dict:
    """Three states per size: fresh metas; 10% damaged, first listing (re-damaged before every run,
    so each one rebuilds and writes back); 10% damaged, listed again (the write-back already done)."""
    rows = []
    impls = LIST_IMPLS
    for n in counts:
        reps = repeats if n <= 10000 else max(3, repeats // 2)
        for state in ("fresh", "stale-first", "stale-again"):
            stale = state != "fresh"
            project, info = session_tree(cache, n, stale, scratch)
            row = {"sessions": n, "stale": stale, "state": state, "info": info}
            if stale:
                redamage(project)
            if state == "stale-again":
                run_child({"kind": "list", "impl": "evo", "project": str(project)})  # the first listing writes back

            def prepare(damage=state == "stale-first", project=project) -> None:
                if damage:
                    redamage(project)
                os.sync()  # no dirty metas from the last run or the re-damage left to flush during the next

            for impl in impls:
                row[impl] = measure({"kind": "list", "impl": impl, "project": str(project)}, reps, prepare=prepare)
            assert row["evo"]["rows"] == n, (row["evo"]["rows"], n)
            assert row["evo_newest"]["ids"] == row["evo"]["ids"], "newest(30) is not the top of list()"
            if "picker" in row:
                assert row["picker"]["rows"] == n and row["picker"]["ids"] == row["evo"]["ids"][:len(row["picker"]["ids"])]
            rows.append(row)
            log(f"list {n:,} {state}: " + ", ".join(f"{impl} {fmt_ms(row[impl]['wall_s'])}" for impl in impls)
                + (f" (picker whole list {fmt_ms(row['picker']['all_s'])})" if "picker" in row else ""))
    return {"rows": rows}


# --------------------------------------------------------------------------- report

def rows_at_largest(lst: dict) -> tuple[dict[str, dict], int, str]:
    """The three states' rows at the largest count up to 10,000 (the target's), that count, and a note
    when it is not 10,000 (quick and smoke runs)."""
    at = {r["state"]: r for r in lst["rows"] if r["sessions"] == max(x["sessions"] for x in lst["rows"]
                                                                  if x["sessions"] <= 10000)}
    n = at["fresh"]["sessions"]
    note = "" if n == 10000 else f" (at {n:,} sessions: 10,000 only in the quick and full runs)"
    return at, n, note


def verdicts(lst: dict) -> list[dict]:
    """SPEC §8's listing row: the verdict, what was measured and why."""
    out = []
    at, n, note = rows_at_largest(lst)
    fresh, first, again = at["fresh"], at["stale-first"], at["stale-again"]
    worst = max(r["evo_newest"]["wall_s"] for r in at.values())
    why = (f"The first screen is `SessionStore.newest(30)`: one scandir and one stat per session "
           f"(the transcript's mtime), a sort, then meta.json for only as many sessions as can still beat "
           f"the 30th row (a record is stamped before it is appended, so a session's last update is never "
           f"later than its transcript's mtime, give or take a 2 s slack and any clock skew it has seen). "
           f"{fmt_ms(fresh['evo_newest']['wall_s'])} with fresh metas, "
           f"{fmt_ms(first['evo_newest']['wall_s'])} on the first listing after 10% of meta.json went missing "
           f"or stale, {fmt_ms(again['evo_newest']['wall_s'])} on the next. The whole exact `list()` (what "
           f"`sessions list` and typing-to-filter use) reads every meta.json: "
           f"{fmt_ms(fresh['evo']['wall_s'])} fresh, {fmt_ms(first['evo']['wall_s'])} on the first listing "
           f"after the damage (it rebuilds {first['info']['counts']['missing'] + first['info']['counts']['stale']:,}"
           f" metas from their transcripts and writes them back, atomically, through unique temp names, "
           f"never following a symlink or writing into another user's directory), "
           f"{fmt_ms(again['evo']['wall_s'])} after it: a stale meta costs once, not on every listing. "
           f"The seed reads every meta.json with stdlib json: {fmt_ms(fresh['seed']['wall_s'])}, and it hides "
           f"sessions whose meta.json is missing. Where the mtimes say nothing (a copy of the project that did "
           f"not keep them), `newest` finds that out as it goes and reads every meta, as `list()` does.")
    out.append({"target": "list 10,000 sessions, sorted, first screen < 250 ms",
                "measured": f"first screen {fmt_ms(fresh['evo_newest']['wall_s'])}{spread(fresh['evo_newest'])}; "
                            f"10% meta missing/stale: {fmt_ms(first['evo_newest']['wall_s'])} first listing, "
                            f"{fmt_ms(again['evo_newest']['wall_s'])} after (whole `list()`: "
                            f"{fmt_ms(fresh['evo']['wall_s'])} / {fmt_ms(first['evo']['wall_s'])} / "
                            f"{fmt_ms(again['evo']['wall_s'])}){note}",
                "met": (worst < 0.25) if n == 10000 else (None if worst < 0.25 else False),
                "why": why, "case": {"kind": "list", "impl": "evo_newest", "project": first["project"]}})
    return out


def render(lst: dict) -> list[str]:
    """The listing table: first screen, picker first paint, whole list and the seed, per size and state."""
    lines: list[str] = []
    add = lines.append
    add("## Listing: first screen, picker first paint, whole list\n")
    add("Each cell: median wall time in a fresh child process (warm page and dentry cache), ratio to the "
        "whole `list()`. *10% stale*: 5% of sessions have no meta.json, 5% a meta.json that lags the "
        "transcript; *first listing* puts that damage back before every run, so each run rebuilds and "
        "writes back; *listed again* measures after one listing wrote the metas back. Every row checks that "
        "`newest(30)` and the picker's first rows are exactly the first rows of `list()`.\n")
    add("| sessions | meta.json | **first screen** `newest(30)` + 30 rows | **picker first paint** (prompt_toolkit) | "
        "picker: whole list loaded | whole `list()` + 30 rows | seed: read every meta.json (stdlib json) "
        "| rows listed evo / seed |")
    add("|---|---|---|---|---|---|---|---|")
    label = {"fresh": "fresh", "stale-first": "10% missing/stale, first listing",
             "stale-again": "10% missing/stale, listed again"}
    for row in lst["rows"]:
        e, m, s_ = row["evo"], row["evo_newest"], row["seed"]
        pk = row.get("picker")
        ratio = lambda r, e=e: f"({r['wall_s'] / e['wall_s']:,.2f}×)"  # noqa: E731
        add(f"| {row['sessions']:,} | {label[row['state']]} | {fmt_ms(m['wall_s'])} {ratio(m)} | "
            + (f"{fmt_ms(pk['wall_s'])} {ratio(pk)} | {fmt_ms(pk['all_s'])} | " if pk else "— | — | ")
            + f"{fmt_ms(e['wall_s'])}, +{fmt_mib(e['rss_growth'])} | "
            f"{fmt_ms(s_['wall_s'])}, +{fmt_mib(s_['rss_growth'])} {ratio(s_)} | {e['rows']:,} / {s_['rows']:,} |")
    add("")

    return lines
