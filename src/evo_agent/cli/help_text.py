"""The texts `evo-agent --help` ends with and `/help` shows: slash commands, environment variables, exit codes.

One list each, so the top-level help, the REPL's /help and the README say the same.
"""

from __future__ import annotations

from .errors import EXIT_CODES

OUTPUT_FORMATS = ("text", "json", "stream-json")  # print mode's --output-format (print_output.py writes them)

SLASH_COMMANDS: tuple[tuple[str, str], ...] = (
    ("/resume ID|NAME", "switch to a copy of a session (id, unique prefix or name)"),
    ("/resume", "choose a session from a list"),
    ("/clear", "start a new, empty session (this one stays resumable)"),
    ("/compact [FOCUS]", "summarise the conversation now and go on from the summary"),
    ("/rename NAME", "name this session (lists show it; --resume NAME finds it)"),
    ("/rewind", "go back to before one of your prompts (a new session)"),
    ("/cost", "tokens and dollars, this session and the ones it continues"),
    ("/help", "the commands"),
    ("/exit", "leave (Ctrl+D works too)"),
)

ENVIRONMENT: tuple[tuple[str, str], ...] = (
    ("ANTHROPIC_API_KEY", "use anthropic (ANTHROPIC_BASE_URL: its URL)"),
    ("OPENAI_API_KEY", "else the openai one (OPENAI_BASE_URL: e.g. Ollama's)"),
    ("EVO_AGENT_PROVIDER", "anthropic, openai or demo (like --provider)"),
    ("EVO_AGENT_MODEL", "the model (like --model)"),
    ("EVO_AGENT_COMPACT_CHARS", "auto-compact past this size in characters (50000)"),
    ("EVO_AGENT_REDACT", "0: do not mask secrets in transcripts (default 1)"),
    ("NO_COLOR", "no colours in `sessions show`"),
)


def _rows(rows: tuple[tuple[str, str], ...] | list[tuple[str, str]], width: int) -> str:
    return "\n".join(f"  {name:<{width}} {text}" for name, text in rows)


def slash_help() -> str:
    """/help in the REPL."""
    return ("Commands:\n" + _rows(SLASH_COMMANDS, 17)
            + "\nCtrl+C interrupts the running turn; Ctrl+C at the prompt (or twice) leaves.")


EPILOG = "\n\n".join((
    "slash commands (in the session; never sent to the model):\n" + _rows(SLASH_COMMANDS, 17),
    "environment variables:\n" + _rows(ENVIRONMENT, 24),
    "exit codes:\n" + _rows([(str(code), text) for code, text in EXIT_CODES], 4),
    "Every way out of a session ends with `Resume this session with: evo-agent\n"
    "--resume ID` (on stderr when stdout is not a terminal).",
))
