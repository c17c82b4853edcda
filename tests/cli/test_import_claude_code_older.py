"""Importing real transcripts of Claude Code versions that log no requests: 2.0.77 (late 2025), 2.1.50 and 2.1.100
(early 2026), in tests/fixtures/claude_code/<version> (make_fixtures.py).

2.0.x keeps a subagent's transcript beside the session's, in the project's folder (`agent-<id>.jsonl`, the
warm-up agents it starts with each process among them), and leaves an empty transcript for a process that
resumed another session: a project's folder holds many files for one conversation. 2.1.50 keeps them in
`<session>/subagents/` but, unlike later versions, without a `.meta.json`: the Task call's result names them;
2.1.100's `.meta.json` names no call either (its type and description only).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evo_agent.importers.claude_code import project_folder
from tests.cli.claude_code_requests import said
from tests.cli.import_helpers import FIXTURES, resume_request

VERSION = "2.0.77"
VERSIONS = (VERSION, "2.1.50", "2.1.100")
FOLDER = FIXTURES / "claude_code" / VERSION
SCENARIOS = sorted(f"{version}/{p.name}" for version in VERSIONS
                   for p in (FIXTURES / "claude_code" / version).iterdir() if p.is_dir())


def _session(name: str, version: str = VERSION) -> Path:
    """The scenario's conversation: its one transcript that is neither empty nor an agent's."""
    folder = FIXTURES / "claude_code" / version / name
    (path,) = [p for p in folder.glob("*.jsonl") if p.stat().st_size and not p.name.startswith("agent-")]
    return path


def _import(cli, path: Path, env: dict | None = None) -> tuple[str, str]:
    result = cli.run("sessions", "import", "claude-code", str(path), env=env)
    assert result.rc == 0, result.err
    return result.out.split(" → ", 1)[1].split(" ", 1)[0], result.out


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_every_record_is_read_or_known_as_bookkeeping(cli, model_server, scenario):
    """Each session of the scenario (2.1.100's `--continue` after a kill starts a new one: two)."""
    version, name = scenario.split("/")
    folder = FIXTURES / "claude_code" / version / name
    for source in [p for p in folder.glob("*.jsonl") if p.stat().st_size and not p.name.startswith("agent-")]:
        sid, out = _import(cli, source)
        assert "not understood" not in out and "0 lines skipped" in out, out
        assert cli.records(sid)[0]["imported_from"]["version"] == version
        resume_request(cli, model_server, sid)


def _as_claude_codes_folder(cli, tmp_path: Path, name: str) -> dict:
    """The scenario's folder as Claude Code left it under a config dir, recorded in the test's project."""
    config = tmp_path / "claude"
    folder = config / "projects" / project_folder(cli.project)
    folder.mkdir(parents=True)
    for source in (FOLDER / name).glob("*.jsonl"):
        text = source.read_text().replace('"cwd":"/home/user/project"', json.dumps({"cwd": str(cli.project)})[1:-1])
        (folder / source.name).write_text(text)
    for meta in (FOLDER / name).glob("*.meta.json"):
        shutil.copy(meta, folder / meta.name)
    return {**cli.env, "CLAUDE_CONFIG_DIR": str(config)}


def test_the_listing_offers_the_conversation_not_its_agents_nor_empty_transcripts(cli, tmp_path):
    """A folder of 2.0.x holds, beside the conversation, the warm-up agents' transcripts (one user "Warmup", one
    answer) and empty transcripts: they were listed as sessions, and `--all` imported twenty "Warmup" sessions
    and failed on the empty ones."""
    env = _as_claude_codes_folder(cli, tmp_path, "chain")
    listed = cli.run("sessions", "import", "claude-code", env=env)
    assert listed.rc == 0, listed.err
    offered = [line for line in listed.out.splitlines() if "not imported" in line]
    assert len(offered) == 1 and _session("chain").stem in offered[0], listed.out
    done = cli.run("sessions", "import", "claude-code", "--all", env=env)
    assert done.rc == 0 and done.out.count(" → ") == 1 and not done.err, (done.out, done.err)


@pytest.mark.parametrize("version", [VERSION, "2.1.50"])
def test_a_task_calls_subagent_becomes_its_sidechain(cli, model_server, version):
    """2.0.x keeps a Task call's subagent in `agent-<id>.jsonl` beside the session, 2.1.50 in `<session>/subagents/`
    without the `.meta.json` later versions write: both name it only in the call's result (`toolUseResult.agentId`),
    and the import carried no subagent (2.1.50's: "not understood: 1 subagent without its tool call")."""
    sid, out = _import(cli, _session("task", version))
    assert "1 subagents" in out, out
    records = cli.records(sid)
    (start,) = [r for r in records if r["type"] == "subagent_start"]
    (end,) = [r for r in records if r["type"] == "subagent_end"]
    assert end["result"] == "app.py is the entry point."
    side = [json.loads(line) for line in (cli.sessions_dir / sid / start["subagent_path"]).read_text().splitlines()]
    assert [r["type"] for r in side] == ["session_start", "user", "assistant", "user", "assistant"]
    assert side[1]["message"]["content"][0]["text"] == "Which file is the entry point?"
    sent = resume_request(cli, model_server, sid)
    assert not any(b.get("text") == "Which file is the entry point?" for m in sent for b in m["content"])  # aside


def _calls_and_results(sent: list[dict]) -> list[tuple[str, str]]:
    return [(b["type"], b.get("id") or b.get("tool_use_id")) for m in sent for b in m["content"]
            if b["type"] in ("tool_use", "tool_result")]


@pytest.mark.parametrize(("name", "kept"), [("sigint_parallel", []), ("killed_parallel", ["toolu_fake_000001"])])
def test_calls_claude_code_dropped_unanswered_when_it_went_on_are_not_resumed(cli, model_server, name, kept):
    """Interrupted or killed while parallel calls ran, 2.0.x wrote no result for them, and `--continue` went on
    from the response's last line that had one (its text, or the first call's result): the model never saw the
    other calls again. The import kept them, beside that path, and the resume invented their results."""
    sid, out = _import(cli, _session(name))
    sent = resume_request(cli, model_server, sid)
    assert _calls_and_results(sent) == [(kind, call) for call in kept for kind in ("tool_use", "tool_result")], out
    dropped = "2 tool calls Claude Code dropped" if name == "sigint_parallel" else "1 tool call Claude Code dropped"
    assert f"left out: {dropped} unanswered" in out, out


@pytest.mark.parametrize("version", ["2.1.50", "2.1.100"])
@pytest.mark.parametrize("name", ["subagent_fg", "parallel_agents"])
def test_subagents_named_only_by_their_calls_results_are_sidechains(cli, model_server, name, version):
    """2.1.100's subagents imported, but their `.meta.json`, naming no call, was reported "not understood"."""
    sid, out = _import(cli, _session(name, version))
    runs = [r for r in cli.records(sid) if r["type"] == "subagent_end"]
    assert len(runs) == (2 if name == "parallel_agents" else 1) and "not understood" not in out, out
    assert sorted(r["result"] for r in runs) == (["ALPHA checked: fine.", "BETA checked: fine."]
                                                 if name == "parallel_agents" else ["app.py is the entry point."])
    resume_request(cli, model_server, sid)


def test_a_fifo_or_a_path_named_as_a_subagent_is_never_read(cli, tmp_path):
    """What a Task result names is looked up beside the transcript, and only a file is read: a FIFO there (a folder
    someone else filled) would hang the import, an agent id holding a path would read outside the folder."""
    import os

    source = _session("task")
    records = [json.loads(line) for line in source.read_text().splitlines()]
    agent = next(r["toolUseResult"]["agentId"] for r in records if isinstance(r.get("toolUseResult"), dict)
                 and "agentId" in r["toolUseResult"])
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "agent-x.jsonl").write_text((FOLDER / "task" / f"agent-{agent}.jsonl").read_text())
    folder = tmp_path / "theirs"
    folder.mkdir()
    os.mkfifo(folder / f"agent-{agent}.jsonl")
    (folder / "agent-x").mkdir()  # so that agent-x/../../outside/agent-x.jsonl resolves, were the id a path
    for name, named in (("fifo.jsonl", agent), ("path.jsonl", "x/../../outside/agent-x")):
        copy = folder / name
        copy.write_text(source.read_text().replace(f'"agentId":"{agent}"', json.dumps({"agentId": named})[1:-1]))
        result = cli.run("sessions", "import", "claude-code", str(copy), timeout=60)
        assert result.rc == 0 and "0 subagents" in result.out, (result.out, result.err)


def test_a_session_begun_by_2_0_and_resumed_by_2_1_332_imports_as_2_1_332_last_sent_it(cli, model_server):
    """Users upgrade Claude Code and resume their old sessions: one transcript in two formats, a subagent beside
    it (2.0.77's Task) and one under it with its `.meta.json` (2.1.332's Agent). Both are sidechains, and the
    resume carries everything 2.1.332 last sent (its request log), in order."""
    from tests.cli.test_import_claude_code_2_1_332 import _carried, _conversation_sent

    source = _session("upgraded")
    sid, out = _import(cli, source)
    assert "2 subagents" in out and "not understood" not in out, out
    results = sorted(r["result"] for r in cli.records(sid) if r["type"] == "subagent_end")
    assert results == ["app.py has one line.", "app.py is the entry point."]
    theirs = _conversation_sent(source)
    ours = said(resume_request(cli, model_server, sid)[:-1])
    at = 0
    for atom in theirs:
        found = next((i for i in range(at, len(ours)) if _carried(atom, ours[i])), None)
        assert found is not None, f"{atom} (sent by Claude Code 2.1.332) is missing"
        at = found if atom[0] == "text" else found + 1
