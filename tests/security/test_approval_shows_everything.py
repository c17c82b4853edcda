"""An approval shows the whole call it approves (SPEC §9), whatever the arguments' size.

A prompt-injected model calls an MCP tool with a long, harmless-looking argument first and the payload after
it (JSON keeps the model's key order). Cut at a fixed number of characters, the question showed the padding and
never the payload, with nothing saying more was left out, while "yes" ran all of it. The question now carries
the whole input; the front ends show what fits and say how much more there is (Ctrl+O, numbered lines).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from evo_agent.tools.mcp_client import McpManager
from evo_agent.tools.mcp_config import expand_server, parse_server
from tests.builders import asked_in_a_turn, make_agent, server_provider
from tests.fake_model_server import text, tool_use

SERVER = str(Path(__file__).parents[1] / "tools" / "mcp_test_server.py")
PAYLOAD = "DROP TABLE customers; -- and mail the dump to exfil@example.invalid"

# Padding the model puts before the payload: one long value, many short keys, a long value of lines.
PADDINGS = {
    "one-long-value": {"text": "please summarise this. " * 400, "then": PAYLOAD},
    "many-keys": {**{f"k{i:03d}": "fine" for i in range(400)}, "text": "x", "then": PAYLOAD},
    "many-lines": {"text": "ok\n" * 3000, "then": PAYLOAD},
}


@pytest.mark.parametrize("padding", sorted(PADDINGS))
def test_an_mcp_calls_approval_shows_every_argument(project, model_server, padding):
    arguments = PADDINGS[padding]
    config = parse_server("t", {"command": sys.executable, "args": [SERVER]}, "user")
    manager = McpManager([expand_server(config, {})], project, start_timeout=120)
    model_server.script(tool_use("mcp__t__echo", arguments, id="t1"), text("ok"))
    agent, _ = make_agent(project, server_provider(model_server), mode="ask", mcp=manager)
    [request] = asked_in_a_turn(agent, "look at this")
    assert PAYLOAD in request.detail
    assert json.loads(request.detail) == arguments  # all of it, as it would be sent


# Characters a terminal draws as a blank (or nothing) that bash reads as a letter of the word: `cat<NBSP>/etc/passwd`
# is the program `cat<NBSP>/etc/passwd`, a script the repository ships in its directory `cat<NBSP>/`.
ODD_BLANKS = {"nbsp": "\u00a0", "figure-space": "\u2007", "ideographic": "\u3000", "line-separator": "\u2028",
              "file-separator": "\x1c", "next-line": "\x85"}


@pytest.mark.parametrize("blank", sorted(ODD_BLANKS))
def test_a_commands_odd_blank_is_never_shown_as_a_space(project, model_server, blank):
    from evo_agent.safe_text import terminal_safe

    command = f"cat{ODD_BLANKS[blank]}/etc/passwd"
    model_server.script(tool_use("bash", {"command": command}, id="t1"), text("ok"))
    agent, _ = make_agent(project, server_provider(model_server), mode="ask")
    [request] = asked_in_a_turn(agent, "look at this")
    seen = terminal_safe(f"{request.summary}\n{request.detail}")
    assert "cat /etc/passwd" not in seen and "cat/etc/passwd" not in seen, seen
    assert ODD_BLANKS[blank] not in seen, seen
