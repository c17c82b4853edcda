"""Compaction against the local Messages API: the three triggers, the boundary, fidelity across resume.

What a user would notice: after a compaction the model is sent the summary
and nothing from before it; a resumed session sends exactly what the live
one would have; a failed summary loses nothing.
"""

from __future__ import annotations

import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evo_agent.agent import CompactionFailed, micro_compact
from evo_agent.agent.compaction import CLEAR_RESULT_CHARS, CLEAR_TRIGGER_CHARS, KEEP_RECENT_RESULTS, history_chars
from evo_agent.agent.events import Notice, Retrying, TurnEvent
from evo_agent.session import load_for_resume, summary_message
from tests.agent.helpers import (
    assert_faithful,
    conversation_of,
    instruction_of,
    is_summary_request,
    model_requests,
    summarizer,
    summary_requests,
)
from tests.api_rules import check_request
from tests.builders import make_agent, server_provider
from tests.builders import read_records as records
from tests.fake_model_server import error, reply, text, tool_use
from tests.prompt_cache import plain

BIG = "x" * 3000


def boundaries(agent) -> list[dict]:
    return [r for r in records(agent.recorder.path) if r["type"] == "compact_boundary"]


def wrapped(summary: str) -> dict:
    return summary_message(summary)


def test_manual_compaction_writes_one_boundary_then_replaces_the_history(project, model_server):
    model_server.default = summarizer("Goal: fix the upload test.")
    agent, _ = make_agent(project, server_provider(model_server))
    agent.run_turn("please look at the upload test")
    agent.run_turn("and the retry logic")
    before = list(agent.history)

    result = agent.compact("the retry logic")

    (boundary,) = boundaries(agent)
    assert (boundary["compact_count"], boundary["trigger"]) == (1, "manual")
    assert boundary["summary"] == "Goal: fix the upload test." == result.summary
    assert agent.history == [wrapped(boundary["summary"])]
    # The summary call was the conversation's next request (tools, system, messages) plus the
    # instruction with the focus: it reads the cache (SPEC §12); tool_choice as in every request.
    (request,) = summary_requests(model_server)
    previous = model_requests(model_server)[-1]
    assert conversation_of(request) == plain(before)
    assert plain(request["tools"]) == plain(previous["tools"]) and plain(request["system"]) == plain(previous["system"])
    assert "focus on: the retry logic" in instruction_of(request) and "tool_choice" not in request
    assert result.messages_before == len(before) and result.compact_count == agent.compact_count == 1

    agent.run_turn("go on")
    last = model_requests(model_server)[-1]["messages"]
    assert plain(last) == plain([wrapped("Goal: fix the upload test."), {"role": "user", "content": "go on"}])
    assert_faithful(agent)
    model_server.assert_all_valid()


def test_automatic_compaction_runs_before_the_prompt_joins_the_history(project, model_server):
    model_server.default = summarizer("S-auto")
    agent, _ = make_agent(project, server_provider(model_server), compact_threshold=500)
    agent.run_turn("first " + "y" * 600)  # the history is empty before this prompt: nothing to compact
    assert boundaries(agent) == []
    notices = []

    class Notices:
        def on_event(self, event: TurnEvent):
            if isinstance(event, Notice | Retrying):
                notices.append(event.text)

    agent.run_turn("second", Notices())

    (boundary,) = boundaries(agent)
    assert (boundary["trigger"], boundary["compact_count"]) == ("auto", 1)
    # The new prompt was not summarised away: it comes right after the summary.
    assert plain(model_requests(model_server)[-1]["messages"]) == plain([wrapped("S-auto"), {"role": "user", "content": "second"}])
    assert any("compaction #1, auto" in n for n in notices)
    types = [r["type"] for r in records(agent.recorder.path)]
    assert types == ["session_start", "system_prompt", "user", "assistant", "compact_boundary", "user", "assistant"]
    assert_faithful(agent)


