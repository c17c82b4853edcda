"""What evo-agent quotes in its own lines reaches no terminal with its control sequences intact (SPEC §9).

The model's answers, tool output and transcripts were made terminal-safe; the lines evo-agent writes *about*
them were not all: an API's error message (the server's text, `{"error": {"message": …}}`) went to stderr raw
in print mode and in the REPL, so a hostile or compromised endpoint (or a proxy in front of it) could retitle
the terminal, write the clipboard with OSC 52 or clear the screen; and `sessions import` printed the name of
the file it imported raw (a transcript downloaded in an archive is named by whoever made it); `-p
--output-format json|stream-json` wrote C1 controls and bidi overrides raw (json.dumps escapes only C0). Now
every line on stderr (`Console.err_line`, and the one line a failing command ends with) and each imported
file's name go through `terminal_safe`, and print mode's JSON lines escape C1 and bidi as `sessions --json`
does; the payload stays visible as text (`^[]0;pwned^G`), which is the control: it was live.
"""

from __future__ import annotations

import json
import shutil

import pytest

from tests.cli.import_helpers import fixture
from tests.cli.test_terminal_safe import PAYLOAD, RAW, _run_on_a_pty, assert_harmless
from tests.fake_model_server import error, text, tool_use

NAME = PAYLOAD.replace("/", "_")  # the same sequences, as a file name can hold them


def _raw(text: str) -> list[str]:
    return [char for char in RAW if char in text]


@pytest.mark.parametrize("mid_stream", [False, True])
@pytest.mark.parametrize("front_end", ["print", "repl"])
def test_an_api_error_message_reaches_stderr_harmless(cli, model_server, mid_stream, front_end):
    model_server.script(error(status=400, type="invalid_request_error", message=PAYLOAD, mid_stream=mid_stream))
    result = cli.run("-p", "hi") if front_end == "print" else cli.run(input="hi\n")
    assert result.rc != 0 or front_end == "repl"  # the REPL goes on to its next prompt (none: end of input)
    assert not _raw(result.err) and not _raw(result.out), repr(result.err)
    [line] = [ln for ln in result.err_lines if "invalid_request_error" in ln]
    assert_harmless(line)  # the server's message is shown, every sequence as visible text


def test_an_imported_file_s_name_reaches_the_terminal_harmless(demo_cli, tmp_path):
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    hostile = downloads / f"{NAME}.jsonl"
    shutil.copy(fixture("claude_code", "compact"), hostile)
    empty = downloads / f"empty {NAME}.jsonl"
    empty.write_text("not a transcript\n")
    runs = [demo_cli.run("sessions", "import", "claude-code", str(hostile), "--dry-run"),
            demo_cli.run("sessions", "import", "claude-code", str(hostile)),
            demo_cli.run("sessions", "import", "claude-code", str(hostile)),  # already imported
            demo_cli.run("sessions", "import", "claude-code", str(empty)),  # nothing in it: the failure line
            demo_cli.run("sessions", "import", "claude-code", str(empty), str(hostile))]
    for result in runs:
        assert not _raw(result.out) and not _raw(result.err), (result.out, result.err)
    assert runs[1].rc == 0 and "→" in runs[1].out and "^[]0;pwned^G" in runs[1].out
    assert "already imported" in runs[2].out and "^[]0;pwned^G" in runs[2].out
    assert runs[3].rc == 1 and runs[3].err.startswith("evo-agent: nothing to import from") and "^[]0;pwned^G" in runs[3].err
    assert "^[]0;pwned^G" in runs[4].err


@pytest.mark.parametrize("fmt", ["json", "stream-json"])
def test_print_mode_json_to_a_terminal_escapes_c1_and_bidi_and_parses_to_the_same_data(cli, model_server, fmt):
    """json.dumps escapes C0 controls but leaves C1 (U+009B, an 8-bit CSI) and bidi overrides raw."""
    (cli.project / "notes.txt").write_text(PAYLOAD + "\n")
    model_server.script(tool_use("read_file", {"path": "notes.txt"}), text("said: " + PAYLOAD))
    rc, screen, err = _run_on_a_pty(cli, "-p", "read my notes", "--output-format", fmt)
    assert rc == 0, err
    assert not _raw(screen) and not _raw(err), repr(screen)
    events = [json.loads(line) for line in screen.replace("\r\n", "\n").splitlines() if line.strip()]
    assert events[-1]["type"] == "result" and events[-1]["result"] == "said: " + PAYLOAD  # the same data
    if fmt == "stream-json":
        results = [b for e in events if e["type"] == "user" for b in e["message"]["content"]]
        assert PAYLOAD in results[0]["content"]
