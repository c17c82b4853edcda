"""The slash commands: one table of names, arguments and help that the app and the REPL both use.

Slash commands are handled by the front end and never reach the model (SPEC §5). Adding one means
a row here and a handler in each front end (`Repl.command`, `AgentApp.handle_command`).
"""

from __future__ import annotations

import re
from collections import namedtuple

__all__ = ["SlashCommand", "COMMANDS", "ALIASES", "complete", "help_text", "is_command", "lookup"]


# A named tuple of collections, not a dataclass (which loads inspect) nor typing's: `--help` prints this table.
SlashCommand = namedtuple("SlashCommand", ("name", "args", "help"))


COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand("/resume", "[ID|NAME]", "resume a session (an id prefix or name is enough)"),
    SlashCommand("/clear", "", "start a new session (this one stays resumable)"),
    SlashCommand("/compact", "[FOCUS]", "summarise the conversation now, optionally focused"),
    SlashCommand("/rename", "NAME", "name this session (--resume NAME finds it)"),
    SlashCommand("/rewind", "[N]", "go back to before prompt N (a new session)"),
    SlashCommand("/init", "", "ask the model to survey the project and write its AGENTS.md"),
    SlashCommand("/plan", "", "the Session Plan: goal, tasks and their status (Ctrl+T in the app)"),
    SlashCommand("/memory", "[NAME]", "Auto Memory: both indexes, or one memory file"),
    SlashCommand("/remember", "TEXT", "save TEXT to this project's memory (/remember --user TEXT: to yours)"),
    SlashCommand("/cost", "", "tokens used in this session"),
    SlashCommand("/permissions", "", "the permission mode and the allow rules in force"),
    SlashCommand("/mcp", "[reconnect]", "the MCP servers and their tools; /mcp reconnect NAME restarts one"),
    SlashCommand("/help", "", "this help"),
    SlashCommand("/exit", "", "leave (Ctrl+D works too)"),
)
ALIASES = {"/quit": "/exit"}


_COMMAND_WORD = re.compile(r"/[A-Za-z][A-Za-z0-9_-]*")


def is_command(text: str) -> bool:
    """Whether a submitted line is meant as a slash command: a `/word` at its very start.

    A line that starts with a space, or whose first word holds a second `/` (a path dragged into the
    terminal: `/home/me/err.log what is this?`), is a prompt for the model.
    """
    words = text.split(None, 1)
    return bool(words) and not text[:1].isspace() and _COMMAND_WORD.fullmatch(words[0]) is not None


def lookup(name: str) -> str | None:
    """The canonical name of a typed command (`/QUIT` -> `/exit`), or None when there is no such command."""
    name = name.lower()
    name = ALIASES.get(name, name)
    return name if any(c.name == name for c in COMMANDS) else None


def complete(prefix: str) -> list[SlashCommand]:
    """The commands `prefix` (a `/word` without a space yet) could become."""
    if not prefix.startswith("/") or any(ch.isspace() for ch in prefix):
        return []
    return [c for c in COMMANDS if c.name.startswith(prefix.lower())]


def help_text(keys: str) -> str:
    """The /help text: the commands, then the front end's own `keys` paragraph."""
    rows = [f"  {(c.name + ' ' + c.args).strip():<17} {c.help}" for c in COMMANDS]
    return "Commands:\n" + "\n".join(rows) + ("\n" + keys if keys else "")
