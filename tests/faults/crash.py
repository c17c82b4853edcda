"""The crash harness: run the real `evo-agent`, SIGKILL it at a chosen moment, check what it left.

A run is one process against its own local Messages API (tests/fake_model_server.py).
Runs are chained: every run after the first resumes the session the previous one
left, so each run also checks the previous crash's resume — the first request it
sends must be exactly what `load_for_resume` restored plus the new prompt — and
the chain crosses every kind of moment with every other.

What "nothing is lost" means here, for each run (see `check_conversation_file`):

- every complete line of every transcript parses (a torn last line is counted);
- every message of the last request the server received is on disk, in order
  (the transcript is written before the model is called: SPEC §2's ordering);
- what the process recorded after that request is explained: the server's own
  answer to it (in request-param shape), the tool results answering its
  tool_use ids, or a prompt this harness typed;
- `load_for_resume` of the transcript equals that history, plus an interrupted
  `tool_result` for a tool_use that never got one (SPEC §4 step 4).

Adding a kill moment is one entry in `MOMENTS` (or a `Moment` passed to
`run_chains`): what the server answers, what is typed, when the moment has come.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import random
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from evo_agent.agent import micro_compact, summary_request
from evo_agent.agent.compaction import in_place_summary
from evo_agent.session import INTERRUPTED_TEXT, REMINDER_OPEN, load_for_resume, summary_message
from tests.api_rules import check_request
from tests.cli_runner import COMMAND, clean_env
from tests.fake_model_server import FakeModelServer, hang, text, tool_use
from tests.prompt_cache import plain

START_TIMEOUT_S = 30.0  # a process start under a loaded 2-core CI machine


class HarnessError(AssertionError):
    """A check failed; `lost` counts the records it found missing (for the tally's figures)."""

    def __init__(self, message: str, lost: int = 0) -> None:
        super().__init__(message)
        self.lost = lost


def without_reminders(message: dict) -> dict:
    """A user message less the reminders evo-agent put in it (SPEC §2: the plan or memory state after a resume):
    what was typed, to compare with the prompt."""
    content = message.get("content")
    if message.get("role") != "user" or not isinstance(content, list):
        return message
    kept = [b for b in content if not (isinstance(b, dict) and b.get("type") == "text"
                                       and str(b.get("text", "")).startswith(REMINDER_OPEN))]
    if len(kept) == 1 and kept[0].get("type") == "text":
        return {"role": "user", "content": kept[0]["text"]}
    return {"role": "user", "content": kept}


def first_request_of(messages: list[dict]) -> list[dict]:
    """A request's messages with its last (the prompt) less the reminders it carries."""
    return [*messages[:-1], without_reminders(messages[-1])] if messages else messages


def _common_prefix(a: list, b: list) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


# --------------------------------------------------------------------------- moments


@dataclass(frozen=True)
class Moment:
    """One kind of kill moment.

    `script(run)` is what the server answers, in order; `prompts(run)` what is
    typed (print mode uses the first); `arrived(run)` is polled until the
    moment has come, then the kill waits a random `jitter` (seconds) more.
    """

    name: str
    mode: str  # "print" or "repl"
    script: Callable[[Run], list]
    arrived: Callable[[Run], bool]
    jitter: tuple[float, float] = (0.0, 0.0)
    prompts: Callable[[Run], list[str]] = lambda run: [f"question {run.label}"]
    env: dict = field(default_factory=dict)
    weight: int = 1
    needs_request: bool = True  # False: the kill may come before any request (no fidelity check then)


def _bash(run: Run, command: str) -> dict:
    """A bash tool call whose shell leaves its pid where the harness can clean it up."""
    return tool_use("bash", {"command": f"echo $$ >> {run.pidfile}; {command}"})


def _tool_started(run: Run) -> bool:
    return run.pidfile.exists() and run.pidfile.read_text().strip() != ""


MOMENTS: dict[str, Moment] = {m.name: m for m in [
    # The answer is streaming (a partial text delta arrived) and never finishes.
    Moment("streaming", "print", lambda run: [hang(30, text("never finished"), partial="Let me think")],
           lambda run: run.server.hanging.is_set(), jitter=(0.0, 0.3), weight=3),
    Moment("streaming-repl", "repl", lambda run: [hang(30, text("never finished"), partial="Let me think")],
           lambda run: run.server.hanging.is_set(), jitter=(0.0, 0.3), weight=2),
    # A tool runs (`sleep 5`): the assistant's tool_use is on disk, its result never comes.
    Moment("tool", "print", lambda run: [[text("Running it."), _bash(run, "exec sleep 5")], text("done")],
           _tool_started, jitter=(0.0, 0.4), weight=3),
    # Anywhere in a turn of several steps: between records, during quick tools, while streaming.
    Moment("steps", "print", lambda run: [
        [text("Step one."), _bash(run, "echo one")],
        _bash(run, "echo two; sleep 0.2"),
        tool_use("read_file", {"path": "README.md"}),
        [_bash(run, "echo four"), _bash(run, "echo five")],
        hang(30, text("never finished")),
    ], lambda run: run.server.requests_seen >= 1, jitter=(0.0, 1.4), weight=3),
    # Anywhere across two REPL turns, between them included (meta.json written at the turn's end).
    Moment("turns-repl", "repl", lambda run: [
        text("First answer."),
        [text("Checking."), _bash(run, "echo second")],
        text("Second answer."),
        hang(30, text("never finished")),
    ], lambda run: run.server.requests_seen >= 1, jitter=(0.0, 1.2),
        prompts=lambda run: [f"first question {run.label}", f"second question {run.label}",
                             f"third question {run.label}"], weight=2),
    # The REPL asks whether a command may run, and nobody answers: the tool_use is on disk, unanswered.
    Moment("approval-repl", "repl", lambda run: [[text("May I?"), _bash(run, "touch approved")], text("done")],
           lambda run: b"wants to run" in (run.dir / "stdout").read_bytes(), jitter=(0.0, 0.2),
           env={"EVO_AGENT_PERMISSION_MODE": "ask"}, weight=1),
    # As soon as the session exists: while a resume copies the restored records, before any request.
    Moment("startup", "print", lambda run: [text("ok")],
           lambda run: bool(session_ids(run.sessions_dir) - run.before), jitter=(0.0, 0.03),
           needs_request=False, weight=1),
]}


# --------------------------------------------------------------------------- one run


_server_numbers = itertools.count(1)


class CountingServer(FakeModelServer):
    """The fake Messages API for one run: ids that never repeat across runs, a lock-free request count.

    A chain resumes one run's history in the next run's server; real tool_use
    ids are unique, so these must be too.
    """

    def __init__(self) -> None:
        super().__init__()
        self._ids = itertools.count(next(_server_numbers) * 1_000_000)

    @property
    def requests_seen(self) -> int:
        return len(self.requests)


@dataclass
class Run:
    label: str
    moment: Moment
    rng: random.Random
    workdir: Path
    project: Path
    home: Path
    source: str | None  # the session this run resumes
    server: CountingServer = field(init=False)
    proc: subprocess.Popen | None = None
    prompts_typed: list[str] = field(default_factory=list)
    session: str | None = None
    before: set = field(default_factory=set)  # the sessions that existed when it started
    killed: bool = False
    exit_code: int | None = None

    def __post_init__(self) -> None:
        self.dir = self.workdir / self.label
        self.dir.mkdir(parents=True)
        self.pidfile = self.dir / "tool.pids"
        self.server = CountingServer().start()

    @property
    def sessions_dir(self) -> Path:
        return self.project / ".evo-agent" / "sessions"

    def describe(self) -> str:
        return f"run {self.label} ({self.moment.name}, {self.moment.mode}, resuming {self.source})"


def session_ids(sessions_dir: Path) -> set[str]:
    if not sessions_dir.is_dir():
        return set()
    return {p.name for p in sessions_dir.iterdir() if p.is_dir() and not p.is_symlink()}


def _kill_tool_groups(pidfile: Path) -> None:
    """The bash tool runs each command in its own session: SIGKILL the ones this run started."""
    if not pidfile.exists():
        return
    for word in pidfile.read_text().split():
        try:
            os.killpg(int(word), signal.SIGKILL)
        except (ProcessLookupError, PermissionError, ValueError):
            pass


def start(run: Run) -> None:
    moment = run.moment
    run.server.script(*moment.script(run))
    # Tools run unasked (bypass) unless the moment is about asking.
    env = run.server.env(clean_env(run.home), **{"EVO_AGENT_PERMISSION_MODE": "bypass", **moment.env})
    prompts = moment.prompts(run)
    args = ["--resume", run.source] if run.source else []
    if moment.mode == "print":
        args += ["-p", prompts[0]]
        run.prompts_typed = prompts[:1]
    run.before = session_ids(run.sessions_dir)
    with open(run.dir / "stdout", "wb") as out, open(run.dir / "stderr", "wb") as err:
        run.proc = subprocess.Popen(
            [*COMMAND, *args], cwd=run.project, env=env, start_new_session=True,
            stdin=subprocess.PIPE if moment.mode == "repl" else subprocess.DEVNULL, stdout=out, stderr=err,
        )
    if moment.mode == "repl":
        assert run.proc.stdin is not None
        run.proc.stdin.write("".join(p + "\n" for p in prompts).encode())
        run.proc.stdin.flush()  # stdin stays open: the REPL waits for more instead of leaving
        run.prompts_typed = prompts


def kill_at_moment(run: Run) -> None:
    """Wait for the moment (or the process's end), wait the jitter, SIGKILL the process group."""
    assert run.proc is not None
    deadline = time.monotonic() + START_TIMEOUT_S
    while not run.moment.arrived(run):
        if run.proc.poll() is not None:
            raise HarnessError(f"{run.describe()}: the process ended (exit {run.proc.returncode}) before the moment "
                               f"came; stderr: {(run.dir / 'stderr').read_text()[-400:]!r}")
        if time.monotonic() > deadline:
            raise HarnessError(f"{run.describe()}: the moment did not come within {START_TIMEOUT_S}s")
        time.sleep(0.005)
    time.sleep(run.rng.uniform(*run.moment.jitter))
    try:
        os.killpg(run.proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    run.exit_code = run.proc.wait(10)
    # Killed by us when it died of SIGKILL: asking `poll()` right after the kill raced the kernel
    # (a process already dead of the signal looked like one that had ended on its own).
    run.killed = run.exit_code == -signal.SIGKILL
    _kill_tool_groups(run.pidfile)
    if run.proc.stdin is not None:
        try:
            run.proc.stdin.close()
        except OSError:
            pass
    new = session_ids(run.sessions_dir) - run.before
    if len(new) > 1:
        raise HarnessError(f"{run.describe()}: one process created {len(new)} sessions: {sorted(new)}")
    run.session = next(iter(new), None)


# --------------------------------------------------------------------------- checks


@dataclass
class Tally:
    runs: int = 0
    killed: int = 0
    lines: int = 0
    torn_lines: int = 0
    records_lost: int = 0
    resumes: int = 0
    resumes_valid: int = 0
    partial_copies: int = 0
    moments: dict = field(default_factory=dict)
    failures: list = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, **counts: int) -> None:
        with self.lock:
            for key, value in counts.items():
                setattr(self, key, getattr(self, key) + value)

    def summary(self) -> str:
        return (f"{self.runs} runs ({self.killed} killed by SIGKILL; moments {dict(sorted(self.moments.items()))}), "
                f"{self.lines} records written, {self.records_lost} lost, {self.torn_lines} torn lines, "
                f"{self.resumes_valid}/{self.resumes} resumes valid, {self.partial_copies} partial resume copies")


def read_lines(path: Path) -> tuple[list[dict], int, int]:
    """(records, complete lines that do not parse, torn last line: 0 or 1)."""
    data = path.read_bytes()
    lines = data.split(b"\n")
    tail = lines.pop()  # b"" when the file ends with a newline
    records, broken = [], 0
    for line in lines:
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except ValueError:
            broken += 1
    return records, broken, 1 if tail else 0


def clean_blocks(blocks: list[dict]) -> list[dict]:
    """The server's answer as the agent stores it: no null fields (`citations`), no empty text."""
    out = []
    for block in blocks:
        block = {k: v for k, v in block.items() if v is not None}
        if block.get("type") == "text" and not block.get("text"):
            continue
        out.append(block)
    return out


def with_interrupted_results(messages: list[dict]) -> list[dict]:
    """SPEC §4 step 4 for a history that ends with tool_use blocks nobody answered."""
    if not messages or messages[-1]["role"] != "assistant" or not isinstance(messages[-1]["content"], list):
        return list(messages)
    ids = [b["id"] for b in messages[-1]["content"] if b.get("type") == "tool_use"]
    if not ids:
        return list(messages)
    results = [{"type": "tool_result", "tool_use_id": i, "content": INTERRUPTED_TEXT, "is_error": True} for i in ids]
    return [*messages, {"role": "user", "content": results}]


def answer_to(server: FakeModelServer, body: dict) -> dict | None:
    """What the server answered `body` with, as an assistant message, or None (a hang, an error)."""
    for entry in server.log:
        if entry.get("body") is body and entry.get("answer") == "message":
            return {"role": "assistant", "content": clean_blocks(entry["content"])}
    return None


def is_compaction_request(body: dict) -> bool:
    """A summary call (SPEC §6: one model call without tools), told apart from the conversation's own."""
    if not body.get("tools"):
        return True
    last = body["messages"][-1]
    content = last.get("content")
    words = content if isinstance(content, str) else " ".join(
        b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    return last.get("role") == "user" and "summar" in words.lower() and len(body["messages"]) > 1


def conversation_of(records: list[dict]) -> tuple[dict | None, list[dict]]:
    """(the message every request of this conversation starts with, the history it restores before repairs)."""
    boundaries = [i for i, r in enumerate(records) if r.get("type") == "compact_boundary"]
    if boundaries:
        after = records[boundaries[-1] + 1:]
        summary = summary_message(records[boundaries[-1]]["summary"])
        return summary, [summary] + [r["message"] for r in after if r.get("type") in ("user", "assistant")]
    recorded = [r["message"] for r in records if r.get("type") in ("user", "assistant")]
    first = next((m for m in recorded if m["role"] == "user"), None)
    return first, recorded


def check_conversation_file(
    where: str, transcript: Path, all_requests: list[dict], server: FakeModelServer, prompts: list[str]
) -> tuple[list[dict], list[dict], int]:
    """The checks of the module docstring for one transcript.

    Returns (the restored history, the requests that belong to this conversation, lines).
    """
    records, broken, torn = read_lines(transcript)
    if broken:
        raise HarnessError(f"{where}: {broken} complete line(s) of {transcript.name} do not parse", lost=broken)
    first, recorded = conversation_of(records)
    requests = [r for r in all_requests if first is not None and plain(r["messages"][:1]) == plain([first])
                and not is_compaction_request(r)]
    loaded = load_for_resume(transcript)
    if not requests:
        expected = with_interrupted_results(recorded)
    else:
        last = requests[-1]
        sent = last["messages"]
        if plain(recorded[: len(sent)]) != plain(sent):  # the request, less its cache marks (SPEC §12)
            same = _common_prefix(plain(recorded), plain(sent))
            raise HarnessError(f"{where}: the model was sent {len(sent)} messages but the transcript holds only the "
                               f"first {same} of them (then {recorded[same:same + 1]!r} instead of {sent[same:same + 1]!r})",
                               lost=len(sent) - same)
        sent = recorded[: len(sent)]  # the same messages, in the shape the history holds them
        tail = recorded[len(sent):]
        reply = answer_to(server, last)
        pending: list[str] = []
        for i, message in enumerate(tail):
            if message["role"] == "assistant":
                if i != 0 or reply is None or message != reply:
                    raise HarnessError(f"{where}: recorded an assistant message the server never sent last: "
                                       f"{message!r} (server: {reply!r})")
                pending = [b["id"] for b in message["content"] if b.get("type") == "tool_use"]
            elif isinstance(message["content"], list) and all(b.get("type") == "tool_result" for b in message["content"]):
                if [b["tool_use_id"] for b in message["content"]] != pending:
                    raise HarnessError(f"{where}: tool results {message!r} do not answer {pending}")
                pending = []
            elif without_reminders(message)["content"] not in prompts:
                raise HarnessError(f"{where}: recorded a user message nobody typed: {message!r}")
        expected = with_interrupted_results(sent + tail)
    if loaded.messages != expected:
        raise HarnessError(f"{where}: load_for_resume restored {len(loaded.messages)} messages that differ from "
                           f"what the live process held ({len(expected)}):\n{loaded.messages!r}\n!=\n{expected!r}",
                           lost=len(expected) - _common_prefix(loaded.messages, expected))
    if loaded.messages:
        check_request(loaded.messages + [{"role": "user", "content": "next"}])
    return loaded.messages, requests, len(records) + torn


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else ""


def check_run(run: Run, source_history: list[dict] | None, tally: Tally) -> list[dict] | None:
    """Check one killed run; returns the history its session restores (None: it left no usable session)."""
    where = run.describe()
    invalid = run.server.invalid
    if invalid:
        raise HarnessError(f"{where}: the API refused a request: {invalid[0][1]}")
    requests = list(run.server.requests)
    if run.source is not None and requests:
        # The previous crash's resume, as the API saw it.
        tally.add(resumes=1)
        expected_first = [*source_history, {"role": "user", "content": run.prompts_typed[0]}]
        if is_compaction_request(requests[0]):
            # The restored history was over the threshold: the resume compacted it before its prompt,
            # and the summariser must have been sent exactly the restored history: in place, as the source
            # would have sent it next (SPEC §12), or flattened when there were no tools to repeat.
            expected_first = (in_place_summary(micro_compact(source_history), source_history)
                              if requests[0].get("tools") else summary_request(source_history))
        if plain(first_request_of(requests[0]["messages"])) != plain(expected_first):
            raise HarnessError(f"{where}: the first request after resuming {run.source} is not the restored history "
                               f"plus the prompt:\n{requests[0]['messages']!r}\n!=\n{expected_first!r}")
        tally.add(resumes_valid=1)
    if run.session is None:
        if requests:
            raise HarnessError(f"{where}: requests were sent but no session directory exists")
        return None
    transcript = run.sessions_dir / run.session / "messages.jsonl"
    if not transcript.exists():
        staged = transcript.with_name(".messages.jsonl.partial")
        if requests and staged.exists() and all(is_compaction_request(r) for r in requests):
            # Killed while summarising a resumed history over the threshold: the new session is
            # published only once its compact_boundary is on disk, so it is a staged file, never
            # listed or continued, and the source stays the session to resume (issue #14 item 4).
            tally.add(partial_copies=1)
            return None
        if requests:
            raise HarnessError(f"{where}: requests were sent but {transcript} does not exist")
        return None
    records, _, _ = read_lines(transcript)
    history, mine, lines = check_conversation_file(where, transcript, requests, run.server, run.prompts_typed)
    tally.add(lines=lines, torn_lines=read_lines(transcript)[2])
    explained = [r for r in requests if is_compaction_request(r)] + mine
    for side in sorted((run.sessions_dir / run.session / "subagent").glob("*.jsonl")):
        side_records, _, _ = read_lines(side)
        side_first, _ = conversation_of(side_records)
        prompts = [side_first["content"]] if side_first else []
        _, side_requests, side_lines = check_conversation_file(
            f"{where} sidechain {side.name}", side, requests, run.server, prompts)
        explained += side_requests
        tally.add(lines=side_lines)
    unexplained = [r for r in requests if not any(r is e for e in explained)]
    if unexplained:
        raise HarnessError(f"{where}: {len(unexplained)} request(s) belong to no transcript, e.g. "
                           f"{unexplained[0]['messages'][:1]!r}")
    marker = next((r for r in records if r.get("type") == "resume_marker"), None)
    if marker is not None:
        restored = [r for r in records if r.get("restored") is True]
        if marker["from_session_id"] != run.source:
            raise HarnessError(f"{where}: resume_marker names {marker['from_session_id']}, not {run.source}")
        copied = [r["message"] for r in restored]
        if len(restored) < marker["restored_count"]:
            # Killed while copying the restored history: the copy is a prefix of it.
            tally.add(partial_copies=1)
            if copied != source_history[: len(restored)]:
                raise HarnessError(f"{where}: a cut resume copy is not a prefix of {run.source}'s history")
            return None
        if copied != source_history:
            raise HarnessError(f"{where}: the resume copied {len(copied)} messages that differ from {run.source}'s")
    if not explained and run.moment.needs_request:  # a compaction's summary call counts: it is the moment
        raise HarnessError(f"{where}: no request reached the server before the kill")
    return history if mine or marker is not None or records else None


def final_resume(run_label: str, project: Path, home: Path, source: str,
                 source_history: list[dict], tally: Tally) -> None:
    """`evo-agent --resume SOURCE -p ...` to completion: exit 0, the request is the restored history + prompt."""
    with FakeModelServer() as server:
        server.script(text("All restored."))
        prompt = f"are you still there? ({run_label})"
        result = subprocess.run([*COMMAND, "--resume", source, "-p", prompt], cwd=project,
                                env=server.env(clean_env(home)), capture_output=True, text=True, timeout=60)
        tally.add(resumes=1)
        where = f"final resume of {source} ({run_label})"
        if result.returncode != 0 or result.stdout != "All restored.\n" or "Traceback" in result.stderr:
            raise HarnessError(f"{where}: exit {result.returncode}, stdout {result.stdout!r}, stderr {result.stderr!r}")
        server.assert_all_valid()
        if plain(first_request_of(server.requests[0]["messages"])) != plain(
                [*source_history, {"role": "user", "content": prompt}]):
            raise HarnessError(f"{where}: the request is not the restored history plus the prompt")
        tally.add(resumes_valid=1)


# --------------------------------------------------------------------------- chains


def run_chain(chain: int, links: int, seed: int, workdir: Path, project: Path, home: Path,
              moments: list[Moment], tally: Tally) -> None:
    """`links` runs, each resuming what the previous one left; failures are collected in the tally."""
    rng = random.Random(seed * 1000 + chain)
    source: str | None = None
    source_history: list[dict] | None = None
    weighted = [m for m in moments for _ in range(m.weight)]
    for link in range(links):
        moment = rng.choice(weighted)
        run = Run(f"c{chain}-{link}", moment, random.Random(rng.random()), workdir, project, home, source)
        source_hash = sha256(project / ".evo-agent" / "sessions" / source / "messages.jsonl") if source else ""
        try:
            start(run)
            kill_at_moment(run)
            history = check_run(run, source_history, tally)
            if source and sha256(project / ".evo-agent" / "sessions" / source / "messages.jsonl") != source_hash:
                raise HarnessError(f"{run.describe()}: resuming changed the source transcript {source}")
        except HarnessError as exc:
            tally.failures.append(f"{exc} [EVO_AGENT_FAULT_SEED={seed}]")
            tally.add(records_lost=exc.lost)
            history = None
        except Exception as exc:
            tally.failures.append(f"{run.describe()}: {type(exc).__name__}: {exc} [EVO_AGENT_FAULT_SEED={seed}]")
            history = None
        finally:
            if run.proc is not None and run.proc.poll() is None:
                os.killpg(run.proc.pid, signal.SIGKILL)
                run.proc.wait(10)
            _kill_tool_groups(run.pidfile)
            run.server.stop()
        with tally.lock:
            tally.runs += 1
            tally.killed += 1 if run.killed else 0
            tally.moments[moment.name] = tally.moments.get(moment.name, 0) + 1
        if history is not None and run.session is not None:
            source, source_history = run.session, history
    if source is not None and source_history is not None:
        try:
            final_resume(f"chain {chain}", project, home, source, source_history, tally)
        except HarnessError as exc:
            tally.failures.append(f"{exc} [EVO_AGENT_FAULT_SEED={seed}]")


def run_chains(total: int, chains: int, seed: int, workdir: Path, make_project: Callable[[Path], Path],
               moments: list[Moment]) -> Tally:
    """`total` runs in `chains` concurrent chains (each in its own project and thread)."""
    tally = Tally()
    threads = []
    for chain in range(chains):
        links = total // chains + (1 if chain < total % chains else 0)
        root = workdir / f"chain{chain}"
        root.mkdir()
        project = make_project(root)
        home = root / "home"
        home.mkdir()
        threads.append(threading.Thread(
            target=run_chain, args=(chain, links, seed, root / "runs", project, home, moments, tally),
            name=f"crash-chain-{chain}"))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return tally
