"""Auto Memory from the command line: `evo-agent memory list|show|rm|edit` without a model, `/memory` and
`/remember` in the REPL, and the real console script against the fake Messages API (print mode cannot ask,
so a memory write there is refused and leaves nothing; a resume repeats the prefix byte for byte)."""

from __future__ import annotations

import json
import stat
import sys

from evo_agent.session import MemoryStore
from tests.fake_model_server import text, tool_use
from tests.prompt_cache import unmarked


def topic(name: str = "Tests", description: str = "how to run the tests", kind: str = "project") -> str:
    return f"---\nname: {name}\ndescription: {description}\ntype: {kind}\n---\nRun pytest -q\n"


def store_for(cli) -> MemoryStore:
    return MemoryStore(cli.project, environ=cli.env)


def test_list_show_rm_without_a_model(demo_cli):
    store = store_for(demo_cli)
    store.apply(store.plan("create", {"path": "/memories/project/testing.md", "file_text": topic()}))
    store.apply(store.plan("create", {"path": "/memories/user/me.md", "file_text": topic("Terse", "short", "user")}))
    listed = demo_cli.run("memory", "list")
    assert listed.rc == 0, listed.err
    assert "project memory (" in listed.out and "- [Tests](testing.md) — how to run the tests" in listed.out
    assert "- [Terse](me.md) — short" in listed.out and listed.out == demo_cli.run("memory").out
    assert demo_cli.run("memory", "show", "testing").out == topic()
    assert demo_cli.run("memory", "show", "/memories/user/me.md").out == topic("Terse", "short", "user")
    missing = demo_cli.run("memory", "show", "nothing")
    assert missing.rc != 0 and missing.err.strip().startswith("evo-agent: memory: no memory named")
    escape = demo_cli.run("memory", "show", "../../etc/passwd")
    assert escape.rc != 0 and "Traceback" not in escape.err and "root:" not in escape.out
    removed = demo_cli.run("memory", "rm", "user/me.md")
    assert removed.rc == 0 and removed.out.strip() == "Successfully deleted /memories/user/me.md"
    assert "Terse" not in demo_cli.run("memory", "list").out
    home = demo_cli.env["XDG_CONFIG_HOME"]
    index = stat.S_IMODE((__import__("pathlib").Path(home) / "evo-agent" / "memory" / "MEMORY.md").stat().st_mode)
    assert index == 0o600


def test_edit_opens_the_editor_and_saves_only_a_valid_memory(demo_cli, tmp_path):
    editor = tmp_path / "editor.py"
    editor.write_text("import sys, pathlib\np = pathlib.Path(sys.argv[1])\n"
                      "p.write_text(p.read_text().replace('one line: what this holds and when it is useful', "
                      "'how we release') + 'Tag, then push.\\n')\n")
    env = dict(demo_cli.env, EDITOR=f"{sys.executable} {editor}")
    created = demo_cli.run("memory", "edit", "release", env=env)
    assert created.rc == 0, created.err
    assert "File created successfully at: /memories/project/release.md" in created.out
    assert "- [release](release.md) — how we release" in demo_cli.run("memory", "list").out

    leaky = tmp_path / "leaky.py"
    leaky.write_text("import sys, pathlib\np = pathlib.Path(sys.argv[1])\n"
                     "p.write_text(p.read_text() + 'key AKIA' + 'IOSFODNN7EXAMPLQ\\n')\n")
    refused = demo_cli.run("memory", "edit", "release", env=dict(demo_cli.env, EDITOR=f"{sys.executable} {leaky}"))
    assert refused.rc != 0 and "looks like a secret" in refused.err and "your edit is in" in refused.err
    assert "AKIA" not in (demo_cli.project / ".evo-agent" / "memory" / "release.md").read_text()


def test_remember_and_memory_in_the_repl(demo_cli):
    done = demo_cli.run("--plain", input="/remember Always use pnpm, not npm\n/memory\n/remember --user I like "
                                         "short answers\n/memory always-use-pnpm-not-npm\n/exit\n")
    assert done.rc == 0, done.err
    assert "Saved to /memories/project/always-use-pnpm-not-npm.md" in done.out
    assert "- [Always use pnpm, not npm](always-use-pnpm-not-npm.md)" in done.out
    assert "Saved to /memories/user/i-like-short-answers.md" in done.out
    assert "type: feedback" in done.out
    sid = done.hint_id()
    writes = [r for r in demo_cli.records(sid) if r["type"] == "memory_write"]
    assert [(w["scope"], w["by"]) for w in writes] == [("project", "user"), ("user", "user")]


