"""MCP servers inside a conversation (SPEC §12, §13): when their tools join, what a resume offers, `/mcp`.

The tool list of a session is fixed at its first request: the servers start then (lazily: a session that
says nothing starts none), in parallel, and the request waits until each is connected or failed, at most
the start timeout. What is connected then is the session's list for good, kept beside the transcript
(session.write_tool_defs). A server that connects later is announced to the model in a reminder, never
spliced into the tools (the prompt cache holds). A resumed session offers exactly its source's list
(read back from the source's directory), whatever the servers say now: a call whose server is gone or
failing gets an `is_error` tool_result. `/clear` starts a session whose list is fixed anew.
"""

from __future__ import annotations

import threading

from evo_agent.tools import Tool

# tools/mcp_tools.py and the kept list's reader and writer are imported where a server or a kept list is
# there to use: a session without MCP servers loads neither before its first request (issue #30).
TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)
if TYPE_CHECKING:
    from typing import Any

    from evo_agent.tools.mcp_client import McpManager, ServerStatus
    from evo_agent.tools.mcp_tools import McpToolDef

    from .loop import Agent


class McpContext:
    """The MCP side of one agent: the manager (None without servers) and the session's fixed list."""

    def __init__(self, agent: Agent, manager: McpManager | None) -> None:
        self.agent = agent
        self.manager = manager
        self.defs: list[McpToolDef] | None = None  # None: not fixed yet for the current session
        self._saved = False
        self._lock = threading.Lock()
        self._told: set[tuple[str, str]] = set()  # (server, state) already said to the user
        if manager is not None:
            manager.on_change = self._changed

    # ---- the session's list
    def fix(self, cancel: threading.Event | None = None) -> list[Tool] | None:
        """The session's MCP tools, fixed on the first call (starting the servers and waiting for them).

        None: this agent has no servers and no list to keep (a subagent keeps the tools it was given), or
        the wait was interrupted (`cancel`: the request is not sent; the next one fixes the list).
        """
        with self._lock:
            if self.defs is None:
                chosen = self._choose(cancel)
                if cancel is not None and cancel.is_set():
                    return None
                self.defs = chosen
                self._announce_failures()
                self._announce_hidden(chosen)
            if self.manager is None and not self.defs:
                return None
            from evo_agent.tools.mcp_tools import mcp_tool

            return [mcp_tool(d, self.manager) for d in self.defs]

    def known_without_waiting(self) -> bool:
        """Whether the session's list can be fixed now without waiting for a server: there is none to wait
        for, or the session was resumed from one that kept its list."""
        return self.manager is None or self._source_defs() is not None

    def _choose(self, cancel: threading.Event | None = None) -> list[McpToolDef]:
        recorded = self._source_defs()
        if recorded is not None:
            if self.manager is not None and any(d.server in self.manager.names for d in recorded):
                self.manager.start()  # connecting now; a call waits for its server
            self._announce_left_out(recorded)
            return recorded
        if self.manager is None:
            return []
        from evo_agent.tools.mcp_tools import MAX_SERVER_TOOLS, defs_of_server, within_budget

        self.manager.wait(cancel=cancel)
        defs: list[McpToolDef] = []
        taken: set[str] = set()
        for status in self.manager.statuses():
            if status.state != "connected":
                continue
            kept, left_out = within_budget(defs_of_server(status.name, status.tools))
            if left_out:
                self._say(("left out", status.name), f"evo-agent: MCP server {status.name}: {left_out} of its tools "
                          f"were left out (one server adds at most {MAX_SERVER_TOOLS} tools and 256 KB of "
                          "definitions to every request)")
            for d in kept:
                if d.name not in taken:
                    taken.add(d.name)
                    defs.append(d)
        return defs

    def _source_defs(self) -> list[McpToolDef] | None:
        """The list of the session this one was resumed (or rewound) from, when it kept one."""
        meta = getattr(self.agent.recorder, "meta", None)
        source = getattr(meta, "resumed_from", None)
        store = self.agent.store
        if not isinstance(source, str) or store is None:
            return None
        from evo_agent.session import read_tool_defs
        from evo_agent.tools.mcp_tools import McpToolDef

        try:
            raw = read_tool_defs(store.session_dir(source))
        except (OSError, ValueError):
            return None
        if raw is None:
            return None
        return [d for d in (McpToolDef.from_json(r) for r in raw) if d is not None]

    def save(self, *, empty: bool = False) -> None:
        """Keep the fixed list beside the transcript (once the session is on disk); quietly retried.

        An empty list is kept too (`empty`, called after the request: a session without MCP servers loads
        no tool_defs before its first request, issue #30): a resume of it must offer no MCP tools, not
        those of a server added since, or its first request would not repeat its source's (SPEC §12).
        Only a session that kept no list at all (an import, one from before lists were kept) gets today's.
        """
        if self._saved or self.defs is None or not (self.defs or empty):
            return
        recorder = self.agent.recorder
        if not getattr(recorder, "on_disk", True) or not hasattr(recorder, "session_dir"):
            return
        from evo_agent.session import write_tool_defs

        self._saved = write_tool_defs(recorder.session_dir, [d.as_json() for d in self.defs])

    def reset(self) -> None:
        """A new session (/clear, /resume): its list is fixed again at its first request."""
        with self._lock:
            self.defs, self._saved = None, False

    def read_only_tools(self) -> set[str]:
        """Tools that run unasked: annotated readOnlyHint by a server whose entry trusts that annotation.

        The annotation is read from the server's live listing, never from a kept list (a resumed session's
        mcp_tools.json is a file anyone could have edited); until the server is connected its tools ask.
        """
        if self.defs is None or self.manager is None:
            return set()
        from evo_agent.tools.mcp_tools import read_only_listed

        marked = {s.name: read_only_listed(s.tools) for s in self.manager.statuses()
                  if s.read_only_trusted and s.state == "connected"}
        return {d.name for d in self.defs if d.tool in marked.get(d.server, ())}

    def _refresh_read_only(self) -> None:
        """A server connected after the list was fixed (a resume): its marks now count (the loop thread)."""
        policy = getattr(getattr(self.agent, "permissions", None), "policy", None)
        if policy is not None and self.defs is not None:
            policy.read_only_tools = self.read_only_tools()

    # ---- what happens later
    def _changed(self, status: ServerStatus) -> None:
        """A server connected or failed after start (the loop thread): a line for the user, a reminder if late."""
        if status.state == "failed":
            self._tell(status)
            return
        if status.state != "connected" or self.defs is None:
            return
        self._refresh_read_only()
        offered = {d.tool for d in self.defs if d.server == status.name}
        late = [t.get("name") for t in status.tools if isinstance(t.get("name"), str) and t.get("name") not in offered]
        if late:  # by the names the model would call them (the API's alphabet), never the server's raw strings
            from evo_agent.tools.mcp_tools import tool_name

            names = ", ".join(tool_name(status.name, str(n)) for n in late[:20])
            self.agent.queue_reminder(
                f"The MCP server {status.name} connected after this session's tools were fixed. Its tools "
                f"({names}) cannot be called in this session; the user can start a new session (/clear) to use them.",
                "mcp_late")

    def _announce_failures(self) -> None:
        """A line per server that failed, or is still starting with none of its tools in the fixed list (a
        resumed session's kept list offers them at once, and a call waits for the server: nothing to say)."""
        if self.manager is None:
            return
        offered = {d.server for d in self.defs or []}
        for status in self.manager.statuses():
            if status.state == "failed":
                self._tell(status)
            elif status.state == "starting" and status.name not in offered:
                self._tell(status, f"evo-agent: MCP server {status.name} is still starting; its tools join a "
                                   "new session (/clear) once it is connected")

    def _announce_left_out(self, recorded: list[McpToolDef]) -> None:
        """One line per configured server a resumed session does not offer (its list was fixed at its start)."""
        kept = {d.server for d in recorded}
        for name in self.manager.names if self.manager is not None else []:
            if name not in kept:
                self._say(("not kept", name), f"evo-agent: MCP server {name} is not among this resumed "
                                              "conversation's tools (fixed when it started); /clear starts a "
                                              "session with it")

    def _announce_hidden(self, defs: list[McpToolDef]) -> None:
        """One line per server whose tool descriptions held invisible characters (the model sees them as escapes)."""
        hidden: dict[str, int] = {}
        for d in defs:
            if d.hidden:
                hidden[d.server] = hidden.get(d.server, 0) + d.hidden
        for server, count in hidden.items():
            self._say(("hidden", server), f"evo-agent: MCP server {server}: its tool descriptions held {count} "
                                          "invisible characters; the model is given them as visible escapes")

    def _tell(self, status: ServerStatus, line: str | None = None) -> None:
        text = line or f"evo-agent: MCP server {status.name} failed: {status.detail}; /mcp shows it and reconnects"
        self._say((status.name, status.state + status.detail), text)

    def _say(self, key: tuple[str, str], text: str) -> None:
        if key in self._told:
            return
        self._told.add(key)
        try:
            self.agent.front_end.tell(text)
        except Exception:  # noqa: BLE001 - a display problem never breaks a session
            pass

    # ---- /mcp
    def describe(self) -> str:
        """What `/mcp` shows: each server's state, its tools in this session, and how to reconnect."""
        if self.manager is None and not self.defs:
            if self._config_exists():  # every entry refused at launch (untrusted project, a variable unset, …)
                return ("No MCP server was started: the lines printed at launch say why\n"
                        "(`evo-agent mcp list` shows each server and whether it applies here).")
            return ("No MCP servers are configured. Add one with\n"  # lines under 80 columns: the app lets the
                    "  evo-agent mcp add NAME -- COMMAND [ARGS…]\n"  # terminal wrap text, mid-word
                    "or a .mcp.json in a trusted project.")
        offered: dict[str, int] = {}
        for d in self.defs or []:
            offered[d.server] = offered.get(d.server, 0) + 1
        lines = ["MCP servers:"]
        statuses = self.manager.statuses() if self.manager is not None else []
        for s in statuses:
            count = offered.get(s.name)
            tools = f", {count} tool{'s' if count != 1 else ''} in this session" if count else ""
            detail = f": {s.detail}" if s.detail else ""
            lines.append(f"  {s.name} ({s.scope}, {s.transport}) — {s.state}{detail}{tools}")
        for server in sorted(set(offered) - {s.name for s in statuses}):
            lines.append(f"  {server} — not configured now ({offered[server]} tools kept from the resumed session)")
        if self.defs is None:
            lines.append("The tool list is fixed at this session's first request.")
        if statuses:
            lines.append("Reconnect one with: /mcp reconnect NAME")
        return "\n".join(lines)

    def _config_exists(self) -> bool:
        """Whether the user's MCP config or the project's `.mcp.json` is there (`/mcp` said "none configured"
        when every entry of one was refused at launch)."""
        import os

        from evo_agent.session import MCP_CONFIG_NAME, USER_MCP_CONFIG_NAME, user_config_dir

        project = getattr(self.agent, "project_dir", None)
        paths = [user_config_dir(os.environ) / USER_MCP_CONFIG_NAME]
        if project is not None:
            paths.append(project / MCP_CONFIG_NAME)
        return any(os.path.lexists(path) for path in paths)

    def reconnect(self, name: str) -> str:
        if self.manager is None or not self.manager.reconnect(name):
            return f"No MCP server named {name!r} (see /mcp)."
        self._told = {k for k in self._told if k[0] != name}
        self.manager.wait(timeout=self.manager.start_timeout + 1.0)
        status = self.manager.status(name)
        if status is None:
            return f"No MCP server named {name!r}."
        detail = f": {status.detail}" if status.detail else ""
        return f"MCP server {name}: {status.state}{detail}"

    def close(self) -> None:
        if self.manager is not None:
            self.manager.close()


