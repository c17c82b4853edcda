"""An MCP server's tools as evo-agent tools (SPEC §13): names, definitions, results.

A tool is named `mcp__<server>__<tool>`, both parts cut to the API's alphabet (`[a-zA-Z0-9_-]`, at most
64 characters), and carries the server's input schema. Its definition (`McpToolDef`) is plain data that a
session keeps beside its transcript (session.write_tool_defs), so a resumed session offers the very
same tools — and a call to one whose server is gone, renamed or failing returns an `is_error`
tool_result saying so, never a crash.

A result becomes ordinary tool_result content: the text parts joined (sized like bash output: head and
tail kept past 50,000 characters), images the API accepts as image blocks (checked: base64 that decodes to
a PNG, JPEG, GIF or WebP by its magic numbers, at most MAX_IMAGES), the rest named in a line;
the server's `isError` is the result's.

A description and the input schema's strings are the server's own words, which the model reads in every
request and no person ever does: each invisible character in them is given as a visible escape, like
AGENTS.md (session.reveal_invisible; `hidden` counts them, and the user is told), and a description is cut to
MAX_DESCRIPTION characters (what Claude Code keeps of one), so an order past a listing's end is not read either.
The same holds for a kept definition, a file anyone could have edited.
"""

from __future__ import annotations

import json
import re

from evo_agent.session import lazy_re
from evo_agent.session import plain_dataclass as dataclass

from ._common import error
from .base import MCP_PREFIX, Tool, ToolContext, ToolFacts, ToolResult

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)
if TYPE_CHECKING:
    from typing import Any

    from .mcp_client import McpManager

PREFIX = MCP_PREFIX
MAX_NAME = 64
IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
MAX_IMAGE_BYTES = 5 * 1024 * 1024  # base64 characters the API takes per image (about)
MAX_DESCRIPTION = 2048  # characters of a tool's description the model is given
MAX_SERVER_TOOLS = 256  # tools one server adds to every request: past it (or the size below) they are left out
MAX_SERVER_DEFINITIONS = 256 * 1024  # characters of one server's definitions as sent (~64k tokens)
MAX_TOOL_DEFINITION = 32 * 1024  # characters of one tool's definition as sent
MAX_SCHEMA_DEPTH = 64  # nesting of an input schema; deeper is no tool a model could call, only a recursion bomb
MAX_IMAGES = 20  # a result's images; the API takes at most 100 a request, and history holds more results
_BAD = lazy_re(r"[^a-zA-Z0-9_-]")


def clean_part(text: str) -> str:
    """A server's or tool's name in the API's alphabet (every other character becomes `_`)."""
    return _BAD.sub("_", text) or "_"


def server_part(server: str) -> str:
    """A server's name as its tools' names spell it: never `__` inside, never `_` at its end.

    A rule names a server by what stands between `mcp__` and the next `__` (`mcp__github__*`): a server
    named `github__evil` (or `github.`, or `github_`) would otherwise have tools those rules cover. The
    configuration refuses such names (mcp_config.name_problem); this keeps the names unambiguous anyway.
    """
    part = re.sub(r"_{2,}", "_", clean_part(server))[: MAX_NAME - 13]
    return part[:-1] + "-" if part.endswith("_") else part


def tool_name(server: str, tool: str) -> str:
    """`mcp__<server>__<tool>` within the API's 64 characters (the tool's part is cut first)."""
    return f"{PREFIX}{server_part(server)}__{clean_part(tool)}"[:MAX_NAME]


def is_mcp_tool(name: str) -> bool:
    return name.startswith(PREFIX)


def mcp_facts(name: str) -> ToolFacts:
    """An MCP tool's facts, the same for every one (tools/registry.py answers them for any `mcp__` name): it
    may do anything, so it asks like bash; whether its server's readOnlyHint is trusted is the gate's to know
    (it depends on the user's configuration, not on the tool)."""
    return ToolFacts(name, kind="exec", approval="mcp")


