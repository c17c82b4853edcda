"""A rewind's restore writes the path it checked, never through a link swapped in while its question waits.

A restore resolves each path, asks when the file changed since evo-agent wrote it (or lies outside the
project), then writes. It resolved the directory again at the write: a `git pull` in another terminal while
the question waited, bringing the upstream's next commit (`src/` replaced by `src -> ../outside`), sent the
"yes" for `src/notes.sh` to `outside/notes.sh` — a file nobody was asked about. Now the checked directory is
opened one component at a time without following a link, and the restore of that file fails in one line.

The victim adopts a session the hostile upstream committed (the deliberate way to take one on) and restores
it; the answer to the question is given only after the pull. The control: without the pull, the same yes
restores the file where it was checked.
"""

from __future__ import annotations

import subprocess

import pytest

from evo_agent.agent.file_restore import restore_files
from evo_agent.session import changes_since
from tests.security.hostile import GIT, git, upstream
from tests.security.test_restore_confinement import PAYLOAD, PLANTED, _planted_session, adopt_planted


def _victim(tmp_path, model_server, existed: bool):
    target = str(tmp_path / "clone" / "src" / "notes.sh")
    files = {**_planted_session(target), "src/notes.sh": "echo a perfectly normal script\n"}
    if not existed:  # a file the session created: a rewind removes it
        transcript = f".evo-agent/sessions/{PLANTED}/messages.jsonl"
        files[transcript] = files[transcript].replace(b'"existed": true', b'"existed": false')
    origin = upstream(tmp_path, files)
    cli, new_id = adopt_planted(tmp_path, model_server, origin)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "notes.sh").write_text("the user's own file\n")
    # upstream's next commit: src/ becomes a link out of the project
    assert git(origin, "rm", "-q", "-r", "src").returncode == 0
    (origin / "src").symlink_to("../outside")
    assert git(origin, "add", "src").returncode == 0 and git(origin, "commit", "-q", "-m", "move").returncode == 0
    return cli, new_id, outside / "notes.sh"


def _pull(project) -> None:
    subprocess.run([*GIT, "pull", "-q", "--no-rebase"], cwd=project, check=True, capture_output=True, timeout=60)


@pytest.mark.parametrize("existed", [True, False])
def test_a_link_pulled_in_while_the_question_waits_is_not_followed(tmp_path, model_server, existed):
    cli, new_id, outside = _victim(tmp_path, model_server, existed)
    changes = changes_since(cli.sessions_dir, new_id, 1)
    asked: list[str] = []

    def answer_after_a_pull(question: str) -> bool:
        asked.append(question)
        _pull(cli.project)
        assert (cli.project / "src").is_symlink()
        return True

    lines: list[str] = []
    restored = restore_files(changes, lines.append, answer_after_a_pull, project_dir=cli.project)
    assert asked, lines  # the question was asked (the file changed since), and answered yes
    assert restored == 0, lines
    assert outside.read_text() == "the user's own file\n"
    assert any("not restored" in line and "symbolic link" in line for line in lines), lines


def test_the_control_the_same_yes_restores_the_file_it_was_asked_about(tmp_path, model_server):
    cli, new_id, outside = _victim(tmp_path, model_server, True)
    changes = changes_since(cli.sessions_dir, new_id, 1)
    lines: list[str] = []
    assert restore_files(changes, lines.append, lambda q: True, project_dir=cli.project) == 1, lines
    assert (cli.project / "src" / "notes.sh").read_bytes() == PAYLOAD
    assert outside.read_text() == "the user's own file\n"
