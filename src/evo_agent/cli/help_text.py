"""The texts `evo-agent --help` ends with and `/help` shows: slash commands, environment variables, exit codes.

The slash commands come from the one table the app and the REPL use (evo_agent.ui.commands).
"""

from __future__ import annotations

from .errors import EXIT_CODES

OUTPUT_FORMATS = ("text", "json", "stream-json")  # print mode's --output-format (print_output.py writes them)
PROJECT_DIR_HELP = ("the project whose sessions to use (default: the nearest directory above holding .evo-agent/, "
                    "else the git worktree root, else the current directory)")


def _slash_commands() -> list[tuple[str, str]]:
    """The one table of slash commands the app and the REPL use (evo_agent.ui.commands)."""
    from evo_agent.ui.commands import COMMANDS

    return [((c.name + " " + c.args).strip(), c.help) for c in COMMANDS]


ENVIRONMENT: tuple[tuple[str, str], ...] = (
    ("ANTHROPIC_API_KEY", "use anthropic (ANTHROPIC_BASE_URL: its URL)"),
    ("OPENAI_API_KEY", "else the openai one (OPENAI_BASE_URL: e.g. Ollama's)"),
    ("EVO_AGENT_PROVIDER", "anthropic, openai or demo (like --provider)"),
    ("EVO_AGENT_MODEL", "the model (like --model)"),
    ("EVO_AGENT_COMPACT_CHARS", "auto-compact past this size in characters (50000)"),
    ("EVO_AGENT_REDACT", "0: do not mask secrets in transcripts (default 1)"),
    ("EVO_AGENT_PERMISSION_MODE", "ask, accept-edits, read-only or bypass"),
    ("EVO_AGENT_MEMORY", "off: no Auto Memory (evo-agent memory list shows it)"),
    ("EVO_AGENT_MCP_TIMEOUT", "seconds an MCP server has to start (20)"),
    ("EVO_AGENT_MCP_TOOL_TIMEOUT", "seconds one MCP tool call may take (120)"),
    ("EVO_AGENT_API_TIMEOUT", "seconds the model API may stay silent (600)"),
    ("EVO_AGENT_API_RETRIES", "tries after a failed one: overloaded, dropped (4)"),
    ("NO_COLOR", "no colours in `sessions show`"),
)


def _rows(rows: tuple[tuple[str, str], ...] | list[tuple[str, str]], width: int) -> str:
    return "\n".join(f"  {name:<{width}} {text}" for name, text in rows)


def epilog() -> str:
    """The end of `evo-agent --help`."""
    return "\n\n".join((
        "slash commands (in the session; never sent to the model):\n" + _rows(_slash_commands(), 17),
        "environment variables:\n" + _rows(ENVIRONMENT, 26),
        "exit codes:\n" + _rows([(str(code), text) for code, text in EXIT_CODES], 4),
        "Every way out of a session ends with `Resume this session with: evo-agent\n"
        "--resume ID` (on stderr when stdout is not a terminal).",
    ))
