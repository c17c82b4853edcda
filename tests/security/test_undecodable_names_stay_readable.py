"""A tool result naming a file whose name is not UTF-8 (a byte 0x9b, an 8-bit CSI, in an archive's file name) or
a model answer holding a lone surrogate is recorded, shown and found like any other line.

Python holds such a name as lone surrogates; the recorder writes that line through the stdlib's JSON (orjson
refuses it), and resume reads it back (meta.decode_lenient), but `sessions show`, `export`, `search` and
`fsck` parsed lines with orjson alone: the line counted as unreadable ("⚠ messages.jsonl line 6: unreadable
line, skipped"), so the tool's result vanished from what the user was shown and fsck reported damage that is
not there. Now those readers parse lines as resume does. And nothing of the raw byte reaches the terminal.
Control: the same session without the odd name shows no warning either.
"""

from __future__ import annotations

import json
import os

import pytest

from tests.fake_model_server import text, tool_use

ANSWER = "found them \ud800 all"  # a hostile endpoint's JSON may escape a lone surrogate: \ud800


@pytest.mark.parametrize("name", [b"unpacked \x9b2J \xff", b"plain-name"])
def test_a_tool_result_naming_an_undecodable_file_is_shown_and_found(cli, model_server, name):
    os.mkdir(os.path.join(os.fsencode(cli.project), name))
    (cli.project / "notes.txt").write_text("hello\n")
    model_server.script(tool_use("glob", {"pattern": "*"}), text(ANSWER))
    run = cli.run("-p", "list the files")
    assert run.rc == 0, run.err
    (sid,) = cli.session_ids()
    shown = cli.run("sessions", "show", sid)
    assert shown.rc == 0, shown.err
    assert "unreadable" not in shown.out and "found them \\ud800 all" in shown.out, shown.out  # shown as its escape
    assert "notes.txt" in shown.out and os.fsdecode(name).split(" ")[0] in shown.out, shown.out  # the result
    for raw in ("\x9b", "\x1b", "\udc9b"):
        assert raw not in shown.out
    exported = cli.run("sessions", "export", sid, "--format", "jsonl")
    records = [json.loads(line) for line in exported.out.splitlines()]
    assert any(ANSWER in json.dumps(r, ensure_ascii=False) for r in records)
    found = cli.run("sessions", "search", "found them")
    assert found.rc == 0 and sid in found.out, (found.out, found.err)
    fsck = cli.run("sessions", "fsck", sid)
    assert fsck.rc == 0 and "unreadable" not in fsck.out, fsck.out
