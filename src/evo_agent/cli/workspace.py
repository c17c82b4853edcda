"""Workspace trust at the command line: the question the app and the REPL ask once, print mode's one line,
and `evo-agent trust [--revoke | --status]`.

What a project brings that would grant authority (`.evo-agent/settings.json`, `.mcp.json`) is obeyed
only once the user trusts the project as it is now (evo_agent.session.workspace). Interactive runs ask
once, showing what the project brings; the answer is remembered in the user's own config. Print mode
and piped input never ask: they ignore what an untrusted project brings and say so in one line.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import sys
from collections.abc import Callable
from pathlib import Path

from evo_agent.safe_text import terminal_safe
from evo_agent.session import (
    AUTHORITY_FILES,
    Brought,
    WorkspaceTrust,
    remember_trust,
    revoke_trust,
    run_git,
    user_record_path,
    user_rules,
    workspace_trust,
)

from .errors import EXIT_BROKEN_PIPE, EXIT_OK, CommandError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import TextIO



def _safe(text: object) -> str:
    """Shown for trust: control sequences and characters no terminal shows (tag characters, zero-width runs,
    bidi controls) made visible, so what is trusted is what was seen."""
    from evo_agent.session import reveal_invisible

    return terminal_safe(reveal_invisible(str(text))[0], keep_newlines=False)


def _files(status: WorkspaceTrust) -> str:
    return " and ".join(b.path for b in status.brought)


def ignored_line(status: WorkspaceTrust) -> str:
    """Print mode's one line about what an untrusted project brings, and how to trust it."""
    files = _files(status)
    if status.answer == "declined":
        why = "you chose not to trust this project"
    elif status.changed:
        why = "it changed since you answered for this project (or the project moved or was cloned again)"
    else:
        why = "this project is not trusted"
    from evo_agent.session import find_project_dir

    here = find_project_dir(Path.cwd()).resolve() == status.project
    # Quoted for the shell: the line is meant to be pasted, and a path (an unpacked archive's `x;touch pwned;`,
    # reached through a link with an innocent name) would otherwise run as commands.
    return (f"evo-agent: ignoring {files}: {why}; to obey it, review it and run: evo-agent trust"
            + ("" if here else f" --project-dir {_safe(shlex.quote(str(status.project)))}"))


def _tracked(project: Path, rel: str) -> bool | None:
    out = run_git(project, "ls-files", "--", str(project / rel))
    return None if out is None else bool(out.strip())


def describe(b: Brought, project: Path | None = None) -> list[str]:
    """What one file would grant, for a person to judge: a line for the file, indented lines for its content."""
    where = ""
    if project is not None and b.kind == "file":
        tracked = _tracked(project, b.path)
        where = {True: " (committed to the repository)", False: " (not tracked by git)", None: ""}[tracked]
    head = f"  {b.path}{where}"
    if b.unsafe:
        target = f" to {_safe(b.data.decode('utf-8', 'replace'))}" if b.kind == "symlink" else ""
        return [f"{head}: {_safe(b.unsafe)}{target} — never obeyed, trusted or not"]
    try:
        data = json.loads(b.data)
    except (ValueError, UnicodeDecodeError, RecursionError):  # RecursionError: `[[[[…` nested past the stack
        return [f"{head}: not valid JSON (a trusted project with it stops with an error)"]
    if not isinstance(data, dict):
        return [f"{head}: not a JSON object"]
    lines = [head]
    if b.path.endswith(".mcp.json"):
        return lines + _describe_servers(data)
    mode = data.get("permission_mode")
    if mode is not None:
        lines.append(f"    permission mode: {_safe(mode)}")
    perms = data.get("permissions")
    if not isinstance(perms, dict):
        perms = {}
    allow = perms.get("allow")
    if not isinstance(allow, list):
        allow = []
    if allow:
        # Every rule: one left out could be the bare `Bash` after thirty harmless ones.
        shown = ", ".join(_field(r) for r in allow)
        lines.append(f"    runs unasked: {shown}")
    for key in ("sandbox", "sandbox_network"):
        if key in data:
            odd = "" if isinstance(data[key], bool) else " (not true or false: a trusted project with it stops)"
            lines.append(f"    {key}: {_safe(json.dumps(data[key]))}{odd}")
    others = sorted(k for k in data if k not in ("permission_mode", "permissions", "sandbox", "sandbox_network"))
    if others:
        lines.append(f"    other keys: {_safe(', '.join(others))}")
    return lines


_BLANKS = re.compile(r"[\s\u200b-\u200d\u2060\ufeff]{4,}")  # blanks and zero-width characters
_ODD_BLANK = re.compile(r"[^\S \t\n]|[\u200b-\u200d\u2060\ufeff]")  # any of them but space, tab and newline


