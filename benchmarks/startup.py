#!/usr/bin/env python3
"""Start-up: launch -> the first model request on the wire, evo-agent beside Claude Code and Codex CLI.

    python benchmarks/startup.py                     5 interleaved runs per row, 1 GiB resume transcripts
    python benchmarks/startup.py --resume-mib 100 --runs 3
    python benchmarks/startup.py --smoke             evo-agent only, tiny sizes (tests/benchmarks)

Every program is run against one loopback fake that speaks the Anthropic Messages API
(evo-agent, Claude Code), the OpenAI Responses API (Codex CLI, as a custom model provider in
$CODEX_HOME/config.toml with wire_api = "responses") and Chat Completions. The clock starts
just before the process is spawned and stops when the fake has read the first model request's
headers; both clocks are this process's monotonic clock. Rows:

- `-p hi`, a new session (`claude -p hi`, `codex exec hi`);
- a resume (`--resume ID -p hi`, `claude -p --resume ID hi`, `codex exec resume ID hi`) of a
  transcript of --resume-mib MiB whose last compaction is near its end, written in each
  program's own format (the peers' from a session they recorded themselves, grown with copies
  of its own turns). Peak RSS of the whole process is reported beside the time.

A second table times what needs no model: `--help` (every program) and `sessions list` from
launch to exit, and the interactive app in tmux at 80×24, from launch to its first paint and to
a key typed at launch shown in its prompt (issue #30's targets: `--help` 40 ms, `sessions list`
150 ms, a typed key 250 ms; `-p hi` at most 0.5× the native Codex binary's time).

The peers are installed from npm into --cache (`npm install --prefix DIR @anthropic-ai/claude-code
@openai/codex`); Codex runs twice: through its npm wrapper (node, which starts the native binary)
and as the native binary itself (`node_modules/@openai/codex*/vendor/<triple>/bin/codex`, what a
release tarball or Homebrew installs). Where npm or a peer cannot run, its row says why and the rest runs. Runs are
interleaved (evo, claude, codex, evo, ...) so that load on the shared machine hits all alike;
medians are shown with the range. evo-agent runs from its compiled bytecode, as an installed
package does (one warm-up run first; PYTHONDONTWRITEBYTECODE is cleared for it).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MiB = 1 << 20
MODEL_PATHS = ("/v1/messages", "/v1/responses", "/v1/chat/completions")
PEER_PACKAGES = ("@anthropic-ai/claude-code", "@openai/codex")


# --------------------------------------------------------------------------- the loopback fake

class Fake:
    """Answers every model request with a short streamed "ok" and notes when each one arrived.

    `limits=True` answers as the real Messages API does at its limits (benchmarks/oversize.py): a
    body over MAX_BODY bytes gets 413 `request_too_large` (read and dropped, never held), a prompt
    over CONTEXT_TOKENS (estimated as bytes / 4, also the usage reported) 400 "prompt is too long".
    `answers` holds (path, body bytes, status) of every model request.
    """

    MAX_BODY = 32 * MiB
    CONTEXT_TOKENS = 200_000

    def __init__(self, limits: bool = False) -> None:
        self.arrivals: list[tuple[float, str, int]] = []  # (monotonic time, path, body bytes)
        self.answers: list[tuple[str, int, int]] = []
        self.cond = threading.Condition()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # noqa: ANN002
                pass

            def do_GET(self) -> None:  # noqa: N802 - /v1/models and the like: nothing here
                self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": "not here"}})

            def do_HEAD(self) -> None:  # noqa: N802
                self._json(200, {})

            def do_POST(self) -> None:  # noqa: N802
                arrived = time.monotonic()
                path = self.path.split("?", 1)[0]
                length = int(self.headers.get("Content-Length") or 0)
                too_big = limits and length > fake.MAX_BODY
                body = self._drain(length) if too_big else (self.rfile.read(length) if length else b"")
                if path in MODEL_PATHS:
                    with fake.cond:
                        fake.arrivals.append((arrived, path, length))
                        fake.cond.notify_all()
                status = self._limited(length) if limits and path == "/v1/messages" else None
                if path in MODEL_PATHS:
                    fake.answers.append((path, length, status or 200))
                if status is not None:
                    return
                if path == "/v1/messages":
                    self._messages(body)
                elif path == "/v1/responses":
                    self._responses()
                elif path == "/v1/chat/completions":
                    self._chat()
                elif path.endswith("/count_tokens"):
                    self._json(200, {"input_tokens": max(1, len(body) // 4)})
                else:
                    self._json(200, {})

            def _drain(self, length: int) -> bytes:
                while length > 0:
                    chunk = self.rfile.read(min(length, MiB))
                    if not chunk:
                        break
                    length -= len(chunk)
                return b""

            def _limited(self, length: int) -> int | None:
                """The real API's answer to a request over its limits (413, 400), or None."""
                if length > fake.MAX_BODY:
                    self._json(413, {"type": "error", "error": {
                        "type": "request_too_large", "message": "Request exceeds the maximum allowed number of bytes."}})
                    self.close_connection = True
                    return 413
                tokens = length // 4
                if tokens > fake.CONTEXT_TOKENS:
                    self._json(400, {"type": "error", "error": {
                        "type": "invalid_request_error",
                        "message": f"prompt is too long: {tokens} tokens > {fake.CONTEXT_TOKENS} maximum"}})
                    return 400
                return None

            def _json(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _sse(self, events: list[tuple[str | None, dict | str]]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                out = []
                for name, data in events:
                    text = data if isinstance(data, str) else json.dumps(data)
                    out.append((f"event: {name}\n" if name else "") + f"data: {text}\n\n")
                self.wfile.write("".join(out).encode())
                self.wfile.flush()
                self.close_connection = True

            def _messages(self, raw: bytes) -> None:
                try:
                    model = json.loads(raw).get("model", "claude")
                except ValueError:
                    model = "claude"
                usage = {"input_tokens": max(10, len(raw) // 4) if limits else 10, "output_tokens": 1, "cache_creation_input_tokens": 0,
                         "cache_read_input_tokens": 0}
                message = {"id": "msg_bench", "type": "message", "role": "assistant", "model": model, "content": [],
                           "stop_reason": None, "stop_sequence": None, "usage": usage}
                self._sse([
                    ("message_start", {"type": "message_start", "message": message}),
                    ("content_block_start", {"type": "content_block_start", "index": 0,
                                             "content_block": {"type": "text", "text": ""}}),
                    ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                             "delta": {"type": "text_delta", "text": "ok"}}),
                    ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                    ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn",
                                                                          "stop_sequence": None},
                                       "usage": {"output_tokens": 1}}),
                    ("message_stop", {"type": "message_stop"}),
                ])

            def _responses(self) -> None:
                rid, mid = f"resp_{uuid.uuid4().hex}", f"msg_{uuid.uuid4().hex}"
                item = {"type": "message", "id": mid, "role": "assistant", "status": "completed",
                        "content": [{"type": "output_text", "text": "ok", "annotations": []}]}
                usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 1,
                         "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 11}
                self._sse([
                    ("response.created", {"type": "response.created", "response": {"id": rid, "status": "in_progress"}}),
                    ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0,
                                                    "item": dict(item, status="in_progress", content=[])}),
                    ("response.output_text.delta", {"type": "response.output_text.delta", "item_id": mid,
                                                    "output_index": 0, "content_index": 0, "delta": "ok"}),
                    ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0,
                                                   "item": item}),
                    ("response.completed", {"type": "response.completed",
                                            "response": {"id": rid, "status": "completed", "output": [item],
                                                         "usage": usage}}),
                ])

            def _chat(self) -> None:
                chunk = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 0, "model": "m",
                         "choices": [{"index": 0, "delta": {"role": "assistant", "content": "ok"},
                                      "finish_reason": "stop"}]}
                self._sse([(None, chunk), (None, "[DONE]")])

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request, client_address) -> None:  # noqa: ANN001 - a client hung up: fine
                pass

        self.httpd = Server(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def first_after(self, t0: float, timeout: float) -> tuple[float, str, int] | None:
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for arrival in self.arrivals:
                    if arrival[0] >= t0:
                        return arrival
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self.cond.wait(left)

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


# --------------------------------------------------------------------------- one run

def run_once(cmd: list[str], env: dict, cwd: Path, fake: Fake, timeout: float) -> dict:
    """Spawn, wait for the first model request (the time), then for the exit (the peak RSS)."""
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    arrival = None
    while arrival is None and proc.poll() is None and time.monotonic() - t0 < timeout:
        arrival = fake.first_after(t0, 0.2)  # a program that exits without a request is not waited for
    if arrival is None:
        arrival = fake.first_after(t0, 0.5)
    try:
        out, err = proc.communicate(timeout=60 if arrival else 1)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
    return {
        "first_request_s": (arrival[0] - t0) if arrival else None,
        "request_bytes": arrival[2] if arrival else None,
        "rc": proc.returncode,
        "err": err.decode("utf-8", "replace")[-600:],
        "out": out.decode("utf-8", "replace")[-200:],
    }


def measure_rss(cmd: list[str], env: dict, cwd: Path, timeout: float) -> float | None:
    """Peak RSS (MiB) of one run, read by a throwaway Python that spawns it (ru_maxrss of its child)."""
    code = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], stdin=subprocess.DEVNULL, "
            f"stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout={timeout!r}); "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    try:
        proc = subprocess.run([sys.executable, "-c", code, *cmd], env=env, cwd=cwd, capture_output=True,
                              text=True, timeout=timeout + 10)
        return int(proc.stdout.strip()) / 1024
    except (subprocess.SubprocessError, ValueError, OSError):
        return None


