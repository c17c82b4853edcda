"""The `task` tool against the local Messages API: sidechains, markers, parallel runs, failures.

What a user would notice: the main transcript holds only the parent's turns
and two markers per subagent; each subagent's whole run is in its own file;
a subagent that fails or is interrupted leaves the parent valid and going.
"""

from __future__ import annotations

import re
import threading

from evo_agent.agent.subagents import SUBAGENT_MAX_CALLS
from evo_agent.session import load_for_resume
from evo_agent.tools.plan_tools import PLAN_TOOL_NAMES
from tests.agent.helpers import assert_faithful
from tests.api_rules import check_request
from tests.builders import make_agent, server_provider
from tests.builders import read_records as records
from tests.fake_model_server import error, hang, text, tool_use
from tests.prompt_cache import last_text

SIDECHAIN_NAME = re.compile(r"^subagent/\d{13}_[a-z0-9-]{1,40}_[0-9a-f]{4}\.jsonl$")


def is_child(body: dict) -> bool:
    """Requests of a subagent: its tool list has no `task`."""
    return "task" not in {t["name"] for t in body.get("tools", [])}


def task(description: str, prompt: str, tid: str, **extra) -> dict:
    return tool_use("task", {"description": description, "prompt": prompt, **extra}, id=tid)


def test_a_task_runs_in_its_own_sidechain_and_the_main_transcript_keeps_only_markers(project, model_server):
    def answer(body):
        last = last_text(body)
        if is_child(body):
            if last == "Find where retries are configured.":
                return tool_use("grep", {"pattern": "retry"}, id="toolu_child_1")
            return text("Retries are configured in README.md (none found).")
        if last == "where are retries configured?":
            return [text("Delegating."), task("Find retry config", "Find where retries are configured.", "toolu_task")]
        return text("The subagent says: none found.")

    model_server.default = answer
    agent, _ = make_agent(project, server_provider(model_server))
    result = agent.run_turn("where are retries configured?")
    assert result.text == "The subagent says: none found."

    main = records(agent.recorder.path)
    assert [r["type"] for r in main] == [
        "session_start", "system_prompt", "user", "assistant", "subagent_start", "subagent_end", "user", "assistant"]
    main.pop(1)  # the system prompt's template (agent/prompt.py)
    start, end = main[3], main[4]
    assert start["agent_name"] == end["agent_name"] == "find-retry-config"
    assert start["tool_use_id"] == end["tool_use_id"] == "toolu_task"
    assert start["subagent_path"] == end["subagent_path"] and SIDECHAIN_NAME.match(start["subagent_path"])
    assert start["subagent_type"] == "general-purpose"
    assert end["result"] == "Retries are configured in README.md (none found)."
    # The task's tool_result is the child's final text; no child turn is in the main transcript.
    (tool_result,) = main[5]["message"]["content"]
    assert tool_result == {"type": "tool_result", "tool_use_id": "toolu_task", "content": end["result"]}
    assert "toolu_child_1" not in agent.recorder.path.read_text()
    assert len({r["prompt_id"] for r in main[1:]}) == 1

    side_path = agent.recorder.session_dir / start["subagent_path"]
    side = records(side_path)
    assert [r["type"] for r in side] == ["session_start", "user", "assistant", "user", "assistant"]
    assert side[0]["agent_name"] == "find-retry-config" and side[0]["parent_session_id"] == agent.session_id
    assert side[0]["model"] == "claude-test" and side[0]["provider"] == "anthropic"
    assert side[1]["message"] == {"role": "user", "content": "Find where retries are configured."}
    assert {r["prompt_id"] for r in side[1:]} == {main[1]["prompt_id"]}
    assert side_path.stat().st_mode & 0o777 == 0o600
    assert (agent.recorder.session_dir / "subagent").stat().st_mode & 0o777 == 0o700
    # The child's own history is valid, and had every tool but task.
    child_requests = [b for b in model_server.valid_requests if is_child(b)]
    assert {t["name"] for t in child_requests[0]["tools"]} == {
        "bash", "read_file", "write_file", "edit_file", "glob", "grep", "compact", *PLAN_TOOL_NAMES}
    check_request(load_for_resume(side_path).messages + [{"role": "user", "content": "x"}])
    assert_faithful(agent)
    model_server.assert_all_valid()


def test_two_task_calls_in_one_response_run_at_once_each_in_its_own_sidechain(project, model_server):
    both_children_asking = threading.Barrier(2, timeout=20)

    def answer(body):
        if is_child(body):
            both_children_asking.wait()  # breaks (and the test fails) unless the two run concurrently
            return text(f"report on {last_text(body)}")
        if len(body["messages"]) == 1:
            return [task("explore api", "alpha", "toolu_a"), task("review tests", "beta", "toolu_b", subagent_type="review")]
        return text("both done")

    model_server.default = answer
    agent, _ = make_agent(project, server_provider(model_server))
    assert agent.run_turn("two things at once").text == "both done"

    main = records(agent.recorder.path)
    markers = [r for r in main if r["type"].startswith("subagent_")]
    assert sorted(r["type"] for r in markers) == ["subagent_end"] * 2 + ["subagent_start"] * 2
    paths = {r["tool_use_id"]: r["subagent_path"] for r in markers if r["type"] == "subagent_start"}
    assert set(paths) == {"toolu_a", "toolu_b"} and len(set(paths.values())) == 2
    results = main[-2]["message"]["content"]
    assert [(b["tool_use_id"], b["content"]) for b in results] == [("toolu_a", "report on alpha"), ("toolu_b", "report on beta")]
    for tid, prompt in (("toolu_a", "alpha"), ("toolu_b", "beta")):
        side = records(agent.recorder.session_dir / paths[tid])
        assert [r["type"] for r in side] == ["session_start", "user", "assistant"]
        assert side[1]["message"]["content"] == prompt
    # Every line of every file is one whole record.
    for path in [agent.recorder.path, *(agent.recorder.session_dir / p for p in paths.values())]:
        assert all(line.startswith(b'{"type":') for line in path.read_bytes().splitlines())
    assert_faithful(agent)