def _field(text: object, limit: int | None = None) -> str:
    """One value as a person must judge it: whole (what is trusted is answered once, for good: a payload after
    300 characters of flags must be seen), a run of blanks counted (padding cannot push a payload out of
    sight), control characters visible; a name cut at `limit` is marked with `…` and the full length."""
    raw = str(text)
    counted = _BLANKS.sub(lambda m: f"⟨{len(m.group())} blanks⟩", raw)
    # One odd blank spelled out too: `Bash(cat<NBSP>/etc/passwd)` is not the harmless rule it would look like.
    shown = _safe(_ODD_BLANK.sub(lambda m: f"⟨U+{ord(m.group()):04X}⟩", counted))
    if limit is not None and len(shown) > limit:
        return shown[:limit] + f"… ({len(raw)} characters in all)"
    return shown


def _argv(words: list[str]) -> str:
    """A command line, each word quoted when it holds a blank or a quote, so word bounds stay visible."""
    return " ".join(json.dumps(w, ensure_ascii=False) if not w or any(c.isspace() or c in "\"'" for c in w) else w
                    for w in words)


def _describe_servers(data: dict) -> list[str]:
    """Each server of a `.mcp.json` as it would run: read with the same parse that starts it (tools/mcp_config),
    so an entry with both `url` and `command` shows what runs; every environment value, header and `${VAR}`."""
    from evo_agent.tools.mcp_config import McpConfigError, parse_server, variables_of

    servers = data.get("mcpServers")
    if not isinstance(servers, dict):
        servers = {}
    lines = [f"    MCP servers: {len(servers)}"]
    for name, spec in servers.items():
        try:
            config = parse_server(str(name), spec, "project", ".mcp.json")
        except McpConfigError as exc:
            lines.append(f"      {_field(name, 80)}: never started ({_field(exc)})")
            continue
        if config.transport == "stdio":
            lines.append(f"      {_field(name, 80)}: {_field(_argv([config.command, *config.args]))}")
            pairs, label, sep = config.env, "env", "="
            if config.cwd:
                lines.append(f"        in the directory: {_field(config.cwd)}")
        else:
            lines.append(f"      {_field(name, 80)}: {_field(config.url)}")
            pairs, label, sep = config.headers, "header", ": "
        lines += [f"        {label}: {_field(k, 80)}{sep}{_field(v)}" for k, v in pairs]
        names = variables_of(config)
        if names:
            lines.append("        reads your environment variables: " + _field(", ".join(names)))
        if config.trust_read_only:
            lines.append("        runs the tools it marks read-only unasked (trustReadOnlyHint)")
    return lines


def question(status: WorkspaceTrust) -> str:
    """The text shown before the app or the REPL starts in a project that brings something not yet answered for."""
    head = ("What this project brings changed since you last answered (or it moved, or was cloned again)."
            if status.changed else "This project brings settings that would give it authority over evo-agent:")
    lines = [head]
    for b in status.brought:
        lines += describe(b, status.project)
    lines.append("A repository you cloned is someone else's words: trust it only if you trust where it came from.")
    choose = ", or c to choose the MCP servers one by one" if _project_servers(status) else ""
    return "\n".join(lines) + f"\nObey these in this project? [y/N{choose}] "


def _project_servers(status: WorkspaceTrust) -> list[str]:
    """The names of the `.mcp.json` servers that would start once trusted (the entries that parse)."""
    from evo_agent.tools.mcp_config import McpConfigError, parse_server

    for b in status.brought:
        if not b.path.endswith(".mcp.json") or b.unsafe:
            continue
        try:
            data = json.loads(b.data)
        except (ValueError, UnicodeDecodeError, RecursionError):
            return []
        servers = data.get("mcpServers") if isinstance(data, dict) else None
        names = []
        for name, spec in (servers if isinstance(servers, dict) else {}).items():
            try:
                names.append(parse_server(str(name), spec, "project").name)
            except McpConfigError:
                continue
        return names
    return []


_SETTINGS_REL = AUTHORITY_FILES[0]  # .evo-agent/settings.json


def _settings_brought(status: WorkspaceTrust) -> bool:
    """The project brings a settings file that a yes would obey (not a link, not another's)."""
    return any(b.path == _SETTINGS_REL and not b.unsafe for b in status.brought)


def _choose_servers(status: WorkspaceTrust, ask: Callable[[str], str | None]) -> list[str] | None:
    """The servers the user approves one by one (the rest stay off); None when input ends (a no)."""
    chosen = []
    for name in _project_servers(status):
        answer = ask(f"Start the MCP server {_field(name, 80)} (shown above)? [y/N] ")
        if answer is None:
            return None
        if answer.strip().lower() in ("y", "yes"):
            chosen.append(name)
    return chosen


