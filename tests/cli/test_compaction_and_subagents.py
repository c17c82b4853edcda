"""Compaction and subagents through the real `evo-agent` script, against the local Messages API."""

from __future__ import annotations

import json
import subprocess
import threading

from evo_agent.session import SCENE_TYPES
from tests.agent.helpers import instruction_of, model_requests, summarizer, summary_requests
from tests.agent.test_subagents import is_child, task
from tests.api_rules import check_request
from tests.fake_model_server import hang, text
from tests.helpers import wait_for
from tests.prompt_cache import last_text, plain


def test_a_resumed_session_sends_what_the_live_process_sends_after_an_auto_compaction(cli, model_server):
    model_server.default = summarizer("Summary: the user greeted twice.")
    env = {**cli.env, "EVO_AGENT_COMPACT_CHARS": "300"}
    live = cli.popen(env=env)
    try:
        live.stdin.write("hello " + "h" * 400 + "\n")
        live.stdin.flush()
        model_server.wait_for_requests(1)
        live.stdin.write("hello again\n")  # over the threshold: compacted before this prompt joins
        live.stdin.flush()
        wait_for(lambda: len(model_requests(model_server)) == 2, 30, "the second answer")
        (sid,) = cli.session_ids()
        wait_for(lambda: cli.records(sid)[-1]["type"] == "assistant", 30, "the second answer on disk")

        resumed = cli.run("--resume", sid, "-p", "what now?", env=env)
        assert resumed.rc == 0 and resumed.out == "ok\n", resumed.err
        live.stdin.write("what now?\n")
        live.stdin.close()
        out = live.stdout.read()
        assert live.wait(30) == 0, live.stderr.read()
    finally:
        if live.poll() is None:
            live.kill()
        live.stdout.close()
        live.stderr.close()

    types = [r["type"] for r in cli.records(sid)]
    assert types.count("compact_boundary") == 1
    assert "compaction #1, auto" in out
    resumed_request, live_request = model_requests(model_server)[-2:]
    assert resumed_request["messages"] == live_request["messages"]
    assert live_request["messages"][0]["content"][0]["text"].startswith(
        "<previous-conversation-summary>\nSummary: the user greeted twice.")
    assert not any("h" * 400 in json.dumps(m) for m in live_request["messages"])
    model_server.assert_all_valid()


def test_slash_compact_in_the_repl_and_resume_restores_only_the_summary(cli, model_server):
    model_server.default = summarizer("S-manual")
    first = cli.run(input="remember the number 42\n/compact the number\n/cost\n")
    assert first.rc == 0, first.err
    assert "compaction #1, manual" in first.out
    sid = first.hint_id("err")
    (boundary,) = [r for r in cli.records(sid) if r["type"] == "compact_boundary"]
    assert boundary["summary"] == "S-manual" and boundary["trigger"] == "manual"
    assert "focus on: the number" in instruction_of(summary_requests(model_server)[-1])

    again = cli.run("--resume", sid, "-p", "which number?")
    assert again.rc == 0, again.err
    sent = model_requests(model_server)[-1]["messages"]
    assert plain(sent) == plain([
        {"role": "user", "content": [{"type": "text", "text": "<previous-conversation-summary>\nS-manual\n</previous-conversation-summary>"}]},
        {"role": "user", "content": "which number?"},
    ])
    listing = json.loads(cli.run("sessions", "list", "--json").out)
    by_id = {row["id"]: row for row in listing}
    assert by_id[sid]["compact_count"] == 1 and by_id[again.hint_id()]["compact_count"] == 1
    assert by_id[again.hint_id()]["first_prompt"] == "remember the number 42"


def test_kill_9_during_a_subagent_then_the_parent_resumes_api_valid(cli, model_server):
    def answer(body):
        if is_child(body):
            return hang(30, text("never finished"))
        if len(body["messages"]) == 1:
            return task("long research", "research forever", "toolu_task")
        return text("The subagent was cut off.")

    model_server.default = answer
    proc = cli.popen("-p", "research it", start_new_session=True, stdin=subprocess.DEVNULL)

    def subagent_waiting_for_the_model():
        assert model_server.hanging.wait(30), "the subagent never reached the model"

    cli.kill_9_when(proc, subagent_waiting_for_the_model)

    (sid,) = cli.session_ids()
    recs = [r for r in cli.records(sid) if r["type"] not in SCENE_TYPES]  # the prefix's records aside (memory_index, system_prompt)
    assert [r["type"] for r in recs] == ["session_start", "user", "assistant", "subagent_start"]
    side = cli.sessions_dir / sid / recs[3]["subagent_path"]
    assert [json.loads(line)["type"] for line in side.read_text().splitlines()] == ["session_start", "user"]

    model_server.default = lambda body: text("The subagent was cut off.")
    resumed = cli.run("--resume", sid, "-p", "what happened?")
    assert resumed.rc == 0 and resumed.out == "The subagent was cut off.\n", resumed.err
    sent = model_server.valid_requests[-1]["messages"]
    check_request(sent)
    (result,) = sent[-2]["content"]
    assert result["tool_use_id"] == "toolu_task" and result["is_error"] is True and "interrupted" in result["content"]
    model_server.assert_all_valid()