def test_automatic_compaction_also_runs_between_the_model_calls_of_a_turn(project, model_server):
    model_server.default = summarizer("S-mid", answers=(
        tool_use("bash", {"command": "printf '%01900d' 1"}, id="toolu_1"),
        tool_use("bash", {"command": "printf '%01900d' 2"}, id="toolu_2"),
    ))
    agent, _ = make_agent(project, server_provider(model_server), compact_threshold=2000)
    agent.run_turn("print two things")

    (boundary,) = boundaries(agent)
    assert boundary["trigger"] == "auto"
    sent = conversation_of(summary_requests(model_server)[0])
    assert sent[0]["content"][0]["text"] == "print two things"
    assert [b["type"] for b in sent[-1]["content"]] == ["tool_result"]  # the instruction comes after the results
    assert sum(b["type"] == "tool_result" for m in sent for b in m["content"]) == 2
    # The call after the second tool saw only the summary; the turn then ended on its answer.
    assert plain(model_requests(model_server)[-1]["messages"]) == plain([wrapped("S-mid")])
    assert agent.history == [wrapped("S-mid"), {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}]
    assert_faithful(agent)
    model_server.assert_all_valid()


def test_a_result_as_large_as_the_threshold_is_read_and_never_loops_compact_and_reread(project, model_server):
    """Mid-turn, the results the model has not read yet do not count towards the threshold."""
    big = "head -c 60000 /dev/zero | tr '\\0' x"  # bash caps its output at the default threshold
    model_server.default = summarizer("S-big", answers=(
        *[tool_use("bash", {"command": big}, id=f"toolu_{i}") for i in range(3)], text("read it")))
    agent, _ = make_agent(project, server_provider(model_server))
    assert agent.compact_threshold == 50_000
    assert agent.run_turn("read the big output three times").status == "done"

    def last_result(request):
        return request["messages"][-1]["content"][0]

    first, after_0, after_1, after_2 = model_requests(model_server)
    (summary_call,) = summary_requests(model_server)  # one compaction, not one per call
    # toolu_0 alone passes the threshold, yet the model reads it in full.
    assert last_result(after_0)["tool_use_id"] == "toolu_0" and last_result(after_0)["content"].count("x") >= 49_000
    # toolu_1 arrives when the history already holds toolu_0's output: compacted, its output
    # given to the summariser at length, and the model continues from the summary.
    assert plain(after_1["messages"]) == plain([wrapped("S-big")])
    assert str(summary_call["messages"]).count("x" * 1000) >= 2 * 48  # toolu_0's and toolu_1's outputs, whole
    # Run again after the compaction, the output is read in full: no compact-and-reread loop.
    assert last_result(after_2)["tool_use_id"] == "toolu_2" and last_result(after_2)["content"].count("x") >= 49_000
    assert_faithful(agent)


def test_the_compact_tool_compacts_after_its_response_is_answered(project, model_server):
    model_server.default = summarizer("S-tool")
    model_server.script(
        [tool_use("bash", {"command": "echo before"}, id="toolu_a"), tool_use("compact", {"focus": "the echo"}, id="toolu_c")],
    )
    agent, _ = make_agent(project, server_provider(model_server))
    agent.run_turn("echo, then tidy up")

    recs = records(agent.recorder.path)
    types = [r["type"] for r in recs]
    assert types == ["session_start", "system_prompt", "user", "assistant", "user", "compact_boundary", "assistant"]
    recs.pop(1)  # the system prompt's template (agent/prompt.py)
    results = recs[3]["message"]["content"]
    assert [b["tool_use_id"] for b in results] == ["toolu_a", "toolu_c"]  # both calls answered before
    assert recs[4]["trigger"] == "tool" and recs[4]["summary"] == "S-tool"
    assert "focus on: the echo" in instruction_of(summary_requests(model_server)[0])
    assert plain(model_requests(model_server)[-1]["messages"]) == plain([wrapped("S-tool")])
    assert_faithful(agent)


def test_a_compact_call_at_the_model_call_cap_still_compacts_so_resume_matches(project, model_server):
    model_server.default = summarizer("S-cap", answers=(tool_use("compact", {"focus": "x"}, id="toolu_c"),))
    agent, _ = make_agent(project, server_provider(model_server), max_model_calls=1)
    assert agent.run_turn("tidy up").status == "limit"
    assert [b["trigger"] for b in boundaries(agent)] == ["tool"] and agent.history == [wrapped("S-cap")]
    agent.run_turn("next")
    assert plain(model_requests(model_server)[-1]["messages"]) == plain([wrapped("S-cap"), {"role": "user", "content": "next"}])
    assert_faithful(agent)


