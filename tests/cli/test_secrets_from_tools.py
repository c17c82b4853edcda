"""The agent's own secrets are not readable by its tools, not even through /proc (issue #26, SPEC §9).

The real console script runs a tool that scans every `/proc/*/environ` for the agent's API key. A
control process started with the same key (as the same user, with the same capabilities) shows the
scan works; the agent itself must not be found. Run as root, the agent and the control drop every
capability first (`setpriv`): root with CAP_SYS_PTRACE reads any process, as it should.
"""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import sys

import pytest

from tests.builders import read_records
from tests.cli_runner import COMMAND
from tests.fake_model_server import text, tool_use

SECRET = "sk-proc-marker-7c1f0e9a2b"


def _unprivileged() -> list[str]:
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: cannot drop CAP_SYS_PTRACE to test as a user would")
    return [setpriv, "--bounding-set=-all", "--inh-caps=-all", "--"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl(PR_SET_DUMPABLE) is Linux only")
def test_a_tool_cannot_read_the_agents_environ(cli, model_server):
    scan = f"grep -l -a -F {SECRET} /proc/[0-9]*/environ 2>/dev/null; echo scanned"
    model_server.script(tool_use("bash", {"command": scan}), text("Nothing."))
    env = {**cli.env, "OPENAI_API_KEY": SECRET}
    drop = _unprivileged()
    control = subprocess.Popen([*drop, "sleep", "120"], env=env)
    try:
        agent = subprocess.Popen([*drop, *COMMAND, "-p", "scan", "--permission-mode", "bypass"], cwd=cli.project,
                                 env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True)
        out, err = agent.communicate(timeout=60)
        assert agent.returncode == 0, err
    finally:
        control.kill()
        control.wait()
    output = model_server.requests[1]["messages"][-1]["content"][0]["content"]
    assert "scanned" in output
    assert f"/proc/{control.pid}/environ" in output  # the scan does find a process holding the key
    assert f"/proc/{agent.pid}/environ" not in output  # but never the agent


def test_the_agents_secrets_are_masked_on_disk_reversed_and_in_base64(cli, model_server):
    """A tool that prints the key backwards or encoded (here from a file holding it) leaves none of it on disk."""
    (cli.project / "leak.txt").write_text(f"key={SECRET}\n")
    command = "rev leak.txt; base64 -w0 leak.txt; echo; printf 'x%s' \"$(cat leak.txt)\" | base64 -w0"
    model_server.script(tool_use("bash", {"command": command}), text("Done."))
    env = {**cli.env, "OPENAI_API_KEY": SECRET, "EVO_AGENT_SYNC_URL": "postgresql://team:Pa55word-xyz@127.0.0.1:9/db"}
    result = cli.run("-p", "leak it", "--permission-mode", "bypass", env=env)
    live = model_server.requests[1]["messages"][-1]["content"][0]["content"]
    assert SECRET[::-1] in live  # the model, in the live turn, saw the real output
    disk = b"".join(p.read_bytes() for p in cli.sessions_dir.rglob("*.jsonl"))
    assert disk, result.err
    forms = [SECRET, SECRET[::-1], base64.b64encode(f"key={SECRET}\n".encode()).decode()[8:30]]
    for form in forms:
        assert form.encode() not in disk, form
    assert any(r.get("type") == "user" for p in cli.sessions_dir.rglob("messages.jsonl") for r in read_records(p))
