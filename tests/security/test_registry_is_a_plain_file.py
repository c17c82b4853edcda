"""The registries of sessions and plans made (`$XDG_STATE_HOME/evo-agent/made`, `plans-made`) are plain files: a
FIFO or a device put in their place (a shared or misconfigured state directory, another user) never makes
evo-agent wait. Opening a FIFO blocks until someone opens its other end, so every `sessions list`, `-p` and
`sessions rm` would hang for good; instead the registry is unreadable (judging nothing, as when it is missing)
and nothing is appended. Each call runs in a child bounded by a generous timeout: a bound, not a timing.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

CALLS = {
    "read_made": "print(origin.read_made(path))",
    "record_made": "print(origin.record_made('1796418173074_4b102be1', path))",
    "record_session": "print(origin.record_session('1796418173074_4b102be1', '0123456789abcdef', path))",
    "forget_made": "print(origin.forget_made(['1796418173074_4b102be1'], path))",
    "plans_made": "print(origin.plans_made())",
}


@pytest.mark.parametrize("call", sorted(CALLS))
@pytest.mark.parametrize("kind", ["fifo", "link-to-fifo", "device"])
def test_a_registry_that_is_not_a_plain_file_never_hangs(tmp_path, call, kind):
    state = tmp_path / "state" / "evo-agent"
    state.mkdir(parents=True)
    name = "plans-made" if call == "plans_made" else "made"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    target = state / name
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "link-to-fifo":
        target.symlink_to(fifo)
    else:
        target.symlink_to("/dev/zero")
    code = (f"from pathlib import Path\nfrom evo_agent.session import origin\npath = Path({str(target)!r})\n"
            f"{CALLS[call]}\n")
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
    try:
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{call} waited on a {kind} at the registry's path")
    assert done.returncode == 0, done.stderr
    assert "True" not in done.stdout.splitlines()[-1:] or call == "plans_made", done.stdout
