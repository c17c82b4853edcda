"""A cloned repository's instruction files are content the model reads, never a way to read the victim's
files into the request: links out of the clone, in every spelling an attacker can commit, are not followed.

Built as hostile.py builds every hostile repository: git init, files, a commit, the victim's clone. The
marker is text in a file outside the clone; it must never appear in what the model is given.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from evo_agent.agent.instructions import discover
from tests.security.hostile import clone, upstream

MARKER = "MARKER-PRIVATE-KEY-0b4d"


@pytest.fixture(autouse=True)
def own_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


@pytest.mark.parametrize("links", [
    {"AGENTS.md": "{secret}"},                                   # absolute
    {"AGENTS.md": "../../victim/.ssh/id_rsa"},                   # relative, climbing out
    {"CLAUDE.md": "{secret}"},                                   # the other name
    {"pkg/AGENTS.md": "../../../victim/.ssh/id_rsa"},            # below the root, on the way to the start
    {"pkg": "{secret_dir}"},                                      # a directory on the way is a link out
    {"pkg/web/AGENTS.md": "{secret}"},                           # the start directory's own file
])
def test_no_link_out_of_a_cloned_repository_is_followed(tmp_path, links):
    secret_dir = tmp_path / "victim" / ".ssh"
    secret_dir.mkdir(parents=True)
    secret = secret_dir / "id_rsa"
    secret.write_text(f"{MARKER}\n")
    (secret_dir / "AGENTS.md").write_text(f"{MARKER} via a linked directory\n")
    shaped = {rel: target.format(secret=secret, secret_dir=secret_dir) for rel, target in links.items()}
    files = {"pkg/web/notes.txt": "x"} if "pkg" not in shaped else {}
    (tmp_path / "attacker").mkdir()
    origin = upstream(tmp_path / "attacker", files, shaped)
    project = clone(origin, tmp_path / "victim-work" / "clone")
    planted = [project / rel / "AGENTS.md" if rel == "pkg" else project / rel for rel in shaped]
    assert all(MARKER in path.read_text() for path in planted)  # the control: the links are live
    for start in (".", "pkg", "pkg/web"):
        found = discover(project, start)
        assert MARKER not in found.text, start


def test_the_same_committed_files_are_read_when_they_stay_inside(tmp_path):
    """The control: the repository's own instructions, and a link between them, are read."""
    (tmp_path / "attacker").mkdir()
    origin = upstream(tmp_path / "attacker", {"AGENTS.md": "root rule\n", "pkg/web/CLAUDE.md": "web rule\n"},
                      {"pkg/web/AGENTS.md": "CLAUDE.md"})
    project = clone(origin, tmp_path / "clone")
    found = discover(project, "pkg/web")
    assert "root rule" in found.text and found.text.count("web rule") == 1