def test_a_compact_call_interrupted_before_it_ran_is_forgotten_live_as_on_resume(project, model_server):
    cancel = threading.Event()

    def compact_then_ctrl_c(body):
        cancel.set()
        return tool_use("compact", {}, id="toolu_c")

    model_server.default = summarizer("never")
    model_server.script(compact_then_ctrl_c)
    agent, _ = make_agent(project, server_provider(model_server))
    assert agent.run_turn("tidy up", cancel=cancel).cancelled
    agent.run_turn("next")
    assert boundaries(agent) == [] and summary_requests(model_server) == []
    assert_faithful(agent)


def test_a_summary_that_cannot_be_saved_is_not_applied(project, model_server, monkeypatch):
    """Live and resumed sessions must agree: no boundary on disk, no replaced history in memory."""
    import errno
    import os

    model_server.default = summarizer("S-lost")
    agent, _ = make_agent(project, server_provider(model_server))
    agent.run_turn("first")
    real_write = os.write

    def disk_full_for_the_boundary(fd, data):
        if b'"compact_boundary"' in bytes(data):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", disk_full_for_the_boundary)
    with pytest.raises(CompactionFailed, match="could not be saved"):
        agent.compact()
    monkeypatch.setattr(os, "write", real_write)
    agent.run_turn("second")
    assert boundaries(agent) == [] and agent.compact_count == 0
    assert_faithful(agent)


def test_slash_compact_is_its_own_prompt_id(project, model_server):
    model_server.default = summarizer("S")
    agent, _ = make_agent(project, server_provider(model_server))
    agent.run_turn("first")
    agent.compact()
    recs = records(agent.recorder.path)
    assert recs[-1]["type"] == "compact_boundary" and recs[-1]["prompt_id"] != recs[-2]["prompt_id"]


def test_resume_after_compaction_sends_what_the_live_agent_sends(project, model_server):
    model_server.default = summarizer("S1")
    live, store = make_agent(project, server_provider(model_server))
    live.run_turn("read the config")
    live.compact()
    live.run_turn("now change it")

    # Resume the session as it stands, then let both send the same next prompt.
    other, _ = make_agent(project, server_provider(model_server))
    other.resume(live.session_id)
    assert other.compact_count == 1
    live.run_turn("and test it")
    other.run_turn("and test it")

    live_request, resumed_request = model_requests(model_server)[-2:]
    assert resumed_request["messages"] == live_request["messages"]  # byte for byte, marks included
    assert plain(resumed_request["messages"][:1]) == plain([wrapped("S1")])
    model_server.assert_all_valid()


def test_two_compactions_restore_only_the_last_summary_and_counts_go_on_across_resumes(project, model_server):
    model_server.default = summarizer("first summary", "second summary", "third summary")
    agent, store = make_agent(project, server_provider(model_server))
    agent.run_turn("one")
    agent.compact()
    agent.run_turn("two")
    agent.compact()
    agent.run_turn("three")

    loaded = load_for_resume(agent.recorder.path)
    assert loaded.compact_count == 2 and loaded.summary.startswith("second summary")
    assert loaded.messages[0] == wrapped("second summary")
    assert not any("first summary" in str(m) for m in loaded.messages)

    resumed, _ = make_agent(project, server_provider(model_server))
    resumed.resume(agent.session_id)
    resumed.compact()
    (boundary,) = boundaries(resumed)
    assert boundary["compact_count"] == 3
    # The summary of a compacted history summarises the previous summary too.
    assert "second summary" in str(summary_requests(model_server)[-1]["messages"][0]["content"])


@pytest.mark.parametrize("failure", ["http", "empty"])
def test_a_failed_summary_keeps_history_and_transcript_as_they_were(project, model_server, failure):
    agent, _ = make_agent(project, server_provider(model_server))
    agent.run_turn("keep me")
    history, transcript = list(agent.history), agent.recorder.path.read_bytes()
    model_server.script(error(500, "api_error", "boom") if failure == "http" else text(""))

    with pytest.raises(CompactionFailed) as raised:
        agent.compact()
    assert "nothing was compacted" in str(raised.value) and "\n" not in str(raised.value)
    assert agent.history == history and agent.compact_count == 0
    after = agent.recorder.path.read_bytes()
    assert after.startswith(transcript)
    added = records(agent.recorder.path)[len(transcript.splitlines()):]
    # An answer paid for, even an empty one, is on disk as /cost counted it; a call refused is not.
    assert [r["type"] for r in added] == ([] if failure == "http" else ["compact_failed"])
    assert load_for_resume(agent.recorder.path).messages == history