def settle(status: WorkspaceTrust, *, interactive: bool, ask: Callable[[str], str | None],
           say: Callable[[str], None]) -> WorkspaceTrust | None:
    """What the project brings that applies to this run: ask once when interactive, else say it is ignored.

    The answer is `status` itself, trusted (its bytes are what this run obeys: the files as the question
    showed them, never as a pull made them while it waited), or None. An answer (y or n) is remembered;
    end of input (or Ctrl+C) is a no for this run only.
    """
    if status.trusted or not status.brought:
        return status if status.trusted else None
    if status.answer == "declined" or not interactive:
        say(ignored_line(status))
        return None
    try:
        answer = ask(question(status))
    except KeyboardInterrupt:
        answer = None
    chosen = None
    obey_settings = True
    if answer is not None and answer.strip().lower() in ("c", "choose") and _project_servers(status):
        try:
            chosen = _choose_servers(status, ask)
            if chosen is not None and _settings_brought(status):  # "c" answers for servers, not for the rules
                said = ask(f"Obey {_SETTINGS_REL} (shown above: its rules, mode and sandbox)? [y/N] ")
                chosen = None if said is None else chosen
                obey_settings = said is not None and said.strip().lower() in ("y", "yes")
        except KeyboardInterrupt:
            chosen = None
        answer = None if chosen is None else "y" if chosen or obey_settings else "n"
    if answer is None:
        say(ignored_line(status))
        return None
    yes = answer.strip().lower() in ("y", "yes")
    try:
        remember_trust(status, yes, servers=chosen, settings=obey_settings)
    except OSError as exc:
        say(f"evo-agent: cannot remember the answer in {_safe(user_record_path(status.project))}: "
            f"{exc.strerror or exc}; " + ("nothing of it is obeyed in this run" if chosen is not None
                                          else "it holds for this run only"))
        if chosen is not None:  # the answer could not be kept: nothing of it is obeyed in this run
            return None
    if not yes:
        say(f"evo-agent: ignoring {_files(status)} in this project (evo-agent trust changes that)")
        return None
    from evo_agent.session import plain_replace

    return plain_replace(status, answer="trusted", earlier=None,
                         servers=None if chosen is None else tuple(chosen), settings=obey_settings)


# ---------------------------------------------------------------- evo-agent trust


def run_trust(args: argparse.Namespace, project_dir: Path, out: TextIO | None = None) -> int:
    """`evo-agent trust [--revoke | --status]` for `project_dir`."""
    try:
        return _run_trust(args, project_dir, out or sys.stdout)
    except BrokenPipeError:  # `evo-agent trust --status | head`: the reader went away; say nothing more
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return EXIT_BROKEN_PIPE


def _run_trust(args: argparse.Namespace, project_dir: Path, out: TextIO) -> int:
    status = workspace_trust(project_dir)
    where = _safe(status.project)
    try:
        if args.revoke:
            if revoke_trust(status.project):
                out.write(f"No longer trusted: {where}. Its settings are ignored until you trust it again "
                          "(your own \"always\" rules stay).\n")
            else:
                out.write(f"{where} was not trusted; nothing to revoke.\n")
            return EXIT_OK
        if args.status:
            _status(status, out)
            return EXIT_OK
        remember_trust(status, True)
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise CommandError(f"cannot update {user_record_path(status.project)}: {exc.strerror or exc}") from None
    if not status.brought:
        out.write(f"Trusted {where}. It brings nothing that grants authority yet; if it does later, you are asked.\n")
        return EXIT_OK
    out.write(f"Trusted {where}; from now on evo-agent obeys:\n")
    for b in status.brought:
        out.write("\n".join(describe(b, status.project)) + "\n")
    out.write("A change to these files asks again. Revoke with: evo-agent trust --revoke\n")
    return EXIT_OK


def _status(status: WorkspaceTrust, out: TextIO) -> None:
    state = ("trusted" if status.trusted else "declined (its settings are ignored)" if status.answer == "declined"
             else "changed since you answered: not trusted until you answer again" if status.changed
             else "not trusted")
    out.write(f"Project: {_safe(status.project)}\nTrust: {state}\n")
    if status.trusted and status.servers is not None:
        chosen = ", ".join(_field(n, 80) for n in status.servers) or "none"
        out.write(f"MCP servers of .mcp.json you chose to start: {chosen} (evo-agent trust starts them all)\n")
    if status.trusted and not status.settings:
        out.write(f"{_SETTINGS_REL}: not obeyed, as you chose (evo-agent trust obeys it)\n")
    if status.brought:
        out.write("It brings:\n")
        for b in status.brought:
            out.write("\n".join(describe(b, status.project)) + "\n")
    else:
        out.write("It brings nothing that grants authority.\n")
    rules = user_rules(status.project)
    out.write(f"Your own rules here (\"always in this project\"): {', '.join(_safe(r) for r in rules) or 'none'}\n")
    out.write(f"Kept in: {_safe(user_record_path(status.project))}\n")
