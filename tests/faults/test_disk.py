"""A disk that fills up or turns read-only in the middle of a session of the real CLI.

The agent keeps answering, says so once, and once the disk is back the next
records land whole after whatever fragment the failure left.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess

import pytest

from evo_agent.session import load_for_resume
from tests.api_rules import check_request
from tests.fake_model_server import text, tool_use
from tests.helpers import fill_disk, mount_tmpfs, needs_root, remount, unmount
from tests.prompt_cache import last_text, plain

from .driver import Repl

pytestmark = pytest.mark.faults

WARNING_START = "evo-agent: cannot write session "


def _sessions_on_tmpfs(project, size: str):
    sessions = project / ".evo-agent" / "sessions"
    try:
        mount_tmpfs(sessions, size)
    except subprocess.CalledProcessError as exc:
        pytest.skip(f"cannot mount a tmpfs here: {exc.stderr.decode(errors='replace').strip()}")
    return sessions


def _only_session(sessions) -> str:
    (sid,) = [p.name for p in sessions.iterdir() if p.is_dir()]
    return sid


def _write_warnings(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("evo-agent: cannot")]


def _resume_and_check(cli_env, project, sid, restored):
    """`--resume SID -p` against a fresh server: exit 0 and the API gets the restored history + the prompt."""
    from tests.cli_runner import COMMAND
    from tests.fake_model_server import FakeModelServer

    with FakeModelServer() as server:
        server.script(text("Resumed fine."))
        result = subprocess.run([*COMMAND, "--resume", sid, "-p", "still there?"], cwd=project,
                                env=server.env(cli_env), capture_output=True, text=True, timeout=60)
        assert result.returncode == 0 and result.stdout == "Resumed fine.\n", result.stderr
        server.assert_all_valid()
        assert plain(server.requests[0]["messages"]) == plain(restored + [{"role": "user", "content": "still there?"}])


@needs_root
def test_a_full_disk_mid_session_warns_once_and_the_records_after_it_land_whole(cli, model_server, project):
    sessions = _sessions_on_tmpfs(project, "512k")
    try:
        model_server.script(
            text("First answer."),
            [text("Let me check."), tool_use("bash", {"command": "echo checked"})], text("Second answer."),
            text("Third answer."),
        )
        big_prompt = "second question " + "y" * 20_000  # one record larger than what is left
        with Repl(project, cli.env) as repl:
            repl.ask("first question", "First answer.")
            fill_disk(sessions, leave=4096)
            repl.ask(big_prompt, "Second answer.")
            assert len(_write_warnings(repl.err.text)) == 1
            (sessions / "filler").unlink()  # space is back
            repl.ask("third question", "Third answer.")
            assert repl.close() == 0
        err = repl.err.text
        sid = _only_session(sessions)
        warnings = _write_warnings(err)
        assert warnings == [f"{WARNING_START}{sid}: No space left on device; this conversation is not being saved"]
        assert "Traceback" not in err
        assert repl.err.text.rstrip("\n").splitlines()[-1] == f"Resume this session with: evo-agent --resume {sid}"
        model_server.assert_all_valid()
        # The live process kept the lost turn in memory: the model saw it.
        assert last_text({"messages": model_server.requests[-1]["messages"][:3]}) == big_prompt

        raw = (sessions / sid / "messages.jsonl").read_bytes()
        lines = raw.split(b"\n")
        assert raw.endswith(b"\n") and lines[-1] == b""
        unparsed = []
        for line in lines[:-1]:
            try:
                json.loads(line)
            except ValueError:
                unparsed.append(line)
        assert len(unparsed) == 1 and unparsed[0].startswith(b'{"type":"user"') and len(unparsed[0]) < 20_000
        fragment_at = lines.index(unparsed[0])
        after = json.loads(lines[fragment_at + 1])
        assert after["type"] == "user" and after["message"]["content"] == "third question"

        loaded = load_for_resume(sessions / sid / "messages.jsonl")
        expected = [
            {"role": "user", "content": "first question"},
            {"role": "assistant", "content": [{"type": "text", "text": "First answer."}]},
            {"role": "user", "content": "third question"},
            {"role": "assistant", "content": [{"type": "text", "text": "Third answer."}]},
        ]
        assert loaded.messages == expected and loaded.skipped_lines == 1
        check_request(loaded.messages + [{"role": "user", "content": "next"}])
        meta = json.loads((sessions / sid / "meta.json").read_text())  # replaced whole, never torn
        assert meta["id"] == sid and meta["first_prompt"] == "first question"
        assert not list((sessions / sid).glob(".meta.*"))  # no temp file left by the failed replaces
        _resume_and_check(cli.env, project, sid, expected)
    finally:
        unmount(sessions)


def _make_read_only(sessions, sid) -> None:
    if os.geteuid() == 0:  # root writes through permission bits: only a read-only mount stops it
        remount(sessions, "ro")
    else:
        os.chmod(sessions / sid / "messages.jsonl", 0o400)
        os.chmod(sessions / sid, 0o500)


def _make_writable(sessions, sid) -> None:
    if os.geteuid() == 0:
        remount(sessions, "rw")
    else:
        os.chmod(sessions / sid, 0o700)
        os.chmod(sessions / sid / "messages.jsonl", 0o600)


def test_a_directory_made_read_only_mid_session_warns_once_and_recovers(cli, model_server, project):
    """As root: a read-only remount of a tmpfs; otherwise: the session's directory and file made read-only."""
    if os.geteuid() == 0:
        sessions = _sessions_on_tmpfs(project, "4m")
    else:
        sessions = project / ".evo-agent" / "sessions"
    try:
        model_server.script(
            text("First answer."),
            [text("Looking."), tool_use("bash", {"command": "echo looked"})], text("Second answer."),
            text("Third answer."),
        )
        with Repl(project, cli.env) as repl:
            repl.ask("first question", "First answer.")
            sid = _only_session(sessions)
            _make_read_only(sessions, sid)
            try:
                repl.ask("second question", "Second answer.")
            finally:
                _make_writable(sessions, sid)
            repl.ask("third question", "Third answer.")
            assert repl.close() == 0
        warnings = _write_warnings(repl.err.text)
        reason = "Read-only file system" if os.geteuid() == 0 else "Permission denied"
        assert warnings == [f"{WARNING_START}{sid}: {reason}; this conversation is not being saved"], repl.err.text
        assert "Traceback" not in repl.err.text
        loaded = load_for_resume(sessions / sid / "messages.jsonl")
        expected = [
            {"role": "user", "content": "first question"},
            {"role": "assistant", "content": [{"type": "text", "text": "First answer."}]},
            {"role": "user", "content": "third question"},
            {"role": "assistant", "content": [{"type": "text", "text": "Third answer."}]},
        ]
        assert loaded.messages == expected and loaded.skipped_lines == 0  # a refused open leaves no fragment
        assert stat.S_IMODE((sessions / sid).stat().st_mode) == 0o700
        _resume_and_check(cli.env, project, sid, expected)
    finally:
        if os.geteuid() == 0:
            unmount(sessions)
