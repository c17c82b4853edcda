"""The `sessions` subcommands that talk to the team store: parsers and dispatch, the work in evo_agent.sync.

Kept apart from command.py so the sync feature touches that file in a few lines.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from ..errors import CommandError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: `--help` builds these parsers
if TYPE_CHECKING:
    import argparse
    from contextlib import AbstractContextManager
    from typing import TextIO

    from evo_agent.session import SessionStore

# evo_agent.session and .common are imported where they are used: `evo-agent --help` builds the
# parsers below and should not load the session library (SPEC §8, < 150 ms).


def add_remote_listing_options(listing: argparse.ArgumentParser) -> None:
    listing.add_argument("--remote", action="store_true",
                         help="this project's sessions in the team store (everyone's; EVO_AGENT_SYNC_URL)")
    listing.add_argument("--user", metavar="USER", help="with --remote: only USER's (or USER@HOST's) sessions")
    listing.add_argument("--branch", metavar="BRANCH", help="with --remote: only sessions on BRANCH")


def add_remote_parsers(add: Callable[[str, str], argparse.ArgumentParser]) -> None:
    push = add("push", "push sessions to the team store now (they are pushed after every turn when "
                       "EVO_AGENT_SYNC_URL is set) and say what was behind")
    push.add_argument("ids", metavar="ID", nargs="*")
    push.add_argument("--all", action="store_true", help="every session of this project")


def add_remote_search_option(search: argparse.ArgumentParser) -> None:
    search.add_argument("--remote", action="store_true",
                        help="search this repository's sessions in the team store (PostgreSQL full-text search)")


def handles(command: str, args: argparse.Namespace) -> bool:
    return command == "push" or bool(getattr(args, "remote", False))


def run_remote(command: str, args: argparse.Namespace, store: SessionStore, out: TextIO) -> int:
    from evo_agent.safe_text import terminal_safe
    from evo_agent.sync import commands

    from .common import fmt_ms

    try:
        if command == "push":
            return commands.push(store, list(args.ids), all_=args.all, out=out)
        if command == "search":
            if getattr(args, "regex", False):
                raise CommandError("--regex is for this machine's sessions; --remote uses PostgreSQL full-text search")
            return commands.search_remote(store, args.text, out, as_json=args.json, limit=args.limit,
                                          safe=terminal_safe)
        if command == "list":
            return commands.list_remote(store, out, user=args.user, branch=args.branch, as_json=args.json,
                                        limit=args.limit, safe=terminal_safe, fmt_ms=fmt_ms)
        if command == "prune":
            return commands.prune_remote(store, getattr(args, "older_than", None), dry_run=args.dry_run, out=out,
                                         fmt_ms=fmt_ms, safe=terminal_safe)
    except commands.SyncCommandError as exc:
        raise CommandError(str(exc)) from None
    raise CommandError(f"sessions {command} has no --remote form")


def local_or_fetched(store: SessionStore, text: str) -> AbstractContextManager[tuple[SessionStore, str]]:
    """(store, id) of a local session, else — when a team store is configured — of a temporary copy of it.

    contextlib is imported here, not with the module: `sessions list` loads this module and uses none of it.
    """
    import contextlib

    return contextlib.contextmanager(_local_or_fetched)(store, text)


def _local_or_fetched(store: SessionStore, text: str) -> Iterator[tuple[SessionStore, str]]:
    from evo_agent.session import SessionNotFound, is_id_prefix

    try:
        sid = store.resolve(text)
    except SessionNotFound:
        from evo_agent.sync.commands import SyncCommandError, fetched_copy, optional_url

        if optional_url() is None or not is_id_prefix(text):  # names are local: the store is asked for ids
            raise
        try:
            with fetched_copy(store, text) as found:
                yield found
        except SyncCommandError as exc:
            raise CommandError(f"no session {text} here, and {exc}") from None
        return
    yield store, sid


def unpushed_footer(store: SessionStore) -> str | None:
    """`N sessions not yet pushed …` under `sessions list`, when a team store is configured."""
    import os

    if "EVO_AGENT_SYNC_URL" not in os.environ and not _has_user_config():
        return None
    from evo_agent.sync.commands import unpushed_ids
    from evo_agent.sync.push import local_session_ids

    behind = unpushed_ids(store, local_session_ids(store))
    if not behind:
        return None
    shown = ", ".join(behind[:3]) + (", …" if len(behind) > 3 else "")
    return (f"{len(behind)} session{'s' if len(behind) != 1 else ''} not yet pushed to the team store ({shown}): "
            "evo-agent sessions push --all")




def _has_user_config() -> bool:
    import os

    from evo_agent.sync.config import config_path

    return config_path(os.environ).is_file()