# --------------------------------------------------------------------------- the programs

class Program:
    """One program under test: how to start it new and resumed, in its own sandbox (HOME, config)."""

    name = ""
    available = True
    why_not = ""

    def new_cmd(self) -> list[str]:
        raise NotImplementedError

    def resume_cmd(self) -> list[str]:
        raise NotImplementedError

    def env(self) -> dict:
        raise NotImplementedError


def _base_env(home: Path) -> dict:
    # PYTHONDONTWRITEBYTECODE is dropped: a user's second launch finds every module compiled, and a
    # stale .pyc recompiled on every run (~10 ms for ui/app.py alone) is not what anyone meets.
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "OPENAI_", "EVO_AGENT_", "CLAUDE", "CODEX_"))
           and k != "PYTHONDONTWRITEBYTECODE"}
    env.update(HOME=str(home), NO_COLOR="1", TERM="dumb")
    return env


class Evo(Program):
    name = "evo-agent"

    def __init__(self, work: Path, fake: Fake, resume_bytes: int, cache: Path, variant: str = "tail") -> None:
        self.project = work / "evo-project"
        self.project.mkdir(parents=True, exist_ok=True)
        (work / "evo-home").mkdir(exist_ok=True)
        script = Path(sys.executable).parent / "evo-agent"
        self.exe = [str(script)] if script.exists() else [sys.executable, "-m", "evo_agent.cli"]
        self._env = _base_env(work / "evo-home")
        self._env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed package runs from .pyc files
        self._env.update(ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="bench-key", EVO_AGENT_PROVIDER="anthropic")
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "src")], capture_output=True)
        self.resume_info = self._transcript(resume_bytes, cache, variant)

    def _transcript(self, size: int, cache: Path, variant: str = "tail") -> dict:
        """benchmarks/run.py's transcript of `size` bytes, placed as a session: `tail` has its last
        compaction near the end, `none` has no compaction at all (benchmarks/oversize.py)."""
        sys.path.insert(0, str(ROOT))
        from benchmarks.resume import transcript  # benchmarks/run.py's generator: the same records as the resume rows

        info = transcript(cache, size, variant)
        sid = Path(info["path"]).parent.name
        target = self.project / ".evo-agent" / "sessions" / sid
        target.mkdir(parents=True, exist_ok=True)
        (self.project / ".evo-agent" / "sessions").chmod(0o700)
        target.chmod(0o700)
        link = target / "messages.jsonl"
        if not link.exists():
            os.link(info["path"], link) if _same_fs(Path(info["path"]), target) else shutil.copy(info["path"], link)
        link.chmod(0o600)  # as the recorder writes it: a wider mode marks a session foreign (SPEC §9)
        self.resume_id = sid
        from evo_agent.session import SessionStore

        SessionStore(self.project, warn=lambda line: None).list()  # writes meta.json, as a recorded session has
        return info

    def env(self) -> dict:
        return self._env

    def new_cmd(self) -> list[str]:
        return [*self.exe, "-p", "hi"]

    def resume_cmd(self) -> list[str]:
        return [*self.exe, "--resume", self.resume_id, "-p", "hi"]