@dataclass(frozen=True)
class McpToolDef:
    """One MCP tool as a session offers it: the API's definition and where calls go."""

    name: str          # mcp__server__tool, as the model calls it
    description: str
    input_schema: dict[str, Any]
    server: str        # the server's configured name
    tool: str          # the tool's own name on the server
    read_only: bool = False  # the server annotates it readOnlyHint
    hidden: int = 0  # invisible characters of the description and schema, given as escapes (`shown_as_seen`)

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema,
                "server": self.server, "tool": self.tool, "read_only": self.read_only}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> McpToolDef | None:
        """A kept definition (a resumed session's mcp_tools.json); None unless its name is the one its
        (server, tool) gives: rules and approvals judge the name, so `mcp__github__get_issue` must never
        call `delete_repo`. Its read-only mark is not kept: it comes from the live server's listing."""
        name, schema = data.get("name"), data.get("input_schema")
        server, tool = data.get("server"), data.get("tool")
        if not (isinstance(name, str) and isinstance(server, str) and isinstance(tool, str)):
            return None
        if not isinstance(schema, dict):
            return None
        if not tool or name != tool_name(server, tool) or too_deep(schema):
            return None
        description, schema, hidden = shown_as_seen(str(data.get("description") or ""), schema)
        return cls(name, description, schema, server, tool, hidden=hidden)


def defs_of_server(server: str, tools: list[dict[str, Any]]) -> list[McpToolDef]:
    """The definitions of a server's listed tools (MCP wire shape), in its order; duplicates after cleaning dropped."""
    out, seen = [], set()
    for tool in tools:
        raw = tool.get("name")
        if not isinstance(raw, str) or not raw:
            continue
        name = tool_name(server, raw)
        if name in seen:
            continue
        seen.add(name)
        schema = tool.get("inputSchema")
        if not isinstance(schema, dict) or too_deep(schema):
            schema = {}
        schema = {k: v for k, v in schema.items() if k != "title"} or {}
        schema.setdefault("type", "object")
        annotations = tool.get("annotations")
        if not isinstance(annotations, dict):
            annotations = {}
        description = str(tool.get("description") or tool.get("title") or f"The tool {raw} of the MCP server {server}.")
        description, schema, hidden = shown_as_seen(f"[MCP {server}] {description}", schema)
        out.append(McpToolDef(name, description, schema, server, raw, annotations.get("readOnlyHint") is True,
                              hidden))
    return out


def too_deep(value: Any, limit: int = MAX_SCHEMA_DEPTH) -> bool:
    """Whether `value` nests lists and objects deeper than `limit` (found without recursion: the value may be
    nested far past Python's recursion limit, which every recursive walk of it would hit)."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth >= limit:
                return True
            stack.extend((v, depth + 1) for v in (item.values() if isinstance(item, dict) else item))
    return False


def within_budget(defs: list[McpToolDef]) -> tuple[list[McpToolDef], int]:
    """(the definitions one server may add to every request, how many were left out).

    Every definition is sent with every request of the session (and of its resumes: the list is kept), so a
    server listing thousands of tools or schemas of megabytes made each request one the API refuses. A tool
    past MAX_TOOL_DEFINITION is left out; the rest in the server's order until MAX_SERVER_TOOLS or
    MAX_SERVER_DEFINITIONS characters.
    """
    kept: list[McpToolDef] = []
    total = 0
    for d in defs:
        size = len(json.dumps({"name": d.name, "description": d.description, "input_schema": d.input_schema},
                              ensure_ascii=False))
        if size > MAX_TOOL_DEFINITION or total + size > MAX_SERVER_DEFINITIONS or len(kept) >= MAX_SERVER_TOOLS:
            continue
        total += size
        kept.append(d)
    return kept, len(defs) - len(kept)


def shown_as_seen(description: str, schema: dict[str, Any]) -> tuple[str, dict[str, Any], int]:
    """(description, schema, invisible characters found): each invisible character written as an escape, the
    description cut to MAX_DESCRIPTION (see the module docstring)."""
    from evo_agent.session import reveal_invisible

    count = 0

    def reveal(value: Any) -> Any:
        nonlocal count
        if isinstance(value, str):
            shown, found = reveal_invisible(value)
            count += found
            return shown
        if isinstance(value, dict):
            return {reveal(k): reveal(v) for k, v in value.items()}
        if isinstance(value, list):
            return [reveal(v) for v in value]
        return value

    shown: str = reveal(description)
    if len(shown) > MAX_DESCRIPTION:
        shown = shown[:MAX_DESCRIPTION] + f" … [cut: {len(shown) - MAX_DESCRIPTION} more characters]"
    revealed: dict[str, Any] = reveal(schema)
    return shown, revealed, count


def read_only_listed(tools: list[dict[str, Any]]) -> set[str]:
    """The tools a server's listing (MCP wire shape) annotates readOnlyHint, by their own names."""
    out = set()
    for tool in tools:
        annotations = tool.get("annotations")
        if not isinstance(annotations, dict):
            annotations = {}
        if isinstance(tool.get("name"), str) and annotations.get("readOnlyHint") is True:
            out.add(tool["name"])
    return out


