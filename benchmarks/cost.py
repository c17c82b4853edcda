#!/usr/bin/env python3
"""What a session costs in dollars with the prompt cache priced as documented: evo-agent beside Claude Code.

    python benchmarks/cost.py                  the 20-turn and the 60-turn sessions, both agents
    python benchmarks/cost.py --turns 3 --no-claude     a quick look (tests/benchmarks runs this)

One loopback fake of the Messages API (tests/fake_model_server.py) answers both agents the same way and
prices every request with tests/prompt_cache.py, which models the cache as the API documents it:
breakpoints (`cache_control`), the 20-block lookback, the minimum cacheable length (1024 tokens; 2048
for Haiku), the 5-minute lifetime, and prefix matching by the exact bytes of tools + system + messages
up to a breakpoint. Tokens are bytes / 4 for both. Dollars are list prices (agent/pricing.py: Claude
Sonnet 4, $3 in, $15 out; cache writes 1.25x input for 5 minutes, 2x for 1 hour; reads 0.1x), each
request at its own model's price (Claude Code's side calls to a Haiku model at Haiku's).

The sessions (each turn: a prompt naming a 4 KB file, the model `cat`s it with the agent's shell
tool, then answers):

- 20 turns in one process;
- 60 turns: 30 in one process, then a resume (`--continue`) within the cache's lifetime and 30 more.
  evo-agent compacts on its own (EVO_AGENT_COMPACT_CHARS, default 50,000 characters); Claude Code
  does what it does by itself.

Per agent: dollars, the ratio to Claude Code, and the share of each request's input read from the
cache (`cache_read / (input + cache_write + cache_read)`): its median and minimum after the first
request, how many requests after the first read at least 80%, and the first request after the
resume. Requests below 80% are listed with what they were (a summary call, the first after a
compaction, an early turn whose new tool output is over a fifth of a short prompt).

Claude Code is installed with npm into --cache (`npm install @anthropic-ai/claude-code`, its native
binary ships in a registry package); where that fails its rows say why and evo-agent runs alone.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import benchmarks  # noqa: F401 - puts this work tree's src/ and tests/ on sys.path
from evo_agent.agent.compaction import IN_PLACE_PREAMBLE
from evo_agent.agent.pricing import price_of
from tests.fake_model_server import FakeModelServer, reply, text, tool_use
from tests.prompt_cache import PromptCache, prompt_units

MODEL = "claude-sonnet-4-20250514"
FILE_BYTES = 4096
FILE_NAME = re.compile(r"data\d+\.txt")
SUMMARY_TEXT = ("Goal: read the data files one by one and say what each holds. Done so far: every file "
                "asked about was read with cat and described. Remaining work: answer the next question. ") * 6


# --------------------------------------------------------------------------- the fake's answers

def _text_of(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text")


def _has_result(message: dict) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)


def is_summary_call(body: dict) -> bool:
    """evo-agent's compaction call: in place (the conversation, then the instruction) or flattened without tools."""
    last = (body.get("messages") or [{}])[-1]
    content = last.get("content")
    final = content[-1] if isinstance(content, list) and content else {"text": content}
    if isinstance(final, dict) and str(final.get("text") or "").startswith(IN_PLACE_PREAMBLE):
        return True
    return not body.get("tools") and "summar" in json.dumps(body.get("system", ""))[:2000].lower()


