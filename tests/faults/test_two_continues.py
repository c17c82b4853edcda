"""Two `evo-agent -c` started together on one project: two sessions, nothing interleaved, and the next
`-c` continues the one that was updated last, not their common source."""

from __future__ import annotations

import hashlib
import json
import subprocess
import threading
import time

import pytest

from tests.builders import history_of, seed_session
from tests.cli_runner import COMMAND
from tests.fake_model_server import text
from tests.prompt_cache import last_text, plain

pytestmark = pytest.mark.faults


def _past_the_millisecond_of(sessions_dir, err: str) -> None:
    """Return once the clock has left the millisecond the session named by `err`'s hint was last updated in."""
    sid = err.splitlines()[-1].rsplit(" ", 1)[1]
    updated = json.loads((sessions_dir / sid / "meta.json").read_text())["updated_ms"]
    while time.time() * 1000 <= updated + 1:
        pass


def test_two_continues_at_once_fork_the_latest_session_and_the_next_continue_takes_the_last_written(
        cli, model_server):
    older = seed_session(cli.project, ("older question", "Older answer."))
    source = seed_session(cli.project, ("shared question", "Shared answer."))
    source_bytes = cli.transcript(source).read_bytes()
    both_asking = threading.Barrier(2)
    first_done = threading.Event()

    def answer(body):
        said = last_text(body)
        both_asking.wait(30)  # both continues are in flight together
        if said == "terminal 2":
            assert first_done.wait(60)  # terminal 2 answers (and writes) once terminal 1 has finished
        return text(f"Answer to {said}.")

    model_server.default = answer
    procs = [subprocess.Popen([*COMMAND, "-c", "-p", f"terminal {n}"], cwd=cli.project, env=cli.env,
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for n in (1, 2)]
    first = procs[0].communicate(timeout=90)
    _past_the_millisecond_of(cli.sessions_dir, first[1])
    first_done.set()
    second = procs[1].communicate(timeout=90)
    ids = []
    for n, (proc, (out, err)) in enumerate(zip(procs, (first, second)), start=1):
        assert proc.returncode == 0 and out == f"Answer to terminal {n}.\n", err
        ids.append(err.splitlines()[-1].rsplit(" ", 1)[1])
    assert len(set(ids)) == 2 and not {source, older} & set(ids)
    assert cli.transcript(source).read_bytes() == source_bytes  # the source is never written again
    for n, sid in enumerate(ids, start=1):
        records = [json.loads(line) for line in cli.transcript(sid).read_bytes().splitlines()]
        assert {r["session_id"] for r in records} == {sid}
        assert records[1]["type"] == "resume_marker" and records[1]["from_session_id"] == source
        assert cli.messages(sid) == history_of(("shared question", "Shared answer."),
                                               (f"terminal {n}", f"Answer to terminal {n}."))
        meta = json.loads((cli.sessions_dir / sid / "meta.json").read_text())
        assert meta["message_count"] == 4 and meta["messages_bytes"] == cli.transcript(sid).stat().st_size
    model_server.default = None
    model_server.script(text("Continued."))
    third = cli.run("-c", "-p", "which one?")
    assert third.rc == 0, third.err
    assert plain(model_server.requests[-1]["messages"]) == plain(history_of(
        ("shared question", "Shared answer."), ("terminal 2", "Answer to terminal 2."))
        + [{"role": "user", "content": "which one?"}])
    assert hashlib.sha256(cli.transcript(source).read_bytes()).digest() == hashlib.sha256(source_bytes).digest()
