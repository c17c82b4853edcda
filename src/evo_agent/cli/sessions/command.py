"""The `evo-agent sessions …` command line: its parser and its dispatch.

Every subcommand takes a full id or a unique prefix, checked against the id
shape before anything on disk is looked at, and fails with one line.
"""

from __future__ import annotations

import os
import sys

from ..errors import EXIT_BROKEN_PIPE, CommandError
from ..help_text import PROJECT_DIR_HELP

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: `--help` builds this parser
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from pathlib import Path
    from types import SimpleNamespace
    from typing import TextIO

    from evo_agent.session import SessionStore

# argparse is imported where a parser is built: `sessions list` in its plain forms is read without it
# (`list_arguments`). evo_agent.session and .common are imported where they are used: `evo-agent --help` builds
# this parser and should not pay for the session library (SPEC §8, < 150 ms).

SUBCOMMANDS = "list, show, search, rename, import, export, fsck, rm, prune, push or adopt"
SUBPARSERS: dict[str, argparse.ArgumentParser] = {}  # "sessions list" → its parser: usage errors name its --help


def _positive_int(text: str) -> int:
    import argparse

    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, not {text!r}")
    return value


def _duration(text: str) -> int:
    import argparse

    from .remove import parse_duration

    try:
        return parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


# Each subcommand's options: `(parser)`, called in the table's order when the parser is built.
def _list_arguments(listing: argparse.ArgumentParser) -> None:
    from .remote import add_remote_listing_options

    listing.add_argument("--json", action="store_true", help="machine-readable output")
    listing.add_argument("--all", action="store_true",
                         help="include the sessions the list hides: empty ones, resumes with nothing new said, "
                              "starts the API refused")
    listing.add_argument("--limit", type=_positive_int, metavar="N", help="at most N sessions")
    listing.add_argument("--wide", action="store_true",
                         help="every column (created, tokens, branch), however wide the terminal")
    listing.add_argument("--worktrees", action="store_true",
                         help="also list the sessions of the repository's other git worktrees")
    add_remote_listing_options(listing)


def _show_arguments(show: argparse.ArgumentParser) -> None:
    show.add_argument("id", metavar="ID")
    show.add_argument("--json", action="store_true", help="the records as JSON (main transcript and sidechains)")
    show.add_argument("--full", action="store_true", help="do not shorten long tool inputs, results and thinking")
    show.add_argument("--restored", action="store_true", help="also show the messages a resume copied in")


def _search_arguments(search: argparse.ArgumentParser) -> None:
    from .remote import add_remote_search_option

    search.add_argument("text", metavar="TEXT")
    search.add_argument("--regex", action="store_true", help="TEXT is a Python regular expression")
    search.add_argument("--json", action="store_true", help="machine-readable output")
    search.add_argument("--limit", type=_positive_int, default=20, metavar="N", help="stop after N hits (default 20)")
    add_remote_search_option(search)


def _rename_arguments(rename: argparse.ArgumentParser) -> None:
    rename.add_argument("id", metavar="ID")
    rename.add_argument("name", metavar="NAME")


def _import_arguments(importing: argparse.ArgumentParser) -> None:
    importing.add_argument("agent", choices=("claude-code", "codex"), metavar="AGENT", help="claude-code or codex")
    importing.add_argument("sources", metavar="SOURCE", nargs="*", help="a transcript path or a session id")
    importing.add_argument("--all", action="store_true", help="import every session of this project")
    importing.add_argument("--dry-run", action="store_true", help="say what would be imported, write nothing")


def _export_arguments(export: argparse.ArgumentParser) -> None:
    export.add_argument("id", metavar="ID")
    export.add_argument("--format", choices=("md", "html", "jsonl"),
                        help="default: from the -o file's suffix (.html, .jsonl, .md), else md")
    export.add_argument("-o", "--output", metavar="FILE", help="write to FILE (created 0600) instead of stdout")


def _fsck_arguments(fsck: argparse.ArgumentParser) -> None:
    fsck.add_argument("id", metavar="ID", nargs="?", help="check only this session (default: all)")
    fsck.add_argument("--repair", action="store_true", help="fix what is safe to fix")
    fsck.add_argument("--json", action="store_true", help="machine-readable output")
    fsck.add_argument("--secrets", action="store_true",
                      help="also report the secrets today's rules find in the transcripts (kind and count, never "
                           "the value; nothing is rewritten; the exit status stays about integrity)")


def _rm_arguments(rm: argparse.ArgumentParser) -> None:
    rm.add_argument("ids", metavar="ID", nargs="+")
    rm.add_argument("-y", "--yes", action="store_true", help="do not ask")


def _adopt_arguments(adopt: argparse.ArgumentParser) -> None:
    adopt.add_argument("id", metavar="ID")


