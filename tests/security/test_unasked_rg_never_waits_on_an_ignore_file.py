"""An unasked rg never waits on an ignore file (SPEC §9).

ripgrep opens, without being told, the ignore files of every directory it searches (`.ignore`, `.rgignore`,
`.gitignore`, a repository's `.git/info/exclude`) and of every directory above where it starts, up to `/`. An
unpacked archive can ship any of them as a FIFO, and anyone can leave a FIFO `/tmp/.ignore` above every project
under `/tmp`: a plain `rg needle` ran unasked and waited until the bash tool's timeout. Now it asks. (A clone's
`.ignore -> /dev/zero` asks too where no read-only sandbox runs; inside one it reads as missing:
test_ignore_links_to_devices.py.)
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from evo_agent.tools.sandbox import SandboxError, check_sandbox
from tests.cli_runner import Cli, clean_env
from tests.fake_model_server import text, tool_use

from .hostile import clone, unpack_archive_of, upstream

pytestmark = pytest.mark.skipif(shutil.which("rg") is None, reason="ripgrep is not installed")


def _fifo_at(rel: str):
    def plant(origin: Path) -> None:
        (origin / rel).parent.mkdir(parents=True, exist_ok=True)
        (origin / rel).unlink(missing_ok=True)  # (`git init` writes an `info/exclude`)
        os.mkfifo(origin / rel)

    return plant


# what is a FIFO, and the unasked command that opened it
ARCHIVES = {
    "docs/.ignore": (_fifo_at("docs/.ignore"), "rg needle"),
    ".rgignore": (_fifo_at(".rgignore"), "rg --files"),
    "docs/.gitignore": (_fifo_at("docs/.gitignore"), "rg -n needle docs"),
    "src/.gitignore beside a searched file": (_fifo_at("src/.gitignore"), "rg needle src/app.txt"),
    ".git/info/exclude": (_fifo_at(".git/info/exclude"), "rg -l needle"),
}


def _bash(tmp_path, model_server, project, command: str, *, sandbox: bool = True):
    """The model runs `command`; `sandbox=False`: on a machine where bubblewrap cannot run (a container that refuses
    it a namespace), so nothing hides `/tmp` or `/dev` from the command."""
    model_server.script(tool_use("bash", {"command": command, "timeout": 15}, id="t1"), text("done"))
    env = model_server.env(clean_env(tmp_path / "home"))
    if not sandbox:
        env["PATH"] = f"{_broken_bwrap(tmp_path)}:{env['PATH']}"
    cli = Cli(project, env)
    started = time.monotonic()
    result = cli.run("-p", "look", timeout=120)  # a hang fails here, whatever the machine's speed
    return result, time.monotonic() - started, model_server.requests[-1]["messages"][-1]["content"][0]


def _broken_bwrap(tmp_path) -> Path:
    bin_dir = tmp_path / "no-namespaces"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "bwrap").write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    (bin_dir / "bwrap").chmod(0o755)
    return bin_dir


def _origin(tmp_path) -> Path:
    return upstream(tmp_path, {"docs/notes.txt": "a needle\n", "src/app.txt": "another needle\n"})


def _asked(result, block) -> None:
    assert result.rc == 0, result.err
    assert "not run (needs approval)" in result.err, (result.err, block)
    assert "timed out" not in block["content"]


@pytest.mark.parametrize("case", sorted(ARCHIVES))
def test_an_unasked_rg_whose_ignore_file_is_a_fifo_asks(tmp_path, model_server, case):
    plant, command = ARCHIVES[case]
    origin = _origin(tmp_path)
    plant(origin)
    project = unpack_archive_of(origin, tmp_path / "unpacked")
    _asked(*_bash(tmp_path, model_server, project, command)[::2])


def test_an_unasked_rg_below_a_fifo_ignore_file_asks_where_no_sandbox_hides_it(tmp_path, model_server):
    """The FIFO lies above the project (another user's `/tmp/.ignore`): rg reads every parent's."""
    project = clone(_origin(tmp_path), tmp_path / "work" / "clone")
    os.mkfifo(tmp_path / "work" / ".ignore")
    _asked(*_bash(tmp_path, model_server, project, "rg needle", sandbox=False)[::2])


def test_an_unasked_rg_whose_committed_ignore_file_links_to_a_device_asks_where_no_sandbox_runs(tmp_path,
                                                                                                 model_server):
    origin = upstream(tmp_path, {"docs/notes.txt": "a needle\n"}, {"docs/.ignore": "/dev/zero"})
    project = clone(origin, tmp_path / "clone")
    _asked(*_bash(tmp_path, model_server, project, "rg needle", sandbox=False)[::2])


def test_the_sandbox_hides_a_fifo_ignore_file_in_tmp_above_the_project(tmp_path, model_server):
    """Where the read-only sandbox runs, `/tmp` is its own: rg never meets the FIFO, so nothing asks."""
    try:
        check_sandbox(tmp_path, writable=False)
    except SandboxError as exc:
        pytest.skip(f"no read-only sandbox here: {exc}")
    if not str(tmp_path).startswith("/tmp/"):
        pytest.skip("the test's directory is not under /tmp")
    project = clone(_origin(tmp_path), tmp_path / "work" / "clone")
    os.mkfifo(tmp_path / "work" / ".ignore")
    result, _, block = _bash(tmp_path, model_server, project, "rg needle")
    assert "needs approval" not in result.err, result.err
    assert "docs/notes.txt" in block["content"] and "timed out" not in block["content"]


def test_the_control_ordinary_ignore_files_run_unasked_and_are_obeyed(tmp_path, model_server):
    origin = _origin(tmp_path)
    (origin / ".ignore").write_text("src/\n")
    (origin / "docs" / ".gitignore").write_text("*.log\n")
    project = unpack_archive_of(origin, tmp_path / "unpacked")
    result, _, block = _bash(tmp_path, model_server, project, "rg needle")
    assert "needs approval" not in result.err, result.err
    assert "docs/notes.txt" in block["content"] and "src/app.txt" not in block["content"]


def test_a_fifo_in_a_directory_rg_skips_costs_no_question(tmp_path, model_server):
    """rg never enters a directory `.gitignore` excludes: a FIFO `.ignore` there holds nothing, so nothing asks
    (the check walks as rg does: a `node_modules/` of 33,000 directories is not read on every search)."""
    origin = _origin(tmp_path)
    (origin / ".gitignore").write_text("vendor/\n")
    (origin / "vendor" / "pkg").mkdir(parents=True)
    os.mkfifo(origin / "vendor" / "pkg" / ".ignore")
    project = unpack_archive_of(origin, tmp_path / "unpacked")
    result, _, block = _bash(tmp_path, model_server, project, "rg needle")
    assert "needs approval" not in result.err, result.err
    assert "docs/notes.txt" in block["content"] and "timed out" not in block["content"]


# ways rg enters a directory `.gitignore` excludes after all: a glob override (they outrank ignore files, in every
# spelling), or an `.ignore`/`.rgignore` of the project's own that takes it back (`!vendor/`)
ENTERS_IGNORED = {
    "-g '*'": ("rg -g '*' needle", None),
    "--glob=vendor": ("rg --glob=vendor needle", None),
    "--glob 'vendor/**'": ("rg --glob 'vendor/**' needle", None),
    "--iglob": ("rg --iglob '*' needle", None),
    "-ng in a bundle": ("rg -ng '*' needle", None),
    "an .ignore's !vendor/": ("rg needle", (".ignore", "!vendor/\n")),
    "an .rgignore's !vendor/": ("rg needle", (".rgignore", "!vendor/\n")),
}


@pytest.mark.parametrize("case", sorted(ENTERS_IGNORED))
def test_an_unasked_rg_that_enters_an_ignored_directory_asks_for_its_fifo(tmp_path, model_server, case):
    """The walk skips what `.gitignore` excludes only where rg does: a FIFO `.ignore` in `vendor/` held
    `rg -g '*' needle` (and a plain `rg needle` beside an `.ignore` saying `!vendor/`) until the timeout."""
    command, takes_back = ENTERS_IGNORED[case]
    origin = _origin(tmp_path)
    (origin / ".gitignore").write_text("vendor/\n")
    if takes_back is not None:
        (origin / takes_back[0]).write_text(takes_back[1])
    (origin / "vendor" / "lib").mkdir(parents=True)
    os.mkfifo(origin / "vendor" / "lib" / ".ignore")
    project = unpack_archive_of(origin, tmp_path / "unpacked")
    _asked(*_bash(tmp_path, model_server, project, command)[::2])
