"""What evo-agent quotes in its own lines reaches no terminal with its control sequences intact (SPEC §9).

The model's answers, tool output and transcripts were made terminal-safe; the lines evo-agent writes *about*
them were not all: an API's error message (the server's text, `{"error": {"message": …}}`) went to stderr raw
in print mode and in the REPL, so a hostile or compromised endpoint (or a proxy in front of it) could retitle
the terminal, write the clipboard with OSC 52 or clear the screen; and `sessions import` printed the name of
the file it imported raw (a transcript downloaded in an archive is named by whoever made it). Now every line
on stderr (`Console.err_line`, and the one line a failing command ends with) and each imported file's name go
through `terminal_safe`; the payload stays visible as text (`^[]0;pwned^G`), which is the control: it was live.
"""

from __future__ import annotations

import shutil

import pytest

from tests.cli.import_helpers import fixture
from tests.cli.test_terminal_safe import PAYLOAD, RAW, assert_harmless
from tests.fake_model_server import error

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
