"""Secrets at rest: private files whatever the umask, and well-known secret shapes masked on disk only."""

from __future__ import annotations

import json
import stat
import subprocess
import sys

import pytest

from evo_agent.session import SessionStore, load_for_resume
from tests.cli_runner import COMMAND
from tests.fake_model_server import text, tool_use

pytestmark = pytest.mark.faults

ANTHROPIC_KEY = "sk-ant-api03-" + "Q7x" * 31 + "AA"
OPENAI_KEY = "sk-proj-" + "b4Z" * 40
PEM = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\nAAAAC3NzaC1lZDI1NTE5\n-----END OPENSSH PRIVATE KEY-----"


def _modes(root):
    """Permission bits of everything under the sessions directory and the directories above it we created."""
    sessions = root / ".evo-agent" / "sessions"
    paths = [root / ".evo-agent", sessions, *sorted(sessions.rglob("*"))]
    return {str(p.relative_to(root)): stat.S_IMODE(p.lstat().st_mode) for p in paths}


SIDECHAIN_CHILD = r"""
import sys
from evo_agent.session import SessionStore
rec = SessionStore(sys.argv[1], warn=print).create(model="m", provider="demo")
rec.user({"role": "user", "content": "delegate"})
side = rec.start_subagent("explore", "toolu_1")
side.user({"role": "user", "content": "child"})
rec.end_subagent(side, "toolu_1", "done")
rec.checkpoint()
"""


@pytest.mark.parametrize("umask", [0o000, 0o022, 0o077], ids=lambda m: f"umask-{m:03o}")
def test_transcripts_are_0600_in_0700_directories_whatever_the_umask(cli, model_server, project, umask):
    model_server.script(tool_use("bash", {"command": "echo hi"}), text("Done."), text("Again."))
    first = subprocess.run([*COMMAND, "-p", "hello"],
                           cwd=project, env=cli.env, capture_output=True, text=True, timeout=60, umask=umask)
    assert first.returncode == 0, first.stderr
    sid = first.stderr.splitlines()[-1].rsplit(" ", 1)[1]
    again = subprocess.run([*COMMAND, "--resume", sid, "-p",
                            "again"], cwd=project, env=cli.env, capture_output=True, text=True, timeout=60, umask=umask)
    assert again.returncode == 0, again.stderr
    side = subprocess.run([sys.executable, "-c", SIDECHAIN_CHILD, str(project)], capture_output=True, text=True,
                          timeout=60, umask=umask)
    assert side.returncode == 0 and side.stdout == "", side.stdout + side.stderr

    modes = _modes(project)
    files = {p: m for p, m in modes.items() if (project / p).is_file()}
    dirs = {p: m for p, m in modes.items() if (project / p).is_dir()}
    assert len([p for p in files if p.endswith("messages.jsonl")]) == 3
    assert any("/subagent/" in p for p in files)
    assert set(files.values()) == {0o600}, files
    assert set(dirs.values()) == {0o700}, dirs


def test_secrets_reach_the_model_in_the_live_turn_but_only_masks_reach_the_disk(cli, model_server, project):
    (project / ".env").write_text(f"OPENAI_API_KEY={OPENAI_KEY}\nDB_PASSWORD=hunter2\n")
    model_server.script(
        [text("Reading it."), tool_use("read_file", {"path": ".env"})],
        [text("And the key file."), tool_use("bash", {"command": f"printf '%s\\n' '{PEM}'"})],
        text("Both are configured."),
    )
    prompt = f"my key is {ANTHROPIC_KEY}, check the config"
    result = cli.run("-p", prompt)
    assert result.rc == 0 and result.out == "Both are configured.\n", result.err
    model_server.assert_all_valid()
    sid = result.hint_id()

    # Live: the model is sent the real values, in the very turn they appear.
    live = json.dumps(model_server.requests[-1]["messages"])
    for secret in (ANTHROPIC_KEY, OPENAI_KEY, "hunter2", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ"):
        assert secret in live

    # Disk: transcript and meta.json hold masks.
    session_dir = cli.sessions_dir / sid
    on_disk = (session_dir / "messages.jsonl").read_text() + (session_dir / "meta.json").read_text()
    for secret in (ANTHROPIC_KEY, OPENAI_KEY, "hunter2", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ"):
        assert secret not in on_disk
    meta = json.loads((session_dir / "meta.json").read_text())
    assert meta["first_prompt"] == "my key is [REDACTED:anthropic-key], check the config"
    loaded = load_for_resume(session_dir / "messages.jsonl").messages
    assert "OPENAI_API_KEY=[REDACTED:secret]" in loaded[2]["content"][0]["content"]
    assert "DB_PASSWORD=[REDACTED:secret]" in loaded[2]["content"][0]["content"]
    assert "[REDACTED:private-key]" in loaded[4]["content"][0]["content"]
    sent_ids = [b["id"] for m in model_server.requests[-1]["messages"] if m["role"] == "assistant"
                for b in m["content"] if b["type"] == "tool_use"]
    stored_ids = [b["id"] for m in loaded if m["role"] == "assistant" for b in m["content"] if b["type"] == "tool_use"]
    assert stored_ids == sent_ids and len(sent_ids) == 2

    # The documented price: a resumed session sends the masks, and the API accepts it.
    model_server.script(text("I only see masks now."))
    resumed = cli.run("--resume", sid, "-p", "what was my key?")
    assert resumed.rc == 0 and resumed.out == "I only see masks now.\n", resumed.err
    model_server.assert_all_valid()
    sent = json.dumps(model_server.requests[-1]["messages"])
    assert ANTHROPIC_KEY not in sent and "[REDACTED:anthropic-key]" in sent


def test_evo_agent_redact_0_turns_it_off_and_a_bad_value_is_a_usage_error(cli, model_server, project):
    model_server.script(text("Noted."))
    result = cli.run("-p", f"remember {ANTHROPIC_KEY}", env={**cli.env, "EVO_AGENT_REDACT": "0"})
    assert result.rc == 0, result.err
    assert ANTHROPIC_KEY in cli.transcript(result.hint_id()).read_text()

    bad = cli.run("-p", "hi", env={**cli.env, "EVO_AGENT_REDACT": "sometimes"})
    assert bad.rc == 2 and bad.out == "" and len(bad.err_lines) == 1
    assert bad.err_lines[0].startswith("evo-agent: EVO_AGENT_REDACT must be 1")
    assert len(model_server.requests) == 1


def test_the_library_redacts_by_default(project):
    rec = SessionStore(project, warn=lambda line: None).create(model="m", provider="demo")
    rec.user({"role": "user", "content": f"token={OPENAI_KEY}"})
    assert OPENAI_KEY not in rec.path.read_text()
