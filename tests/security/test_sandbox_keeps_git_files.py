"""In `--sandbox`, a nested `.git` *file* (a submodule's `gitdir: ../.git/modules/lib`) stays read-only too.

Every nested `.git` directory was bound read-only, but a `.git` file was left writable: git writes one into every
submodule checkout and linked worktree. A sandboxed command replaced it (`rm lib/.git && mkdir lib/.git` with a
config naming a `core.fsmonitor`, or rewrote it to `gitdir:` a directory of its own) and, the path being the same
before and after, nothing was reported; the user's next `git status` in the superproject (which looks into each
submodule) ran the planted program outside the sandbox. Now a `.git` file is bound read-only like a directory.
"""

from __future__ import annotations

import subprocess

import pytest

from evo_agent.tools.sandbox import SandboxError, check_sandbox
from tests.cli_runner import Cli, clean_env
from tests.fake_model_server import text, tool_use

from .hostile import GIT, git, payload, upstream

FILE_ALLOWED = ["-c", "protocol.file.allow=always"]


def _superproject(tmp_path):
    """A clone of a superproject with its submodule `lib` checked out: `lib/.git` is a file."""
    lib = upstream(tmp_path, {"lib.txt": "lib\n"}, name="lib")
    top = upstream(tmp_path, {"app.txt": "app\n"}, name="top")
    assert git(top, *FILE_ALLOWED, "submodule", "add", "-q", str(lib), "lib").returncode == 0
    assert git(top, "commit", "-q", "-m", "lib").returncode == 0
    project = tmp_path / "clone"
    subprocess.run([*GIT, *FILE_ALLOWED, "clone", "-q", "--recurse-submodules", str(top), str(project)],
                   check=True, timeout=60, capture_output=True)
    assert (project / "lib" / ".git").is_file()
    try:
        check_sandbox(project)
    except SandboxError as exc:
        pytest.skip(f"no sandbox here: {exc}")
    return project


def _plants(marker) -> list[str]:
    evil_config = f"printf '[core]\\n\\tfsmonitor = \"{payload(marker)}\"\\n' >> "
    return [
        # the submodule's own git directory, copied and armed, in place of the file
        "cp -r .git/modules/lib /tmp/g && rm lib/.git && cp -r /tmp/g lib/.git && "
        f"sed -i '/worktree/d' lib/.git/config && {evil_config}lib/.git/config",
        # the file pointed at a directory of the command's own, outside any `.git`
        "cp -r .git/modules/lib /tmp/g && mkdir -p build && cp -r /tmp/g build/cache && "
        f"sed -i '/worktree/d' build/cache/config && {evil_config}build/cache/config && "
        "printf 'gitdir: ../build/cache\\n' > lib/.git",
        # the same through a path the permission check cannot read
        "cp -r .git/modules/lib /tmp/g && rm \"lib/$(printf .gi)t\" && cp -r /tmp/g lib/.git && "
        f"sed -i '/worktree/d' lib/.git/config && {evil_config}lib/.git/config",
    ]


@pytest.mark.parametrize("how", range(3))
def test_a_sandboxed_command_cannot_replace_a_submodules_git_file(tmp_path, model_server, how):
    project = _superproject(tmp_path)
    marker = tmp_path / "PWNED"
    before = (project / "lib" / ".git").read_bytes()
    command = _plants(marker)[how] + f"; touch {project}/made-it"
    model_server.script(tool_use("bash", {"command": command, "timeout": 60}), text("Planted?"))
    result = Cli(project, model_server.env(clean_env(tmp_path / "home"))).run(
        "-p", "plant", "--permission-mode", "bypass", "--sandbox", timeout=120)
    assert result.rc == 0, result.err
    assert (project / "made-it").exists()  # the project itself is writable in --sandbox
    assert (project / "lib" / ".git").is_file() and (project / "lib" / ".git").read_bytes() == before
    for where in (project, project / "lib"):  # the user's next look, in the superproject and in the submodule
        subprocess.run(["git", "status"], cwd=where, capture_output=True, timeout=60)
    assert not marker.exists()


def test_control_the_plant_is_live_without_the_sandbox(tmp_path):
    project = _superproject(tmp_path)
    marker = tmp_path / "PWNED"
    subprocess.run(["bash", "-c", _plants(marker)[1]], cwd=project, check=True, timeout=60)
    subprocess.run(["git", "status"], cwd=project, capture_output=True, timeout=60)
    assert marker.exists()
