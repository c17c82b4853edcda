"""The tool definitions a session's requests carry beyond evo-agent's own: its MCP tools (SPEC §12, §13).

Every request of a session begins with the same bytes (tools, then the system prompt), and a resumed
session's first request repeats its source's. evo-agent's own tools come from its code; an MCP server's
come from the server, which may be gone, renamed or changed when the session is resumed. So the
definitions a session fixed at its first request are kept beside its transcript (`mcp_tools.json`,
0600, replaced atomically, redacted like a record) and a resume reads its source's back: the same
prefix, whatever the servers say now.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .atomic import replace_private_file
from .layout import MCP_TOOLS_NAME
from .redact import encode_redacted

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)
if TYPE_CHECKING:
    from typing import Any

MAX_BYTES = 4 << 20  # a definitions file larger than this is not read back (a resume then asks the servers)


def write_tool_defs(session_dir: Path | str, specs: list[dict[str, Any]]) -> bool:
    """Keep `specs` (API tool definitions) for the session in `session_dir`; False when it could not be written."""
    _clean, line = encode_redacted({"tools": specs})
    try:
        fd = os.open(session_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        replace_private_file(fd, MCP_TOOLS_NAME, line if line.endswith(b"\n") else line + b"\n")
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def read_tool_defs(session_dir: Path | str) -> list[dict[str, Any]] | None:
    """The definitions kept for the session in `session_dir`; None when it kept none (or they cannot be read).

    Opened without blocking and read only when it is a regular file: a planted session's `mcp_tools.json` that
    is a FIFO (an archive keeps one) held the resume's first request until a writer came, forever."""
    import stat

    try:
        fd = os.open(Path(session_dir) / MCP_TOOLS_NAME, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        raw = os.read(fd, MAX_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(raw) > MAX_BYTES:
        return None
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):  # a file anyone could edit: nested past any limit
        return None
    tools = data.get("tools") if isinstance(data, dict) else None
    if not isinstance(tools, list):
        return None
    return [t for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)
            and isinstance(t.get("input_schema"), dict)]


__all__ = ["read_tool_defs", "write_tool_defs"]
