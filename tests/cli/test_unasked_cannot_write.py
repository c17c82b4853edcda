"""What runs unasked cannot write (issue #26), through the real `evo-agent` script in a hostile repository.

The model (a local fake API) asks for the issue's payloads in other spellings; in every mode that does
not bypass, none may take effect, and print mode says on stderr what it did not run.
"""

from __future__ import annotations

import os

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
