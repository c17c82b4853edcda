"""A session's kept MCP tool list (`mcp_tools.json`) that is a FIFO, device or link never makes a resume hang.

A resume reads the tool list its source kept (SPEC §12: the first request repeats the source's tools), before
its first request. An archive keeps FIFOs: a planted session whose `mcp_tools.json` is one, resumed once the user
said yes to "recorded elsewhere — resume anyway?", opened it blocking and waited for a writer forever: the first
prompt was never answered, and Ctrl+C was the only way out. The kept list is read like every other file of a
session: without blocking, and only when it is a regular file.
"""

from __future__ import annotations

import os

import pytest

from tests.fake_model_server import text
from tests.pty_terminal import on_a_terminal

from .test_unpacked_sessions import _mallory_tree, _planted_id, _tar_gnu, victim  # noqa: F401 (a fixture)

KINDS = {
    "fifo": lambda path: os.mkfifo(path),
    "link to a fifo": lambda path: (os.mkfifo(path.parent / "pipe"), path.symlink_to("pipe")),
    "link to /dev/zero": lambda path: path.symlink_to("/dev/zero"),
}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_resuming_a_planted_session_whose_tool_list_is_a_fifo_answers(victim, model_server, tmp_path, kind):  # noqa: F811
    sid = _planted_id()
    tree = _mallory_tree(tmp_path, sid)
    KINDS[kind](tree / ".evo-agent" / "sessions" / sid / "mcp_tools.json")
    dest = tmp_path / "downloads" / "project"
    dest.parent.mkdir()
    _tar_gnu(tree, dest)  # tar keeps the FIFO
    cli = victim(dest)
    model_server.script(text("Answered."))
    rc, screen = on_a_terminal(cli, "--plain", "--resume", sid,
                               steps=[(b"resume anyway? [y/N] ", b"y\r"), (b"> ", b"and now?\r"),
                                      (b"Answered.", b""), (b"> ", b"\x04")])
    assert rc == 0, screen
    assert "Traceback" not in screen
