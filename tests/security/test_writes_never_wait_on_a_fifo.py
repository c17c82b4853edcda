"""A write never waits on a FIFO (SPEC §9): write_file refuses one in one line, whatever path leads to it.

tar keeps FIFOs, so an unpacked archive can put one where the model will write (`out.txt`), or commit a symlink to
one. read_file, grep and edit_file opened such a file without blocking already; write_file opened it for writing
and waited for a reader that never came: in accept-edits (or after a "yes") the agent hung for good, with no
timeout around a file tool. Now a FIFO is refused before anything is opened, and the open itself cannot block.
"""

from __future__ import annotations

import errno
import os

import pytest

from tests.cli_runner import Cli, clean_env
from tests.fake_model_server import text, tool_use

from .hostile import unpack_archive_of, upstream


def _archive(tmp_path):
    origin = upstream(tmp_path, {"docs/notes.txt": "a needle\n"}, {"link": "out.txt", "docs/link": "../out.txt"})
    os.mkfifo(origin / "out.txt")
    return unpack_archive_of(origin, tmp_path / "unpacked")


def _write(tmp_path, model_server, project, path: str):
    model_server.script(tool_use("write_file", {"path": path, "content": "hello\n"}, id="w1"), text("done"))
    cli = Cli(project, model_server.env(clean_env(tmp_path / "home")))
    result = cli.run("-p", "--permission-mode", "accept-edits", "write it", timeout=120)  # a hang fails here
    return result, model_server.requests[-1]["messages"][-1]["content"][0]


@pytest.mark.parametrize("path", ["out.txt", "./out.txt", "docs/../out.txt", "link", "docs/link"])
def test_write_file_refuses_a_fifo_in_one_line_instead_of_hanging(tmp_path, model_server, path):
    project = _archive(tmp_path)
    result, block = _write(tmp_path, model_server, project, path)
    assert result.rc == 0, result.err
    assert block["is_error"] and "not a regular file" in block["content"] and "\n" not in block["content"]
    with pytest.raises(OSError) as raised:  # still a FIFO nobody reads: the write really would have waited
        os.open(project / "out.txt", os.O_WRONLY | os.O_NONBLOCK)
    assert raised.value.errno == errno.ENXIO


def test_the_control_a_regular_file_of_the_same_archive_is_written(tmp_path, model_server):
    project = _archive(tmp_path)
    result, block = _write(tmp_path, model_server, project, "docs/notes.txt")
    assert result.rc == 0, result.err
    assert not block.get("is_error") and (project / "docs" / "notes.txt").read_text() == "hello\n"