def _same_fs(a: Path, b: Path) -> bool:
    try:
        return a.stat().st_dev == b.stat().st_dev
    except OSError:
        return False


def install_peers(cache: Path) -> tuple[Path | None, str]:
    """(node_modules/.bin, "") after `npm install`, or (None, why not)."""
    prefix = cache / "npm-peers"
    bin_dir = prefix / "node_modules" / ".bin"
    if (bin_dir / "claude").exists() and (bin_dir / "codex").exists():
        return bin_dir, ""
    npm = shutil.which("npm")
    if npm is None:
        return None, "npm is not installed"
    prefix.mkdir(parents=True, exist_ok=True)
    try:
        proc = subprocess.run([npm, "install", "--prefix", str(prefix), *PEER_PACKAGES], capture_output=True,
                              text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return None, "npm install timed out (no registry?)"
    if proc.returncode != 0:
        return None, "npm install failed: " + " ".join(proc.stderr.split())[-200:]
    return bin_dir, ""


def _version(exe: Path) -> str:
    try:
        return subprocess.run([str(exe), "--version"], capture_output=True, text=True, timeout=60).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "?"


TZ = UTC


def _iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


class Claude(Program):
    """Claude Code: `claude -p`, sessions in $HOME/.claude/projects/<cwd with / and . as ->/<uuid>.jsonl."""

    name = "Claude Code"

    def __init__(self, bin_dir: Path, work: Path, fake: Fake, resume_bytes: int, boundary: bool = True) -> None:
        self.exe = bin_dir / "claude"
        self.version = _version(self.exe)
        self.home = work / "claude-home"
        self.project = work / "claude-project"
        for d in (self.home, self.project):
            d.mkdir(parents=True, exist_ok=True)
        self._env = _base_env(self.home)
        self._env.update(ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="bench-key",
                         CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_TELEMETRY="1",
                         DISABLE_AUTOUPDATER="1", DISABLE_ERROR_REPORTING="1")
        self.resume_id = self._grow(fake, resume_bytes, boundary)

    def env(self) -> dict:
        return self._env

    def new_cmd(self) -> list[str]:
        return [str(self.exe), "-p", "hi"]

    def resume_cmd(self) -> list[str]:
        return [str(self.exe), "-p", "--resume", self.resume_id, "hi"]

    def _grow(self, fake: Fake, size: int, boundary: bool = True) -> str:
        """A session Claude Code wrote itself, grown to `size` with copies of its turns, then a compaction
        (none when `boundary` is False: the whole history is to be replayed)."""
        sessions = self.home / ".claude" / "projects"
        before = set(sessions.rglob("*.jsonl")) if sessions.exists() else set()
        result = run_once([str(self.exe), "-p", "say hi"], self._env, self.project, fake, 120)
        if result["first_request_s"] is None:
            raise RuntimeError(f"Claude Code sent no request: {result['err'][-300:]}")
        made = sorted(set(sessions.rglob("*.jsonl")) - before, key=lambda p: p.stat().st_mtime)
        if not made:
            raise RuntimeError("Claude Code wrote no session file")
        path = made[-1]
        records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        turn = [r for r in records if r.get("type") in ("user", "assistant")]
        if not turn:
            raise RuntimeError("Claude Code's session holds no messages")
        sid = path.stem
        filler = "x" * 2000
        last_uuid = turn[-1]["uuid"]
        now = datetime.now(TZ) - timedelta(days=1)
        with open(path, "a", encoding="utf-8") as f:
            written = path.stat().st_size
            n = 0
            while written < size:
                for rec in turn:
                    n += 1
                    copy = json.loads(json.dumps(rec))
                    copy["uuid"] = str(uuid.uuid4())
                    copy["parentUuid"] = last_uuid
                    copy["timestamp"] = _iso(now + timedelta(milliseconds=n))
                    message = copy.get("message") or {}
                    if copy["type"] == "user":
                        message["content"] = f"question {n}: {filler}"
                    else:
                        message["content"] = [{"type": "text", "text": f"answer {n}: {filler}"}]
                        message["id"] = f"msg_grow_{n}"
                    line = json.dumps(copy) + "\n"
                    f.write(line)
                    written += len(line)
                    last_uuid = copy["uuid"]
            if not boundary:
                return sid
            common = {k: turn[0][k] for k in ("cwd", "sessionId", "version", "gitBranch", "userType") if k in turn[0]}
            boundary = str(uuid.uuid4())
            f.write(json.dumps({"parentUuid": None, "logicalParentUuid": last_uuid, "isSidechain": False, **common,
                                "type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
                                "isMeta": False, "timestamp": _iso(now + timedelta(seconds=n)), "uuid": boundary,
                                "level": "info", "compactMetadata": {"trigger": "manual", "preTokens": size // 4}}) + "\n")
            f.write(json.dumps({"parentUuid": boundary, "isSidechain": False, **common, "type": "user",
                                "message": {"role": "user", "content": "This session is being continued from a "
                                            "previous conversation. Summary: the user said hi many times."},
                                "isVisibleInTranscriptOnly": True, "isCompactSummary": True,
                                "uuid": str(uuid.uuid4()), "timestamp": _iso(now + timedelta(seconds=n + 1))}) + "\n")
        return sid


class Codex(Program):
    """Codex CLI: `codex exec`, a custom Responses-API provider in $CODEX_HOME/config.toml."""

    name = "Codex CLI"
    slug = "codex"

    def __init__(self, bin_dir: Path, work: Path, fake: Fake, resume_bytes: int) -> None:
        self.exe = self._exe(bin_dir)
        self.version = _version(self.exe)
        self.home = work / f"{self.slug}-home"
        self.codex_home = self.home / ".codex"
        self.project = work / f"{self.slug}-project"
        for d in (self.codex_home, self.project):
            d.mkdir(parents=True, exist_ok=True)
        (self.codex_home / "config.toml").write_text(
            'model = "gpt-5"\nmodel_provider = "bench"\napproval_policy = "never"\n'
            'sandbox_mode = "read-only"\n\n'
            '[model_providers.bench]\nname = "bench"\n'
            f'base_url = "{fake.url}/v1"\nwire_api = "responses"\nenv_key = "BENCH_API_KEY"\n'
            "request_max_retries = 0\nstream_max_retries = 0\n"
        )
        self._env = _base_env(self.home)
        self._env.update(CODEX_HOME=str(self.codex_home), BENCH_API_KEY="bench-key")
        self.resume_id = self._grow(fake, resume_bytes)

    def _exe(self, bin_dir: Path) -> Path:
        return bin_dir / "codex"  # the npm wrapper: node, which then starts the native binary

    def env(self) -> dict:
        return self._env

    def new_cmd(self) -> list[str]:
        return [str(self.exe), "exec", "--skip-git-repo-check", "hi"]

    def resume_cmd(self) -> list[str]:
        return [str(self.exe), "exec", "--skip-git-repo-check", "resume", self.resume_id, "hi"]

    def _grow(self, fake: Fake, size: int) -> str:
        sessions = self.codex_home / "sessions"
        before = set(sessions.rglob("*.jsonl")) if sessions.exists() else set()
        result = run_once([str(self.exe), "exec", "--skip-git-repo-check", "say hi"], self._env, self.project, fake, 120)
        if result["first_request_s"] is None:
            raise RuntimeError(f"Codex sent no request: {result['err'][-300:]}")
        made = sorted(set(sessions.rglob("*.jsonl")) - before, key=lambda p: p.stat().st_mtime)
        if not made:
            raise RuntimeError("Codex wrote no session file")
        path = made[-1]
        records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        meta = next((r for r in records if r.get("type") == "session_meta"), None)
        if meta is None:
            raise RuntimeError("Codex's session has no session_meta")
        sid = meta["payload"]["id"]
        filler = "x" * 2000
        stamp = records[-1].get("timestamp")
        ordinal = max((r.get("ordinal", 0) for r in records), default=0)
        with open(path, "a", encoding="utf-8") as f:
            written = path.stat().st_size
            n = 0
            while written < size:
                n += 1
                for role, kind, text in (("user", "input_text", f"question {n}: {filler}"),
                                         ("assistant", "output_text", f"answer {n}: {filler}")):
                    ordinal += 1
                    line = json.dumps({"timestamp": stamp, "ordinal": ordinal, "type": "response_item",
                                       "payload": {"type": "message", "role": role,
                                                   "content": [{"type": kind, "text": text}]}}) + "\n"
                    f.write(line)
                    written += len(line)
            f.write(json.dumps({"timestamp": stamp, "ordinal": ordinal + 1, "type": "compacted",
                                "payload": {"message": "Summary: the user said hi many times.",
                                            "replacement_history": [
                                                {"type": "message", "role": "user", "content": [
                                                    {"type": "input_text",
                                                     "text": "Summary: the user said hi many times."}]}]}}) + "\n")
        return sid


def native_codex(bin_dir: Path) -> Path | None:
    """The native Codex binary the npm package ships (`vendor/<target triple>/…/codex`), without node."""
    modules = bin_dir.parent  # e.g. @openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex
    for candidate in sorted(p for p in modules.glob("@openai/codex*/**/vendor/**/codex") if p.is_file()):
        try:
            with open(candidate, "rb") as f:
                if f.read(4) == b"\x7fELF" and os.access(candidate, os.X_OK):
                    return candidate
        except OSError:
            continue
    return None


class CodexNative(Codex):
    """The same Codex CLI started as its native binary, as a Homebrew or release-tarball install runs it."""

    name = "Codex CLI (native binary)"
    slug = "codex-native"

    def _exe(self, bin_dir: Path) -> Path:
        exe = native_codex(bin_dir)
        if exe is None:
            raise RuntimeError("no native binary under node_modules/@openai/codex*/vendor/")
        return exe


# --------------------------------------------------------------------------- commands and the app

def time_command(cmd: list[str], env: dict, cwd: Path, timeout: float = 60) -> dict:
    """Launch to exit of a command that needs no model (`--help`, `sessions list`)."""
    t0 = time.monotonic()
    try:
        proc = subprocess.run(cmd, env=env, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"wall_s": None, "err": str(exc)}
    wall = time.monotonic() - t0
    if proc.returncode != 0:
        return {"wall_s": None, "err": proc.stderr.decode("utf-8", "replace")[-300:]}
    return {"wall_s": wall, "err": ""}


APP_READY = re.compile(r"tokens · context")  # the status line: the app is drawn and reads keys
APP_ECHO = re.compile(r"^› x\s*$", re.MULTILINE)  # the key typed at launch, shown in the prompt


def time_app(exe: list[str], env: dict, cwd: Path, work: Path, timeout: float = 30) -> dict:
    """The app in a tmux window at 80×24: launch -> first paint, and -> a key typed at launch shown.

    tmux starts first, with a shell blocked on a FIFO; the clock starts when the FIFO releases it
    (`exec evo-agent`), so tmux's own start is not counted. "x" is sent at once, as a person who
    starts typing right away would; the screen is then read every 10 ms (`tmux capture-pane`) for
    the status line (first paint) and for `› x` (the key reached the prompt: typing works).
    """
    tmux = shutil.which("tmux")
    if tmux is None:
        return {"paint_s": None, "echo_s": None, "err": "tmux is not installed"}
    sock = f"evo-startup-{os.getpid()}-{time.monotonic_ns()}"
    fifo = work / f"go-{time.monotonic_ns()}"
    os.mkfifo(fifo)
    app_env = {k: v for k, v in env.items() if k not in ("TERM", "NO_COLOR", "TMUX")}
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in app_env.items() if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k))
    program = " ".join(shlex.quote(w) for w in exe)
    script = f"read _ < {shlex.quote(str(fifo))}; exec env {exports} {program}"

    def run_tmux(*args: str) -> str:
        return subprocess.run([tmux, "-L", sock, *args], capture_output=True, text=True).stdout

    run_tmux("new-session", "-d", "-s", "app", "-x", "80", "-y", "24", "-c", str(cwd), "sh", "-c", script)
    paint = echo = None
    try:
        with open(fifo, "w") as go:  # blocks until the shell waits on the FIFO
            t0 = time.monotonic()
            go.write("\n")
        run_tmux("send-keys", "-t", "app", "-l", "x")
        while time.monotonic() - t0 < timeout and (echo is None or paint is None):
            screen = run_tmux("capture-pane", "-t", "app", "-p")
            now = time.monotonic() - t0
            if paint is None and APP_READY.search(screen):
                paint = now
            if echo is None and APP_ECHO.search(screen):  # the early prompt's echo (ui/early_input.py) or the app's
                echo = now
            time.sleep(0.01)
        err = "" if echo is not None and paint is not None else (
            "no echo or no first paint within the timeout: " + " | ".join(screen.split("\n")[-4:])[-200:])
        if not err and len(APP_ECHO.findall(screen)) != 1:  # the app's frame must show the key once: none lost
            err = "the key typed at launch is not in the app's prompt exactly once: " + screen[-200:]
            echo = None
    finally:
        run_tmux("kill-server")
        fifo.unlink(missing_ok=True)
    return {"paint_s": paint, "echo_s": echo, "err": err}


def command_rows(programs: list[Program], runs: int, work: Path) -> dict[str, dict[str, list[dict]]]:
    """{program: {column: runs}}: `--help` for everyone; `sessions list` and the app for evo-agent."""
    out: dict[str, dict[str, list[dict]]] = {p.name: {} for p in programs}
    for i in range(runs):
        for program in programs:
            print(f"commands {i + 1}/{runs} {program.name} ...", file=sys.stderr)
            cols = out[program.name]
            exe = program.exe if isinstance(program, Evo) else [str(program.exe)]
            cols.setdefault("help", []).append(time_command([*exe, "--help"], program.env(), program.project))
            if isinstance(program, Evo):
                cols.setdefault("list", []).append(
                    time_command([*exe, "sessions", "list"], program.env(), program.project))
                cols.setdefault("app", []).append(time_app(exe, program.env(), program.project, work))
    return out


# --------------------------------------------------------------------------- the table

def fmt_s(values: list[float]) -> str:
    if not values:
        return "–"
    med = statistics.median(values)
    return f"{med * 1000:.0f} ms" if med < 10 else f"{med:.1f} s"


def cell(runs: list[dict]) -> str:
    times = [r["first_request_s"] for r in runs if r["first_request_s"] is not None]
    if not times:
        return "no request (" + (runs[0]["err"].strip().splitlines() or ["?"])[-1][:80] + ")" if runs else "–"
    text = fmt_s(times)
    if len(times) > 1:
        text += f" [{min(times) * 1000:.0f}–{max(times) * 1000:.0f} ms, n={len(times)}]"
    if len(times) < len(runs):
        text += f" ({len(runs) - len(times)} runs sent nothing)"
    return text


def ratio(evo: list[dict], peer: list[dict]) -> str:
    a = [r["first_request_s"] for r in evo if r["first_request_s"] is not None]
    b = [r["first_request_s"] for r in peer if r["first_request_s"] is not None]
    if not a or not b:
        return "–"
    return f"{statistics.median(a) / statistics.median(b):.2f}×"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5, help="interleaved runs per row (default 5)")
    ap.add_argument("--resume-mib", type=int, default=1024, help="size of the resumed transcripts (default 1024)")
    ap.add_argument("--cache", default="/tmp/evo-agent-bench-cache", help="generated transcripts and npm peers")
    ap.add_argument("--no-peers", action="store_true", help="evo-agent only")
    ap.add_argument("--smoke", action="store_true", help="evo-agent only, 1 MiB, 1 run (for tests)")
    ap.add_argument("--out", help="also write the table (Markdown) to this file")
    args = ap.parse_args(argv)
    if args.smoke:
        args.runs, args.resume_mib, args.no_peers = 1, 1, True
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="evo-startup-"))
    fake = Fake()
    size = args.resume_mib * MiB
    notes: list[str] = []
    try:
        programs: list[Program] = [Evo(work, fake, size, cache)]
        evo = programs[0]
        warm = run_once(evo.new_cmd(), evo.env(), evo.project, fake, 60)  # writes nothing that matters; warms caches
        if warm["first_request_s"] is None:
            print(f"evo-agent sent no request: {warm['err']}", file=sys.stderr)
            return 1
        peer_rows: dict[str, str] = {}
        if not args.no_peers:
            bin_dir, why = install_peers(cache)
            if bin_dir is None:
                peer_rows = {"Claude Code": why, "Codex CLI": why, "Codex CLI (native binary)": why}
            else:
                for cls in (Claude, Codex, CodexNative):
                    try:
                        print(f"preparing {cls.name} ({size // MiB} MiB transcript) ...", file=sys.stderr)
                        programs.append(cls(bin_dir, work, fake, size))
                    except Exception as exc:
                        peer_rows[cls.name] = f"could not run: {exc}"
        results: dict[tuple[str, str], list[dict]] = {}
        for scenario in ("new", "resume"):
            for i in range(args.runs):
                for program in programs:
                    cmd = program.new_cmd() if scenario == "new" else program.resume_cmd()
                    cwd = program.project
                    print(f"{scenario} {i + 1}/{args.runs} {program.name} ...", file=sys.stderr)
                    results.setdefault((program.name, scenario), []).append(
                        run_once(cmd, program.env(), cwd, fake, 300))
        commands = command_rows(programs, args.runs, work)
        rss: dict[tuple[str, str], float | None] = {}
        for program in programs:
            for scenario in ("new", "resume"):
                cmd = program.new_cmd() if scenario == "new" else program.resume_cmd()
                rss[(program.name, scenario)] = measure_rss(cmd, program.env(), program.project, 300)
        lines = render(programs, results, rss, peer_rows, args, size) + render_commands(programs, commands, args)
    finally:
        fake.stop()
        shutil.rmtree(work, ignore_errors=True)
    text = "\n".join(lines + notes) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    return 0


