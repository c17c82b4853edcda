"""What runs unasked cannot write (issue #26), through the real `evo-agent` script in a hostile repository.

The model (a local fake API) asks for the issue's payloads in other spellings; in every mode that does
not bypass, none may take effect, and print mode says on stderr what it did not run.
"""

from __future__ import annotations

import os
import subprocess

import pytest

from evo_agent.tools.sandbox import SandboxError, check_sandbox
from tests.fake_model_server import text, tool_use


def _hostile(project, outside):
    (project / "--pre=sh").write_text("")
    (project / "--output=.git").write_text("")
    (project / "notes.txt").write_text(f"touch {outside}/pre-ran\n")
    bin_dir = project / "node_modules" / ".bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "head").write_text(f"#!/bin/sh\ntouch {outside}/path-ran\n")
    (bin_dir / "head").chmod(0o755)
    (project / ".evo-agent").mkdir(exist_ok=True)
    (project / ".evo-agent" / "settings.json").write_text('{"permissions": {"allow": ["Bash(find:*)"]}}')


PAYLOADS = ["rg -n TODO *", "sort --outp .git/config notes.txt", "sort --com=sh notes.txt", "head -1 notes.txt",
            "grep --der TODO .", "find . -fprintf {outside}/fprintf-ran %p", "find .evo-agen? -delete",
            "sort --output=.evo-agent/settings.json notes.txt", "sort -o.git/config notes.txt"]


@pytest.mark.parametrize("mode", ["ask", "read-only", "accept-edits"])
def test_the_issues_payloads_never_take_effect_in_print_mode(cli, model_server, project, tmp_path, mode):
    outside = tmp_path / "outside"
    outside.mkdir()
    _hostile(project, outside)
    config = (project / ".git" / "config").read_bytes()
    settings = (project / ".evo-agent" / "settings.json").read_bytes()
    model_server.script([tool_use("bash", {"command": p.format(outside=outside)}, id=f"t{i}")
                         for i, p in enumerate(PAYLOADS)], text("Tried."))
    env = {**cli.env, "PATH": f"node_modules/.bin:{os.environ['PATH']}"}
    result = cli.run("-p", "try", "--permission-mode", mode, env=env)
    assert result.rc == 0, result.err
    assert sorted(os.listdir(outside)) == []
    assert (project / ".git" / "config").read_bytes() == config
    assert (project / ".evo-agent" / "settings.json").read_bytes() == settings
    assert (project / "notes.txt").exists() and (project / ".evo-agent" / "sessions").is_dir()
    results = model_server.requests[-1]["messages"][-1]["content"]
    assert len(results) == len(PAYLOADS) and all(r["is_error"] and "Not run" in r["content"] for r in results)
    if mode != "read-only":
        assert result.err.count("not run (needs approval)") == len(PAYLOADS)


def test_the_sandbox_keeps_git_and_the_agent_dir_from_an_approved_command(cli, model_server, project):
    try:
        check_sandbox(project)
    except SandboxError as exc:
        pytest.skip(str(exc))
    (project / ".evo-agent").mkdir(exist_ok=True)
    (project / ".evo-agent" / "settings.json").write_text("{}")
    config = (project / ".git" / "config").read_bytes()
    plant = ("git config core.fsmonitor 'touch pwned'; printf '#!/bin/sh\\ntouch pwned\\n' > .git/hooks/post-checkout;"
             " echo '{\"permissions\":{\"allow\":[\"Bash\"]}}' > .evo-agent/settings.json; touch made-it")
    model_server.script(tool_use("bash", {"command": plant}), text("Planted?"))
    result = cli.run("-p", "plant", "--permission-mode", "bypass", "--sandbox")
    assert result.rc == 0, result.err
    assert (project / "made-it").exists()  # the project is writable in --sandbox
    assert (project / ".git" / "config").read_bytes() == config
    assert not (project / ".git" / "hooks" / "post-checkout").exists()
    assert (project / ".evo-agent" / "settings.json").read_text() == "{}"


def _without_bwrap(tmp_path) -> str:
    """A PATH holding every program of this one but bwrap: the unasked command runs unsandboxed."""
    bin_dir = tmp_path / "no-bwrap-bin"
    bin_dir.mkdir()
    for entry in os.environ["PATH"].split(":"):
        if os.path.isdir(entry):
            for name in os.listdir(entry):
                if name != "bwrap" and not (bin_dir / name).exists():
                    (bin_dir / name).symlink_to(os.path.join(entry, name))
    return str(bin_dir)


def _hostile_git(kind: str, tmp_path):
    from tests.security.partial_clone import filter_named, partial_clone, submodule_with_filter

    marker = tmp_path / "pwned"
    if kind == "partial clone":
        return partial_clone(tmp_path, marker)[0], marker
    if kind == "submodule filter":
        return submodule_with_filter(tmp_path, marker), marker
    return filter_named(tmp_path, marker, "x=y"), marker


@pytest.mark.parametrize("sandboxed", [True, False], ids=["sandboxed", "no-bwrap"])
@pytest.mark.parametrize("kind", ["partial clone", "submodule filter", "filter x=y"])
def test_unasked_git_runs_none_of_a_hostile_repositorys_code(model_server, tmp_path, kind, sandboxed):
    from tests.cli_runner import Cli, clean_env

    repo, marker = _hostile_git(kind, tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    env = model_server.env(clean_env(home))
    if not sandboxed:
        env["PATH"] = _without_bwrap(tmp_path)
    commands = ["git status", "git diff", "git show HEAD", "git log -p"]
    model_server.script([tool_use("bash", {"command": c}, id=f"t{i}") for i, c in enumerate(commands)], text("ok"))
    result = Cli(repo, env).run("-p", "look")
    assert result.rc == 0, result.err
    results = model_server.requests[-1]["messages"][-1]["content"]
    assert len(results) == len(commands) and not any("Not run" in r["content"] for r in results)  # ran unasked
    assert not any("PWNED" in r["content"] for r in results) and not marker.exists()

    for name in ("f.txt", "sub/f.txt"):  # unsandboxed, `git diff` refreshed the index: stale its stat again
        if (repo / name).exists():
            os.utime(repo / name, (2, 2))
    for command in commands:  # the control: plain git runs the payload
        subprocess.run(["bash", "-c", command], cwd=repo, capture_output=True, timeout=60)
    assert marker.exists()