def test_print_mode_cannot_ask_so_a_memory_write_is_refused_and_leaves_nothing(cli, model_server):
    model_server.script(
        tool_use("memory", {"command": "create", "path": "/memories/project/testing.md", "file_text": topic()}),
        text("Could not save it."))
    done = cli.run("-p", "remember how to test")
    assert done.rc == 0, done.err
    assert "not run (needs approval): memory create /memories/project/testing.md" in done.err
    assert "--permission-mode accept-edits" in done.err
    assert not (cli.project / ".evo-agent" / "memory").exists()
    model_server.script(
        tool_use("memory", {"command": "create", "path": "/memories/project/testing.md", "file_text": topic()}),
        text("Saved."))
    saved = cli.run("-p", "remember how to test", "--permission-mode", "accept-edits")
    assert saved.rc == 0, saved.err
    assert (cli.project / ".evo-agent" / "memory" / "testing.md").read_text() == topic()
    sid = saved.hint_id()
    [write] = [r for r in cli.records(sid) if r["type"] == "memory_write"]
    assert write["op"] == "create" and "+type: project" in write["diff"]
    shown = cli.run("sessions", "show", sid).out
    assert "◆ memory: create /memories/project/testing.md (+6 −0)" in shown
    first_system = model_server.requests[-1]["system"]

    model_server.script(text("I remember."))
    resumed = cli.run("--resume", sid, "-p", "what do you know?")
    assert resumed.rc == 0, resumed.err
    request = model_server.requests[-1]
    assert json.dumps(request["system"]) == json.dumps(first_system)  # the prefix, byte for byte
    sent = json.dumps(request, ensure_ascii=False)
    assert sent.count("- [Tests](testing.md) — how to run the tests") == 1  # the resume's reminder, once
    model_server.script(text("Fresh."))
    fresh = cli.run("-p", "new session")
    assert fresh.rc == 0
    sent = json.dumps(model_server.requests[-1], ensure_ascii=False)
    assert sent.count("- [Tests](testing.md) — how to run the tests") == 1  # now in the prefix, once
    model_server.assert_all_valid()


def test_evo_agent_memory_off_gives_no_tool_and_no_index(cli, model_server):
    model_server.script(text("ok"))
    done = cli.run("-p", "hi", env=dict(cli.env, EVO_AGENT_MEMORY="off"))
    assert done.rc == 0, done.err
    request = model_server.requests[-1]
    assert "memory" not in [t["name"] for t in request["tools"]] and "Auto Memory" not in json.dumps(request["system"])


def test_a_resume_keeps_its_sources_memory_tool_and_prompt_whether_memory_is_on_or_off_now(cli, model_server):
    """SPEC §12: a resumed session's first request repeats its source's prefix byte for byte, so turning
    Auto Memory off (or on) between the two changes neither the tools nor the system prompt: with memory off
    the kept tool refuses every call before anyone is asked (nothing read, nothing written); a session that
    had no memory tool gets none, whatever the setting now (a new session does)."""
    off = dict(cli.env, EVO_AGENT_MEMORY="off")
    model_server.script(text("one"))
    assert cli.run("-p", "one").rc == 0
    model_server.script(tool_use("memory", {"command": "view", "path": "/memories"}), text("could not"))
    again = cli.run("-c", "-p", "two", env=off)
    assert again.rc == 0, again.err
    source, resumed, answered = model_server.requests[-3:]
    for body in (resumed, answered):
        assert unmarked(body["tools"]) == unmarked(source["tools"]) and body["system"] == source["system"]
    (result,) = [b for b in answered["messages"][-1]["content"] if b.get("type") == "tool_result"]
    assert result["is_error"] is True and "Auto Memory is off" in result["content"]

    model_server.script(text("no memory here"))
    fresh = cli.run("-p", "three", env=off)
    assert fresh.rc == 0, fresh.err
    without = model_server.requests[-1]
    assert "memory" not in [t["name"] for t in without["tools"]]
    model_server.script(text("still none"))
    on_again = cli.run("-c", "-p", "four")
    assert on_again.rc == 0, on_again.err
    assert unmarked(model_server.requests[-1]["tools"]) == unmarked(without["tools"])
    assert model_server.requests[-1]["system"] == without["system"]