def _prune_arguments(prune: argparse.ArgumentParser) -> None:
    prune.add_argument("--older-than", type=_duration, metavar="DURATION",
                       help="also delete sessions last updated longer ago than this, e.g. 30d, 12h, 2w "
                            "(units: s, m, h, d, w)")
    prune.add_argument("--dry-run", action="store_true", help="only list what would be deleted")
    prune.add_argument("-y", "--yes", action="store_true", help="do not ask (needed when stdin is not a terminal)")
    prune.add_argument("--remote", action="store_true", help="prune this project's sessions in the team store")


def add_sessions_parser(sub: argparse._SubParsersAction) -> None:
    """`sessions` and its subcommands (one parser per row of `COMMANDS`), added to the top-level parser's."""
    import argparse

    sessions = sub.add_parser("sessions", prog="evo-agent sessions",
                              help="list, show, export, check and delete the sessions of this project",
                              description="Look at and look after the sessions of this project. "
                                          "ID is a session id or a unique prefix of one.")
    sessions.add_argument("--project-dir", metavar="DIR", default=argparse.SUPPRESS, help=PROJECT_DIR_HELP)
    cmds = sessions.add_subparsers(dest="sessions_command", metavar="SUBCOMMAND")
    SUBPARSERS["sessions"] = sessions

    def add(name: str, help_: str) -> argparse.ArgumentParser:
        parser = cmds.add_parser(name, prog=f"evo-agent sessions {name}", help=help_, description=help_)
        parser.add_argument("--project-dir", metavar="DIR", default=argparse.SUPPRESS, help=PROJECT_DIR_HELP)
        SUBPARSERS[f"sessions {name}"] = parser
        return parser

    for command in COMMANDS:
        command.arguments(add(command.name, command.help))
    from .remote import add_remote_parsers

    add_remote_parsers(add)  # push: the team store's (remote.py), after the table's


def _check_ids(*texts: str | None) -> None:
    """Refuse anything not shaped like an id before a single path is built from any of them."""
    from evo_agent.session import InvalidSessionId, is_id_prefix

    for text in texts:
        if text is not None and not is_id_prefix(text):
            shown = text if len(text) <= 40 else text[:37] + "..."
            raise InvalidSessionId(f"invalid session id {shown!r}: expected <13 digits>_<8 hex>, "
                                   "e.g. 1780227556183_b525857d, or a prefix of one")


def _color() -> bool:
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"


def _ask(prompt: str) -> str | None:
    sys.stderr.write(prompt)
    sys.stderr.flush()
    line = sys.stdin.readline() if sys.stdin else ""
    if not sys.stdin or not sys.stdin.isatty():
        sys.stderr.write("\n")  # nothing echoed the answer: end the prompt's line
    return line.rstrip("\n") if line else None


def _stdin_is_terminal() -> bool:
    try:
        return bool(sys.stdin) and sys.stdin.isatty()
    except (ValueError, OSError):
        return False




_LIST_FLAGS = {"--json": "json", "--all": "all", "--wide": "wide", "--worktrees": "worktrees"}


def list_arguments(words: list[str]) -> SimpleNamespace | None:
    """What the parser makes of `sessions list WORDS`, read without argparse, when WORDS are plain enough.

    argparse (and the `shutil`, `gettext` and `locale` it loads) and cli/main.py are a tenth of listing
    10,000 sessions with `--limit 20` (docs/benchmarks.md). Only the exact spellings of `--json`, `--all`,
    `--wide`, `--worktrees` and `--limit N` (N written as argparse would accept it, without sign, spaces or
    a leading zero) are read here, repeated as argparse allows (the last `--limit` wins); anything else —
    an abbreviation, `--limit=5`, `--project-dir`, `--remote`, `-h`, a stray word — returns None, and the
    parser reads it as always. tests/cli/test_list_fast_path.py compares the two on every form.
    """
    from types import SimpleNamespace

    values: dict[str, object] = {"sessions_command": "list", "json": False, "all": False, "limit": None,
                                 "wide": False, "worktrees": False, "remote": False, "user": None, "branch": None}
    i = 0
    while i < len(words):
        word = words[i]
        if word in _LIST_FLAGS:
            values[_LIST_FLAGS[word]] = True
        elif word == "--limit" and i + 1 < len(words) and _plain_count(words[i + 1]):
            i += 1
            values["limit"] = int(words[i])
        else:
            return None
        i += 1
    return SimpleNamespace(command="sessions", **values)


def _plain_count(text: str) -> bool:
    """`text` is a whole number of at least 1 in plain ASCII digits (what `_positive_int` takes, narrowed)."""
    return 0 < len(text) <= 18 and text.isascii() and text.isdigit() and text[0] != "0"


