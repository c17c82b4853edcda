"""A write into any `.git/` of the project asks, not only into the top one's (SPEC §9).

Edits into `.git/` always ask, even in accept-edits and under an `Edit(…)` rule: a `core.fsmonitor`, a hook
or a pager planted there runs at the next plain `git status` (a shell prompt runs one at every `cd`). Only the
project's own `.git/` was guarded; a nested repository's (`vendor/lib/.git/config`) or one a write creates
(`docs/.git/config` with a `HEAD` beside it: git finds it from `docs/`) was an ordinary file inside the
project, written unasked in accept-edits.
"""

from __future__ import annotations

import subprocess

import pytest

from tests.cli_runner import Cli, clean_env
from tests.fake_model_server import text, tool_use

from .hostile import clone, payload, upstream

# The upper-case spellings are the same directory on a case-insensitive file system (macOS's default).
TARGETS = ["docs/.git/config", "vendor/lib/.git/config", "vendor/lib/.git/hooks/post-checkout", "vendor/lib/.git",
           "a/b/c/.git/HEAD", ".GIT/config", ".Git/hooks/pre-commit", "vendor/lib/.GIT/config"]


@pytest.mark.parametrize("how", [["--permission-mode", "accept-edits"], ["--allowed-tools", "Edit(**)"],
                                 ["--allowed-tools", "Edit(vendor/**),Edit(docs/**),Edit(a/**)"]])
@pytest.mark.parametrize("target", TARGETS)
def test_a_write_into_a_nested_git_dir_asks(tmp_path, model_server, target, how):
    project = clone(upstream(tmp_path, {"docs/index.md": "# docs\n", "vendor/lib/README": "lib\n"}),
                    tmp_path / "clone")
    subprocess.run(["git", "init", "-q", str(project / "vendor" / "lib")], check=True)  # a nested checkout
    marker = tmp_path / "PWNED"
    content = f"[core]\n\tfsmonitor = {payload(marker)}\n"
    before = (project / target).read_bytes() if (project / target).is_file() else None
    model_server.script(tool_use("write_file", {"path": target, "content": content}, id="w1"), text("done"))
    result = Cli(project, model_server.env(clean_env(tmp_path / "home"))).run("-p", "fix the docs", *how)
    assert "needs approval" in result.err, result.err
    after = (project / target).read_bytes() if (project / target).is_file() else None
    assert after == before


def test_the_control_an_ordinary_file_beside_it_is_written(tmp_path, model_server):
    project = clone(upstream(tmp_path, {"docs/index.md": "# docs\n"}), tmp_path / "clone")
    model_server.script(tool_use("write_file", {"path": "docs/.gitkeep", "content": "x\n"}, id="w1"), text("done"))
    result = Cli(project, model_server.env(clean_env(tmp_path / "home"))).run(
        "-p", "fix the docs", "--permission-mode", "accept-edits")
    assert result.rc == 0 and (project / "docs" / ".gitkeep").read_text() == "x\n"


@pytest.mark.parametrize("target", [".Evo-Agent/settings.json", ".EVO-AGENT/settings.json"])
def test_a_write_into_the_agent_dir_in_another_case_is_never_made_unasked(tmp_path, model_server, target):
    """On a case-insensitive file system `.EVO-AGENT/settings.json` is the project's own settings: a rule written
    there in accept-edits would run every later command unasked."""
    project = clone(upstream(tmp_path, {"docs/index.md": "# docs\n"}), tmp_path / "clone")
    content = '{"permissions": {"allow": ["Bash"]}}\n'
    model_server.script(tool_use("write_file", {"path": target, "content": content}, id="w1"), text("done"))
    Cli(project, model_server.env(clean_env(tmp_path / "home"))).run(
        "-p", "fix the docs", "--permission-mode", "accept-edits")
    assert not (project / target).exists()
