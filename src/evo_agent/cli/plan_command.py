"""`evo-agent plan [list | show [ID] | done ID [--force]]`: the Session Plan without a model (SPEC §11).

`list` (the default) names every plan of the project, open first; `show` prints one (the active
plan by default) with its goal, approach, steps and tasks; `done ID` moves an open plan to
`tasks/done/` — refused while a task is open, unless `--force` (a person may abandon a plan).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from .command_parser import command_parser
from .errors import CommandError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from pathlib import Path


def build_parser() -> argparse.ArgumentParser:
    parser, sub = command_parser("plan", "The Session Plan of this project (.evo-agent/tasks/).")
    sub.add_parser("list", help="every plan, open first, with progress")
    show = sub.add_parser("show", help="one plan in full (default: the active one)")
    show.add_argument("id", nargs="?", metavar="ID")
    done = sub.add_parser("done", help="mark an open plan done (moves it to tasks/done/)")
    done.add_argument("id", metavar="ID")
    done.add_argument("--force", action="store_true", help="even while tasks are open")
    return parser


def run_plan(argv: Sequence[str], project_dir_of: Callable[[argparse.Namespace], Path]) -> int:
    """Run the command; raises UsageError/CommandError (one line) for what cannot be done."""
    from evo_agent.safe_text import terminal_line, terminal_safe
    from evo_agent.session import PlanError, PlanStore
    from evo_agent.tools.plan_tools import plan_summary

    args = build_parser().parse_args(list(argv))
    store = PlanStore(project_dir_of(args))
    out: list[str] = []
    try:
        if args.plan_command in (None, "list"):
            plans = store.plans()
            if not plans:
                out.append(f"No plans in {terminal_line(store.root)} (the model makes one with plan_create).")
            for plan in plans:
                done, total = plan.progress
                state = "active" if plan.state == "todo" else "done"
                out.append(f"{plan.id}  {state:<6}  {done}/{total}  {plan.title}")
        elif args.plan_command == "show":
            plan = store.get(args.id)
            out.append(plan_summary(plan, with_description=True))
            out.append(f"Files: {plan.path}")
        else:
            plan = store.complete(args.id, force=args.force)
            done, total = plan.progress
            out.append(f"Plan {plan.id} is done ({done}/{total} tasks completed): {plan.path}")
    except PlanError as exc:
        raise CommandError(f"plan: {exc}") from None
    except OSError as exc:
        raise CommandError(f"plan: {exc.strerror or exc}: {getattr(exc, 'filename', '') or store.root}") from None
    sys.stdout.write("".join(terminal_safe(line) + "\n" for line in out))
    return 0


__all__ = ["build_parser", "run_plan"]
