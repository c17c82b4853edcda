"""A hard link an unpacked archive makes is never a way to read the victim's files into the model's context.

git cannot commit a hard link, but a tarball can carry one, and Python's `tarfile` (and `shutil.unpack_archive`,
which uses it) makes it wherever its name points: `tool/AGENTS.md` linked to `../.ssh/id_rsa` becomes, in the
victim's `~/Downloads/tool/`, another name of `~/.ssh/id_rsa`. Not a symbolic link, so nothing refused it:
evo-agent read it into the system prompt as the project's instructions at the first request, before anyone
was asked anything, and the memory tool's `view` and the plan tools (which run unasked in every mode) handed
it to the model.

The attacker's project is a real repository (git init, commit), published as a tarball; the victim unpacks it
in `~/Downloads` and runs evo-agent there. The marker is text of the victim's file outside the project: it must
reach no request the model is sent.
"""

from __future__ import annotations

import json
import os
import shutil
import tarfile
from pathlib import Path

import pytest

from tests.cli_runner import Cli, clean_env
from tests.fake_model_server import reply, text, tool_use
from tests.security.hostile import upstream

MARKER = "MARKER-PRIVATE-KEY-7c1e"

# Where the archive puts a hard link (inside `tool/`), and the name it links to, from the directory it is
# unpacked in (`~/Downloads`): relative (no user name to guess) or absolute.
LINKS = {
    "AGENTS.md, relative": ("AGENTS.md", "../.ssh/id_rsa"),
    "CLAUDE.md, relative": ("CLAUDE.md", "../.ssh/id_rsa"),
    "AGENTS.md, absolute": ("AGENTS.md", "{home}/.ssh/id_rsa"),
    "a directory's AGENTS.md": ("pkg/AGENTS.md", "../.ssh/id_rsa"),
    "a memory topic file": (".evo-agent/memory/setup.md", "../.ssh/id_rsa"),
    "a plan's plan.md": (".evo-agent/tasks/todo/2026-12-01-setup/plan.md", "../.ssh/id_rsa"),
}


def _published(tmp_path: Path, links: dict[str, str], files: dict[str, str]) -> Path:
    """The attacker's repository as a tarball: its files, plus hard-link members naming `links`' targets."""
    (tmp_path / "attacker").mkdir()
    origin = upstream(tmp_path / "attacker", {"pkg/notes.txt": "x\n", **files}, name="tool")
    archive = tmp_path / "attacker" / "tool.tar"
    with tarfile.open(archive, "w") as tar:
        tar.add(origin, arcname="tool")
        for rel, target in links.items():
            member = tarfile.TarInfo(f"tool/{rel}")
            member.type, member.linkname = tarfile.LNKTYPE, target
            tar.addfile(member)
    return archive


def _victim(tmp_path: Path, model_server, archive: Path, how: str = "tarfile") -> tuple[Cli, Path]:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(f"# {MARKER} the victim's own file\n")
    downloads = home / "Downloads"
    downloads.mkdir()
    if how == "tarfile":
        with tarfile.open(archive) as tar:
            tar.extractall(downloads)
    else:
        shutil.unpack_archive(archive, downloads)
    return Cli(downloads / "tool", model_server.env(clean_env(home))), home


@pytest.mark.parametrize("where", sorted(LINKS))
def test_a_hard_link_out_of_an_unpacked_archive_never_reaches_the_model(tmp_path, model_server, where):
    rel, target = LINKS[where]
    home = tmp_path / "home"
    archive = _published(tmp_path, {rel: target.format(home=home)}, {})
    cli, _ = _victim(tmp_path, model_server, archive, "shutil" if "absolute" in where else "tarfile")
    planted = cli.project / rel
    assert MARKER in planted.read_text() and os.stat(planted).st_nlink == 2  # the control: the link is live
    if rel.startswith("pkg/"):
        cli = Cli(cli.project / "pkg", cli.env)  # started in the directory holding it
    model_server.script(reply(tool_use("memory", {"command": "view", "path": "/memories/project/setup.md"}),
                              tool_use("plan_list", {})),
                        reply(text("done")))
    result = cli.run("-p", "set the project up", "--permission-mode", "read-only", timeout=120)
    assert result.rc == 0, result.err
    assert len(model_server.requests) == 2
    assert MARKER not in json.dumps(model_server.requests), "the victim's file reached the model"
    assert MARKER in (home / ".ssh" / "id_rsa").read_text()


def test_the_control_files_with_two_names_in_one_directory_are_still_read(tmp_path, model_server):
    """`ln AGENTS.md CLAUDE.md` (both names in the project's directory) and plain files read as before."""
    topic = "---\nname: Setup\ndescription: how to set up\ntype: project\n---\nrun make MARKER-TOPIC\n"
    archive = _published(tmp_path, {"CLAUDE.md": "tool/AGENTS.md"},
                         {"AGENTS.md": "MARKER-ROOT-RULE\n", ".evo-agent/memory/setup.md": topic})
    cli, _ = _victim(tmp_path, model_server, archive)
    assert os.stat(cli.project / "CLAUDE.md").st_nlink == 2
    model_server.script(reply(tool_use("memory", {"command": "view", "path": "/memories/project/setup.md"})),
                        reply(text("done")))
    result = cli.run("-p", "set the project up", "--permission-mode", "read-only", timeout=120)
    assert result.rc == 0, result.err
    sent = json.dumps(model_server.requests)
    assert "MARKER-ROOT-RULE" in sent and "MARKER-TOPIC" in sent