def render(programs, results, rss, peer_rows, args, size) -> list[str]:  # noqa: ANN001
    evo = programs[0].name
    names = [p.name for p in programs] + [n for n in ("Claude Code", "Codex CLI", "Codex CLI (native binary)")
                                          if n in peer_rows]
    versions = {p.name: getattr(p, "version", "") for p in programs}
    load = os.getloadavg()
    lines = [
        "## Start-up: launch to the first model request (SPEC §8)",
        "",
        f"Medians of {args.runs} interleaved runs against one loopback fake; load average "
        f"{load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} at the end (2 cores shared).",
        "",
        "| program | `-p hi`, new session | resume of a " + f"{size // MiB} MiB transcript, boundary at its end"
        + " | peak RSS new / resume |",
        "|---|---|---|---|",
    ]
    for name in names:
        if name in peer_rows:
            lines.append(f"| {name} | {peer_rows[name]} | | |")
            continue
        new, res = results[(name, "new")], results[(name, "resume")]
        r_new, r_res = rss.get((name, "new")), rss.get((name, "resume"))
        mem = f"{r_new:.0f} / {r_res:.0f} MiB" if r_new and r_res else "–"
        label = f"{name} {versions[name]}".strip()
        lines.append(f"| {label} | {cell(new)} | {cell(res)} | {mem} |")
    lines += ["", "| ratio (evo-agent ÷ peer; target ≤ 0.5) | `-p hi`, new | resume |", "|---|---|---|"]
    for name in names:
        if name == evo or name in peer_rows:
            continue
        lines.append(f"| {evo} ÷ {name} | {ratio(results[(evo, 'new')], results[(name, 'new')])} | "
                     f"{ratio(results[(evo, 'resume')], results[(name, 'resume')])} |")
    sizes = []
    for name in names:
        sent = [r["request_bytes"] for r in results.get((name, "resume"), []) if r["request_bytes"]]
        if sent:
            sizes.append(f"{name} {statistics.median(sent) / 1024:.0f} KiB")
    if sizes:
        lines += ["", "First request after the resume (the summary and what follows the last boundary, plus each "
                      "program's system prompt and tools): " + ", ".join(sizes) + "."]
    return lines


