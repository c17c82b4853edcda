"""Every resume entry point sends the model the old history followed by the new prompt."""

from __future__ import annotations

import json
import subprocess
import time

from evo_agent.session import SCENE_TYPES
from tests.builders import history_of, seed_session
from tests.fake_model_server import text, tool_use
from tests.prompt_cache import plain


def test_resume_and_continue_send_the_old_history_and_never_touch_the_source(cli, model_server):
    model_server.script([text("Checking."), tool_use("bash", {"command": "echo one"})], text("First answer."))
    first = cli.run("-p", "first question")
    assert first.rc == 0
    s1 = first.hint_id()
    history1 = cli.messages(s1)
    assert len(history1) == 4
    s1_bytes = cli.transcript(s1).read_bytes()
    s1_meta = (cli.sessions_dir / s1 / "meta.json").read_bytes()

    model_server.script(text("Second answer."))
    second = cli.run("--resume", s1[:15], "-p", "second question")  # a unique prefix is enough
    assert second.rc == 0 and second.out == "Second answer.\n"
    s2 = second.hint_id()
    assert s2 != s1
    assert second.err_lines[0] == f"Resumed {s1}: 4 messages restored (new session {s2})"
    assert plain(model_server.requests[-1]["messages"]) == plain(history1 + [{"role": "user", "content": "second question"}])
    assert cli.transcript(s1).read_bytes() == s1_bytes
    assert (cli.sessions_dir / s1 / "meta.json").read_bytes() == s1_meta

    recs2 = [r for r in cli.records(s2) if r["type"] not in SCENE_TYPES]  # the prefix's records aside (memory_index, system_prompt)
    assert [r["type"] for r in recs2[:2]] == ["session_start", "resume_marker"]
    assert recs2[1]["from_session_id"] == s1 and recs2[1]["restored_count"] == 4
    restored = recs2[2:6]
    assert all(r.get("restored") is True and "input_tokens" not in r for r in restored)
    assert [r["message"] for r in restored] == history1

    model_server.script(text("Third answer."))
    third = cli.run("--continue", "-p", "third question")  # the most recently updated: s2
    assert third.rc == 0 and third.out == "Third answer.\n"
    s3 = third.hint_id()
    expected = history1 + [
        {"role": "user", "content": "second question"},
        {"role": "assistant", "content": [{"type": "text", "text": "Second answer."}]},
        {"role": "user", "content": "third question"},
    ]
    assert plain(model_server.requests[-1]["messages"]) == plain(expected)
    assert cli.messages(s3)[: len(expected)] == expected  # resuming a resumed session keeps everything
    model_server.assert_all_valid()

    listing = cli.run("sessions", "list", "--json")
    import json

    rows = json.loads(listing.out)
    assert [r["id"] for r in rows] == [s3, s2, s1]
    assert rows[0]["resumed_from"] == s2 and rows[0]["first_prompt"] == "first question"


def test_kill_9_while_a_tool_runs_then_resume_is_accepted_by_the_api(cli, model_server, tmp_path):
    pid_file = tmp_path / "sleep.pid"
    model_server.script(tool_use("bash", {"command": f"echo $$ > {pid_file}; exec sleep 30"}))
    proc = cli.popen("-p", "run the long thing", "--permission-mode", "bypass", start_new_session=True,
                     stdin=subprocess.DEVNULL)

    cli.kill_9_while_bash_runs(proc, pid_file)

    (sid,) = cli.session_ids()
    recs = [r for r in cli.records(sid) if r["type"] not in SCENE_TYPES]  # the prefix's records aside (memory_index, system_prompt)
    assert [r["type"] for r in recs] == ["session_start", "user", "assistant"]
    tool_id = recs[2]["message"]["content"][0]["id"]

    model_server.script(text("It was interrupted; nothing to report."))
    resumed = cli.run("--resume", sid, "-p", "what happened?")
    assert resumed.rc == 0, resumed.err
    assert resumed.out == "It was interrupted; nothing to report.\n"
    model_server.assert_all_valid()
    sent = model_server.requests[-1]["messages"]
    assert plain(sent[-2]["content"][0]["tool_use_id"]) == plain(tool_id) and sent[-2]["content"][0]["is_error"] is True
    assert "interrupted" in sent[-2]["content"][0]["content"]
    assert plain(sent[-1]) == plain({"role": "user", "content": "what happened?"})


def test_a_torn_last_line_resumes_with_one_warning(cli, model_server):
    sid = seed_session(cli.project, ("hello", "ok"))
    with open(cli.transcript(sid), "ab") as f:
        f.write(b'{"type":"user","message":{"role":"user","content":"half a reco')
    model_server.script(text("Still here."))
    resumed = cli.run("--resume", sid, "-p", "are you there?")
    assert resumed.rc == 0 and resumed.out == "Still here.\n"
    warnings = [line for line in resumed.err_lines if "skipped" in line]
    assert len(warnings) == 1 and "1 unreadable line" in warnings[0]
    assert plain(model_server.requests[-1]["messages"]) == plain([
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
        {"role": "user", "content": "are you there?"},
    ])
    model_server.assert_all_valid()


