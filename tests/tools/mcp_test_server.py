"""An MCP server for the tests, on the official SDK: stdio (default) or streamable HTTP (`--http PORT`).

Tools: `echo` (text back), `add` (read-only annotated), `picture` (a tiny PNG), `fail` (isError),
`crash` (the process exits mid-call), `hang` (never answers; writes `$MCP_TEST_DIR/hang.<pid>` first),
`env` (the value of one variable of its environment). At start it writes `$MCP_TEST_DIR/started.<pid>`
(when the variable is set) and touches `$MCP_TEST_MARKER` (when set): the trust tests' marker. With
`$MCP_TEST_REQUIRE` set to a path that does not exist it exits at once (a server that fails to start).
"""

from __future__ import annotations

import base64
import os
import sys
import time

from mcp.server.mcpserver import MCPServer
from mcp.types import ImageContent, TextContent, ToolAnnotations

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")

server = MCPServer("evo-test")


@server.tool(description="Say the text back.")
def echo(text: str) -> str:
    return f"echo: {text}"


@server.tool(description="Add two numbers.", annotations=ToolAnnotations(readOnlyHint=True))
def add(a: int, b: int) -> str:
    return str(a + b)


@server.tool(description="A tiny picture.")
def picture() -> list:
    return [TextContent(type="text", text="a picture:"),
            ImageContent(type="image", data=base64.b64encode(PNG).decode(), mimeType="image/png")]


@server.tool(description="Fail on purpose.")
def fail() -> str:
    raise ValueError("it failed on purpose")


@server.tool(description="Exit the server process in the middle of the call.")
def crash() -> str:
    os._exit(3)


@server.tool(description="Never answer.")
def hang() -> str:
    where = os.environ.get("MCP_TEST_DIR")
    if where:
        with open(os.path.join(where, f"hang.{os.getpid()}"), "w") as f:
            f.write("x")
    while True:
        time.sleep(3600)


@server.tool(description="One variable of the server's environment.")
def env(name: str) -> str:
    return os.environ.get(name, "(unset)")


def main() -> None:
    where = os.environ.get("MCP_TEST_DIR")
    if where:
        with open(os.path.join(where, f"started.{os.getpid()}"), "w") as f:
            f.write(str(os.getppid()))
    required = os.environ.get("MCP_TEST_REQUIRE")
    if required and not os.path.exists(required):
        sys.exit(f"mcp_test_server: {required} does not exist")
    marker = os.environ.get("MCP_TEST_MARKER")
    if marker:
        open(marker, "w").close()
    if len(sys.argv) > 2 and sys.argv[1] == "--http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()


if __name__ == "__main__":
    main()
