"""Project instructions and the start directory from the command line (SPEC §6, §11, §12).

Started in `pkg/web`: the tools run there and the request says so; the instructions reach the API in the
system prompt; resumed from the project's root after AGENTS.md changed, the first request repeats the
source's system prompt byte for byte and tells the change in a reminder.
"""

from __future__ import annotations

import json

from tests.cli_runner import Cli
from tests.fake_model_server import text, tool_use


def system_text(request: dict) -> str:
    system = request["system"]
    return system if isinstance(system, str) else "".join(b["text"] for b in system)


def in_subdirectory(cli: Cli, *parts: str) -> Cli:
    """The same user and environment, started in a subdirectory of the project."""
    sub = Cli(cli.project.joinpath(*parts), cli.env)
    sub.sessions_dir = cli.sessions_dir
    return sub


def test_started_in_a_subdirectory_tools_run_there_and_a_resume_from_the_root_sends_the_same_prompt(
        cli, model_server, project):
    (project / "AGENTS.md").write_text("root rule: run make test\n")
    web = project / "pkg" / "web"
    web.mkdir(parents=True)
    (web / "AGENTS.md").write_text("web rule: use pnpm\n")
    model_server.script([tool_use("bash", {"command": "pwd"})], text("It runs in web."))
    first = in_subdirectory(cli, "pkg", "web").run("-p", "where do you run?", "--permission-mode", "bypass")
    assert first.rc == 0, first.err
    sid = first.hint_id()
    assert cli.sessions_dir.joinpath(sid).is_dir()  # the session lives in the project, not in pkg/web
    system = system_text(model_server.requests[0])
    assert f"Working directory: {web}\n" in system and f"Project directory: {project}\n" in system
    assert system.count("root rule: run make test") == 1 and system.count("web rule: use pnpm") == 1
    result = model_server.requests[1]["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and str(web) in json.dumps(result["content"])
    line = "instructions: AGENTS.md, pkg/web/AGENTS.md · working directory pkg/web"
    assert line in cli.run("sessions", "show", sid).out
    for fmt in ("md", "html"):
        assert line in cli.run("sessions", "export", sid, "--format", fmt).out

    (web / "AGENTS.md").write_text("web rule: use yarn now\n")
    model_server.script(text("Still in web."))
    again = cli.run("--resume", sid, "-p", "and now?")  # from the root this time
    assert again.rc == 0, again.err
    assert system_text(model_server.requests[-1]) == system  # byte for byte: the cache holds
    sent = json.dumps(model_server.requests[-1]["messages"][-1])
    assert "use yarn now" in sent and "changed: pkg/web/AGENTS.md" in sent
    new = again.hint_id()
    assert [r["type"] for r in cli.records(new)][:3] == ["session_start", "resume_marker", "instructions"]


def test_a_session_without_instruction_files_records_none_and_runs_at_the_root(cli, model_server, project):
    model_server.script(text("Hello."))
    result = cli.run("-p", "hi")
    assert result.rc == 0, result.err
    assert "instructions" not in [r["type"] for r in cli.records(result.hint_id())]
    system = system_text(model_server.requests[0])
    assert f"Working directory: {project}\n" in system and "# Project instructions" not in system


def test_the_32_kib_cut_is_said_on_stderr_in_print_mode(cli, model_server, project):
    (project / "AGENTS.md").write_text("x" * 99 + "\n" * 1 + ("y" * 99 + "\n") * 400)
    model_server.script(text("ok"))
    result = cli.run("-p", "hi")
    assert result.rc == 0
    assert any(line.startswith("evo-agent: Project instructions are limited to 32 KiB: AGENTS.md was cut after")
               for line in result.err_lines)


def test_init_is_an_ordinary_user_turn_asking_for_agents_md(demo_cli, project):
    result = demo_cli.run("--plain", input="/init\n")
    assert result.rc == 0, result.err
    sid = result.hint_id()
    prompts = [r["message"]["content"] for r in demo_cli.records(sid) if r["type"] == "user"]
    assert isinstance(prompts[0], str) and prompts[0].startswith("Survey this project and write its AGENTS.md")
    assert str(project / "AGENTS.md") in prompts[0]


def test_a_change_told_once_is_not_told_again_by_each_continue_until_it_changes_again(cli, model_server, project):
    """A `-c` chain after AGENTS.md changed: the first resume tells the change; the next ones replay that
    reminder with the history, so telling it again would only add another copy of the instructions to
    every later request (up to 32 KiB each time). A further change is told, once."""
    (project / "AGENTS.md").write_text("Use tabs.\n")
    model_server.default = text("ok")
    assert cli.run("-p", "one").rc == 0
    (project / "AGENTS.md").write_text("Use spaces, four of them.\n")
    for prompt in ("two", "three", "four"):
        result = cli.run("-c", "-p", prompt)
        assert result.rc == 0, result.err
    sent = json.dumps(model_server.requests[-1]["messages"])
    assert sent.count("Use spaces, four of them.") == 1, sent
    assert "Use tabs." in system_text(model_server.requests[-1])  # the system prompt stays the recorded one
    (project / "AGENTS.md").write_text("Use spaces, two of them.\n")
    assert cli.run("-c", "-p", "five").rc == 0
    last = model_server.requests[-1]["messages"]
    assert "Use spaces, two of them." in json.dumps(last[-1]) and json.dumps(last).count("two of them") == 1
    (project / "AGENTS.md").write_text("Use tabs.\n")  # back as the session first read it: that is news too
    assert cli.run("-c", "-p", "six").rc == 0
    newest = json.dumps(model_server.requests[-1]["messages"][-1])
    assert "back as this session first read them" in newest and "Use tabs." in newest
