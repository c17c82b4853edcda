"""The Session Plan from the command line: `evo-agent plan`, `/plan`, and what `--resume` and `-c` tell the model.

Against the real console script and the local fake Messages API: the request after a resume (by id or
`-c`) carries the plan as it is on disk, inside the user message, and never in the system prompt.
"""

from __future__ import annotations

import json

from evo_agent.session import REMINDER_OPEN, PlanStore
from tests.fake_model_server import text, tool_use
from tests.prompt_cache import plain


def reminders(message: dict) -> list[str]:
    content = message.get("content")
    return [b["text"] for b in content if isinstance(b, dict) and str(b.get("text", "")).startswith(REMINDER_OPEN)] \
        if isinstance(content, list) else []


def test_the_model_makes_a_plan_and_resume_and_continue_carry_it(cli, model_server, project):
    model_server.script(
        tool_use("plan_create", {"title": "Port to Rust", "goal": "a Rust parser"}),
        tool_use("plan_task_create", {"subject": "Port the lexer"}),
        tool_use("plan_task_update", {"task_id": 1, "status": "in_progress"}),
        text("Planned."))
    first = cli.run("-p", "plan the port")
    assert first.rc == 0, first.err
    s1 = first.hint_id()
    assert [r["op"] for r in cli.records(s1) if r["type"] == "plan_update"] == [
        "plan_create", "task_create", "task_update"]

    model_server.script(text("Resumed."))
    second = cli.run("--resume", s1, "-p", "go on")
    assert second.rc == 0, second.err
    request = model_server.requests[-1]
    (reminder,) = reminders(request["messages"][-1])
    assert "This session was resumed" in reminder and "#1 [in_progress] Port the lexer" in reminder
    assert plain(request["messages"][-1]["content"][-1]) == {"type": "text", "text": "go on"}
    assert "Port the lexer" not in json.dumps(request["system"])
    s2 = second.hint_id()
    assert [r["reason"] for r in cli.records(s2) if r["type"] == "reminder"] == ["resume"]

    PlanStore(project).update_task(1, subject="Port the lexer and the parser")  # a person's edit in between
    model_server.script(text("Continued."))
    third = cli.run("-c", "-p", "and now")
    assert third.rc == 0, third.err
    sent = model_server.requests[-1]["messages"]
    assert "#1 [in_progress] Port the lexer and the parser" in reminders(sent[-1])[0]
    # The earlier reminder is replayed where it was: resume restores exactly what was sent.
    assert plain(sent[:len(request["messages"])]) == plain(request["messages"])
    model_server.assert_all_valid()

    # A person reads both kinds of record: `sessions show`, export and search.
    shown = cli.run("sessions", "show", s1).out
    assert ": task_update #1 [in_progress] Port the lexer" in shown and "◆ plan 20" in shown
    shown2 = cli.run("sessions", "show", s2).out
    assert "reminder (evo-agent told the model):" in shown2 and "This session was resumed" in shown2
    assert "<system-reminder>" not in shown2
    md = cli.run("sessions", "export", s2, "--format", "md", "-o", "-").out
    assert "*Reminder (evo-agent told the model):*" in md
    html = cli.run("sessions", "export", s1, "--format", "html", "-o", "-").out
    assert "task_update #1 [in_progress] Port the lexer" in html
    found = cli.run("sessions", "search", "Port the lexer").out
    assert s1 in found


def test_evo_agent_plan_list_show_done_without_a_model(demo_cli, project):
    empty = demo_cli.run("plan")
    assert empty.rc == 0 and "No plans" in empty.out
    store = PlanStore(project)
    plan = store.create("Fix \x1b[2Jthe build", "green CI")
    store.add_task("Find the flaky test")
    listed = demo_cli.run("plan", "list")
    assert listed.rc == 0 and listed.out.startswith(f"{plan.id}  active  0/1") and "\x1b" not in listed.out
    shown = demo_cli.run("plan", "show")
    assert "Goal: green CI" in shown.out and "#1 [pending] Find the flaky test" in shown.out
    assert demo_cli.run("plan", "show", plan.id).out == shown.out
    refused = demo_cli.run("plan", "done", plan.id)
    assert refused.rc == 1 and refused.err.strip() == (
        f"evo-agent: plan: plan {plan.id} still has open tasks: #1 Find the flaky test (pending). "
        "Complete or delete them first")
    for bad in (["plan", "show", "../../etc"], ["plan", "done", "nope"]):
        result = demo_cli.run(*bad)
        assert result.rc == 1 and len(result.err.strip().splitlines()) == 1 and "Traceback" not in result.err
    assert demo_cli.run("plan", "frobnicate").rc == 2
    forced = demo_cli.run("plan", "done", plan.id, "--force")
    assert forced.rc == 0 and "is done" in forced.out
    assert demo_cli.run("plan", "list").out.startswith(f"{plan.id}  done")


