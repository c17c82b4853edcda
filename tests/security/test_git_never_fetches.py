"""evo-agent's own git never fetches, so a "partial clone" cannot run code through a lazy fetch (SPEC §9).

A repository whose `.git/config` says it is a partial clone (`extensions.partialClone`, a promisor remote)
makes plain git fetch any object it lacks, on a read as plain as `rev-list --max-parents=0 HEAD` (the
project identity sync computes): the fetch runs the remote's `uploadpack`, `ext::` command or a remote
helper, and the repository's own `protocol.<name>.allow=always` outranks a command line's
`protocol.allow=never`. The door's environment allows no transport at all (GIT_ALLOW_PROTOCOL) and
asks git not to fetch lazily (GIT_NO_LAZY_FETCH); each spelling's marker stays absent, and fires under
plain git (the control).
"""

from __future__ import annotations

import os
import subprocess

import pytest

from evo_agent.session import run_git, start_git
from evo_agent.sync.identity import project_identity
from tests.cli_runner import Cli, clean_env
from tests.fake_model_server import text
from tests.security.partial_clone import LAZY_FETCH_SPELLINGS, partial_clone


def _plain_git_fires(victim) -> None:
    subprocess.run(["git", "rev-list", "--max-parents=0", "HEAD"], cwd=victim, capture_output=True, timeout=60,
                   env={**os.environ})


@pytest.mark.parametrize("spelling", LAZY_FETCH_SPELLINGS)
def test_the_door_never_fetches_a_missing_object(tmp_path, monkeypatch, spelling):
    marker = tmp_path / "pwned"
    victim, helpers = partial_clone(tmp_path, marker, spelling)
    monkeypatch.setenv("PATH", f"{helpers}:{os.environ['PATH']}")  # the remote helpers git would look up

    assert run_git(victim, "rev-list", "--max-parents=0", "HEAD") is None  # the root commit is missing: a failure
    run_git(victim, "rev-list", "--objects", "--all")
    assert run_git(victim, "ls-files", "-z") is not None
    started = start_git(victim, "rev-list", "HEAD")
    assert started is not None
    started[0].communicate(timeout=60)
    project_identity(victim)
    assert not marker.exists()

    _plain_git_fires(victim)  # the control: plain git runs the payload
    assert marker.exists()


def test_sync_identity_through_the_cli_never_fetches(model_server, tmp_path):
    marker = tmp_path / "pwned"
    victim, _ = partial_clone(tmp_path, marker)
    home = tmp_path / "home"
    home.mkdir()
    env = model_server.env(clean_env(home))
    env["EVO_AGENT_SYNC_URL"] = "postgresql://u@127.0.0.1:9/db"  # sync on (unreachable): identity is computed
    model_server.script(text("hi"))
    result = Cli(victim, env).run("-p", "hello")
    assert result.rc == 0, result.err
    assert "PWNED" not in result.err and not marker.exists()

    subprocess.run(["git", "rev-list", "--max-parents=0", "HEAD"], cwd=victim, capture_output=True, timeout=60)
    assert marker.exists()
