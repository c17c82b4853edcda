"""The slash commands, each written once: the table of names, arguments and help, and what each does.

Slash commands are handled by the front end and never reach the model (SPEC §5). Each is a function
`(screen, agent, arg)` against the `Screen` interface (ui/screen.py) that both front ends implement
(the app: ui/app_screen.py; the line REPL: cli/repl.py), as aider writes each `cmd_*` once against
its small IO interface. Adding a command means a function and a row here, and nothing else.

`--help` prints this table (cli/help_text.py), so this module imports nothing heavy at the top: the
agent's modules are imported inside the commands that use them.
"""

from __future__ import annotations

import re
from collections import namedtuple
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import threading

    from .bridge import AgentLike
    from .screen import Screen

__all__ = ["SlashCommand", "COMMANDS", "ALIASES", "complete", "help_text", "is_command", "lookup", "run_command",
           "runs_while_busy"]


# A named tuple of collections, not a dataclass (which loads inspect) nor typing's: `--help` prints this table.
# `run(screen, agent, arg)` does it; `while_busy`: the app runs it at once while a turn runs (else it is queued).
SlashCommand = namedtuple("SlashCommand", ("name", "args", "help", "run", "while_busy"))


def cmd_resume(screen: Screen, agent: AgentLike, arg: str) -> None:
    screen.resume(arg)  # the front end's one resume path (with its picker when no session is named)


def cmd_clear(screen: Screen, agent: AgentLike, arg: str) -> None:
    from evo_agent.agent.callbacks import started_line

    agent.clear()
    line, command = started_line(agent)
    if command is None:
        screen.notice(line)
    else:
        screen.notice_command(line, command)


def cmd_compact(screen: Screen, agent: AgentLike, arg: str) -> None:
    def work(cancel: threading.Event) -> None:
        result = agent.compact(arg or None, cancel)
        describe = getattr(result, "describe", None)
        screen.notice(describe() if callable(describe) else "conversation compacted")

    screen.run_work("compacting", work, interruptible=True, failure="cannot compact")


def cmd_rename(screen: Screen, agent: AgentLike, arg: str) -> None:
    if not arg:
        current = agent.name
        screen.notice(f"This session is named {current!r}." if current
                      else "This session has no name. Usage: /rename NAME")
        return
    name = agent.rename(arg)  # ValueError for a name that is empty once cleaned: one line (run_command)
    import shlex

    screen.notice_command(f"Session {agent.session_id} is now named {name!r}; resume it with:",
                          f"evo-agent --resume {shlex.quote(name)}")


def cmd_rewind(screen: Screen, agent: AgentLike, arg: str) -> None:
    """`/rewind`: this session's prompts, numbered (the REPL then reads one); `/rewind N`: a new session from
    before prompt N, then the Session Plan and the files put back if the user says so (ui/rewind_flow.py)."""
    from evo_agent.session import prompt_turns

    from .rewind_flow import rewind_and_restore, turn_list

    try:
        turns = prompt_turns(agent.recorder.path)
    except FileNotFoundError:  # a new session's transcript is written with its first prompt ([Errno 2] was shown)
        turns = []
    if not turns:
        screen.notice("Nothing to rewind: no prompt in this session yet.")
        return
    if not arg:
        screen.notice(turn_list(turns))
        answer = screen.ask_line(f"Turn [1-{len(turns)}, Enter to cancel]")
        if answer is None:  # a screen without typed answers: the list says /rewind N
            return
        arg = answer.strip()
        if not arg:
            screen.notice("Rewind cancelled.")
            return
    if not arg.isdigit() or not 1 <= int(arg) <= len(turns):
        screen.error(f"no turn {arg}: choose 1 to {len(turns)}")
        return
    number, source = int(arg), agent.session_id
    prompt = turns[number - 1].text
    screen.run_work("rewinding", lambda cancel: rewind_and_restore(screen, agent, number, source, prompt),
                    interruptible=False)


def cmd_init(screen: Screen, agent: AgentLike, arg: str) -> None:
    """Ask the model to write the project's AGENTS.md: an ordinary turn, its write approved as any other."""
    from evo_agent.agent.instructions import init_prompt

    screen.send_prompt(init_prompt(agent.project_dir), shown="/init")