def test_slash_plan_in_the_repl(demo_cli, project):
    store = PlanStore(project)
    store.create("Tidy up", "no warnings")
    store.add_task("Fix the lint")
    result = demo_cli.run("--plain", input="/plan\n")
    assert result.rc == 0, result.err
    assert "Plan " in result.out and "Goal: no warnings" in result.out and "#1 [pending] Fix the lint" in result.out


def test_resume_at_with_restore_files_puts_the_plan_back(cli, model_server, project):
    model_server.script(
        tool_use("plan_create", {"title": "Two steps", "goal": "g"}),
        tool_use("plan_task_create", {"subject": "Step one"}),
        text("Planned."))
    first = cli.run("-p", "plan it")
    s1 = first.hint_id()
    model_server.script(tool_use("plan_task_update", {"task_id": 1, "status": "completed"}), text("Done."))
    second = cli.run("--resume", s1, "-p", "do step one")
    s2 = second.hint_id()
    assert PlanStore(project).active().task(1).status == "completed"
    model_server.script(text("Again."))
    third = cli.run("--resume", s2, "--at", "2", "--restore-files", "-p", "redo step one")
    assert third.rc == 0, third.err
    assert "task #1 Step one: back to pending" in third.err
    assert PlanStore(project).active().task(1).status == "pending"
    assert "#1 [pending] Step one" in reminders(model_server.requests[-1]["messages"][-1])[0]


def told_plan(message: dict) -> str:
    """The plan part of the reminder a message carried (its first line says why; the rest is the plan)."""
    (reminder,) = reminders(message)
    return reminder.removeprefix(REMINDER_OPEN).removesuffix("</system-reminder>").strip().split("\n", 1)[1]


def test_kill_9_mid_turn_then_continue_tells_the_model_what_is_on_disk(cli, model_server, project, tmp_path):
    import subprocess

    from evo_agent.tools.plan_tools import plan_summary

    store = PlanStore(project)
    store.create("Long job", "survive a kill")
    for subject in ("Prepare", "Run the long step", "Report"):
        store.add_task(subject)
    before = plan_summary(store.active())
    pid_file = tmp_path / "sleep.pid"
    model_server.script(
        [tool_use("plan_task_update", {"task_id": 1, "status": "completed"}),
         tool_use("plan_task_update", {"task_id": 2, "status": "in_progress"}),
         tool_use("bash", {"command": f"echo $$ > {pid_file}; exec sleep 30"})])
    proc = cli.popen("-p", "do the job", "--permission-mode", "bypass", start_new_session=True,
                     stdin=subprocess.DEVNULL)

    cli.kill_9_while_bash_runs(proc, pid_file)
    assert told_plan(model_server.requests[0]["messages"][0]) == before  # what the files said at the start
    model_server.script(text("Resuming the long step."))
    resumed = cli.run("-c", "-p", "where were we?")
    assert resumed.rc == 0, resumed.err
    sent = model_server.requests[-1]["messages"]
    assert told_plan(sent[-1]) == plan_summary(PlanStore(project).active())  # exactly what is on disk
    assert "#2 [in_progress] Run the long step" in told_plan(sent[-1])
    model_server.assert_all_valid()


KEY = "sk-ant-api03-" + "Q7x" * 31 + "AA"  # an Anthropic key's shape (redaction masks it)


def test_a_secret_in_a_plan_is_masked_in_its_files_as_in_the_transcript(cli, model_server, project):
    """SPEC §9/§11: what is written to disk is redacted; the plan's files are on disk (and may be committed)."""
    model_server.script(
        tool_use("plan_create", {"title": f"Rotate {KEY}", "goal": f"replace {KEY} everywhere",
                                 "approach": f"grep for {KEY}", "steps": [f"revoke {KEY}"]}),
        tool_use("plan_task_create", {"subject": f"Revoke {KEY}", "description": f"the key {KEY}"}),
        tool_use("plan_task_update", {"task_id": 1, "description": f"still {KEY}"}),
        text("Planned."))
    run = cli.run("-p", "plan the rotation")
    assert run.rc == 0, run.err
    tasks = project / ".evo-agent" / "tasks"
    written = sorted(p for p in tasks.rglob("*") if p.is_file())
    assert any(p.name == "plan.md" for p in written) and any(p.suffix == ".json" for p in written)
    for path in [*written, *tasks.rglob("*")]:
        assert "q7xq7x" not in str(path.relative_to(project)).lower()
        if path.is_file():
            assert "Q7xQ7x" not in path.read_text(), path
    plan = PlanStore(project).active()
    assert plan is not None and "[REDACTED:" in plan.goal and "[REDACTED:" in plan.tasks[0].description
    # The model is told the plan as the files hold it: the next request's reminder masks it too.
    model_server.script(text("Resumed."))
    again = cli.run("--resume", run.hint_id(), "-p", "go on")
    assert again.rc == 0, again.err
    assert "Q7xQ7x" not in json.dumps(model_server.requests[-1]["messages"][-1])
