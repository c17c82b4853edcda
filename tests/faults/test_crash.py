"""SIGKILL the real `evo-agent` at random moments: nothing written is lost, every resume is exact and valid.

The harness is tests/faults/crash.py. The seed of the random moments is printed
and named in every failure; `EVO_AGENT_FAULT_SEED=<seed>` replays the same
choices (the kill times depend on the machine too, so a replay is close, not exact).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import time

import pytest

from tests.builders import make_git_project
from tests.fake_model_server import hang, text, tool_use
from tests.prompt_cache import plain

from .crash import MOMENTS, Moment, is_compaction_request, run_chains, session_ids

pytestmark = pytest.mark.faults

RUNS = 50
CHAINS = 4


def fault_seed() -> int:
    return int(os.environ.get("EVO_AGENT_FAULT_SEED") or random.SystemRandom().randrange(1 << 31))


# --------------------------------------------------------------------------- a subagent, a compaction

CHILD_PROMPT = "find the README and report its first line"


def _subagent_script(run):
    def route(body):
        if plain(body["messages"][0]) == plain({"role": "user", "content": CHILD_PROMPT}):
            return [text("Looking."), tool_use("bash", {"command": f"echo $$ >> {run.pidfile}; exec sleep 30"})]
        return text("The subagent did not finish.")

    task = tool_use("task", {"description": "read the readme", "prompt": CHILD_PROMPT,
                             "subagent_type": "general-purpose"})
    return [[text("Delegating."), task], route, route, route]


def _subagent_tool_running(run):
    return run.pidfile.exists() and any(
        (run.sessions_dir / sid / "subagent").is_dir() for sid in session_ids(run.sessions_dir) - run.before)


def _compaction_script(run):
    # Mid-turn, results the model has not read yet do not count towards the threshold: the
    # second call's history (900 x's read) passes it, so a compaction comes before the third.
    # A resumed run may already be over the threshold: its compaction comes before the prompt.
    answers = [tool_use("bash", {"command": "printf 'x%.0s' $(seq 1 900)"}), tool_use("bash", {"command": "echo more"})]

    def route(body):
        if is_compaction_request(body):
            return hang(30, text("The user asked for a long output; it was printed."))
        return answers.pop(0) if answers else text("No compaction happened.")

    return [route] * 6


SUBAGENT = Moment("subagent", "print", _subagent_script, _subagent_tool_running, jitter=(0.0, 0.3), weight=2)
COMPACTION = Moment("compaction", "print", _compaction_script, lambda run: run.server.hanging.is_set(),
                    jitter=(0.0, 0.3), env={"EVO_AGENT_COMPACT_CHARS": "600"}, weight=2)


def test_fifty_kills_at_random_moments_lose_nothing(tmp_path):
    seed = fault_seed()
    tally = run_chains(RUNS, CHAINS, seed, tmp_path, make_git_project, [*MOMENTS.values(), SUBAGENT, COMPACTION])
    report = f"seed {seed}: {tally.summary()}"
    print(f"\ncrash faults: {report}")
    assert not tally.failures, f"{report}\n" + "\n".join(tally.failures[:5])
    assert tally.runs == RUNS
    assert tally.records_lost == 0
    # Every run but a chain's first resumes, and each chain ends with one more `--resume -p`; a "startup"
    # kill can leave nothing to check (no request) and make the next run start afresh.
    assert tally.resumes == tally.resumes_valid >= RUNS - 2 * tally.moments.get("startup", 0)
    # A run can end on its own before the kill only at "startup" (an answer of one word); all the others die by -9.
    assert tally.killed >= RUNS - tally.moments.get("startup", 0)


@pytest.mark.parametrize("moment", [SUBAGENT, COMPACTION, MOMENTS["approval-repl"]], ids=lambda m: m.name)
def test_kills_during_a_subagent_compaction_or_pending_approval_lose_nothing(tmp_path, moment):
    seed = fault_seed()
    tally = run_chains(4, 2, seed, tmp_path, make_git_project, [moment])
    report = f"seed {seed}: {tally.summary()}"
    print(f"\n{moment.name} faults: {report}")
    assert not tally.failures, f"{report}\n" + "\n".join(tally.failures[:3])
    assert tally.killed == tally.runs == 4 and tally.records_lost == 0 and tally.resumes == tally.resumes_valid == 4


# --------------------------------------------------------------------------- a resume cut while copying


def test_a_resume_killed_while_copying_is_never_listed_or_continued(cli, model_server):
    """What the harness's "startup" moment hit in 2 of 350 runs before resumes were staged.

    A source of ~40 MB makes the copy take long enough to kill the real
    `evo-agent --resume` in the middle of it, while its staging file grows.
    """
    from evo_agent.session import SessionStore

    store = SessionStore(cli.project, warn=lambda line: None)
    source = store.create(model="m", provider="anthropic")
    history = []
    for i in range(400):
        history += [{"role": "user", "content": f"question {i} " + "q" * 50_000},
                    {"role": "assistant", "content": [{"type": "text", "text": f"answer {i}"}]}]
    source.append_many((m["role"], {"message": m}) for m in history)
    source.checkpoint()
    before = set(cli.session_ids())
    env = {**cli.env, "EVO_AGENT_COMPACT_CHARS": str(10**9)}
    proc = cli.popen("--resume", source.id, "-p", "go on", start_new_session=True, stdin=subprocess.DEVNULL, env=env)

    def copy_half_done():
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            for sid in set(cli.session_ids()) - before:
                staged = cli.sessions_dir / sid / ".messages.jsonl.partial"
                if staged.exists() and staged.stat().st_size > 1 << 20:
                    return
            assert proc.poll() is None, "the resume finished before it could be cut"
            time.sleep(0.002)
        raise AssertionError("no staging file appeared")

    cli.kill_9_when(proc, copy_half_done)
    (new,) = set(cli.session_ids()) - before
    assert not (cli.sessions_dir / new / "messages.jsonl").exists()
    listed = [row["id"] for row in json.loads(cli.run("sessions", "list", "--json").out)]
    assert listed == [source.id]  # the cut copy is not offered anywhere
    check = cli.run("sessions", "fsck", new)
    assert "a resume that ended while copying its history" in check.out and check.rc == 1
    model_server.script(text("continued"))
    again = cli.run("--continue", "-p", "and now?", env=env)
    assert again.rc == 0 and again.out == "continued\n", again.err
    assert f"Resumed {source.id}: {len(history)} messages restored" in again.err
    assert plain(model_server.requests[-1]["messages"][:-1]) == plain(history)