def test_a_failed_automatic_compaction_warns_once_and_the_turn_goes_on(project, model_server):
    calls = iter(range(100))

    def answer(body):
        if is_summary_request(body):
            return text("")  # every summary comes back empty
        n = next(calls)
        return tool_use("bash", {"command": "true"}, id=f"t{n}") if 1 <= n <= 2 else text("ok")

    model_server.default = answer
    agent, _ = make_agent(project, server_provider(model_server), compact_threshold=100)
    agent.run_turn("warm up " + "z" * 200)
    notices = []

    class Notices:
        def on_event(self, event: TurnEvent):
            if isinstance(event, Notice | Retrying):
                notices.append(event.text)

    result = agent.run_turn("again", Notices())
    assert result.status == "done" and result.model_calls == 3  # two tool rounds, then the answer
    assert [n for n in notices if "compaction failed" in n] == [
        "evo-agent: auto compaction failed: the model returned an empty summary; nothing was compacted"]
    assert boundaries(agent) == []
    assert_faithful(agent)


def test_interrupting_a_compaction_before_a_turn_records_the_prompt_and_the_interruption(project, model_server):
    agent, _ = make_agent(project, server_provider(model_server), compact_threshold=50)
    agent.run_turn("a long enough first prompt to pass the threshold")
    cancel = threading.Event()
    cancel.set()
    result = agent.run_turn("second", cancel=cancel)
    assert result.cancelled and boundaries(agent) == []
    assert agent.history[-2:] == [{"role": "user", "content": "second"},
                                  {"role": "user", "content": "[Request interrupted by user]"}]
    assert_faithful(agent)


def test_compacting_an_empty_session_is_a_clear_error(project, model_server):
    agent, _ = make_agent(project, server_provider(model_server))
    with pytest.raises(CompactionFailed, match="nothing to compact"):
        agent.compact()
    assert model_server.requests == []


# ---- micro-compaction: a pure view, identical for live and resumed sessions

def test_old_long_tool_results_are_cleared_in_one_batch_in_requests_but_kept_on_disk(project, model_server):
    size = CLEAR_TRIGGER_CHARS // 3 + 100  # three stale results reach the trigger
    n = KEEP_RECENT_RESULTS + 4
    model_server.script(*[tool_use("bash", {"command": f"printf '%0{size}d' {i}"}, id=f"t{i}") for i in range(n)])
    agent, _ = make_agent(project, server_provider(model_server), compact_threshold=10**9)
    agent.run_turn("print big things")

    def cleared_in(body: dict) -> list[str]:
        results = [b for m in plain(body["messages"]) for b in m["content"] if b["type"] == "tool_result"]
        return [b["tool_use_id"] for b in results if str(b["content"]).startswith("[Earlier")]

    requests = model_requests(model_server)
    # Nothing is cleared until the stale output reaches the trigger; then the three oldest at once, and
    # the fourth stale one waits for the next batch: one rewrite of the prompt, not one per turn.
    assert [cleared_in(body) for body in requests] == [[]] * 6 + [["t0", "t1", "t2"]] * 2
    last = requests[-1]["messages"]
    sent_results = [b for m in last if isinstance(m["content"], list) for b in m["content"] if b["type"] == "tool_result"]
    assert len(sent_results) == n and all(len(b["content"]) >= size for b in sent_results[3:])
    # The stored history is whole, and a resumed session sends the very same request.
    stored = [b for m in load_for_resume(agent.recorder.path).messages if isinstance(m["content"], list)
              for b in m["content"] if b["type"] == "tool_result"]
    assert len(stored) == n and all(len(b["content"]) >= size for b in stored)
    assert micro_compact(load_for_resume(agent.recorder.path).messages) == agent.request_messages()
    assert_faithful(agent)


tool_result_sizes = st.lists(st.integers(min_value=0, max_value=2 * CLEAR_RESULT_CHARS), min_size=0, max_size=8)