def answer(body: dict):
    """The same script for every agent: cat the file the prompt names, then answer; summaries when asked."""
    tools = {t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)}
    messages = body.get("messages") or [{}]
    last = messages[-1]
    if is_summary_call(body) or not tools:  # a summary call, or a peer's side call (a title, a check)
        blocks = [text(SUMMARY_TEXT if is_summary_call(body) else "Reading data files")]
    elif _has_result(last):
        name = (FILE_NAME.findall(json.dumps(messages[-2:])) or ["the file"])[0]
        blocks = [text(f"{name} holds 4 KB of numbered lorem-ipsum lines; nothing in it needs changing.")]
    else:
        name = (FILE_NAME.findall(_text_of(last)) or ["data01.txt"])[-1]
        shell = "Bash" if "Bash" in tools else "bash"
        args = {"command": f"cat {name}"}
        if shell == "Bash":
            args["description"] = f"Show {name}"
        blocks = [text(f"Reading {name}."), tool_use(shell, args)]
    out = max(1, len(json.dumps(blocks)) // 4)
    return reply(*blocks, usage={"output_tokens": out})


# --------------------------------------------------------------------------- one agent's session

@dataclass
class Run:
    agent: str
    scenario: str
    requests: list[dict] = field(default_factory=list)  # per request: model, usage, write weight, kind
    resume_at: int | None = None  # index of the first request after the resume
    note: str = ""

    def dollars(self) -> float:
        return sum(request_dollars(r) for r in self.requests)


def shared_tokens(before: list[bytes], after: list[bytes]) -> int:
    """The tokens of the longest run of blocks two requests begin with (what the later one could read)."""
    size = 0
    for a, b in zip(before, after):
        if a != b:
            break
        size += len(a)
    return size // 4


def request_dollars(r: dict) -> float:
    price = price_of(r["model"]) or price_of(MODEL)
    return (r["input_tokens"] * price.input + r["cache_write_weight"] * price.input
            + r["cache_read_input_tokens"] * price.cache_read + r["output_tokens"] * price.output) / 1e6


def read_share(r: dict) -> float:
    sent = r["input_tokens"] + r["cache_creation_input_tokens"] + r["cache_read_input_tokens"]
    return r["cache_read_input_tokens"] / sent if sent else 0.0


def make_project(root: Path, turns: int) -> Path:
    project = root / "project"
    project.mkdir(parents=True)
    for n in range(1, turns + 1):
        lines, i = [], 0
        while sum(len(line) for line in lines) < FILE_BYTES:
            i += 1
            lines.append(f"{n:02d}.{i:03d} lorem ipsum dolor sit amet, consectetur adipiscing elit\n")
        (project / f"data{n:02d}.txt").write_text("".join(lines)[:FILE_BYTES])
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    return project


def prompts(turns: int) -> list[str]:
    return [f"Turn {n}: what is in data{n:02d}.txt? Read it and tell me in one sentence." for n in range(1, turns + 1)]


def clean_env(home: Path, server: FakeModelServer) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "EVO_AGENT_", "CLAUDE"))}
    env.update(HOME=str(home), NO_COLOR="1", TERM="dumb", ANTHROPIC_BASE_URL=server.base_url,
               ANTHROPIC_API_KEY="bench-key")
    return env