def _times(runs: list[dict], key: str) -> str:
    values = [r[key] for r in runs if r.get(key) is not None]
    if not values:
        return "failed (" + (runs[0].get("err", "?").strip().splitlines() or ["?"])[-1][:80] + ")" if runs else "–"
    text = fmt_s(values)
    if len(values) > 1:
        text += f" [{min(values) * 1000:.0f}–{max(values) * 1000:.0f} ms]"
    if len(values) < len(runs):
        text += f" ({len(runs) - len(values)} failed)"
    return text


def _verdict(runs: list[dict], key: str, limit_s: float) -> str:
    values = [r[key] for r in runs if r.get(key) is not None]
    if not values or len(values) < len(runs):
        return "**MISSED**"
    return "met" if statistics.median(values) < limit_s else "**MISSED**"


def render_commands(programs, commands, args) -> list[str]:  # noqa: ANN001
    """The second table: commands that need no model, and the interactive app (issue #14's targets)."""
    evo = programs[0].name
    cols = commands[evo]
    lines = [
        "",
        "## Start-up: commands and the app",
        "",
        f"Launch to exit (`--help`, `sessions list`: the project above, {{n}} sessions in it), and for the app "
        "launch to its first paint and to a key typed at launch shown in its prompt (tmux, 80×24, the screen "
        f"read every 10 ms). Medians of {args.runs} runs [range].",
        "",
        "| program | `--help` | `sessions list` | app: first paint | app: a key typed at launch shown |",
        "|---|---|---|---|---|",
    ]
    lines[3] = lines[3].replace("{n}", str(_count_sessions(programs[0])))
    for program in programs:
        c = commands[program.name]
        label = f"{program.name} {getattr(program, 'version', '')}".strip()
        lines.append(f"| {label} | {_times(c['help'], 'wall_s')} | "
                     + (f"{_times(c['list'], 'wall_s')} | {_times(c['app'], 'paint_s')} | "
                        f"{_times(c['app'], 'echo_s')} |" if "list" in c else "– | – | – |"))
    lines += ["", "| target (issue #30) | evo-agent |", "|---|---|",
              f"| `--help` < 40 ms | {_verdict(cols['help'], 'wall_s', 0.040)} |",
              f"| `sessions list` < 150 ms | {_verdict(cols['list'], 'wall_s', 0.150)} |",
              f"| the app accepts typing < 250 ms | {_verdict(cols['app'], 'echo_s', 0.250)} |"]
    return lines


def _count_sessions(evo: Program) -> int:
    sessions = evo.project / ".evo-agent" / "sessions"
    return sum(1 for d in sessions.iterdir() if d.is_dir()) if sessions.exists() else 0


if __name__ == "__main__":
    sys.exit(main())
