"""Unasked `git status` / `git diff` never read a file outside the work tree that the archive's index names.

git reads the work tree's file of every index entry by the entry's name, and an unpacked archive ships its own
`.git/index`. git never writes an entry named `../../.netrc` or `/home/u/.ssh/id_rsa` (nor checks one out of a
commit), but it reads one: `git diff` printed the victim's file as that entry's change, unasked, in the read-only
sandbox too (it binds `/` read-only). The check now lists the index through git itself (`ls-files -z`: every index
version, a split index) and asks when a name leaves the work tree. A link on the way (`lnk/secret`) git already
refuses to follow; an ordinary clone still runs unasked.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import struct
import subprocess

import pytest

from evo_agent.tools.shell_readonly import ReadOnlyPlan, plan_read_only
from tests.cli_runner import Cli, clean_env
from tests.fake_model_server import text, tool_use

from .hostile import clone, git, upstream

SECRET = "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI-from-the-index"
COMMANDS = ["git diff", "git diff --stat", "git diff HEAD", "git status", "git status --porcelain"]


def _index(entries: list[tuple[str, str]]) -> bytes:
    """A version-2 index listing `entries` (name, blob id) verbatim, as an attacker writes one (git refuses the
    names through `update-index`), its checksum right: what git reads without a word."""
    out = b"DIRC" + struct.pack(">II", 2, len(entries))
    for name, blob in sorted(entries):
        raw = name.encode()
        entry = struct.pack(">10I", 0, 0, 0, 0, 0, 0, 0o100644, 0, 0, 0) + bytes.fromhex(blob)
        entry += struct.pack(">H", min(len(raw), 0xFFF)) + raw
        out += entry + b"\0" * (8 - len(entry) % 8)
    return out + hashlib.sha1(out).digest()


def _armed_archive(tmp_path, name_of, layout: str = "v2"):
    """The victim's `~/.netrc` two levels up, and an unpacked archive whose index names it (`name_of(secret)`)."""
    secret = tmp_path / "home" / ".netrc"
    secret.parent.mkdir(parents=True, exist_ok=True)
    secret.write_text(SECRET + "\n")
    tool = clone(upstream(tmp_path, {"notes.txt": "hello\n", "docs/a.md": "# a\n"}),
                 tmp_path / "home" / "Downloads" / "tool")
    blob = git(tool, "rev-parse", "HEAD:notes.txt").stdout.strip()
    (tool / ".git" / "index").write_bytes(_index([(name_of(secret, tool), blob)]))
    if layout == "v4":  # prefix-compressed names
        assert git(tool, "update-index", "--index-version", "4").returncode == 0
    elif layout == "split":  # the names in .git/sharedindex.<id>, the index a small link to it
        assert git(tool, "update-index", "--split-index").returncode == 0
        assert any(p.name.startswith("sharedindex.") for p in (tool / ".git").iterdir())
    return tool


NAMES = {
    "dotdot": lambda secret, tool: "../../.netrc",
    "absolute": lambda secret, tool: str(secret),
    "inner-dotdot": lambda secret, tool: "docs/../../../.netrc",
    "through-dot-git": lambda secret, tool: ".git/../../../.netrc",
    "dot-first": lambda secret, tool: "./../../.netrc",
    "double-slash": lambda secret, tool: "docs//../../../.netrc",
}


def _plain_git(tool, command: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    ran = subprocess.run(command.split(), cwd=tool, capture_output=True, text=True, timeout=60, env=env)
    return ran.stdout + ran.stderr


@pytest.mark.parametrize("layout", ["v2", "v4", "split"])
@pytest.mark.parametrize("spelling", sorted(NAMES))
def test_an_index_entry_outside_the_work_tree_makes_status_and_diff_ask(tmp_path, spelling, layout):
    tool = _armed_archive(tmp_path, NAMES[spelling], layout)
    assert "wJalrXUtnFEMI" in _plain_git(tool, "git diff")  # the control: plain git prints the victim's file
    for command in COMMANDS:
        plan = plan_read_only(command, tool)
        assert isinstance(plan, str) and "outside its work tree" in plan, (command, plan)
    # log and show read objects only, never the work tree: they still run unasked
    assert isinstance(plan_read_only("git log -p", tool), ReadOnlyPlan)


def test_through_the_agent_the_file_never_reaches_the_model(tmp_path, model_server):
    tool = _armed_archive(tmp_path, NAMES["dotdot"])
    bin_dir = tmp_path / "bin"  # no bwrap: the victim's file lies under /tmp, which the sandbox would hide
    bin_dir.mkdir()
    for program in ("git", "bash", "setpriv"):
        if shutil.which(program):
            os.symlink(shutil.which(program), bin_dir / program)
    model_server.script(tool_use("bash", {"command": "git diff"}, id="t1"), text("done"))
    env = model_server.env(clean_env(tmp_path / "agent-home", PATH=str(bin_dir)))
    result = Cli(tool, env).run("-p", "what changed?")
    assert "wJalrXUtnFEMI" not in repr(model_server.requests)
    assert "needs approval" in result.err


def test_the_control_a_link_on_the_way_is_git_s_own_business_and_an_ordinary_clone_runs_unasked(tmp_path):
    tool = _armed_archive(tmp_path, lambda secret, tool: "lnk/.netrc")
    os.symlink(tmp_path / "home", tool / "lnk")
    assert "wJalrXUtnFEMI" not in _plain_git(tool, "git diff")  # git does not follow a leading link
    assert isinstance(plan_read_only("git diff", tool), ReadOnlyPlan)
    ordinary = clone(upstream(tmp_path, {"src/app.py": "print(1)\n"}, name="plain"), tmp_path / "plain-clone")
    (ordinary / "src" / "app.py").write_text("print(2)\n")
    for command in COMMANDS:
        assert isinstance(plan_read_only(command, ordinary), ReadOnlyPlan), command