def evo_part(project: Path, env: dict, lines: list[str], resume: bool) -> str:
    """evo-agent's line REPL reading the prompts from stdin, one after another, in one process."""
    command = [sys.executable, "-m", "evo_agent.cli", "--plain", "--permission-mode", "bypass", "--model", MODEL]
    if resume:
        command.append("--continue")
    src = str(Path(__file__).resolve().parent.parent / "src")  # the child runs this work tree, as the parent does
    child_env = {**env, "EVO_AGENT_PROVIDER": "anthropic",
                 "PYTHONPATH": os.pathsep.join(p for p in (src, env.get("PYTHONPATH", "")) if p)}
    proc = subprocess.run(command, cwd=project, env=child_env,
                          input="".join(line + "\n" for line in lines), capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        raise RuntimeError(f"evo-agent exited {proc.returncode}: {proc.stderr[-400:]}")
    return proc.stderr


def claude_part(exe: Path, project: Path, env: dict, lines: list[str], resume: bool) -> None:
    """Claude Code in print mode reading one user message at a time (stream-json), the next after each result."""
    command = [str(exe), "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
               "--model", MODEL, "--allowedTools", "Bash(cat:*)"]
    if resume:
        command.append("--continue")
    env = {**env, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1",
           "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1"}
    proc = subprocess.Popen(command, cwd=project, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    err: list[str] = []
    threading.Thread(target=lambda: err.extend(proc.stderr), daemon=True).start()
    try:
        for line in lines:
            message = {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": line}]}}
            proc.stdin.write(json.dumps(message) + "\n")
            proc.stdin.flush()
            for out in proc.stdout:
                if out.startswith("{") and json.loads(out).get("type") == "result":
                    break
            else:
                raise RuntimeError(f"Claude Code stopped: {''.join(err)[-400:]}")
        proc.stdin.close()
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()


def run_session(agent: str, exe: Path | None, server: FakeModelServer, turns: int, resume_after: int | None,
                work: Path, extra_env: dict | None = None) -> Run:
    scenario = f"{turns} turns" + (f", resumed after {resume_after}" if resume_after else "")
    label = agent + "".join(f" {k}={v}" for k, v in (extra_env or {}).items())
    run = Run(label, scenario)
    root = Path(tempfile.mkdtemp(prefix="cost-", dir=work))
    home = root / "home"
    home.mkdir()
    project = make_project(root, turns)
    env = {**clean_env(home, server), **(extra_env or {})}
    server.prompt_cache = PromptCache()
    server.validate = agent == "evo-agent"  # our requests must pass the API's rules; a peer's are its own business
    start = len(server.log)
    parts = [prompts(turns)] if not resume_after else [prompts(turns)[:resume_after], prompts(turns)[resume_after:]]
    for index, lines in enumerate(parts):
        if index:
            run.resume_at = sum(1 for e in server.log[start:] if e.get("answer") == "message")
        if agent == "evo-agent":
            evo_part(project, env, lines, resume=bool(index))
        else:
            claude_part(exe, project, env, lines, resume=bool(index))
    entries = [e for e in server.log[start:] if e.get("answer") == "message"]
    invalid = [e for e in server.log[start:] if not e.get("valid")]
    if invalid:
        run.note = f"{len(invalid)} requests refused by the fake: {invalid[0].get('error')}"
    charges = {id(c["body"]): c for c in server.prompt_cache.log}
    previous: list[bytes] = []
    since_summary = None
    for entry in entries:
        body = entry["body"]
        charged = {k: v for k, v in charges[id(body)].items() if k != "body"}
        units = [u.data for u in prompt_units(body)]
        kind = "turn"
        if is_summary_call(body):
            kind = "summary call (in place)" if body.get("tools") else "summary call (flattened, no tools)"
            since_summary = 0
        elif not body.get("tools"):
            kind = "side call (no tools)"
        elif since_summary is not None and since_summary < 3:
            since_summary += 1
            kind = f"request {since_summary} after a compaction"
        run.requests.append({**charged, "output_tokens": entry["usage"]["output_tokens"], "kind": kind,
                             "shared_tokens": shared_tokens(previous, units)})
        previous = units
    shutil.rmtree(root, ignore_errors=True)
    return run


# --------------------------------------------------------------------------- Claude Code

def install_claude(cache: Path) -> tuple[Path | None, str]:
    """The native Claude Code binary from npm (its per-platform package), or (None, why not)."""
    prefix = cache / "npm-claude"
    found = sorted(prefix.glob("node_modules/@anthropic-ai/claude-code-linux-*/claude"))
    if not found:
        npm = shutil.which("npm")
        if npm is None:
            return None, "npm is not installed"
        prefix.mkdir(parents=True, exist_ok=True)
        try:
            proc = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix", str(prefix),
                                   "@anthropic-ai/claude-code"], capture_output=True, text=True, timeout=600)
        except subprocess.TimeoutExpired:
            return None, "npm install timed out"
        if proc.returncode != 0:
            return None, "npm install failed: " + " ".join(proc.stderr.split())[-200:]
        found = sorted(prefix.glob("node_modules/@anthropic-ai/claude-code-linux-*/claude"))
    if not found:
        return None, "the npm package holds no native binary for this platform"
    exe = found[0]
    try:
        version = subprocess.run([str(exe), "--version"], capture_output=True, text=True, timeout=60).stdout.strip()
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"Claude Code does not start: {exc}"
    return exe, version


# --------------------------------------------------------------------------- the report

def summary_row(run: Run, reference: Run | None) -> list[str]:
    shares = [read_share(r) for r in run.requests]
    after = shares[1:]
    ratio = f"{run.dollars() / reference.dollars():.2f}x" if reference and reference.dollars() else "-"
    resumed = f"{shares[run.resume_at]:.0%}" if run.resume_at is not None and run.resume_at < len(shares) else "-"
    could = [r for r in run.requests[1:] if r["shared_tokens"]]
    reread = sum(r["cache_read_input_tokens"] >= r["shared_tokens"] for r in could)
    return [run.agent, run.scenario, str(len(shares)), f"${run.dollars():.4f}", ratio,
            f"{statistics.median(after):.0%}" if after else "-", f"{min(after):.0%}" if after else "-",
            f"{sum(s >= 0.8 for s in after)}/{len(after)}", f"{reread}/{len(could)}", resumed]


def below_target(run: Run) -> list[str]:
    """The requests after the first that read under 80% from the cache, grouped by what they were."""
    groups: dict[str, list[str]] = {}
    for i, r in enumerate(run.requests[1:], start=2):
        if read_share(r) < 0.8:
            groups.setdefault(r["kind"], []).append(f"#{i} {read_share(r):.0%}")
    return [f"{kind}: {', '.join(items)}" for kind, items in groups.items()]


def table(head: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--turns", type=int, nargs="*", default=[20, 60], help="session lengths (default 20 60)")
    ap.add_argument("--no-claude", action="store_true", help="evo-agent only")
    ap.add_argument("--cache", default="/tmp/evo-agent-bench-cache", help="where npm installs Claude Code")
    ap.add_argument("--json", help="also write every request's figures here")
    ap.add_argument("--evo-env", action="append", default=[], metavar="NAME=VALUE",
                    help="another evo-agent row with this environment (e.g. EVO_AGENT_COMPACT_CHARS=200000)")
    args = ap.parse_args(argv)
    load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    exe, claude_version = (None, "not asked for (--no-claude)") if args.no_claude else install_claude(Path(args.cache))
    if exe is None:
        print(f"Claude Code skipped: {claude_version}")
    work = Path(tempfile.mkdtemp(prefix="evo-cost-"))
    runs: list[Run] = []
    with FakeModelServer() as server:
        server.default = answer
        for turns in args.turns:
            resume_after = turns // 2 if turns > 20 else None
            variants = [("evo-agent", None)] + [("evo-agent", dict([e.split("=", 1)])) for e in args.evo_env]
            if exe:
                variants.append(("Claude Code", None))
            for agent, extra in variants:
                started = time.monotonic()
                try:
                    runs.append(run_session(agent, exe, server, turns, resume_after, work, extra))
                except (RuntimeError, subprocess.SubprocessError, OSError) as exc:
                    print(f"{agent}, {turns} turns: failed: {exc}")
                    continue
                print(f"{agent}, {turns} turns: {len(runs[-1].requests)} requests in "
                      f"{time.monotonic() - started:.0f} s", file=sys.stderr)
    shutil.rmtree(work, ignore_errors=True)
    rows = []
    for run in runs:
        reference = next((r for r in runs if r.agent == "Claude Code" and r.scenario == run.scenario), None)
        rows.append(summary_row(run, reference))
    print(f"load average at start: {load}; Claude Code: {claude_version}")
    print(table(["agent", "session", "requests", "dollars", "vs Claude Code", "read share (median after #1)",
                 "min after #1", ">= 80% after #1", "read all it shares with the one before",
                 "first after resume"], rows))
    for run in runs:
        for line in below_target(run):
            print(f"- {run.agent}, {run.scenario}, under 80%: {line}")
        if run.note:
            print(f"- {run.agent}, {run.scenario}: {run.note}")
    if args.json:
        Path(args.json).write_text(json.dumps([run.__dict__ for run in runs], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
