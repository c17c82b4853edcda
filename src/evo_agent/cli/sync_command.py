"""`evo-agent sync migrate | index`: the team store's admin commands (README "Team store").

`migrate` creates or migrates the store's schema as the role that owns its tables (clients run no
DDL: they need row rights only) and creates chunk partitions months ahead — run it after an
upgrade and monthly (cron). `index` brings the derived search index up to date (any role may: it
runs as the owner over what the store holds) — run it from cron; a search also catches it up.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .errors import CommandError, UsageError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import NoReturn


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"sync: {message}")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="evo-agent sync", description="Administer the team store (EVO_AGENT_SYNC_URL).")
    sub = parser.add_subparsers(dest="sync_command", parser_class=_Parser, required=True)
    migrate = sub.add_parser("migrate", help="create or migrate the store's schema (as its owner) and create "
                                             "chunk partitions ahead; run after upgrading and monthly")
    migrate.add_argument("--months-ahead", type=int, default=3, metavar="N",
                         help="month partitions to create beyond the current month (default 3)")
    index = sub.add_parser("index", help="bring the search index up to date (what `sessions search --remote` reads)")
    index.add_argument("--budget", type=float, default=600.0, metavar="SECONDS",
                       help="stop after this long; the rest waits for the next run (default 600)")
    return parser


def run_sync(argv: Sequence[str], find_project: object = None) -> int:
    """`evo-agent sync …`; `find_project` is unused (the store is named by EVO_AGENT_SYNC_URL, not the project)."""
    from evo_agent.sync import commands

    args = build_parser().parse_args(list(argv))
    try:
        if args.sync_command == "migrate":
            return commands.migrate(sys.stdout, ahead=max(0, args.months_ahead))
        return commands.index(sys.stdout, budget_s=max(0.1, args.budget))
    except commands.SyncCommandError as exc:
        raise CommandError(str(exc)) from None