def test_the_demo_provider_delegates_to_a_subagent_offline(demo_cli):
    result = demo_cli.run("-p", "delegate list the files")
    assert result.rc == 0, result.err
    sid = result.hint_id()
    main = demo_cli.records(sid)
    assert [r["type"] for r in main if r["type"].startswith("subagent")] == ["subagent_start", "subagent_end"]
    end = next(r for r in main if r["type"] == "subagent_end")
    assert "README.md" in end["result"]
    side = demo_cli.sessions_dir / sid / end["subagent_path"]
    types = [json.loads(line)["type"] for line in side.read_text().splitlines()]
    assert types == ["session_start", "user", "assistant", "permission", "user", "assistant"]


def test_parallel_subagent_results_in_the_repl_name_their_task(cli, model_server):
    asked = {"alpha": threading.Event(), "beta": threading.Event()}

    def answer(body):
        if is_child(body):
            job = last_text(body)
            asked[job].set()  # both children asked: both calls are on the screen before any result
            assert all(event.wait(30) for event in asked.values())
            return text(f"report on {job}")
        if len(body["messages"]) == 1:
            return [task("alpha job", "alpha", "toolu_a"), task("beta job", "beta", "toolu_b")]
        return text("both reported")

    model_server.default = answer
    result = cli.run(input="do both\n")
    assert result.rc == 0, result.err
    results = [line for line in result.out_lines if line.startswith("  ⎿ ")]
    assert len(results) == 2
    for line in results:
        name = "alpha" if "report on alpha" in line else "beta"
        # Whichever finished first, a result not right below its call says which call it answers.
        assert line.startswith(f"  ⎿ task({name} job): report on {name}") or line == f"  ⎿ report on {name}"
    assert sum(line.startswith("  ⎿ task(") for line in results) >= 1


def test_a_resumed_history_over_the_threshold_is_compacted_first_and_never_copied(cli, model_server):
    """Issue #14 item 4: the new session stores what is sent (the summary), not a re-redacted copy."""
    from evo_agent.session import summary_message
    from tests.agent.helpers import summary_requests
    from tests.builders import seed_session

    big = "x" * 3000
    sid = seed_session(cli.project, ("read the log " + big, "it says " + big), ("and now?", "done " + big))
    model_server.default = summarizer("Summary: the log was read twice.")
    env = {**cli.env, "EVO_AGENT_COMPACT_CHARS": "5000"}
    result = cli.run("--resume", sid, "-p", "what next?", env=env)
    assert result.rc == 0 and result.out == "ok\n", result.err
    assert "Compacted 4 messages" in result.err

    requests = model_server.valid_requests
    assert len(requests) == 2 and requests[0] == summary_requests(model_server)[0]  # the summary came first
    assert plain(model_requests(model_server)[0]["messages"]) == plain([
        summary_message("Summary: the log was read twice."), {"role": "user", "content": "what next?"}])
    new = result.hint_id()
    records = [r for r in cli.records(new) if r["type"] != "memory_index"]  # Auto Memory's prefix record aside (tests/cli/test_memory_command.py)
    assert [r["type"] for r in records] == ["session_start", "resume_marker", "compact_boundary", "user", "assistant"]
    assert records[1]["from_session_id"] == sid and records[2]["trigger"] == "auto"
    assert not any(r.get("restored") for r in records)
    assert big not in cli.transcript(new).read_text()

    again = cli.run("--resume", new, "-p", "and then?", env=env)  # what was stored is what is restored
    assert again.rc == 0, again.err
    assert plain(model_requests(model_server)[-1]["messages"][:3]) == plain(model_requests(model_server)[0]["messages"] + [
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}])
    model_server.assert_all_valid()


def test_when_the_resumed_history_cannot_be_compacted_it_is_kept_whole(cli, model_server):
    from tests.builders import seed_session
    from tests.fake_model_server import error

    big = "y" * 3000
    sid = seed_session(cli.project, ("one " + big, "two " + big), ("three", "four " + big))
    model_server.script(error(400, "invalid_request_error", "no summaries today"))
    model_server.default = summarizer("Summary at the first turn.")
    env = {**cli.env, "EVO_AGENT_COMPACT_CHARS": "5000"}
    result = cli.run("--resume", sid, "-p", "go on", env=env)
    assert result.rc == 0, result.err
    assert "the restored history could not be compacted" in result.err and "no summaries today" in result.err
    records = [r for r in cli.records(result.hint_id()) if r["type"] != "memory_index"]  # Auto Memory's prefix record aside (tests/cli/test_memory_command.py)
    assert [r["type"] for r in records][:6] == ["session_start", "resume_marker", "user", "assistant", "user", "assistant"]
    assert all(r.get("restored") for r in records[2:6])
