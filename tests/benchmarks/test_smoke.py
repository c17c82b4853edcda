"""The benchmark script runs end to end on tiny sizes (the numbers themselves are never tested)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

RUN = Path(__file__).resolve().parents[2] / "benchmarks" / "run.py"
RESULTS = RUN.with_name("RESULTS.md")


def test_smoke_run_prints_the_table_and_leaves_results_alone(tmp_path):
    before = RESULTS.read_bytes() if RESULTS.exists() else None
    out = tmp_path / "smoke.md"
    proc = subprocess.run(
        [sys.executable, str(RUN), "--smoke", "--out", str(out), "--cache", str(tmp_path / "cache")],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    for heading in ("## Verdicts", "## Append", "## Resume", "## Listing", "## Method"):
        assert heading in proc.stdout, heading
    assert "Recorder.user()" in proc.stdout
    assert "picker first paint" in proc.stdout and "pending" not in proc.stdout
    assert "1 MiB none" in proc.stdout and "| 50 | fresh |" in proc.stdout
    assert "| 50 | 10% missing/stale, first listing |" in proc.stdout
    assert out.read_text(encoding="utf-8").strip() == proc.stdout.strip()
    after = RESULTS.read_bytes() if RESULTS.exists() else None
    assert after == before, "a smoke run must never overwrite benchmarks/RESULTS.md"


def test_startup_smoke_run_prints_the_table(tmp_path):
    script = RUN.with_name("startup.py")
    proc = subprocess.run(
        [sys.executable, str(script), "--smoke", "--cache", str(tmp_path / "cache"), "--out", str(tmp_path / "s.md")],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "## Start-up: launch to the first model request" in proc.stdout
    row = next(line for line in proc.stdout.splitlines() if line.startswith("| evo-agent"))
    assert row.count(" ms") >= 2 and "no request" not in row, row
    assert (tmp_path / "s.md").read_text(encoding="utf-8").strip() == proc.stdout.strip()


def test_oversize_smoke_run_prints_the_table(tmp_path):
    script = RUN.with_name("oversize.py")
    proc = subprocess.run(
        [sys.executable, str(script), "--smoke", "--cache", str(tmp_path / "cache"), "--out", str(tmp_path / "o.md")],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "## Oversized history: resume of 6 MiB with no compaction" in proc.stdout
    row = next(line for line in proc.stdout.splitlines() if line.startswith("| evo-agent"))
    assert "exit 0: ok" in row and "source untouched" in row, row
    assert (tmp_path / "o.md").read_text(encoding="utf-8").strip() == proc.stdout.strip()


def test_readonly_sandbox_benchmark_prints_its_table():
    script = RUN.with_name("readonly_sandbox.py")
    proc = subprocess.run([sys.executable, str(script), "--calls", "2", "--files", "5"], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "plan in the read-only sandbox" in proc.stdout and "| `git status` |" in proc.stdout


def test_cost_smoke_run_prints_the_table(tmp_path):
    """benchmarks/cost.py with evo-agent alone for 3 turns: the table, and every request valid for the fake."""
    script = RUN.with_name("cost.py")
    proc = subprocess.run([sys.executable, str(script), "--turns", "3", "--no-claude"], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Claude Code skipped: not asked for (--no-claude)" in proc.stdout
    row = next(line for line in proc.stdout.splitlines() if line.startswith("| evo-agent | 3 turns"))
    assert "| 6 | $" in row and "| 5/5 |" in row, row  # every request reads all it shares with the one before
    assert "refused by the fake" not in proc.stdout
