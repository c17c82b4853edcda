"""read_file, write_file and edit_file against real files."""

from __future__ import annotations

import pytest

from evo_agent.tools import BASIC_TOOLS, run_tool


def call(ctx, name, **tool_input):
    return run_tool(BASIC_TOOLS, name, tool_input, ctx)


# --- read_file ---------------------------------------------------------------


def test_read_numbers_lines_like_cat_n(ctx):
    (ctx.project_dir / "a.txt").write_text("alpha\nbeta\ngamma\n")
    r = call(ctx, "read_file", path="a.txt")
    assert not r.is_error
    assert r.content == "     1\talpha\n     2\tbeta\n     3\tgamma"


def test_read_offset_and_limit(ctx):
    (ctx.project_dir / "n.txt").write_text("".join(f"line {i}\n" for i in range(1, 101)))
    r = call(ctx, "read_file", path="n.txt", offset=10, limit=3)
    lines = r.content.splitlines()
    assert lines[:3] == ["    10\tline 10", "    11\tline 11", "    12\tline 12"]
    assert "of 100" in lines[3] and "offset=13" in lines[3]


def test_read_default_limit_is_2000_lines(ctx):
    (ctx.project_dir / "big.txt").write_text("x\n" * 2500)
    r = call(ctx, "read_file", path="big.txt")
    assert "  2000\tx" in r.content and "  2001\t" not in r.content
    assert "offset=2001" in r.content


def test_read_offset_past_end(ctx):
    (ctx.project_dir / "s.txt").write_text("one\n")
    r = call(ctx, "read_file", path="s.txt", offset=5)
    assert r.is_error and "past the end" in r.content


def test_read_absolute_path(ctx, tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("hi\n")
    assert call(ctx, "read_file", path=str(outside)).content == "     1\thi"


def test_read_errors(ctx):
    (ctx.project_dir / "dir").mkdir()
    (ctx.project_dir / "bin.dat").write_bytes(b"\x89PNG\0\0\x01")
    missing = call(ctx, "read_file", path="nope.txt")
    assert missing.is_error and "not found" in missing.content
    d = call(ctx, "read_file", path="dir")
    assert d.is_error and "directory" in d.content
    b = call(ctx, "read_file", path="bin.dat")
    assert b.is_error and "binary" in b.content


def test_read_long_lines_truncated_and_bad_utf8_replaced(ctx):
    (ctx.project_dir / "w.txt").write_bytes(b"y" * 5000 + b"\nbad \xff byte\n")
    r = call(ctx, "read_file", path="w.txt")
    first, second = r.content.splitlines()
    assert first.startswith("     1\t" + "y" * 2000 + " [")
    assert "y" * 2001 not in first
    assert second == "     2\tbad \ufffd byte"


def test_read_empty_file(ctx):
    (ctx.project_dir / "e.txt").write_text("")
    r = call(ctx, "read_file", path="e.txt")
    assert not r.is_error and "empty" in r.content


# --- write_file --------------------------------------------------------------


def test_write_creates_parents_and_reports(ctx):
    r = call(ctx, "write_file", path="deep/er/new.txt", content="a\nb\n")
    assert not r.is_error
    assert "4 bytes" in r.content and "2 lines" in r.content
    assert (ctx.project_dir / "deep/er/new.txt").read_bytes() == b"a\nb\n"


def test_write_overwrites_verbatim(ctx):
    p = ctx.project_dir / "f.txt"
    p.write_text("old")
    r = call(ctx, "write_file", path="f.txt", content="new\r\nline é")
    assert not r.is_error and "Overwrote" in r.content
    assert p.read_bytes() == "new\r\nline é".encode()


@pytest.mark.parametrize("tool", ["write_file", "edit_file"])
def test_a_platform_without_posix_fallocate_writes_files_as_before(ctx, monkeypatch, tool):
    """The blocks a longer text needs are reserved first where the platform can (Linux); macOS's Python has no
    `os.posix_fallocate`: every growing write and edit failed there with an AttributeError."""
    import os

    monkeypatch.delattr(os, "posix_fallocate", raising=False)
    p = ctx.project_dir / "f.txt"
    p.write_text("old\n")
    args = {"content": "a longer new text\n"} if tool == "write_file" else {"old_string": "old",
                                                                            "new_string": "a longer new text"}
    r = call(ctx, tool, path="f.txt", **args)
    assert not r.is_error, r.content
    assert p.read_text() == "a longer new text\n"


def test_write_onto_directory_is_error(ctx):
    (ctx.project_dir / "d").mkdir()
    r = call(ctx, "write_file", path="d", content="x")
    assert r.is_error and "directory" in r.content


# --- edit_file ---------------------------------------------------------------


def test_edit_replaces_unique_match(ctx):
    p = ctx.project_dir / "code.py"
    p.write_text("def f():\n    return 1\n")
    r = call(ctx, "edit_file", path="code.py", old_string="return 1", new_string="return 2")
    assert not r.is_error and "line 2" in r.content
    assert p.read_text() == "def f():\n    return 2\n"


def test_edit_not_found(ctx):
    p = ctx.project_dir / "code.py"
    p.write_text("x = 1\n")
    r = call(ctx, "edit_file", path="code.py", old_string="y = 1", new_string="y = 2")
    assert r.is_error and "not found" in r.content
    assert p.read_text() == "x = 1\n"


def test_edit_multiple_matches(ctx):
    p = ctx.project_dir / "code.py"
    p.write_text("x = 1\nx = 1\nx = 1\n")
    r = call(ctx, "edit_file", path="code.py", old_string="x = 1", new_string="x = 2")
    assert r.is_error and "found 3 times" in r.content and "more context" in r.content
    assert p.read_text() == "x = 1\nx = 1\nx = 1\n"


def test_edit_identical_strings_is_error(ctx):
    (ctx.project_dir / "c.txt").write_text("same\n")
    r = call(ctx, "edit_file", path="c.txt", old_string="same", new_string="same")
    assert r.is_error and "identical" in r.content


def test_edit_preserves_crlf(ctx):
    p = ctx.project_dir / "win.txt"
    p.write_bytes(b"one\r\ntwo\r\n")
    r = call(ctx, "edit_file", path="win.txt", old_string="two", new_string="TWO")
    assert not r.is_error
    assert p.read_bytes() == b"one\r\nTWO\r\n"


def test_edit_missing_file_and_non_utf8(ctx):
    assert "not found" in call(ctx, "edit_file", path="no.txt", old_string="a", new_string="b").content
    (ctx.project_dir / "latin1.txt").write_bytes(b"caf\xe9\n")
    r = call(ctx, "edit_file", path="latin1.txt", old_string="caf", new_string="CAF")
    assert r.is_error and "UTF-8" in r.content
    assert (ctx.project_dir / "latin1.txt").read_bytes() == b"caf\xe9\n"
