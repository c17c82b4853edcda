"""Repository identity and configuration: no database needed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from evo_agent.sync.config import SyncConfigError, configured_url, redact_url
from evo_agent.sync.identity import normalise_remote_url, project_identity
from tests.builders import make_git_project

from .helpers import project_with_origin


@pytest.mark.parametrize("url", [
    "git@github.com:Team/App.git",
    "https://github.com/Team/App",
    "https://tok:x-secret@github.com/Team/App.git",
    "ssh://git@GitHub.com:22/Team/App.git/",
    "git+ssh://git@github.com/Team/App",
    "http://github.com/Team/App.git",
])
def test_every_spelling_of_one_remote_is_one_repository(url: str) -> None:
    assert normalise_remote_url(url) == "github.com/Team/App"


def test_credentials_never_reach_the_identity() -> None:
    assert "secret" not in normalise_remote_url("https://user:secret@gitlab.example.com:8443/g/p.git")


def test_identity_is_origin_and_subdir_not_the_absolute_path(tmp_path: Path) -> None:
    a = project_with_origin(tmp_path / "a", "git@github.com:Team/App.git")
    b = project_with_origin(tmp_path / "b", "https://github.com/Team/App")
    (b / "pkg" / "sub").mkdir(parents=True)
    ida, idb = project_identity(a), project_identity(b / "pkg" / "sub")
    assert ida.repo == idb.repo == "github.com/Team/App"
    assert (ida.subdir, idb.subdir) == ("", "pkg/sub")
    assert ida.user and ida.host


def test_without_origin_the_root_commit_names_the_repository(tmp_path: Path) -> None:
    root = make_git_project(tmp_path)
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert project_identity(root).repo == f"root:{head}"


def test_url_from_environment_or_user_config(tmp_path: Path) -> None:
    config = tmp_path / "xdg" / "evo-agent" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('sync_url = "postgresql://u:pw@db.example/team"\n')
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path)}
    assert configured_url(env) == "postgresql://u:pw@db.example/team"
    assert configured_url({**env, "EVO_AGENT_SYNC_URL": "postgres://other/x"}) == "postgres://other/x"
    assert configured_url({**env, "EVO_AGENT_SYNC_URL": ""}) is None  # set but empty: off
    assert configured_url({"HOME": str(tmp_path / "nobody")}) is None
    with pytest.raises(SyncConfigError, match="must be a postgresql://"):
        configured_url({"EVO_AGENT_SYNC_URL": "mysql://u:pw@h/x"})
    config.write_text("sync_url = [\n")
    with pytest.raises(SyncConfigError, match="not valid TOML"):
        configured_url(env)


def test_the_password_is_never_shown() -> None:
    assert redact_url("postgresql://bob:p@ss@db:5432/x?password=zz") == "postgresql://bob:***@db:5432/x?password=***"


def test_without_sync_configured_psycopg_is_never_imported(tmp_path: Path) -> None:
    """The whole agent run (a demo turn in print mode) and `sessions list` leave psycopg unimported."""
    project = make_git_project(tmp_path)
    code = ("import sys\nfrom evo_agent.cli.main import run\n"
            "rc = run(['-p', 'hello'])\nrc2 = run(['sessions', 'list'])\n"
            "print('IMPORTED' if any(m.startswith(('psycopg', 'evo_agent.sync.db', 'evo_agent.sync.background'))"
            " for m in sys.modules) else 'CLEAN', rc, rc2, file=sys.stderr)\n")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "EVO_AGENT_PROVIDER": "demo"}
    done = subprocess.run([sys.executable, "-c", code], cwd=project, env=env, capture_output=True, text=True,
                          timeout=120)
    assert "CLEAN 0 0" in done.stderr, done.stderr