def test_slash_resume_in_the_piped_repl_swaps_history_without_a_model_call(cli, model_server):
    s1 = seed_session(cli.project, ("question one", "Answer one."))
    s2 = seed_session(cli.project, ("question two", "Answer two."))

    model_server.script(text("Answer three."), text("Answer four."), text("Fresh answer."))
    repl = cli.run(input=f"question three\n/resume {s1}\n/cost\nquestion four\n/clear\nfresh start\n")
    assert repl.rc == 0, repl.err
    requests = model_server.requests
    assert len(requests) == 3  # /resume, /cost and /clear never reach the model
    assert plain(requests[0]["messages"]) == plain([{"role": "user", "content": "question three"}])
    assert plain(requests[1]["messages"]) == plain(history_of(("question one", "Answer one.")) + [
        {"role": "user", "content": "question four"}])
    assert plain(requests[2]["messages"]) == plain([{"role": "user", "content": "fresh start"}])
    resumed_lines = [line for line in repl.out_lines if line.startswith(f"Resumed {s1}: 2 messages restored")]
    assert len(resumed_lines) == 1
    # The totals continue from the source (seed_session: 100 in + 10 out), not from zero.
    assert any(line.startswith("with the 1 session it continues: 110 tokens") for line in repl.out_lines), repl.out
    assert "Answer three." in repl.out and "Fresh answer." in repl.out
    final = repl.hint_id("err")
    assert final not in (s1, s2)
    assert cli.messages(final) == history_of(("fresh start", "Fresh answer."))
    # /clear left the resumed session resumable, with s1's history and the new turn.
    resumed_id = resumed_lines[0].split("new session ")[1].rstrip(")")
    assert cli.messages(resumed_id) == history_of(("question one", "Answer one."), ("question four", "Answer four."))
    assert cli.messages(s1) == history_of(("question one", "Answer one."))
    model_server.assert_all_valid()


def test_resume_without_an_id_in_the_repl_offers_a_numbered_list(cli, model_server):
    old = seed_session(cli.project, ("the older one", "Older answer."))
    time.sleep(0.01)
    new = seed_session(cli.project, ("the newer one", "Newer answer."))

    model_server.script(text("ok"), text("ok again"))
    chosen = cli.run("--resume", input="2\nand now?\n/resume\n1\nand then?\n")  # newest first: 2 is the older one
    assert chosen.rc == 0, chosen.err
    listing = [line for line in chosen.out_lines if "tokens=" in line]
    assert new in listing[0] and old in listing[1] and "  the newer one  " in listing[0] and "tokens=110" in listing[0]
    assert any(line.startswith(f"Resumed {old}: 2 messages restored") for line in chosen.out_lines)
    assert plain(model_server.requests[0]["messages"]) == plain(history_of(("the older one", "Older answer.")) + [
        {"role": "user", "content": "and now?"}])
    # /resume lists the other sessions (not the live one), newest first: `new`, then `old`.
    assert plain(model_server.requests[1]["messages"]) == plain(history_of(("the newer one", "Newer answer.")) + [
        {"role": "user", "content": "and then?"}])
    assert len(model_server.requests) == 2


def test_token_totals_continue_along_a_resume_chain(cli, model_server):
    """`/cost` after `-c` of a resumed session counts every session of the chain, not only the last."""
    s1 = seed_session(cli.project, ("question one", "Answer one."))  # 100 in + 10 out
    model_server.script(text("Answer two."))
    second = cli.run("--resume", s1, "-p", "question two")
    assert second.rc == 0, second.err
    spent_second = model_server.log[-1]["usage"]
    third = cli.run("-c", input="/cost\n")
    assert third.rc == 0, third.err
    total_in = 100 + spent_second["input_tokens"]
    total_out = 10 + spent_second["output_tokens"]
    assert any(line.startswith(f"with the 2 sessions it continues: {total_in + total_out:,} tokens")
               for line in third.out_lines), third.out


def _utc_day() -> str:
    return time.strftime("%Y-%m-%d", time.gmtime())


def test_a_resume_days_later_tells_the_model_todays_date_in_a_recorded_reminder(cli, model_server, project):
    """SPEC §12: the system prompt keeps the day the conversation started (the cache holds); today's date
    reaches the model as a `reminder` inside the next user message, recorded, so a resume replays it."""
    from tests.builders import simple_session

    old = simple_session(project, "what changed", days_ago=3)
    then = time.strftime("%Y-%m-%d", time.gmtime(int(old[:13]) / 1000))
    before = _utc_day()
    model_server.script(text("Resumed."))
    first = cli.run("--resume", old, "-p", "go on")
    assert first.rc == 0, first.err
    today = {before, _utc_day()}
    request = model_server.requests[-1]
    assert f"Conversation started: {then} (UTC)" in json.dumps(request["system"])
    told = [b["text"] for b in request["messages"][-1]["content"] if "<system-reminder>" in b.get("text", "")]
    assert len(told) == 1 and any(f"Today's date is {day} (UTC)" in told[0] for day in today), told
    assert [r["reason"] for r in cli.records(first.hint_id()) if r["type"] == "reminder"] == ["date"]

    model_server.script(text("Again."))  # the model knows the date now: replayed where it was, not said twice
    second = cli.run("--resume", first.hint_id(), "-p", "and more")
    assert second.rc == 0, second.err
    sent = model_server.requests[-1]["messages"]
    assert plain(sent[:len(request["messages"])]) == plain(request["messages"])
    assert "Today's date" not in json.dumps(sent[-1]) or _utc_day() not in today
