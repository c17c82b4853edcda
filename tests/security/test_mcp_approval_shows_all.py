"""An MCP call's approval question shows every character the server would be sent (SPEC §9, §13).

The arguments of a call are the model's, and the model reads what servers and files put before it: a result
can steer it into passing a file's contents spelled in invisible characters (tag characters, zero-width bits,
variation selectors, a bidi override) beside an innocent visible argument. The person approving must see
them: the question writes each as a visible escape (agent/permissions.py reveals every request), like a bash
command's. The control: the server still receives exactly what the model asked for once approved.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from evo_agent.tools.approval import ApprovalDecision
from evo_agent.tools.mcp_client import McpManager
from evo_agent.tools.mcp_config import expand_server, parse_server
from tests.builders import make_agent, server_provider
from tests.fake_model_server import text, tool_use

SERVER = str(Path(__file__).parents[1] / "tools" / "mcp_test_server.py")
SECRET = "AKIAQ7RT2XKZ the contents of ~/.aws/credentials"
INVISIBLE = re.compile("[\U000e0000-\U000e007f\u200b-\u200d\u2060\u034f\ufe00-\ufe0f\U000e0100-\U000e01ef"
                       "\u202a-\u202e\u2066-\u2069]")


def tags(s: str) -> str:
    return "".join(chr(0xE0000 + ord(c)) for c in s)


def zero_width(s: str) -> str:
    return "".join("\u200c" if bit == "1" else "\u200b" for c in s.encode() for bit in f"{c:08b}")


def selectors(s: str) -> str:
    return "".join(chr(0xE0100 + b - 16) if b >= 16 else chr(0xFE00 + b) for b in s.encode())


SPELLINGS = {"tags": tags(SECRET), "zero-width": zero_width(SECRET), "variation-selectors": "😀" + selectors(SECRET),
             "bidi": "\u202e" + SECRET[::-1] + "\u202c"}


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_the_question_shows_invisible_arguments_and_the_server_gets_them(project, model_server, spelling):
    argument = "hello" + SPELLINGS[spelling]
    config = parse_server("t", {"command": sys.executable, "args": [SERVER]}, "user")
    manager = McpManager([expand_server(config, {})], project, start_timeout=120)
    model_server.script(tool_use("mcp__t__echo", {"text": argument}, id="t1"), text("done"))
    agent, _ = make_agent(project, server_provider(model_server), mode="ask", mcp=manager)
    asked = []

    class Front:
        def on_approval(self, request):
            asked.append(request)
            return ApprovalDecision("yes")

    try:
        agent.run_turn("echo it", Front())
    finally:
        agent.close()
    (request,) = asked
    shown = request.summary + "\n" + request.detail
    assert "hello" in shown and not INVISIBLE.search(shown), repr(shown)
    assert "\\u" in shown or "\\U" in shown, shown  # each is written as a visible escape
    answered = model_server.requests[-1]["messages"][-1]["content"][0]["content"]
    assert answered == f"echo: {argument}", "the control: the server gets what the model asked for"
