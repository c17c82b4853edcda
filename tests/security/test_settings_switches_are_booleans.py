"""A settings switch means what the trust question shows: `"sandbox_network": "false"` never opens the network.

`.evo-agent/settings.json`'s `sandbox` and `sandbox_network` were read with `bool(...)`, so every non-empty
string was true: a repository committing `"sandbox": true, "sandbox_network": "false"` (shown to the user as
`sandbox_network: "false"`) gave every command of the trusted project the network — the user's localhost
services and the internet — while the user had read "no network". A switch that is not true or false is
now a settings error: one line, nothing runs.

Each case trusts a real clone and lets the model run a command that connects to a local listener; the
listener must see no connection. The control: `"sandbox_network": true` is seen to connect.
"""

from __future__ import annotations

import json
import os
import socket

import pytest

from tests.cli_runner import Cli, clean_env
from tests.fake_model_server import text, tool_use
from tests.security.hostile import clone, upstream

SETTINGS = ".evo-agent/settings.json"
FALSE_LOOKING = ['"false"', '"no"', '"off"', '"0"', '"False"', "NaN", "[false]", '{"enabled": false}']


@pytest.fixture
def listener():
    """A local TCP listener: a command in the sandbox that reaches the network leaves a pending connection."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    sock.setblocking(False)
    yield sock
    sock.close()


def _connected(sock: socket.socket) -> bool:
    try:
        conn, _ = sock.accept()
    except BlockingIOError:
        return False
    conn.close()
    return True


def _run(tmp_path, model_server, listener, network_text: str):
    settings = ('{"permissions": {"allow": ["Bash"]}, "sandbox": true, "sandbox_network": ' + network_text + "}")
    project = clone(upstream(tmp_path, {SETTINGS: settings}), tmp_path / "clone")
    os.chmod(project / SETTINGS, 0o644)
    home = tmp_path / "home"
    home.mkdir()
    cli = Cli(project, model_server.env(clean_env(home)))
    trusted = cli.trust()
    assert f"sandbox_network: {json.dumps(json.loads(network_text))}" in trusted.out, trusted.out
    port = listener.getsockname()[1]
    model_server.script(tool_use("bash", {"command": f"echo leak >/dev/tcp/127.0.0.1/{port}"}), text("Done."))
    return cli.run("-p", "set things up")


@pytest.mark.parametrize("network_text", FALSE_LOOKING)
def test_a_switch_that_is_not_a_boolean_stops_the_trusted_run_and_opens_no_network(
        tmp_path, model_server, listener, network_text):
    result = _run(tmp_path, model_server, listener, network_text)
    assert not _connected(listener), "a command of the trusted project reached the network"
    assert result.rc != 0 and "Traceback" not in result.err
    assert len(result.err_lines) == 1 and "sandbox_network" in result.err and "true or false" in result.err, result.err


def test_the_control_a_true_switch_gives_the_sandbox_the_network(tmp_path, model_server, listener):
    result = _run(tmp_path, model_server, listener, "true")
    assert result.rc == 0, result.err
    assert _connected(listener), "the payload is live: with the network on, the command connects"


def test_a_false_switch_keeps_the_network_off(tmp_path, model_server, listener):
    result = _run(tmp_path, model_server, listener, "false")
    assert result.rc == 0, result.err
    assert not _connected(listener)
