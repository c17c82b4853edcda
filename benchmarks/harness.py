"""The shared harness: fresh child processes, timing, peak-RSS measurement, formatting and Markdown tables.

Every benchmark here prints Markdown tables of medians and ratios measured in one run; this module is
what they share, so a number is measured and printed the same way everywhere.
"""

from __future__ import annotations

import gc
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from datetime import datetime
from importlib import metadata
from pathlib import Path

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
FL_APPEND = os.O_WRONLY | os.O_APPEND | os.O_CREAT
RUN = Path(__file__).resolve().with_name("run.py")  # what a child process runs (`--child SPEC`)
WARMUP = True  # one discarded run before the measured ones (run.py turns it off outside the full mode)
DEFAULT_CACHE = "/tmp/evo-agent-bench-cache"



# --------------------------------------------------------------------------- numbers and text

def median(values):
    return statistics.median(values) if values else float("nan")


def fmt_us(seconds: float) -> str:
    us = seconds * 1e6
    if us >= 10000:
        return f"{us / 1000:,.1f} ms"
    return f"{us:,.1f} µs" if us < 100 else f"{us:,.0f} µs"


def fmt_ms(seconds: float) -> str:
    ms = seconds * 1000
    if ms >= 10000:
        return f"{ms / 1000:,.1f} s"
    return f"{ms:,.1f} ms" if ms < 100 else f"{ms:,.0f} ms"


def fmt_ratio(r: float) -> str:
    return f"{r:,.0f}×" if r >= 10 else f"{r:.2f}×"


def fmt_mib(nbytes: float) -> str:
    return f"{nbytes / MiB:,.1f} MiB"


def fmt_size(nbytes: int) -> str:
    if nbytes >= GiB and nbytes % GiB == 0:
        return f"{nbytes // GiB} GiB"
    if nbytes >= MiB:
        return f"{nbytes / MiB:g} MiB"
    return f"{nbytes / KiB:g} KiB"


def parse_size(text: str) -> int:
    text = text.strip().upper().rstrip("B").rstrip("I")
    mult = {"K": KiB, "M": MiB, "G": GiB}.get(text[-1:], 1)
    return int(float(text[:-1] if mult != 1 else text) * mult)


def parse_count(text: str) -> int:
    text = text.strip().lower().replace(",", "").replace("_", "")
    mult = {"k": 1000, "m": 1000_000}.get(text[-1:], 1)
    return int(float(text[:-1] if mult != 1 else text) * mult)