def test_a_failing_subagent_still_gets_its_end_marker_and_an_error_result(project, model_server):
    def answer(body):
        if is_child(body):
            return error(400, "invalid_request_error", "the child asked for something impossible")
        if len(body["messages"]) == 1:
            return task("doomed", "do the impossible", "toolu_x")
        return text("noted the failure")

    model_server.default = answer
    agent, _ = make_agent(project, server_provider(model_server))
    assert agent.run_turn("try it").text == "noted the failure"

    main = records(agent.recorder.path)
    end = next(r for r in main if r["type"] == "subagent_end")
    assert end["is_error"] is True and "the child asked for something impossible" in end["result"]
    (result,) = main[-2]["message"]["content"]
    assert result["is_error"] is True and result["content"] == end["result"]
    assert_faithful(agent)


def test_an_interrupted_subagent_ends_its_sidechain_validly_and_the_parent_records_it(project, model_server):
    cancel = threading.Event()

    def answer(body):
        if is_child(body):
            cancel.set()  # Ctrl+C while the child waits for the model
            return tool_use("bash", {"command": "echo never"}, id="toolu_never")
        return task("slow one", "take your time", "toolu_slow")

    model_server.default = answer
    agent, _ = make_agent(project, server_provider(model_server))
    assert agent.run_turn("go", cancel=cancel).cancelled

    main = records(agent.recorder.path)
    end = next(r for r in main if r["type"] == "subagent_end")
    assert end["is_error"] is True and "interrupted" in end["result"]
    side_path = agent.recorder.session_dir / end["subagent_path"]
    side = load_for_resume(side_path).messages
    check_request(side + [{"role": "user", "content": "x"}])
    # Whether the answer arrived or not, the child's history ends on the interruption, and no tool ran.
    assert side[-1]["role"] == "user" and "[Request interrupted by user]" in str(side[-1]["content"])
    results = [b for m in side if isinstance(m["content"], list) for b in m["content"] if b["type"] == "tool_result"]
    assert all(b.get("is_error") and "never" not in b["content"] for b in results)
    assert_faithful(agent)


def test_a_subagent_stops_after_its_model_call_cap(project, model_server):
    def answer(body):
        if is_child(body):
            return tool_use("bash", {"command": "true"}, id=f"toolu_loop_{len(body['messages'])}")
        if len(body["messages"]) == 1:
            return task("endless", "loop forever", "toolu_endless")
        return text("it gave up")

    model_server.default = answer
    agent, _ = make_agent(project, server_provider(model_server))
    agent.run_turn("go")
    assert sum(1 for b in model_server.valid_requests if is_child(b)) == SUBAGENT_MAX_CALLS
    end = next(r for r in records(agent.recorder.path) if r["type"] == "subagent_end")
    assert end["is_error"] is True and f"after {SUBAGENT_MAX_CALLS} model calls" in end["result"]
    assert_faithful(agent)


def test_subagent_tokens_count_in_cost_but_not_in_the_main_transcripts_totals(project, model_server):
    model_server.input_tokens = 100

    def answer(body):
        if is_child(body):
            return text("child answer")
        return task("count", "count things", "toolu_n") if len(body["messages"]) == 1 else text("done")

    model_server.default = answer
    agent, _ = make_agent(project, server_provider(model_server))
    agent.run_turn("go")
    assert agent.usage.model_calls == 3 and agent.usage.input_tokens == 300
    agent.recorder.checkpoint()
    meta = (agent.recorder.session_dir / "meta.json").read_text()
    assert '"total_input_tokens": 200' in meta  # SPEC §3: sums over this file's assistant records


def test_ctrl_c_during_two_parallel_subagents_ends_both_validly(project, model_server):
    cancel = threading.Event()
    both_asking = threading.Barrier(2, timeout=20)

    def answer(body):
        if is_child(body):
            both_asking.wait()
            cancel.set()  # Ctrl+C while both children stream
            return hang(30, text("late"))
        return [task("first", "one", "toolu_1"), task("second", "two", "toolu_2")]

    model_server.default = answer
    agent, _ = make_agent(project, server_provider(model_server))
    assert agent.run_turn("go", cancel=cancel).cancelled

    main = records(agent.recorder.path)
    ends = [r for r in main if r["type"] == "subagent_end"]
    assert sorted(r["tool_use_id"] for r in ends) == ["toolu_1", "toolu_2"]
    assert all(r["is_error"] and "interrupted" in r["result"] for r in ends)
    for end in ends:
        side = load_for_resume(agent.recorder.session_dir / end["subagent_path"]).messages
        check_request(side + [{"role": "user", "content": "x"}])
    assert_faithful(agent)
