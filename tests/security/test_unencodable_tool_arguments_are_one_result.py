"""A tool call whose text no path or command can hold (a NUL, a lone surrogate, a name longer than the file system
takes) is one `is_error` result.

The model's arguments are untrusted JSON, and a repository steers the model: an AGENTS.md or a file it reads can
tell it to call `read_file` with `"path": "notes\\u0000.md"`. The permission check resolved that path before
any tool ran, and os.stat raises ValueError on a NUL (UnicodeEncodeError on `\\ud800`): the whole run ended in
"evo-agent: internal error", in every permission mode, and in the app the session was gone. Such a call is now
refused like any malformed input, and the session goes on. A name the file tools themselves print for bytes that
are not UTF-8 (`\\udcff`, test_undecodable_names_stay_readable.py) is still a path. A path outside the project
with a component longer than 255 bytes (ENAMETOOLONG, which pathlib's is_dir() does not swallow) ended the run
the same way, asked for or not.
"""

from __future__ import annotations

import pytest

from tests.fake_model_server import text, tool_use

BAD = {"NUL": "\u0000", "high surrogate": "\ud800", "low surrogate outside surrogateescape": "\udc00"}
CALLS = {
    "read_file": lambda bad: ("read_file", {"path": f"notes{bad}.md"}),
    "write_file": lambda bad: ("write_file", {"path": f"notes{bad}.md", "content": "x"}),
    "edit_file": lambda bad: ("edit_file", {"path": f"notes{bad}.md", "old_string": "x", "new_string": "y"}),
    "grep path": lambda bad: ("grep", {"pattern": "x", "path": f"src{bad}"}),
    "glob pattern": lambda bad: ("glob", {"pattern": f"**/*{bad}"}),
    "bash": lambda bad: ("bash", {"command": f"cat 'notes{bad}.md'"}),
    "bash git": lambda bad: ("bash", {"command": f"git log -- 'notes{bad}.md'"}),
}


@pytest.mark.parametrize("mode", ["ask", "read-only", "bypass"])
@pytest.mark.parametrize("bad", sorted(BAD))
@pytest.mark.parametrize("call", sorted(CALLS))
def test_an_argument_no_path_can_hold_is_one_error_result(cli, model_server, call, bad, mode):
    name, arguments = CALLS[call](BAD[bad])
    model_server.script(tool_use(name, arguments), text("carried on"))
    result = cli.run("-p", "go", "--permission-mode", mode)
    assert result.rc == 0 and "internal error" not in result.err and "Traceback" not in result.err, result.err
    assert result.out.strip() == "carried on"
    [block] = model_server.requests[-1]["messages"][-1]["content"]
    assert block["is_error"], block


def test_the_control_a_name_of_undecodable_bytes_is_still_a_path(cli, model_server):
    (cli.project / b"caf\xe9.txt".decode("utf-8", "surrogateescape")).write_text("latin-1 named\n")
    model_server.script(tool_use("read_file", {"path": "caf\udce9.txt"}), text("read it"))
    result = cli.run("-p", "go", "--permission-mode", "read-only")
    assert result.rc == 0, result.err
    [block] = model_server.requests[-1]["messages"][-1]["content"]
    assert not block.get("is_error") and "latin-1 named" in str(block["content"]), block


LONG = "a" * 300
LONG_PATHS = {"absolute": f"/tmp/{LONG}", "above": f"../{LONG}", "home": f"~/{LONG}", "deeper": f"/tmp/x/{LONG}/y"}


@pytest.mark.parametrize("mode", ["ask", "read-only"])
@pytest.mark.parametrize("tool", ["read_file", "grep"])
@pytest.mark.parametrize("where", sorted(LONG_PATHS))
def test_a_path_outside_with_a_name_too_long_is_one_error_result(cli, model_server, where, tool, mode):
    arguments = {"path": LONG_PATHS[where], **({"pattern": "x"} if tool == "grep" else {})}
    model_server.script(tool_use(tool, arguments), text("carried on"))
    result = cli.run("-p", "go", "--permission-mode", mode)
    assert result.rc == 0 and "internal error" not in result.err and "Traceback" not in result.err, result.err
    assert result.out.strip() == "carried on"
    [block] = model_server.requests[-1]["messages"][-1]["content"]
    assert block["is_error"], block
