"""Several writers at once: resumes of one session from two terminals, subagents beside the main loop.

tests/session already appends from 8 threads and 4 processes with small
records; here the writers are the real CLI, the recorder's whole surface
(markers, sidechains, meta.json) at once, and lines far larger than a pipe
buffer or a page.
"""

from __future__ import annotations

import hashlib
import json
import random
import subprocess
import sys
import threading

import pytest

from evo_agent.session import SessionStore, load_for_resume
from tests.api_rules import check_conversation
from tests.builders import history_of, seed_session
from tests.cli_runner import COMMAND
from tests.fake_model_server import text
from tests.prompt_cache import last_text

pytestmark = pytest.mark.faults


def _sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _parse_every_line(path) -> list[dict]:
    data = path.read_bytes()
    assert data.endswith(b"\n"), f"{path.name} does not end with a newline"
    return [json.loads(line) for line in data.split(b"\n")[:-1]]


def test_two_terminals_resuming_one_session_at_the_same_time_get_two_sessions(cli, model_server):
    source = seed_session(cli.project, ("shared question", "Shared answer."))
    source_hash = _sha(cli.transcript(source))
    both_asking = threading.Barrier(2)

    def answer_when_both_are_waiting(body):
        both_asking.wait(30)  # the two requests are in flight together: the resumes overlapped
        return text(f"Answer to {last_text(body)}.")

    model_server.default = answer_when_both_are_waiting
    procs = [subprocess.Popen([*COMMAND, "--resume", source, "-p", f"terminal {n}"], cwd=cli.project, env=cli.env,
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for n in (1, 2)]
    results = [p.communicate(timeout=90) for p in procs]
    for n, (proc, (out, err)) in enumerate(zip(procs, results), start=1):
        assert proc.returncode == 0 and out == f"Answer to terminal {n}.\n", err
    new = [err.splitlines()[-1].rsplit(" ", 1)[1] for _, err in results]
    assert len(set(new)) == 2 and source not in new
    assert sorted(cli.session_ids()) == sorted([source, *new])
    assert _sha(cli.transcript(source)) == source_hash
    for n, sid in enumerate(new, start=1):
        records = _parse_every_line(cli.transcript(sid))
        assert [r["type"] for r in records] == ["session_start", "resume_marker", "user", "assistant", "user",
                                                  "assistant"]
        assert {r["session_id"] for r in records} == {sid}
        assert cli.messages(sid) == history_of(("shared question", "Shared answer."),
                                               (f"terminal {n}", f"Answer to terminal {n}."))
    model_server.assert_all_valid()


RESUMER = r"""
import sys
from evo_agent.session import SessionStore
store = SessionStore(sys.argv[1], warn=print)
sys.stdin.readline()  # every process starts at the same moment
resumed = store.resume(sys.argv[2], model="m", provider="demo")
resumed.recorder.user({"role": "user", "content": f"from process {sys.argv[3]}"})
resumed.recorder.checkpoint()
print(resumed.recorder.id)
"""


def test_eight_processes_resuming_one_long_session_at_once(project):
    """A copy of 400 messages (~2 MB) each: the batched copies interleave nowhere."""
    store = SessionStore(project, warn=lambda line: None)
    source = store.create(model="m", provider="demo")
    for i in range(200):
        source.user({"role": "user", "content": f"question {i} " + "q" * 5000})
        source.assistant({"role": "assistant", "content": [{"type": "text", "text": f"answer {i} " + "a" * 5000}]})
    source.checkpoint()
    history = load_for_resume(source.path).messages
    source_hash = _sha(source.path)
    procs = [subprocess.Popen([sys.executable, "-c", RESUMER, str(project), source.id, str(n)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for n in range(8)]
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()
    outputs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 and not err for p, (_, err) in zip(procs, outputs)), outputs
    ids = [out.strip() for out, _ in outputs]
    assert len(set(ids)) == 8 and source.id not in ids
    assert _sha(source.path) == source_hash
    for n, sid in enumerate(ids):
        path = store.sessions_dir / sid / "messages.jsonl"
        records = _parse_every_line(path)
        assert {r["session_id"] for r in records} == {sid}
        assert load_for_resume(path).messages == history + [{"role": "user", "content": f"from process {n}"}]
        assert store.info(sid).meta.message_count == len(history) + 1


def test_parallel_subagents_and_the_main_loop_write_at_once_without_a_torn_line(project):
    """Four subagents (each its own sidechain, markers in the main file) beside the main loop and meta writes.

    Records of random sizes up to 3 MB, far past PIPE_BUF and a page: each line
    is still one write under the file's lock, so no two ever interleave.
    """
    store = SessionStore(project, warn=lambda line: None)
    rec = store.create(model="m", provider="demo", meta_interval=0)
    rng = random.Random(7)
    sizes = [rng.choice([10, 300, 5000, 70_000, 600_000, 3_000_000]) for _ in range(400)]
    start = threading.Barrier(6)
    main_messages: list[dict] = []
    sidechains: dict[str, tuple] = {}
    errors: list[BaseException] = []

    def guarded(fn):
        def run(*args):
            try:
                fn(*args)
            except BaseException as exc:
                errors.append(exc)
        return run

    @guarded
    def main_loop():
        start.wait()
        for i in range(60):
            message = {"role": "user", "content": f"main {i} " + "m" * sizes[i]}
            rec.user(message)
            main_messages.append(message)
            reply = {"role": "assistant", "content": [{"type": "text", "text": f"main reply {i}"}]}
            rec.assistant(reply, input_tokens=1, output_tokens=1)
            main_messages.append(reply)

    @guarded
    def subagent(n: int):
        start.wait()
        side = rec.start_subagent(f"worker {n}", f"toolu_task_{n}")
        written = []
        for i in range(50):
            message = {"role": "user" if i % 2 == 0 else "assistant",
                       "content": f"side {n} {i} " + "s" * sizes[100 + n * 50 + i]}
            if message["role"] == "user":
                side.user(message)
            else:
                message = {"role": "assistant", "content": [{"type": "text", "text": message["content"]}]}
                side.assistant(message)
            written.append(message)
        rec.end_subagent(side, f"toolu_task_{n}", f"worker {n} done")
        sidechains[side.relative_path] = (n, written)

    @guarded
    def checkpoints():
        start.wait()
        for _ in range(200):
            rec.checkpoint()

    threads = [threading.Thread(target=main_loop), threading.Thread(target=checkpoints)]
    threads += [threading.Thread(target=subagent, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    rec.checkpoint()

    records = _parse_every_line(rec.path)
    starts = {r["subagent_path"]: r for r in records if r["type"] == "subagent_start"}
    ends = {r["subagent_path"]: r for r in records if r["type"] == "subagent_end"}
    assert set(starts) == set(ends) == set(sidechains) and len(starts) == 4
    for path, (n, written) in sidechains.items():
        assert starts[path]["tool_use_id"] == ends[path]["tool_use_id"] == f"toolu_task_{n}"
        assert ends[path]["result"] == f"worker {n} done"
        side_records = _parse_every_line(rec.session_dir / path)
        assert [r["message"] for r in side_records[1:]] == written
    assert [r["message"] for r in records if r["type"] in ("user", "assistant")] == main_messages
    loaded = load_for_resume(rec.path)
    assert loaded.messages == main_messages and loaded.skipped_lines == 0
    check_conversation(loaded.messages)
    assert store.info(rec.id).meta.message_count == len(main_messages)
