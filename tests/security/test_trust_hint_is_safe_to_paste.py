"""The commands evo-agent suggests for an untrusted or refused project (`evo-agent trust --project-dir …`,
`chmod go-w …`) are safe to paste into a shell.

Print mode ignores an untrusted project's settings with one line ending in the command that trusts it; run with
`--project-dir`, that command names the project's real path, written as it was. An unpacked archive whose
top-level entry is a link (`release -> 'x;touch pwned;'`) made the user's `--project-dir release` suggest
`evo-agent trust --project-dir /…/x;touch pwned;`: pasted, the shell ran the archive's command. The path is
now quoted for the shell; the control: the pasted command trusts exactly that project, and nothing else runs.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess

import pytest

from evo_agent.session import project_trusted
from tests.cli_runner import COMMAND, Cli, clean_env
from tests.fake_model_server import text
from tests.security.hostile import clone, upstream

SETTINGS = ".evo-agent/settings.json"
NAMES = ["x;touch pwned;", "x$(touch pwned)", "x`touch pwned`", "x && touch pwned", "x|touch pwned", "x'$(touch pwned)'",
         "my project", "x\"$(touch pwned)\""]


@pytest.mark.parametrize("name", NAMES)
def test_the_suggested_trust_command_runs_nothing_else_when_pasted(tmp_path, model_server, name):
    downloads = tmp_path / "dl"
    downloads.mkdir()
    project = clone(upstream(tmp_path, {SETTINGS: json.dumps({"permissions": {"allow": ["Bash"]}})}), downloads / name)
    os.chmod(project / SETTINGS, 0o644)
    (downloads / "release").symlink_to(name)
    work = tmp_path / "work"
    work.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    cli = Cli(work, model_server.env(clean_env(home)))
    model_server.script(text("ok"))
    result = cli.run("-p", "hi", "--project-dir", str(downloads / "release"))
    assert result.rc == 0, result.err
    [line] = [ln for ln in result.err_lines if "ignoring" in ln]
    hint = re.search(r"review it and run: (evo-agent trust .*)$", line)
    assert hint is not None, line
    shell = f"evo-agent() {{ {shlex.join(COMMAND)} \"$@\"; }}; {hint.group(1)}"
    pasted = subprocess.run(["bash", "-c", shell], cwd=work, env=cli.env, capture_output=True, text=True, timeout=60)
    assert not list(work.iterdir()) and not list(downloads.glob("pwned")), "pasting the hint ran the path's command"
    assert pasted.returncode == 0 and "Trusted" in pasted.stdout, pasted.stderr
    assert project_trusted(project, cli.env), "the control: the pasted command trusts that very project"


@pytest.mark.parametrize("name", NAMES[:3])
def test_the_suggested_chmod_for_a_settings_file_others_can_write_runs_nothing_else(tmp_path, model_server, name):
    project = clone(upstream(tmp_path, {SETTINGS: json.dumps({"permissions": {"allow": ["Bash"]}})}),
                    tmp_path / name)
    os.chmod(project / SETTINGS, 0o664)  # a checkout under umask 002
    home = tmp_path / "home"
    home.mkdir()
    cli = Cli(project, model_server.env(clean_env(home)))
    assert "Trusted" in cli.trust().out
    model_server.script(text("ok"))
    result = cli.run("-p", "hi")
    [line] = [ln for ln in result.err_lines if "writable by others" in ln]
    hint = re.search(r"until it is not \((chmod go-w .*)\)$", line)
    assert hint is not None, line
    subprocess.run(["bash", "-c", hint.group(1)], cwd=tmp_path, capture_output=True, timeout=60)
    assert not (tmp_path / "pwned").exists(), "pasting the hint ran the path's command"
    assert oct(os.stat(project / SETTINGS).st_mode & 0o777) == "0o644", "the control: the pasted chmod fixes the file"