def cmd_plan(screen: Screen, agent: AgentLike, arg: str) -> None:
    screen.notice(agent.plan_text())


def cmd_memory(screen: Screen, agent: AgentLike, arg: str) -> None:
    """`/memory`: its last line, a command, is shown whole on a line of its own (as /rename's hint): wrapped between
    its words at 80 columns, it copied as two."""
    from evo_agent.agent.memory_context import MEMORY_EDIT_COMMAND

    text = agent.memory_text(arg)
    if not arg and text.endswith("\n" + MEMORY_EDIT_COMMAND):
        screen.notice_command(text[: -len(MEMORY_EDIT_COMMAND) - 1], MEMORY_EDIT_COMMAND)
    else:
        screen.notice(text)


def cmd_remember(screen: Screen, agent: AgentLike, arg: str) -> None:
    """`/remember`: the saved file's path on a line of its own, whole (a long one was cut, its `).` left alone)."""
    from evo_agent.agent.memory_context import remember_line

    line, saved = remember_line(agent, arg)
    head, _, path = line.partition("\n")
    if saved and path:
        screen.notice_command(head, path)
    else:
        (screen.notice if saved else screen.error)(line)


def cmd_cost(screen: Screen, agent: AgentLike, arg: str) -> None:
    screen.notice(agent.cost_text())


def cmd_status(screen: Screen, agent: AgentLike, arg: str) -> None:
    """`/status`, as Claude Code's and Codex's: what the status line says, each fact whole on its own line (at 80
    columns the status line drops the session's id, and the welcome line cuts the project's path)."""
    screen.notice(status_text(agent))


def status_text(agent: AgentLike) -> str:
    """The session, model, project, permission mode, context and plan of `agent`, one a line."""
    name = agent.name
    lines = [f"Session: {agent.session_id}" + (f" ({name!r})" if name else ""),
             f"Model: {agent.model} ({agent.provider.name})",
             f"Project: {agent.project_dir}"]
    mode = [f"Permission mode: {agent.permission_mode}"]
    if agent.sandbox is not None:
        mode.append("bash sandboxed (bubblewrap)")
    elif agent.read_only_backstop is False:
        mode.append("unsandboxed (commands run unasked without bubblewrap)")
    lines.append(" · ".join(mode))
    threshold = agent.compact_threshold
    if threshold:
        lines.append(f"Context: {100 * agent.context_chars // threshold}% of the compaction threshold "
                     f"({agent.context_chars:,} of {threshold:,} characters)")
    lines.append(f"Tokens: {agent.total_tokens:,} in this session (/cost: by kind, with the dollars)")
    progress = agent.plan_progress()
    if progress:
        lines.append(f"Session Plan: {progress[0]} of {progress[1]} tasks done (/plan shows it)")
    return "\n".join(lines)


def cmd_permissions(screen: Screen, agent: AgentLike, arg: str) -> None:
    screen.notice(agent.permissions_text())


def cmd_mcp(screen: Screen, agent: AgentLike, arg: str) -> None:
    """`/mcp`: each server's state; `/mcp reconnect NAME` starts it again (waits at most its start timeout)."""
    verb, _, name = arg.partition(" ")
    name = name.strip()
    if verb == "reconnect" and name:
        screen.notice(f"reconnecting {name}…")
        screen.run_work(f"reconnecting {name}", lambda cancel: screen.notice(agent.mcp_reconnect(name)),
                        interruptible=False)
    elif arg:
        screen.error("usage: /mcp [reconnect NAME]")
    else:
        screen.notice(agent.mcp_text())


def cmd_help(screen: Screen, agent: AgentLike, arg: str) -> None:
    screen.notice(help_text(screen.keys_help))


def cmd_exit(screen: Screen, agent: AgentLike, arg: str) -> None:
    screen.exit(0)


COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand("/resume", "[ID|NAME]", "resume a session (an id prefix or name is enough)", cmd_resume, False),
    SlashCommand("/clear", "", "start a new session (this one stays resumable)", cmd_clear, False),
    SlashCommand("/compact", "[FOCUS]", "summarise the conversation now, optionally focused", cmd_compact, False),
    SlashCommand("/rename", "NAME", "name this session (--resume NAME finds it)", cmd_rename, False),
    SlashCommand("/rewind", "[N]", "go back to before prompt N (a new session)", cmd_rewind, False),
    SlashCommand("/init", "", "ask the model to survey the project and write its AGENTS.md", cmd_init, False),
    SlashCommand("/plan", "", "the Session Plan: goal, tasks, status (Ctrl+T in the app)", cmd_plan, False),
    SlashCommand("/memory", "[NAME]", "Auto Memory: both indexes, or one memory file", cmd_memory, True),
    SlashCommand("/remember", "TEXT", "save TEXT to this project's memory (--user TEXT: to yours)",
                 cmd_remember, False),
    SlashCommand("/cost", "", "tokens used in this session", cmd_cost, True),
    SlashCommand("/status", "", "the session, model, project, mode and context in use", cmd_status, True),
    SlashCommand("/permissions", "", "the permission mode and the allow rules in force", cmd_permissions, True),
    SlashCommand("/mcp", "[reconnect]", "the MCP servers and tools; /mcp reconnect NAME restarts one",
                 cmd_mcp, False),
    SlashCommand("/help", "", "this help", cmd_help, True),
    SlashCommand("/exit", "", "leave (Ctrl+D works too)", cmd_exit, True),
)
ALIASES = {"/quit": "/exit"}


_COMMAND_WORD = re.compile(r"/[A-Za-z][A-Za-z0-9_-]*")


def is_command(text: str) -> bool:
    """Whether a submitted line is meant as a slash command: a `/word` at its very start.

    A line that starts with a space, or whose first word holds a second `/` (a path dragged into the
    terminal: `/home/me/err.log what is this?`), is a prompt for the model; so is a text of several lines
    (a paste of notes that begins with `/rename`), as Claude Code sends it: no command's argument spans lines.
    """
    words = text.split(None, 1)
    return (bool(words) and not text[:1].isspace() and "\n" not in text.strip()
            and _COMMAND_WORD.fullmatch(words[0]) is not None)


def lookup(name: str) -> str | None:
    """The canonical name of a typed command (`/QUIT` -> `/exit`), or None when there is no such command."""
    command = _find(name)
    return command.name if command is not None else None


def _find(name: str) -> SlashCommand | None:
    name = name.lower()
    name = ALIASES.get(name, name)
    return next((c for c in COMMANDS if c.name == name), None)


def runs_while_busy(line: str) -> bool:
    """Whether the app runs this command line at once while a turn runs (the rest wait in the queue)."""
    words = line.split(None, 1)
    command = _find(words[0]) if words else None
    return command is not None and command.while_busy


def run_command(line: str, screen: Screen, agent: AgentLike) -> None:
    """Do the slash command `line` (`/name args`) on `screen`. A failure is one line on the screen, never a
    traceback (`screen.failed`); KeyboardInterrupt and the REPL's `Terminated` pass (they mean: leave)."""
    name, _, arg = line.strip().partition(" ")
    command = _find(name)
    if command is None:
        screen.error(f"unknown command {name} (try /help)")
        return
    try:
        command.run(screen, agent, arg.strip())
    except Exception as exc:  # noqa: BLE001 - one line, and the session goes on
        screen.failed(" ".join(str(exc).split()) or type(exc).__name__)


def complete(prefix: str) -> list[SlashCommand]:
    """The commands `prefix` (a `/word` without a space yet) could become."""
    if not prefix.startswith("/") or any(ch.isspace() for ch in prefix):
        return []
    return [c for c in COMMANDS if c.name.startswith(prefix.lower())]


def help_text(keys: str) -> str:
    """The /help text: the commands, then the front end's own `keys` paragraph."""
    rows = [f"  {(c.name + ' ' + c.args).strip():<17} {c.help}" for c in COMMANDS]
    return "Commands:\n" + "\n".join(rows) + ("\n" + keys if keys else "")