@settings(max_examples=60, deadline=None)
@given(tool_result_sizes, st.booleans())
def test_micro_compaction_is_pure_valid_and_only_ever_shrinks(sizes, is_error):
    history = [{"role": "user", "content": "go"}]
    for i, size in enumerate(sizes):
        history.append({"role": "assistant", "content": [{"type": "tool_use", "id": f"t{i}", "name": "bash", "input": {}}]})
        block = {"type": "tool_result", "tool_use_id": f"t{i}", "content": "r" * size}
        if is_error:
            block["is_error"] = True
        history.append({"role": "user", "content": [block]})
    snapshot = repr(history)
    view = micro_compact(history)
    assert repr(history) == snapshot  # the input is never changed
    assert micro_compact(history) == view  # same history, same request
    check_request(view + [{"role": "user", "content": "x"}] if view[-1]["role"] == "assistant" else view)
    assert history_chars(view) <= history_chars(history)
    assert len(view) == len(history)
    for original, shown in zip(history, view):
        if original["role"] == "assistant" or isinstance(original["content"], str):
            assert shown == original
            continue
        (o,), (s,) = original["content"], shown["content"]
        assert (s["tool_use_id"], s.get("is_error")) == (o["tool_use_id"], o.get("is_error"))
        assert s == o or (len(o["content"]) > CLEAR_RESULT_CHARS and s["content"].startswith("[Earlier"))
    recent = [m for m in history if m["role"] == "user" and isinstance(m["content"], list)][-KEEP_RECENT_RESULTS:]
    assert all(m in view for m in recent)


def test_history_exceeds_agrees_with_history_chars():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from evo_agent.agent import history_chars, history_exceeds

    message = st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"]), "content": st.text(max_size=30)})

    @settings(max_examples=200, deadline=None)
    @given(st.lists(message, max_size=6), st.integers(min_value=0, max_value=300))
    def check(messages, limit):
        assert history_exceeds(messages, limit) == (history_chars(messages) > limit)

    check()


def test_a_refused_write_is_not_listed_among_the_touched_files(project, model_server):
    (project / "notes.md").write_text("notes\n")
    model_server.default = summarizer("S", answers=(
        reply(tool_use("read_file", {"path": "notes.md"}, id="toolu_r"),
              tool_use("write_file", {"path": "secret.txt", "content": "x"}, id="toolu_w")),
    ))
    agent, _ = make_agent(project, server_provider(model_server), mode="ask")  # nobody to ask: the write is refused
    agent.run_turn("read the notes, then write secret.txt")
    assert not (project / "secret.txt").exists()
    result = agent.compact()
    assert result.summary.endswith("Recently touched files: notes.md")
    assert "secret.txt" not in instruction_of(summary_requests(model_server)[0])


def test_the_in_place_summary_leaves_out_the_reminders_it_would_not_read_from_the_cache(project, model_server):
    """Old `<system-reminder>` blocks (stale plan or memory state) do not reach the summary where leaving them
    out is free: the newest message, which no earlier request cached. Those inside the cached prefix stay
    (leaving them out would re-send the whole conversation at full price; the instruction says they are
    given again, current, after the compaction). The transcript keeps every one."""
    from tests.prompt_cache import PromptCache

    model_server.prompt_cache = PromptCache()
    agent, _ = make_agent(project, server_provider(model_server), compact_threshold=2000)
    answers = iter([tool_use("bash", {"command": "printf '%01900d' 1"}, id="toolu_1"),
                    tool_use("bash", {"command": "printf '%01900d' 2"}, id="toolu_2")])

    def answer(body):
        if is_summary_request(body):
            return text("S-mid")
        step = next(answers, None)
        if step is not None:  # given with the results of this call: the newest message, when it is the last
            agent.queue_reminder(f"plan: step {step['id'][-1]} in progress", "plan_changed")
        return step or text("ok")

    model_server.default = answer
    agent.queue_reminder("plan: step 0 pending", "session_start")
    agent.run_turn("print two things")

    assert len(boundaries(agent)) == 1
    sent = conversation_of(summary_requests(model_server)[0])
    said = str(sent)
    assert "plan: step 0 pending" in said and "plan: step 1 in progress" in said  # in the cached prefix: kept
    assert "plan: step 2 in progress" not in said  # the newest message's: left out
    assert [b["type"] for b in sent[-1]["content"]] == ["tool_result"]
    on_disk = [r["text"] for r in records(agent.recorder.path) if r["type"] == "reminder"]
    assert on_disk == ["plan: step 0 pending", "plan: step 1 in progress", "plan: step 2 in progress"]
    # The summary call read from the cache everything the request before it sent.
    log = model_server.prompt_cache.log
    summary_usage = next(e for e in log if is_summary_request(e["body"]))
    before = log[log.index(summary_usage) - 1]
    sent_before = before["input_tokens"] + before["cache_creation_input_tokens"] + before["cache_read_input_tokens"]
    assert summary_usage["cache_read_input_tokens"] == sent_before
    model_server.assert_all_valid()
