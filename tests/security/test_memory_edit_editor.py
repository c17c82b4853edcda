"""`evo-agent memory edit` runs the user's editor, never one a clone committed under the same name.

`$VISUAL`/`$EDITOR` name a program (`nano`, `code --wait`, the default `vi`); it was looked up in the user's whole
PATH, where a relative entry (`bin`, `.`, an empty one) or an in-project one (an activated `.venv/bin`) makes a
cloned repository's `bin/nano` the editor — run the moment the user edits a note in that clone. The editor is now
found like every program evo-agent starts by itself (session.absolute_program): an editor named by a path inside
the project, or by a relative path, is refused with one line.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from tests.cli_runner import Cli, clean_env

from .hostile import clone, git, upstream

NAMES = ("nano", "vi", "code")


def _setup(tmp_path):
    markers = tmp_path / "markers"
    markers.mkdir()
    planted = f"#!/bin/sh\ntouch '{markers}/planted'\n"
    files = {f"{d}/{n}": planted for d in ("bin", ".venv/bin", ".") for n in NAMES}
    origin = upstream(tmp_path, files)
    for rel in files:
        os.chmod(origin / rel, 0o755)
    assert git(origin, "add", "-A", "-f").returncode == 0
    assert git(origin, "commit", "-q", "-m", "editors").returncode == 0
    project = clone(origin, tmp_path / "clone")
    system = tmp_path / "system-bin"  # the user's own editors, outside the project
    system.mkdir()
    for n in NAMES:
        (system / n).write_text("#!/bin/sh\nfor f; do :; done\nprintf 'Tag, then push.\\n' >> \"$f\"\n")
        os.chmod(system / n, 0o755)
    home = tmp_path / "home"
    home.mkdir()
    return project, markers, system, home


@pytest.mark.parametrize("entry", ["bin", ".", "", "{project}/.venv/bin", "{project}/./bin", "{project}/bin/"])
@pytest.mark.parametrize("editor", [("EDITOR", "nano"), ("VISUAL", "code --wait"), (None, "vi")])
def test_memory_edit_runs_the_users_editor_never_the_clones(tmp_path, entry, editor):
    project, markers, system, home = _setup(tmp_path)
    env = clean_env(home, PATH=f"{entry.format(project=project)}:{system}:{os.environ['PATH']}")
    env.pop("VISUAL", None)
    env.pop("EDITOR", None)
    variable, value = editor
    if variable is not None:
        env[variable] = value
    result = Cli(project, env).run("memory", "edit", "release")
    assert result.rc == 0, result.err
    assert not (markers / "planted").exists()
    assert "Tag, then push." in (project / ".evo-agent" / "memory" / "release.md").read_text()


@pytest.mark.parametrize("under_home", [False, True], ids=["project", "project-under-home"])
@pytest.mark.parametrize("value", ["bin/nano", "./nano", "{project}/bin/nano", "{project}/.venv/bin/code --wait",
                                   "{project}/./bin/vi"])
def test_an_editor_named_by_a_path_into_the_project_is_refused(tmp_path, value, under_home):
    project, markers, system, home = _setup(tmp_path)
    if under_home:  # where clones usually live: the exception for a project that holds `~` (a dotfiles
        project = project.rename(home / "clone")  # repository) must not make every program under `~` the user's
    env = clean_env(home, PATH=f"{system}:{os.environ['PATH']}", EDITOR=value.format(project=project))
    env.pop("VISUAL", None)
    result = Cli(project, env).run("memory", "edit", "release")
    assert result.rc != 0 and "editor" in result.err and "Traceback" not in result.err
    assert len(result.err.strip().splitlines()) == 1
    assert not (markers / "planted").exists()


def test_an_editor_by_its_absolute_path_outside_the_project_runs(tmp_path):
    """The control: the user's own editor, by path, still works."""
    project, markers, system, home = _setup(tmp_path)
    env = clean_env(home, PATH=os.environ["PATH"], EDITOR=f"{system}/nano")
    env.pop("VISUAL", None)
    result = Cli(project, env).run("memory", "edit", "release")
    assert result.rc == 0, result.err
    assert "Tag, then push." in (project / ".evo-agent" / "memory" / "release.md").read_text()


EXRC = "silent !touch {marker}\nqa!\n"


@pytest.mark.skipif(shutil.which("vim") is None, reason="no vim here")
@pytest.mark.parametrize("name", [".exrc", ".vimrc"])
def test_the_editor_never_starts_in_the_clone_where_its_local_config_waits(tmp_path, name):
    """A user whose ~/.vimrc says `set exrc` (an old, common tip) has vim run the `.exrc`/`.vimrc` of the
    directory it starts in. `memory edit` edits a temp file, so the editor starts beside it, never in the clone
    (whose committed `.exrc` ran `!commands` the moment the user edited a note)."""
    marker = tmp_path / "exrc-ran"
    project = clone(upstream(tmp_path, {name: EXRC.format(marker=marker)}), tmp_path / "clone")
    home = tmp_path / "home"
    home.mkdir()
    (home / ".vimrc").write_text("set exrc\nautocmd VimEnter * qa!\n")  # leaves once started (no terminal here)
    env = clean_env(home, EDITOR="vim")
    env.pop("VISUAL", None)
    subprocess.run(["vim", str(tmp_path / "scratch.md")], cwd=project, env=env, stdin=subprocess.DEVNULL,
                   capture_output=True, timeout=60)
    assert marker.exists(), "the control: vim started in the clone runs its committed config"
    marker.unlink()
    result = Cli(project, env).run("memory", "edit", "release", timeout=60)
    assert result.rc == 0, result.err  # vim left at once: the template is saved as it was
    assert not marker.exists(), "the clone's editor config ran"
