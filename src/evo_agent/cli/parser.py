"""The command line's parser (argparse), built only when a launch needs it.

A plain `evo-agent -p PROMPT` is read without it (cli/main.py's `plain_print_arguments`, checked
against this parser by tests/cli/test_print_fast_path.py): argparse, the `shutil`, `gettext` and
`locale` it loads and the parser's construction cost ~10 ms before the first request (SPEC §8).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import NoReturn

from evo_agent import __version__

from .errors import EXIT_OK, EXIT_USAGE
from .main import _PICK, PROVIDER_CHOICES

_EPILOG_WHEN_SHOWN = "\0epilog"  # the top-level epilog, built only when help is printed (it loads ui.commands)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"evo-agent: {message} (see {self.prog} --help)\n")

    def format_help(self) -> str:
        if self.epilog == _EPILOG_WHEN_SHOWN:
            from .help_text import epilog

            self.epilog = epilog()
        return super().format_help()


class _ProbeError(Exception):
    """The agent-options probe could not read the arguments (see parse_arguments)."""


class _Probe(_Parser):
    def error(self, message: str) -> NoReturn:
        raise _ProbeError(message)


def _turn_number(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a user turn number (1, 2, ...), not {text!r}")
    return int(text)


USAGE = """evo-agent [options] [PROMPT]
       evo-agent -p [PROMPT] [--output-format text|json|stream-json] [options]
       evo-agent sessions {list,show,search,rename,import,export,fsck,rm,prune,push,adopt} ...
       evo-agent trust [--revoke | --status]
       evo-agent plan [list | show [ID] | done ID [--force]]
       evo-agent memory [list | show NAME | rm NAME | edit NAME]
       evo-agent sync {migrate,index} ...  (the team store's admin)
       evo-agent mcp [list | get NAME | add NAME -- COMMAND [ARGS...] | remove NAME]"""

DESCRIPTION = """\
A terminal coding agent whose sessions survive crashes, kills and restarts.

PROMPT starts the interactive session with that prompt. With -p the prompt runs to
completion and the answer is printed; text piped into -p is appended to the prompt
(`cat err.log | evo-agent -p "explain"`)."""


def build_parser(*, sessions: bool = True) -> argparse.ArgumentParser:
    """The command line. `sessions=False`: the agent's options plus a positional PROMPT (see parse_arguments)."""
    from .help_text import OUTPUT_FORMATS, PROJECT_DIR_HELP

    parser = (_Parser if sessions else _Probe)(prog="evo-agent", usage=USAGE, description=DESCRIPTION,
                                               epilog=_EPILOG_WHEN_SHOWN, add_help=sessions,
                     formatter_class=argparse.RawDescriptionHelpFormatter,
                     allow_abbrev=sessions)  # the probe must not read `sessions list --all` as --allowed-tools
    parser.add_argument("-p", "--print", dest="print_prompt", metavar="PROMPT", nargs="?", const="",
                        help="run one query to completion and print the final answer (piped stdin is appended)")
    parser.add_argument("--output-format", choices=OUTPUT_FORMATS, default=None,
                        help="print mode's output: text (default), json (one result object) or stream-json "
                             "(one JSON event per line)")
    parser.add_argument("--plain", action="store_true", help="use the line REPL instead of the TUI")
    parser.add_argument("--resume", nargs="?", const=_PICK, default=None, metavar="ID",
                        help="resume a session (a unique id prefix is enough); without ID choose from a list")
    parser.add_argument("--at", type=_turn_number, metavar="N",
                        help="with --resume/-c: start from just before user turn N (a rewind; the old session stays)")
    parser.add_argument("--restore-files", action="store_true",
                        help="with --at: also put back the files evo-agent's file tools changed since turn N")
    parser.add_argument("-c", "--continue", dest="continue_", action="store_true",
                        help="resume the most recently updated session of this project")
    parser.add_argument("-n", "--name", metavar="NAME",
                        help="name the session (shown in lists; --resume NAME finds it); see also /rename")
    parser.add_argument("--model", help="model name (env EVO_AGENT_MODEL)")
    parser.add_argument("--provider", help=f"{PROVIDER_CHOICES} (env EVO_AGENT_PROVIDER)")
    parser.add_argument("--project-dir", metavar="DIR", help=PROJECT_DIR_HELP)
    parser.add_argument("--permission-mode", metavar="MODE",
                        help="ask (default), accept-edits, read-only or bypass (env EVO_AGENT_PERMISSION_MODE)")
    parser.add_argument("--allowed-tools", metavar="RULES",
                        help='allow these calls for this run, e.g. "Bash(npm test),Bash(git commit:*),Edit(src/**)"')
    parser.add_argument("--sandbox", action="store_true",
                        help="run bash in a bubblewrap sandbox: the project writable (not .git/, .evo-agent/), "
                             "the rest read-only, no network")
    parser.add_argument("--sandbox-network", action="store_true", help="with --sandbox: allow network access")
    parser.add_argument("--version", action="version", version=f"evo-agent {__version__}")

    if sessions:
        from .sessions.command import add_sessions_parser
        sub = parser.add_subparsers(dest="command", metavar="COMMAND")
        add_sessions_parser(sub)
        _add_trust_parser(sub)
    else:
        parser.add_argument("-h", "--help", action="store_true")
        parser.add_argument("prompt", nargs="?", default=None)
    return parser


def _add_trust_parser(sub: argparse._SubParsersAction[_Parser]) -> argparse.ArgumentParser:
    parser = sub.add_parser(
        "trust", prog="evo-agent trust",
        help="trust this project: obey its .evo-agent/settings.json and .mcp.json (see --status)",
        description="Trust the project (obey what it brings: .evo-agent/settings.json, .mcp.json) as it is now. "
                    "A change to those files, a move or a new clone asks again.")
    from .help_text import PROJECT_DIR_HELP
    from .sessions.command import SUBPARSERS

    parser.add_argument("--project-dir", metavar="DIR", default=argparse.SUPPRESS, help=PROJECT_DIR_HELP)
    SUBPARSERS["trust"] = parser
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--revoke", action="store_true", help="stop trusting this project")
    group.add_argument("--status", action="store_true", help="show what this project brings and whether it is trusted")
    return parser



def parse_arguments(argv: Sequence[str]) -> argparse.Namespace:
    """The arguments, whether they start a session (`evo-agent [PROMPT]`) or name a command (`evo-agent sessions …`).

    argparse cannot have an optional positional PROMPT beside subcommands, so the agent's parser (with
    PROMPT) reads first; when its PROMPT is `sessions` the full parser reads again. Unknown arguments are
    blamed on the (sub)command they were given to, whose --help helps. The full parser (every `sessions`
    subcommand) is built only when it is needed: a plain run reads its arguments with the probe alone.
    """
    argv = list(argv)
    extra: list[str]
    if argv[:1] in (["sessions"], ["trust"]):  # a command named first: the probe could only say so (start-up)
        args, extra = argparse.Namespace(prompt=argv[0]), []
    else:
        probe = build_parser(sessions=False)
        try:
            args, extra = probe.parse_known_args(argv)
        except _ProbeError as exc:
            if "sessions" not in argv and "trust" not in argv:
                build_parser().error(str(exc))
            args, extra = argparse.Namespace(prompt="sessions"), []  # a subcommand's option the probe misread
    if args.prompt not in ("sessions", "trust"):
        if args.help:
            build_parser().print_help()
            raise SystemExit(EXIT_OK)
        if extra:
            build_parser().error(f"unrecognized arguments: {' '.join(extra)}")
        args.command = None
        return args
    from .sessions.command import SUBPARSERS

    full = build_parser()
    args, extra = full.parse_known_args(argv)
    if extra and isinstance(getattr(args, "sources", None), list) and not any(e.startswith("-") for e in extra):
        # `sessions import AGENT --dry-run ID…`: argparse gives the SOURCE… list (nargs="*") its empty match
        # beside AGENT, before the option, and calls the IDs after it unrecognized. They are sources.
        args.sources += extra
        extra = []
    if extra:
        name = " ".join(w for w in (args.command, getattr(args, "sessions_command", None)) if w)
        target = SUBPARSERS.get(name) or SUBPARSERS.get(args.command or "") or full
        target.error(f"unrecognized arguments: {' '.join(extra)}")
    return args