def _sniff(raw: bytes) -> str | None:
    """The image type the bytes are, by their magic numbers (what the API checks), else None."""
    if raw.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if raw.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if raw.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if raw[:4] == b"RIFF" and raw[8:12] == b"WEBP":
        return "image/webp"
    return None


def _short(text: str) -> str:
    from evo_agent.safe_text import terminal_safe

    return terminal_safe(text[:60], keep_newlines=False)


def _image_block(data: str, mime: str, kept: int) -> tuple[dict[str, Any] | None, str]:
    """An image block the API will accept, or None and why not.

    A block the API refuses, once in the history, makes every later request of the session (and of its
    resumes) fail: so the base64 must decode, the bytes must be an image of a type the API takes (by their
    magic numbers, whatever the server claims), within MAX_IMAGE_BYTES, and at most MAX_IMAGES a result.
    """
    import base64
    import binascii

    if kept >= MAX_IMAGES:
        return None, f"more than {MAX_IMAGES} images in one result"
    data = "".join(data.split())
    if len(data) > MAX_IMAGE_BYTES:
        return None, f"larger than {MAX_IMAGE_BYTES // (1024 * 1024)} MB"
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None, "not valid base64"
    sniffed = _sniff(raw)
    if sniffed is None:
        return None, "not a PNG, JPEG, GIF or WebP image"
    return {"type": "image", "source": {"type": "base64", "media_type": sniffed, "data": data}}, ""


def result_of(result: dict[str, Any]) -> ToolResult:
    """An MCP CallToolResult (wire shape) as a ToolResult: text, image blocks, isError."""
    from .bash import _OutputCapture

    texts: list[str] = []
    images: list[dict[str, Any]] = []
    content = result.get("content")
    if not isinstance(content, list):
        content = []
    for part in content:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind == "image" and isinstance(part.get("data"), str):
            mime = str(part.get("mimeType") or "")
            block, why = _image_block(part["data"], mime, len(images))
            if block is not None:
                images.append(block)
            else:
                texts.append(f"[an image of type {_short(mime) or 'unknown'} the model cannot be shown was left out: "
                             f"{why}]")
        elif kind == "resource" and isinstance(part.get("resource"), dict):
            resource = part["resource"]
            if isinstance(resource.get("text"), str):
                texts.append(resource["text"])
            else:
                texts.append(f"[a binary resource was left out: {resource.get('uri', '')}]")
        elif kind == "resource_link":
            texts.append(f"[resource: {part.get('uri', '')}]")
        else:
            texts.append(f"[a {kind} part was left out]")
    if not texts and not images and result.get("structuredContent") is not None:
        texts.append(json.dumps(result["structuredContent"], ensure_ascii=False))
    capture = _OutputCapture()
    capture.feed("\n".join(texts).encode("utf-8", "replace"), final=True)
    text = capture.text()
    if not text and images:
        text = f"({len(images)} image{'s' if len(images) > 1 else ''})"
    return ToolResult(text, is_error=result.get("isError") is True, blocks=images or None)


def mcp_tool(definition: McpToolDef, manager: McpManager | None) -> Tool:
    """The Tool that calls `definition` on its server through `manager` (None: no server is configured now)."""

    def run(tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if manager is None or definition.server not in manager.names:
            return error(f"the MCP server {definition.server!r} of {definition.name} is not configured any more "
                         "(it was when this session started); nothing was run")
        from .mcp_client import McpCallError

        try:
            answer = manager.call(definition.server, definition.tool, tool_input, cancel=ctx.cancel)
        except McpCallError as exc:
            return error(f"{definition.name}: {exc}")
        return result_of(answer)

    return Tool(definition.name, definition.description, definition.input_schema, run,
                facts=mcp_facts(definition.name))


__all__ = ["IMAGE_TYPES", "McpToolDef", "PREFIX", "clean_part", "defs_of_server", "is_mcp_tool", "mcp_facts",
           "mcp_tool", "read_only_listed", "result_of", "server_part", "shown_as_seen", "tool_name", "too_deep",
           "within_budget"]