# What one conversation (the history since its last compaction, sent whole with every request) may hold of
# the images tools returned: the API refuses a request of more than 100 images or 32 MB, and every image is
# paid for again on every later request. Past either cap an image reaches the model as a line saying so.
MAX_CONVERSATION_IMAGES = 50
MAX_CONVERSATION_IMAGE_BYTES = 24 << 20  # base64 characters


def _image_blocks(result: dict[str, Any]) -> list[dict[str, Any]]:
    content = result.get("content") if result.get("type") == "tool_result" else None
    return [b for b in content if isinstance(b, dict) and b.get("type") == "image"] if isinstance(content, list) else []


def _image_size(block: dict[str, Any]) -> int:
    source = block.get("source")
    data = source.get("data") if isinstance(source, dict) else None
    return len(data) if isinstance(data, str) else 0


def cap_images(history: list[dict[str, Any]], results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One response's tool_result blocks with the images past the conversation's caps replaced by a line.

    A pure function of the history before them and the results in order, applied before the results are
    recorded: the transcript holds what the model was sent, so a resume sends the same. A compaction
    empties the history, and with it the count.
    """
    if not any(_image_blocks(r) for r in results):
        return results
    held = [b for m in history if m.get("role") == "user" and isinstance(m.get("content"), list)
            for r in m["content"] if isinstance(r, dict) for b in _image_blocks(r)]
    count, size = len(held), sum(_image_size(b) for b in held)
    out: list[dict[str, Any]] = []
    for result in results:
        if not _image_blocks(result):
            out.append(result)
            continue
        content: list[Any] = []
        for block in result["content"]:
            if not (isinstance(block, dict) and block.get("type") == "image"):
                content.append(block)
            elif count + 1 > MAX_CONVERSATION_IMAGES or size + _image_size(block) > MAX_CONVERSATION_IMAGE_BYTES:
                content.append({"type": "text", "text": (
                    f"[an image was left out: this conversation already holds {count} images "
                    f"({size / (1 << 20):.1f} MB; at most {MAX_CONVERSATION_IMAGES} and "
                    f"{MAX_CONVERSATION_IMAGE_BYTES >> 20} MB). A compaction makes room again.]")})
            else:
                count, size = count + 1, size + _image_size(block)
                content.append(block)
        out.append({**result, "content": content})
    return out


def drop_mcp_tools(tools: list[Tool]) -> list[Tool]:
    from evo_agent.tools.mcp_tools import is_mcp_tool

    return [t for t in tools if not is_mcp_tool(t.name)]


__all__ = ["MAX_CONVERSATION_IMAGES", "MAX_CONVERSATION_IMAGE_BYTES", "McpContext", "cap_images", "drop_mcp_tools"]
