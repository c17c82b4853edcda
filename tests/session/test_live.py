"""The live-session lock: held by the process writing a session, seen by every other process, gone with it."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from evo_agent.session import LiveSessionStore, SessionStore, probe_live
from evo_agent.session.admin import SessionInUse, held_for_removal

PROBE = "import sys; from evo_agent.session import probe_live; l = probe_live(sys.argv[1]); print(l.live, l.pid)"


def probe_elsewhere(path) -> str:
    """probe_live run by another process, as `sessions rm` would."""
    return subprocess.run([sys.executable, "-c", PROBE, str(path)], capture_output=True, text=True,
                          check=True).stdout.strip()


def test_the_store_locks_the_session_it_writes_and_releases_it_for_the_next(tmp_path):
    store = LiveSessionStore(tmp_path, warn=lambda line: None)
    first = store.create(model="m", provider="demo")
    assert probe_elsewhere(first.session_dir) == f"True {os.getpid()}"
    second = store.create(model="m", provider="demo")  # /clear or /resume: one live session per process
    assert probe_elsewhere(first.session_dir) == "False None"
    assert probe_elsewhere(second.session_dir) == f"True {os.getpid()}"
    with pytest.raises(SessionInUse) as caught, held_for_removal(second.session_dir):
        pass
    assert caught.value.liveness.describe(second.session_id).endswith(f"running evo-agent (pid {os.getpid()})")
    store.release()
    assert probe_elsewhere(second.session_dir) == "False None"


def test_the_plain_store_does_not_lock_and_probing_changes_nothing(tmp_path):
    rec = SessionStore(tmp_path, warn=lambda line: None).create(model="m", provider="demo")
    before = sorted(os.listdir(rec.session_dir))
    assert not probe_live(rec.session_dir).live
    with held_for_removal(rec.session_dir):
        pass
    assert sorted(os.listdir(rec.session_dir)) == before and ".lock" not in before


def test_the_lock_is_not_inherited_by_commands_the_agent_runs(tmp_path):
    store = LiveSessionStore(tmp_path, warn=lambda line: None)
    rec = store.create(model="m", provider="demo")
    assert store.live_lock is not None and not os.get_inheritable(store.live_lock._fd)
    # A command the agent started and left running must not keep the session "live" after the agent is gone.
    child = subprocess.Popen(["sleep", "30"], close_fds=False)
    try:
        store.release()
        assert probe_elsewhere(rec.session_dir) == "False None"
    finally:
        child.kill()
        child.wait()
