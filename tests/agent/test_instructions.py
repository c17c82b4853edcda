"""Project instructions (SPEC §11, §12): which files, in which order, within 32 KiB; given once, in the
fixed system prompt, the same bytes after a resume and a compaction; a change on disk is a reminder.

The scripted provider keeps every request's system prompt and messages: these tests read what it was sent.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from evo_agent.agent import Agent
from evo_agent.agent.instructions import (
    MAX_BYTES,
    Instructions,
    begin_instructions,
    discover,
    init_prompt,
    start_dir_of,
    welcome_text,
    work_dir,
)
from evo_agent.agent.permissions import PermissionGate, Policy
from evo_agent.session import REMINDER_OPEN, is_reminder_block
from evo_agent.tools.shell_words import protected_dir
from tests.builders import quiet_store, read_records
from tests.scripted_provider import ScriptedProvider, reply, use


@pytest.fixture(autouse=True)
def own_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's config directory of these tests (`$XDG_CONFIG_HOME/evo-agent`), empty to begin with."""
    config = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    (config / "evo-agent").mkdir(parents=True)
    return config / "evo-agent"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def nested(project: Path) -> Path:
    """root/AGENTS.md (and a CLAUDE.md it shadows), pkg/CLAUDE.md, pkg/web/AGENTS.md, and files never read."""
    write(project / "AGENTS.md", "root rule: run make test")
    write(project / "CLAUDE.md", "shadowed claude rule")
    write(project / "pkg" / "CLAUDE.md", "pkg rule: no globals")
    write(project / "pkg" / "web" / "AGENTS.md", "web rule: use pnpm")
    write(project / "pkg" / "web" / "deeper" / "AGENTS.md", "below the start: never read")
    write(project / "other" / "AGENTS.md", "a sibling: never read")
    return project / "pkg" / "web"


def agent_in(project: Path, provider, start: str = ".") -> Agent:
    store = quiet_store(project)
    recorder = store.create(model=provider.model, provider=provider.name)
    instructions = begin_instructions(recorder, project, start)
    return Agent(provider=provider, recorder=recorder, project_dir=project, store=store,
                 permissions=PermissionGate(Policy(project, "bypass")), instructions=instructions)


def reminders(message: dict) -> list[str]:
    content = message.get("content")
    return [b["text"] for b in content if is_reminder_block(b)] if isinstance(content, list) else []


def texts_of(messages: list[dict]) -> str:
    return repr(messages)


# ---- which files --------------------------------------------------------------------------------


def test_files_from_the_root_down_to_the_start_nearer_later_agents_md_before_claude_md(project, own_config):
    start = nested(project)
    write(own_config / "AGENTS.md", "user rule: answer in French")
    found = discover(project, start_dir_of(project, start))
    assert [s.path for s in found.sources] == [str(own_config / "AGENTS.md"), "AGENTS.md", "pkg/CLAUDE.md",
                                               "pkg/web/AGENTS.md"]
    assert [s.scope for s in found.sources] == ["user", "project", "project", "project"]
    text = found.text
    order = [text.index(rule) for rule in ("user rule", "root rule", "pkg rule", "web rule")]
    assert order == sorted(order)
    for absent in ("shadowed claude rule", "below the start", "a sibling"):
        assert absent not in text
    assert found.start_dir == "pkg/web" and not found.cut
    assert welcome_text(found) == (f"working directory: pkg/web · instructions: {own_config / 'AGENTS.md'}, "
                                   "AGENTS.md, pkg/CLAUDE.md, pkg/web/AGENTS.md")


def test_a_start_at_the_root_reads_the_root_only_and_an_empty_agents_md_gives_way_to_claude_md(project):
    nested(project)
    assert [s.path for s in discover(project).sources] == ["AGENTS.md"]
    write(project / "AGENTS.md", "  \n")
    found = discover(project)
    assert [s.path for s in found.sources] == ["CLAUDE.md"] and "shadowed claude rule" in found.text
    (project / "AGENTS.md").unlink()
    (project / "CLAUDE.md").unlink()
    nothing = discover(project)
    assert nothing.text == "" and nothing.sources == () and not nothing.worth_recording


def test_at_most_32_kib_in_all_the_cut_said_to_the_model_and_the_user(project):
    line = "x" * 99 + "\n"
    write(project / "AGENTS.md", line * 200)  # 20,000 bytes
    write(project / "pkg" / "AGENTS.md", line * 200)
    write(project / "pkg" / "web" / "AGENTS.md", "web rule: never loaded")
    found = discover(project, "pkg/web")
    loaded = {s.path: s.loaded for s in found.sources}
    assert loaded["AGENTS.md"] == 20_000 and 0 < loaded["pkg/AGENTS.md"] < 20_000
    assert loaded["pkg/web/AGENTS.md"] == 0 and sum(loaded.values()) <= MAX_BYTES
    assert loaded["pkg/AGENTS.md"] % 100 == 0  # cut at a line's end
    assert "web rule" not in found.text
    assert "pkg/AGENTS.md was cut after" in found.cut and "not loaded: pkg/web/AGENTS.md" in found.cut
    assert f"[evo-agent: {found.cut}]" in found.text  # the model is told
    assert "pkg/AGENTS.md (cut)" in welcome_text(found) and "not loaded: pkg/web/AGENTS.md" in welcome_text(found)