def log(msg: str, tag: str = "bench") -> None:
    """A progress line on stderr, so stdout stays the report."""
    print(f"[{tag} {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def table(head: list[str], rows: Iterable[Iterable[object]], align: str | list[str] = "---") -> list[str]:
    """A Markdown table: the header, the rule (`align`, for every column or one per column, e.g. `---:`
    to right-align), one line per row."""
    aligns = [align] * len(head) if isinstance(align, str) else align
    out = ["| " + " | ".join(head) + " |", "|" + "|".join(aligns) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return out


# --------------------------------------------------------------------------- timing in this process

def median_time(fn: Callable[[], object], calls: int) -> float:
    """Median seconds of one call of `fn` over `calls` calls."""
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def best_time(fn: Callable[[], object], repeats: int = 3) -> tuple[float, object]:
    """The fastest of `repeats` calls (seconds) and what the last call returned."""
    best, out = float("inf"), None
    for _ in range(repeats):
        started = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - started)
    return best, out


def bare_appends(path: str, line: bytes, k: int, fsync: bool = False) -> float:
    """Seconds for `k` bare open(O_APPEND)/write/close of `line`: the floor SPEC §8 measures appends against."""
    t0 = time.perf_counter()
    if fsync:
        for _ in range(k):
            fd = os.open(path, FL_APPEND, 0o600)
            os.write(fd, line)
            os.fsync(fd)
            os.close(fd)
    else:
        for _ in range(k):
            fd = os.open(path, FL_APPEND, 0o600)
            os.write(fd, line)
            os.close(fd)
    return time.perf_counter() - t0


# --------------------------------------------------------------------------- the machine

def machine_info(cache: Path) -> dict:
    cpu = platform.processor() or "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "?"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    except OSError:
        pass
    fs = "?"
    try:
        fs = subprocess.run(["df", "-T", str(cache)], capture_output=True, text=True).stdout.splitlines()[1].split()[1]
    except (OSError, IndexError):
        pass
    fault_us = page_fault_us()
    versions = {}
    for dist in ("evo-agent", "orjson"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = "not installed"
    return {
        "date": datetime.now().astimezone().isoformat(timespec="seconds"),
        "cpu": f"{cpu} × {os.cpu_count()} cores",
        "memory": mem,
        "os": f"{platform.system()} {platform.release()}",
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "sqlite": __import__("sqlite3").sqlite_version,
        "filesystem": f"{fs} ({cache})",
        "page fault": f"{fault_us:.2f} µs per first touch of a fresh 4 KiB page (256 MiB anonymous mapping)",
        "page_fault_us": fault_us,
        "load average": "at start " + " / ".join(f"{x:.2f}" for x in os.getloadavg()),
        "versions": versions,
    }


def page_fault_us() -> float:
    """What the kernel charges for the first touch of a fresh anonymous page (it prices every new object)."""
    import mmap
    n = 256 * MiB
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    m = mmap.mmap(-1, n)
    for i in range(0, n, 4096):
        m[i] = 1
    elapsed = time.perf_counter() - t0
    faults = max(1, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - r0.ru_minflt)
    m.close()
    return elapsed / faults * 1e6


# --------------------------------------------------------------------------- fresh child processes

def run_child(spec: dict, timeout: float = 900) -> dict:
    """Run one measurement in a fresh interpreter; it prints one JSON line."""
    proc = subprocess.run([sys.executable, str(RUN), "--child", json.dumps(spec)],
                          capture_output=True, text=True, timeout=timeout)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"child {spec.get('kind')}/{spec.get('impl')} failed ({proc.returncode}): "
                           f"{(proc.stderr or proc.stdout).strip()[-2000:]}")
    return json.loads(lines[-1])


def _status_kib(field: str) -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def peak_baseline() -> tuple[int, str]:
    """Reset the peak-RSS counter where Linux allows it, and return the current RSS to measure growth from.

    `echo 5 > /proc/self/clear_refs` resets VmHWM (and so ru_maxrss) to the current RSS, so an
    earlier peak (imports) cannot hide growth. Elsewhere the growth is ru_maxrss after minus before.
    """
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        rss = _status_kib("VmRSS")
        if rss is not None:
            return rss * 1024, "hwm"
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, "maxrss"


def peak_now(how: str) -> int:
    if how == "hwm":
        hwm = _status_kib("VmHWM")
        if hwm is not None:
            return hwm * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux


def warm(path: Path) -> None:
    """Read a file once so the timed runs see a warm page cache."""
    with open(path, "rb", buffering=0) as f:
        while f.read(8 * MiB):
            pass


def drop_cache(path: Path) -> None:
    """Evict one file's pages (POSIX_FADV_DONTNEED) for a cold-cache run; other files are untouched."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def run_measured(work: Callable[[], None], spec: dict, out: dict, gc_off: bool = False) -> None:
    """Run `work` once in this (child) process and print `out` as one JSON line, with wall time, CPU
    time, minor page faults and peak-RSS growth; or, with `spec["profile"]`, a cProfile instead.

    `gc_off` pauses the GC for the call (as the library does while it decodes). A `work` that times
    itself (the picker's first paint) leaves `first_paint_s` in `out`, which becomes the wall time.
    """
    if spec.get("profile"):
        import cProfile
        import io
        import pstats
        prof = cProfile.Profile()
        prof.enable()
        work()
        prof.disable()
        s = io.StringIO()
        pstats.Stats(prof, stream=s).strip_dirs().sort_stats("tottime").print_stats(14)
        out["profile"] = s.getvalue()
    else:
        gc.collect()
        if gc_off:
            gc.disable()  # as the library does while it decodes
        base, how = peak_baseline()
        r0 = resource.getrusage(resource.RUSAGE_SELF)
        t0 = time.perf_counter()
        work()
        out["wall_s"] = out.pop("first_paint_s", None) or (time.perf_counter() - t0)
        r1 = resource.getrusage(resource.RUSAGE_SELF)
        out.update(user_s=r1.ru_utime - r0.ru_utime, sys_s=r1.ru_stime - r0.ru_stime,
                   minor_faults=r1.ru_minflt - r0.ru_minflt)
        out["rss_growth"] = max(0, peak_now(how) - base)
        out["rss_method"] = how
    print(json.dumps(out))




def summarize(runs: list[dict]) -> dict:
    """Medians over runs of one measurement (the last run's other fields kept as they are)."""
    res = dict(runs[-1])
    walls = [r["wall_s"] for r in runs]
    res["wall_s"] = median(walls)
    res["wall_min"], res["wall_max"] = min(walls), max(walls)
    res["rss_growth"] = median([r["rss_growth"] for r in runs])
    for key in ("user_s", "sys_s", "minor_faults", "all_s", "import_s"):
        if key in res:
            res[key] = median([r[key] for r in runs])
    res["n"] = len(runs)
    return res


def measure_interleaved(specs: dict[str, dict], repeats: int, warmup: bool = True) -> dict[str, dict]:
    """Like `measure` for several measurements at once, run in turns (the order flipping each round), so
    that the VM's moods (other work, how dear a page fault is at the moment) hit all of them alike."""
    order = list(specs)
    if warmup and WARMUP:
        for name in order:
            run_child(specs[name])
    runs: dict[str, list[dict]] = {name: [] for name in order}
    for _ in range(repeats):
        for name in order:
            runs[name].append(run_child(specs[name]))
        order = order[::-1]
    return {name: summarize(r) for name, r in runs.items()}


def measure(spec: dict, repeats: int, warmup: bool = True, prepare=None) -> dict:
    """Median wall time and peak-RSS growth over `repeats` fresh children (after one discarded run).

    `prepare()` runs before every child (e.g. to put back damage a listing repaired).
    """
    def one() -> dict:
        if prepare is not None:
            prepare()
        return run_child(spec)

    if warmup and WARMUP:
        one()
    return summarize([one() for _ in range(repeats)])


def spread(r: dict) -> str:
    """` [runs 1.2 ms–1.5 ms, n=7]`: the range of single runs behind a median, when there were several."""
    if "wall_min" not in r or r.get("n", 1) < 2:
        return ""
    return f" [runs {fmt_ms(r['wall_min'])}–{fmt_ms(r['wall_max'])}, n={r['n']}]"


def as_after_the_first_request() -> None:
    """Load orjson as a session does once its first request is on the wire (`session.orjson_after_send`).

    Before that the recorder writes its first values through the stdlib (start-up, issue #30); a bare
    Recorder in a fresh benchmark process would otherwise import orjson (~40 ms) inside a timed append,
    once per process, and every round is a fresh process.
    """
    try:
        from evo_agent.session import orjson_after_send
    except ImportError:  # an older tree (--baseline) loads it at its first record
        return
    orjson_after_send()
