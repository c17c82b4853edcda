#!/usr/bin/env python3
"""MCP servers at start-up (SPEC §8, §13): launch → the first model request, with and without servers.

    python benchmarks/mcp.py             5 interleaved runs per row
    python benchmarks/mcp.py --runs 3

`evo-agent -p hi` against benchmarks/startup.py's loopback fake, in a fresh HOME whose
`~/.config/evo-agent/mcp.json` configures:

- no server;
- two stdio servers written on the official SDK (tests/tools/mcp_test_server.py, a Python process each):
  the first request waits until both are connected (initialize, tools/list), since a session's tool list
  is fixed at its first request (SPEC §12);
- two servers of which one fails at once (a command that does not exist): the failure costs nothing;
- `--help` with the two servers configured: servers start lazily, so it must cost what it costs without.

The clock starts before the spawn and stops when the fake has read the first request's headers (or at the
exit for `--help`). Rows are interleaved so load on the shared machine hits all alike; medians with range.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.startup import Fake, _base_env, run_once  # noqa: E402

SERVER = str(ROOT / "tests" / "tools" / "mcp_test_server.py")


def _servers(kind: str) -> dict:
    one = {"command": sys.executable, "args": [SERVER]}
    if kind == "none":
        return {}
    if kind == "two":
        return {"first": one, "second": one}
    return {"first": one, "broken": {"command": "/nonexistent/mcp-server"}}


def _home(work: Path, kind: str) -> Path:
    home = work / f"home-{kind}"
    config = home / ".config" / "evo-agent"
    config.mkdir(parents=True, exist_ok=True)
    (config / "mcp.json").write_text(json.dumps({"mcpServers": _servers(kind)}))
    return home


def _env(home: Path, fake: Fake) -> dict:
    env = _base_env(home)
    env.update(ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="bench-key", EVO_AGENT_PROVIDER="anthropic",
               XDG_CONFIG_HOME=str(home / ".config"), XDG_STATE_HOME=str(home / ".local" / "state"))
    return env


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    script = Path(sys.executable).parent / "evo-agent"
    exe = [str(script)] if script.exists() else [sys.executable, "-m", "evo_agent.cli"]
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "src")], capture_output=True)
    fake = Fake()
    rows = {"-p hi, no server": ("none", "p"), "-p hi, two stdio servers (SDK)": ("two", "p"),
            "-p hi, one server + one failing": ("broken", "p"), "--help, no server": ("none", "help"),
            "--help, two stdio servers": ("two", "help")}
    times: dict[str, list[float]] = {name: [] for name in rows}
    with tempfile.TemporaryDirectory(prefix="evo-mcp-bench-") as tmp:
        work = Path(tmp)
        project = work / "project"
        project.mkdir()
        homes = {kind: _home(work, kind) for kind in ("none", "two", "broken")}
        for run in range(args.runs + 1):  # the first round warms the caches and is not counted
            for name, (kind, what) in rows.items():
                env = _env(homes[kind], fake)
                if what == "p":
                    result = run_once([*exe, "-p", "hi"], env, project, fake, timeout=120)
                    took = result["first_request_s"]
                    if took is None:
                        print(f"{name}: no request ({result['err'][-300:]})", file=sys.stderr)
                        continue
                else:
                    t0 = time.monotonic()
                    subprocess.run([*exe, "--help"], env=env, cwd=project, capture_output=True, timeout=60)
                    took = time.monotonic() - t0
                if run:
                    times[name].append(took)
    fake.stop()
    print(f"| launch → first request (median of {args.runs}, range) | ms |")
    print("|---|---|")
    base = statistics.median(times["-p hi, no server"]) if times["-p hi, no server"] else None
    for name, values in times.items():
        if not values:
            print(f"| {name} | (no run) |")
            continue
        med = statistics.median(values)
        extra = f" (+{(med - base) * 1000:.0f} ms)" if base is not None and name.startswith("-p") and med > base else ""
        print(f"| {name} | {med * 1000:.0f} ({min(values) * 1000:.0f}–{max(values) * 1000:.0f}){extra} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