def test_a_link_out_of_the_repository_or_a_fifo_is_never_read_a_link_inside_is(project, tmp_path):
    secret = write(tmp_path / "outside" / "id_rsa", "MARKER-SECRET-KEY")
    (project / "AGENTS.md").symlink_to(secret)
    write(project / "CLAUDE.md", "root claude rule")
    (project / "pkg").mkdir()
    os.mkfifo(project / "pkg" / "AGENTS.md")  # would hang a plain open(): skipped, pkg/CLAUDE.md read
    write(project / "pkg" / "CLAUDE.md", "pkg claude rule")
    (project / "pkg" / "web").mkdir()
    write(project / "pkg" / "web" / "CLAUDE.md", "web claude rule")
    (project / "pkg" / "web" / "AGENTS.md").symlink_to("CLAUDE.md")  # the common link, inside: read
    found = discover(project, "pkg/web")
    assert "MARKER-SECRET-KEY" not in found.text
    assert [s.path for s in found.sources] == ["CLAUDE.md", "pkg/CLAUDE.md", "pkg/web/AGENTS.md"]
    assert found.text.count("web claude rule") == 1


def test_a_start_outside_the_project_is_not_used(project, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert start_dir_of(project, elsewhere) == "."
    assert start_dir_of(project, project) == "."
    (project / "a" / "b").mkdir(parents=True)
    assert start_dir_of(project, project / "a" / "b") == "a/b"
    (project / "link").symlink_to(elsewhere)
    assert start_dir_of(project, project / "link") == "."  # a link out of the project leads out
    for recorded in ("../elsewhere", "/etc", "a/../../elsewhere", "gone", "link"):
        assert work_dir(project, recorded) == project


# ---- what the model is sent ----------------------------------------------------------------------


def test_the_system_prompt_carries_the_instructions_once_and_both_directories(project):
    start = nested(project)
    provider = ScriptedProvider(reply("ok"))
    agent = agent_in(project, provider, "pkg/web")
    agent.run_turn("hello")
    system = provider.systems[0]
    assert f"Project directory: {project}\nWorking directory: {start}\n" in system
    assert system.count("web rule: use pnpm") == 1 and "not settings" in system
    assert "web rule" not in texts_of(provider.calls[0])
    record = next(r for r in read_records(agent.recorder.path) if r["type"] == "instructions")
    assert record["start_dir"] == "pkg/web" and record["text"] in system
    assert [s["path"] for s in record["sources"]] == ["AGENTS.md", "pkg/CLAUDE.md", "pkg/web/AGENTS.md"]


def test_a_file_changed_mid_session_is_one_reminder_and_the_system_prompt_stays(project):
    start = nested(project)
    provider = ScriptedProvider(reply("one"), reply("two"), reply("three"))
    agent = agent_in(project, provider, "pkg/web")
    agent.run_turn("first")
    write(start / "AGENTS.md", "web rule: use yarn now")
    agent.run_turn("second")
    agent.run_turn("third")
    assert len(set(provider.systems)) == 1 and "use pnpm" in provider.systems[0]
    second = provider.calls[1][-1]
    [news] = reminders(second)
    assert "changed: pkg/web/AGENTS.md" in news and "use yarn now" in news
    assert reminders(provider.calls[2][-1]) == []  # told once
    recorded = [r for r in read_records(agent.recorder.path) if r["type"] == "reminder"]
    assert [r["reason"] for r in recorded] == ["instructions_changed"]


def test_a_resume_sends_the_same_bytes_after_the_files_changed_and_tells_the_change(project, tmp_path):
    start = nested(project)
    provider = ScriptedProvider(reply("one"), reply("two"))
    agent = agent_in(project, provider, "pkg/web")
    agent.run_turn("first")
    write(start / "AGENTS.md", "web rule: use yarn now")
    write(project / "pkg" / "web" / "deeper" / "AGENTS.md", "still below the start")
    store = quiet_store(project)
    resumed = store.resume(agent.session_id, model=provider.model, provider=provider.name)
    again = Agent(provider=provider, recorder=resumed.recorder, project_dir=project, store=store,
                  history=resumed.loaded.messages, permissions=PermissionGate(Policy(project, "bypass")),
                  instructions=Instructions.from_fields(resumed.instructions))
    assert again.cwd == start  # where the conversation started, whatever directory resumed it
    again.run_turn("second")
    assert provider.systems[1] == provider.systems[0]  # byte for byte: the prompt cache holds
    assert "use yarn now" in reminders(provider.calls[1][-1])[0]
    types = [r["type"] for r in read_records(resumed.recorder.path)]
    assert types[:3] == ["session_start", "resume_marker", "instructions"]
    source = next(r for r in read_records(agent.recorder.path) if r["type"] == "instructions")
    copy = next(r for r in read_records(resumed.recorder.path) if r["type"] == "instructions")
    assert copy["text"] == source["text"] and copy["sources"] == source["sources"]


def test_compaction_keeps_exactly_one_copy_and_tells_a_change_again(project):
    start = nested(project)
    provider = ScriptedProvider(reply("one"), reply("two"), reply("The summary."), reply("three"))
    agent = agent_in(project, provider, "pkg/web")
    agent.run_turn("first")
    write(start / "AGENTS.md", "web rule: use yarn now")
    agent.run_turn("second")  # told here
    agent.compact()
    agent.run_turn("third")
    last_system, last = provider.systems[-1], provider.calls[-1]
    assert last_system == provider.systems[0] and last_system.count("use pnpm") == 1
    assert "use pnpm" not in texts_of(last)  # never a second copy of the recorded instructions
    summary_request = provider.calls[2]
    assert texts_of(last).count("use yarn now") == 1  # the change, told once after the compaction
    assert "previous-conversation-summary" in texts_of(last) and summary_request


def test_an_agent_without_instructions_runs_at_the_root_and_is_told_none(project):
    provider = ScriptedProvider(reply("ok"))
    store = quiet_store(project)
    agent = Agent(provider=provider, recorder=store.create(model="m", provider="p"), project_dir=project,
                  store=store, permissions=PermissionGate(Policy(project, "bypass")))
    agent.run_turn("hi")
    assert f"Working directory: {project}\n" in provider.systems[0]
    assert "# Project instructions" not in provider.systems[0]
    assert not [r for r in read_records(agent.recorder.path) if r["type"] == "instructions"]


# ---- where the tools run ---------------------------------------------------------------------------


def test_tools_run_in_the_start_directory_and_relative_paths_resolve_there(project):
    start = nested(project)
    write(start / "notes.txt", "web notes")
    write(project / "pkg" / "up.txt", "one level up")
    provider = ScriptedProvider(
        reply(use("bash", {"command": "pwd"}, "t1"), use("read_file", {"path": "notes.txt"}, "t2"),
              use("read_file", {"path": "../up.txt"}, "t3"), use("glob", {"pattern": "*.txt"}, "t4")),
        reply("done"))
    agent = agent_in(project, provider, "pkg/web")
    agent.run_turn("look around")
    results = {b["tool_use_id"]: str(b["content"]) for b in provider.calls[1][-1]["content"]
               if b.get("type") == "tool_result"}
    assert results["t1"].startswith(os.path.realpath(start) + "\n") or results["t1"].startswith(f"{start}\n")
    assert "web notes" in results["t2"] and "one level up" in results["t3"]
    assert "notes.txt" in results["t4"] and "pkg/web" not in results["t4"]


def test_relative_paths_from_the_start_directory_stay_confined_to_the_project(project, tmp_path):
    start = nested(project)
    write(tmp_path / "outside.txt", "outside")
    policy = Policy(project, "ask")
    policy.cwd = start
    assert policy.check("read_file", {"path": "AGENTS.md"}).action == "allow"
    assert policy.check("read_file", {"path": "../../other/AGENTS.md"}).action == "allow"
    for spelling in ("../../../outside.txt", "../../../../" + str(tmp_path).lstrip("/") + "/outside.txt",
                     str(tmp_path / "outside.txt")):
        assert policy.check("read_file", {"path": spelling}).action == "ask", spelling
    assert policy.check("bash", {"command": "cat AGENTS.md"}).action == "allow"
    assert policy.check("bash", {"command": "cat ../../../outside.txt"}).action == "ask"
    assert protected_dir("touch ../../.git/hooks/pre-commit", project, start) == ".git"
    assert protected_dir("touch ../../.evo-agent/x", project, start) == ".evo-agent"
    assert protected_dir("touch notes.txt", project, start) is None
    assert policy.check("write_file", {"path": "../../.evo-agent/x", "content": ""}).action != "allow"


# ---- /init -----------------------------------------------------------------------------------------


def test_init_asks_for_the_file_at_the_project_root_and_to_improve_one_that_exists(project):
    first = init_prompt(project)
    assert str(project / "AGENTS.md") in first and "write_file" in first and "already exists" not in first
    write(project / "AGENTS.md", "rules")
    assert "already exists" in init_prompt(project) and REMINDER_OPEN not in init_prompt(project)