def run_list(args: SimpleNamespace) -> int:
    """`sessions list` as cli/main.py's `_run` runs it once parsed: the same streams, project and failures."""
    from pathlib import Path

    from evo_agent.session import find_project_dir

    from ..errors import exit_code_of, failure_line

    for stream in (sys.stdin, sys.stdout, sys.stderr):  # as `_run`: bytes that are not UTF-8 become U+FFFD
        try:
            stream.reconfigure(errors="replace")  # type: ignore[union-attr]
        except (AttributeError, ValueError):
            pass
    try:
        return run_sessions(args, find_project_dir(Path.cwd()))  # type: ignore[arg-type]  # duck-typed Namespace
    except (Exception, KeyboardInterrupt) as exc:
        code = exit_code_of(exc)
        if code is None:
            raise
        print(failure_line(exc), file=sys.stderr)
        return code


def run_sessions(args: argparse.Namespace, project_dir: Path) -> int:
    try:
        return _run(args, project_dir)
    except BrokenPipeError:
        # The reader went away: say nothing more, and keep Python from complaining when it flushes at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return EXIT_BROKEN_PIPE


NAMED_OK = ("show", "export", "rename")  # subcommands that also accept a session name for ID


def _run(args: argparse.Namespace, project_dir: Path) -> int:
    from evo_agent.session import SessionStore

    command = getattr(args, "sessions_command", None) or "list"
    _check_ids(None if command in NAMED_OK else getattr(args, "id", None), *(getattr(args, "ids", None) or []))
    store = SessionStore(project_dir)
    # a symlinked, foreign-owned or unreadable sessions directory, or one holding what is not a session: one line,
    # exit 1 (fsck reports what is not a session, and the .gitignore, rather than refusing or restoring them)
    notice = store.check_dir(for_fsck=command == "fsck")
    if notice:
        from evo_agent.safe_text import terminal_safe

        print(terminal_safe(notice), file=sys.stderr)  # notices name the project's path: anyone's text
    out = sys.stdout
    from .remote import handles, run_remote

    if handles(command, args):  # push, search and --remote: the team store (evo_agent.sync)
        return run_remote(command, args, store, out)
    row = BY_NAME.get(command)
    if row is None:  # pragma: no cover - argparse accepts only the table's names
        raise CommandError(f"unknown sessions subcommand {command!r}: expected {SUBCOMMANDS}")
    return row.run(args, store, out)


# Each subcommand's work: `(args, store, out) -> exit code`, after the ids were checked and the sessions
# directory was judged. What each one needs is imported here, when it runs (`--help` builds the parser only).
def _list(args: argparse.Namespace, store: SessionStore, out: TextIO) -> int:
    from .listing import other_worktrees, sessions_list

    trees = other_worktrees(store.project_dir) if getattr(args, "worktrees", False) else []
    code = sessions_list(store, out, as_json=getattr(args, "json", False),
                         include_all=getattr(args, "all", False), limit=getattr(args, "limit", None),
                         worktrees=trees, wide=getattr(args, "wide", False))
    if not getattr(args, "json", False):
        from .remote import unpushed_footer

        footer = unpushed_footer(store)  # None unless a team store is configured
        if footer:
            out.write(footer + "\n")
    return code


def _rename(args: argparse.Namespace, store: SessionStore, out: TextIO) -> int:
    from .rename import rename

    return rename(store, args.id, args.name, out)


def _import(args: argparse.Namespace, store: SessionStore, out: TextIO) -> int:
    from .importing import sessions_import

    return sessions_import(store, args.agent, args.sources, import_all=args.all, dry_run=args.dry_run, out=out)


def _search(args: argparse.Namespace, store: SessionStore, out: TextIO) -> int:
    from .search import sessions_search

    return sessions_search(store, args.text, out, regex=args.regex, as_json=args.json, limit=args.limit)


def _show(args: argparse.Namespace, store: SessionStore, out: TextIO) -> int:
    from .remote import local_or_fetched

    with local_or_fetched(store, args.id) as (found_in, sid):  # only in the team store: a temporary copy
        return _show_or_export("show", args, found_in, sid, None, out)


def _export(args: argparse.Namespace, store: SessionStore, out: TextIO) -> int:
    from .export import choose_format
    from .remote import local_or_fetched

    fmt = choose_format(args.format, args.output)
    with local_or_fetched(store, args.id) as (found_in, sid):
        return _show_or_export("export", args, found_in, sid, fmt, out)


def _fsck(args: argparse.Namespace, store: SessionStore, out: TextIO) -> int:
    from .common import resolve_session_dir
    from .fsck import all_session_ids, fsck, report

    ids = [resolve_session_dir(store, args.id)[0]] if args.id else all_session_ids(store)
    if args.id is None and not store.sessions_dir.is_dir():
        from evo_agent.safe_text import terminal_line

        out.write(f"No sessions in {terminal_line(store.sessions_dir)}\n")
        return 0
    if args.secrets:
        from .fsck_secrets import fsck_with_secrets

        return fsck_with_secrets(store, ids, args.repair, args.json, out, whole=args.id is None)
    return report(fsck(store, ids, repair=args.repair, whole=args.id is None), len(ids), out, as_json=args.json)


