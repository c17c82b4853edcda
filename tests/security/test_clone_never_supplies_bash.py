"""The shell that runs a bash call is the system's, never one a clone committed.

A user whose PATH starts with a relative entry (`node_modules/.bin`, `.`, `bin`: common in shell setups)
runs, in a clone, whatever the clone put there under that name. evo-agent already looks `setpriv`, `bwrap`
and the unasked commands' programs up in absolute entries only; the shell of an approved call (or of every
call in bypass mode) was still `bash` looked up in the user's PATH, so even an approved `echo hi` (a builtin
that needs no PATH at all) ran the clone's `node_modules/.bin/bash` first.
"""

from __future__ import annotations

import os

import pytest

from tests.cli_runner import Cli, clean_env
from tests.fake_model_server import text, tool_use

from .hostile import clone, upstream

ENTRIES = ["node_modules/.bin", ".", "bin", ""]  # "" (an empty entry, `PATH=:/usr/bin`) means "."
WHERE = {"node_modules/.bin": "node_modules/.bin/bash", ".": "bash", "bin": "bin/bash", "": "bash"}


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("how", ["bypass", "allowed-rule", "sandbox"])
def test_a_committed_bash_never_runs_an_approved_call(tmp_path, model_server, entry, how):
    marker = tmp_path / "PWNED"
    fake = f"#!/bin/sh\ntouch {marker}\nexec /bin/bash \"$@\"\n"
    origin = upstream(tmp_path, {WHERE[entry]: fake})
    os.chmod(origin / WHERE[entry], 0o755)
    from .hostile import git

    assert git(origin, "add", "-A", "-f").returncode == 0
    assert git(origin, "commit", "-q", "-m", "x").returncode == 0
    project = clone(origin, tmp_path / "clone")
    assert os.access(project / WHERE[entry], os.X_OK)
    home = tmp_path / "home"
    home.mkdir()
    env = model_server.env(clean_env(home, PATH=f"{entry}:{os.environ['PATH']}"))
    model_server.script(tool_use("bash", {"command": "echo hi && touch made-by-the-call"}, id="t1"), text("done"))
    args = {"bypass": ["--permission-mode", "bypass"],
            "allowed-rule": ["--allowed-tools", "Bash(echo hi && touch made-by-the-call)"],
            "sandbox": ["--permission-mode", "bypass", "--sandbox"]}[how]
    result = Cli(project, env).run("-p", "say hi", *args)
    assert result.rc == 0, result.err
    assert "hi" in repr(model_server.requests[-1])
    assert not marker.exists()
    if how != "sandbox":
        assert (project / "made-by-the-call").exists()  # the call itself ran
