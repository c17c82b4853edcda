"""`evo-agent mcp list | get NAME | add NAME … | remove NAME`: the MCP servers, like `claude mcp …` (SPEC §13).

    evo-agent mcp add [--scope user|project] [-e KEY=VAL …] NAME -- COMMAND [ARGS…]
    evo-agent mcp add --transport http [--scope …] [-H "Header: value" …] NAME URL
    evo-agent mcp remove [--scope user|project] NAME
    evo-agent mcp list | get NAME

`user` (the default) is `~/.config/evo-agent/mcp.json`, the user's own, always obeyed; `project` is the
project's `.mcp.json`, meant to be committed and obeyed only in a trusted project. Adding to a project
the user already trusts keeps it trusted (the user made the change); nothing here starts a server.
Env and header values are never printed: `get` names their keys.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from .command_parser import command_parser
from .errors import CommandError, UsageError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

    from evo_agent.tools.mcp_config import ServerConfig


def build_parser() -> argparse.ArgumentParser:
    parser, sub = command_parser("mcp", "MCP servers: the user's (~/.config/evo-agent/mcp.json) "
                                 "and the project's (.mcp.json, obeyed only in a trusted project).")
    sub.add_parser("list", help="every configured server, and whether it applies here")
    get = sub.add_parser("get", help="one server's configuration (env and header values hidden)")
    get.add_argument("name")
    add = sub.add_parser("add", help="add a server: NAME -- COMMAND [ARGS…], or --transport http NAME URL")
    add.add_argument("--scope", "-s", choices=("user", "project"), default="user",
                     help="user (default: ~/.config/evo-agent/mcp.json) or project (.mcp.json)")
    add.add_argument("--transport", "-t", choices=("stdio", "http"), default="stdio")
    add.add_argument("-e", "--env", action="append", default=[], metavar="KEY=VAL",
                     help="an environment variable for a stdio server (${VAR} is expanded at start)")
    add.add_argument("-H", "--header", action="append", default=[], metavar="'Name: value'",
                     help="an HTTP header for an http server (${VAR} is expanded at start)")
    add.add_argument("--trust-read-only-hint", action="store_true",
                     help="let its tools the server marks readOnlyHint run unasked")
    add.add_argument("name")
    add.add_argument("target", nargs=argparse.REMAINDER, metavar="COMMAND [ARGS…] | URL")
    remove = sub.add_parser("remove", help="remove a server")
    remove.add_argument("--scope", "-s", choices=("user", "project"), default=None,
                        help="where to remove it from (default: where it is, if only one place)")
    remove.add_argument("name")
    return parser


def run_mcp(argv: Sequence[str], project_dir_of: Callable[[argparse.Namespace], Path]) -> int:
    """Run the command; UsageError/CommandError (one line) for what cannot be done."""
    from evo_agent.safe_text import terminal_safe
    from evo_agent.tools.mcp_config import McpConfigError

    args = build_parser().parse_args(list(argv))
    project = project_dir_of(args)
    try:
        if args.mcp_command in (None, "list"):
            out = _list(project)
        elif args.mcp_command == "get":
            out = _get(project, args.name)
        elif args.mcp_command == "add":
            out = _add(project, args)
        else:
            out = _remove(project, args.name, args.scope)
    except McpConfigError as exc:
        raise CommandError(f"mcp: {exc}") from None
    except OSError as exc:
        raise CommandError(f"mcp: {exc.strerror or exc}: {getattr(exc, 'filename', '') or ''}") from None
    sys.stdout.write("".join(terminal_safe(line, keep_newlines=False) + "\n" for line in out))
    return 0


def _files(project: Path) -> list[tuple[str, Path]]:
    from evo_agent.tools.mcp_config import project_config_path, user_config_path

    return [("user", user_config_path()), ("project", project_config_path(project))]


def _all(project: Path) -> list[ServerConfig]:
    """Every configured server of both files; McpConfigError when a file or an entry cannot be used."""
    from evo_agent.tools.mcp_config import McpConfigError, read_file, servers_in

    found: list[ServerConfig] = []
    for scope, path in _files(project):
        servers, problems = servers_in(read_file(path), scope, str(path))
        if problems:
            raise McpConfigError(problems[0])
        found += servers
    return found


def _where(server: ServerConfig) -> str:
    return server.url if server.transport == "http" else " ".join([server.command, *server.args])


def _list(project: Path) -> list[str]:
    from evo_agent.session import project_trusted

    servers = _all(project)
    if not servers:
        return ["No MCP servers configured. Add one with", "  evo-agent mcp add NAME -- COMMAND [ARGS…]"]
    trusted = project_trusted(project) if any(s.scope == "project" for s in servers) else True
    user_names = {s.name for s in servers if s.scope == "user"}
    out = []
    for s in servers:
        note = ""
        if s.scope == "project" and s.name in user_names:
            note = "  (not used: the user's server of this name wins)"
        elif s.scope == "project" and not trusted:
            note = "  (not started: the project is not trusted; review .mcp.json, then: evo-agent trust)"
        out.append(f"{s.name}: {_where(s)} ({s.transport}, {s.scope}){note}")
    return out


def _get(project: Path, name: str) -> list[str]:
    matches = [s for s in _all(project) if s.name == name]
    if not matches:
        raise CommandError(f"mcp: no server named {name!r} (see evo-agent mcp list)")
    out = []
    for s in matches:
        out += [f"{s.name}:", f"  Scope: {s.scope} ({s.source})", f"  Type: {s.transport}"]
        if s.transport == "http":
            out.append(f"  URL: {s.url}")
            if s.headers:
                out.append("  Headers: " + ", ".join(k for k, _ in s.headers) + " (values hidden)")
        else:
            out.append(f"  Command: {s.command}")
            if s.args:
                out.append("  Args: " + " ".join(s.args))
            if s.env:
                out.append("  Environment: " + ", ".join(k for k, _ in s.env) + " (values hidden)")
        if s.trust_read_only:
            out.append("  Tools marked readOnlyHint run unasked")
    return out


def _pairs(items: list[str], sep: str, what: str) -> dict[str, str]:
    out = {}
    for item in items:
        key, found, value = item.partition(sep)
        if not found or not key.strip():
            raise UsageError(f"mcp: {what} {item[:40]!r} must be written {'KEY=VAL' if sep == '=' else 'Name: value'}")
        out[key.strip()] = value.strip() if sep == ":" else value
    return out


def _add(project: Path, args: argparse.Namespace) -> list[str]:
    from evo_agent.tools.mcp_config import parse_server

    target = [t for t in args.target]
    if target[:1] == ["--"]:
        target = target[1:]
    if not target:
        raise UsageError("mcp: add needs a command (NAME -- COMMAND [ARGS…]) or, with --transport http, a URL")
    if args.transport == "http":
        if len(target) != 1:
            raise UsageError("mcp: an http server takes one URL")
        entry: dict = {"type": "http", "url": target[0]}
        if args.header:
            entry["headers"] = _pairs(args.header, ":", "header")
    else:
        entry = {"command": target[0], "args": target[1:]}
        if args.env:
            entry["env"] = _pairs(args.env, "=", "variable")
    if args.trust_read_only_hint:
        entry["trustReadOnlyHint"] = True
    parse_server(args.name, entry, args.scope)  # the same check a session makes
    path = _change(project, args.scope, lambda servers: servers.__setitem__(args.name, entry), added=args.name)
    return [f"Added the {args.transport} MCP server {args.name} to {path} ({args.scope})."]


def _remove(project: Path, name: str, scope: str | None) -> list[str]:
    from evo_agent.tools.mcp_config import read_file

    scopes = [scope] if scope else [s for s, path in _files(project)
                                    if name in ((read_file(path) or {}).get("mcpServers") or {})]
    if not scopes:
        raise CommandError(f"mcp: no server named {name!r} (see evo-agent mcp list)")
    if len(scopes) > 1:
        raise UsageError(f"mcp: {name!r} is in both the user's and the project's files; "
                         "say which: --scope user|project")
    path = _change(project, scopes[0], lambda servers: servers.pop(name))
    return [f"Removed the MCP server {name} from {path} ({scopes[0]})."]


def _change(project: Path, scope: str, change: Callable[[dict[str, Any]], object], added: str | None = None) -> Path:
    """Apply `change(mcpServers)` to the scope's file, written back atomically; trust kept if the user had given it."""
    from evo_agent.session import remember_trust, workspace_trust
    from evo_agent.tools.mcp_config import read_file, write_config

    path = dict(_files(project))[scope]
    data = read_file(path) or {}
    servers = data.setdefault("mcpServers", {})
    try:
        change(servers)
    except KeyError:
        raise CommandError(f"mcp: no such server in {path}") from None
    before = workspace_trust(project) if scope == "project" else None
    write_config(path, data, private=scope == "user")
    if before is not None and before.trusted:  # the user changed it: trusting what they wrote is not a question
        # ... but only as far as they trusted it: the servers they chose one by one (and the one they add now),
        # the settings only if they obeyed them. A plain re-trust started the servers they had said no to.
        servers = None if before.servers is None else [*before.servers, *([added] if added else [])]
        remember_trust(workspace_trust(project), True, servers=servers, settings=before.settings)
    return path


__all__ = ["build_parser", "run_mcp"]