def _rm(args: argparse.Namespace, store: SessionStore, out: TextIO) -> int:
    from .remove import rm

    return rm(store, args.ids, yes=args.yes, out=out, err=sys.stderr, ask=_ask)


def _adopt(args: argparse.Namespace, store: SessionStore, out: TextIO) -> int:
    from .adopt import adopt

    return adopt(store, args.id, out)


def _prune(args: argparse.Namespace, store: SessionStore, out: TextIO) -> int:
    from .remove import prune

    return prune(store, args.older_than, dry_run=args.dry_run, out=out, yes=args.yes, err=sys.stderr, ask=_ask,
                 interactive=_stdin_is_terminal())


class Command:
    """One `sessions` subcommand: its name and help (the parser's, and `--help`'s), its options, its work."""

    __slots__ = ("arguments", "help", "name", "run")

    def __init__(self, name: str, help_: str, arguments: Callable[[argparse.ArgumentParser], None],
                 run: Callable[[argparse.Namespace, SessionStore, TextIO], int]) -> None:
        self.name = name
        self.help = help_
        self.arguments = arguments
        self.run = run


# The subcommands, in the order `sessions --help` lists them (push, the team store's, follows: remote.py).
COMMANDS: tuple[Command, ...] = (
    Command("list", "list sessions, most recently updated first", _list_arguments, _list),
    Command("show", "show a session's conversation: messages, tool calls and results, compactions, subagent runs",
            _show_arguments, _show),
    Command("search", "find sessions by what was said in them: prompts, answers, tool calls and results, "
                      "summaries, subagents (newest first; case-insensitive)", _search_arguments, _search),
    Command("rename", "name a session (a name is one line; --resume NAME and /resume NAME find it)",
            _rename_arguments, _rename),
    Command("import", "import another agent's sessions of this project (Claude Code, Codex CLI); "
                      "without SOURCE, list the importable ones", _import_arguments, _import),
    Command("export", "export a session as Markdown, one self-contained HTML page, or JSONL", _export_arguments,
            _export),
    Command("fsck", "check sessions for damage; --repair rebuilds meta.json and fixes permissions "
                    "(transcripts are never rewritten)", _fsck_arguments, _fsck),
    Command("rm", "delete sessions (asks first)", _rm_arguments, _rm),
    Command("adopt", "copy a session recorded elsewhere (tracked by git, another user's, too open) into a new "
                     "session of your own, so it can be resumed and continued", _adopt_arguments, _adopt),
    Command("prune", "delete the sessions the list hides (empty, resumed with nothing new, refused by the API) "
                     "and, with --older-than, every session last updated longer ago (never a live one); asks first",
            _prune_arguments, _prune),
)
BY_NAME = {command.name: command for command in COMMANDS}


def _show_or_export(command: str, args: argparse.Namespace, store: SessionStore, sid: str, fmt: str | None,
                    out: TextIO) -> int:
    from .export import export_jsonl, load_view, show_json

    view = load_view(store, sid)  # show and export need a transcript
    if command == "show":
        if args.json:
            out.write(show_json(view))
        else:
            from evo_agent.safe_text import terminal_line

            from .render_text import render_show

            reason = store.foreign_reason(view.id)
            if reason:
                out.write(f"recorded elsewhere: {terminal_line(reason)} — never continued by -c; "
                          f"take it on with: evo-agent sessions adopt {view.id}\n")
            out.write(render_show(view, color=_color(), full=args.full, restored=args.restored))
        return 0
    fmt = fmt or "md"  # export: choose_format always gives one, Markdown by default
    if fmt == "jsonl":
        data = export_jsonl(view)
    elif fmt == "html":
        from .render_html import render_html

        data = render_html(view).encode("utf-8", "replace")
    else:
        from .render_md import render_markdown

        data = render_markdown(view).encode("utf-8", "replace")
    from .common import write_output

    if args.output in (None, "-") and sys.stdout.isatty():  # to a terminal: no escape sequence acts
        from evo_agent.safe_text import terminal_safe

        from ..trust import json_escape_unsafe

        text = data.decode("utf-8", "replace")
        data = (json_escape_unsafe(text) if fmt == "jsonl" else terminal_safe(text)).encode("utf-8")
    write_output(data, args.output)
    if args.output and args.output != "-":
        from .common import fmt_bytes
        from .export import FORMAT_NAMES

        out.write(f"Wrote {args.output} ({FORMAT_NAMES[fmt]}, {fmt_bytes(len(data))})\n")
    return 0
