"""A NUL in one of git's small files (`.git`'s `gitdir:` line, `commondir`, `HEAD`) is read as git reads it.

git reads these files as C strings: the path ends at the first NUL. An unpacked archive's `.git/commondir` of
`../x<NUL>y` (or a `.git` file `gitdir: ../x<NUL>y`) reached os.stat whole, which refuses an embedded NUL with a
ValueError: `evo-agent sessions list`, `trust --status` and the judging of an unasked `git status` ended in a
traceback. Now the path ends at the NUL, as git's does.
"""

from __future__ import annotations

import json

import pytest

from tests.cli_runner import Cli, clean_env
from tests.fake_model_server import text, tool_use

from .hostile import unpack_archive_of, upstream

PLANTS = {
    "commondir": lambda git_dir: (git_dir / "commondir").write_bytes(b"../x\0y\n"),
    "commondir, the NUL first": lambda git_dir: (git_dir / "commondir").write_bytes(b"\0../x\n"),
    "HEAD": lambda git_dir: (git_dir / "HEAD").write_bytes(b"ref: refs/heads/main\0junk\n"),
}


def _archive(tmp_path, plant):
    origin = upstream(tmp_path, {".evo-agent/settings.json": json.dumps({"permissions": {"allow": ["Bash(ls)"]}})})
    if plant == "gitdir file":
        (origin / ".git").rename(origin / ".real-git")
        (origin / ".git").write_bytes(b"gitdir: .real-git\0junk\n")
    else:
        PLANTS[plant](origin / ".git")
    project = unpack_archive_of(origin, tmp_path / "unpacked")
    (project / ".evo-agent" / "sessions").mkdir(mode=0o700)
    (project / ".evo-agent" / "settings.json").chmod(0o644)
    return project


@pytest.mark.parametrize("plant", [*sorted(PLANTS), "gitdir file"])
def test_evo_agent_reads_a_nul_in_gits_files_without_a_traceback(tmp_path, model_server, plant):
    project = _archive(tmp_path, plant)
    cli = Cli(project, model_server.env(clean_env(tmp_path / "home")))
    for args in (("sessions", "list"), ("trust", "--status")):
        result = cli.run(*args)
        assert "Traceback" not in result.err and result.rc == 0, (args, result.err)
    model_server.script(tool_use("bash", {"command": "git status"}), text("done"))
    result = cli.run("-p", "status?", "--permission-mode", "read-only")
    assert "Traceback" not in result.err and result.rc == 0, result.err
    assert "done" in result.out
