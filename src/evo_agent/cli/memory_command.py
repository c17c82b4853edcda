"""`evo-agent memory [list | show NAME | rm NAME | edit NAME]`: Auto Memory without a model (SPEC §11).

`list` (the default) prints each scope's directory and index; `show` one memory file; `rm` deletes one
(and its index line); `edit` opens one in $VISUAL / $EDITOR (a new name: a template with front matter),
and saves it only when it still has valid front matter and holds no secret — else the edit is kept in a
temp file whose path is printed, and nothing changes. NAME is `x.md` (or `x`), `project/x.md`, `user/x.md`
or `/memories/user/x.md`; a bare name is looked up in the project's memory, then the user's.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence

from .command_parser import command_parser
from .errors import CommandError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from pathlib import Path

    from evo_agent.session import MemoryStore

TEMPLATE = "---\nname: {name}\ndescription: one line: what this holds and when it is useful\ntype: project\n---\n\n"



def build_parser() -> argparse.ArgumentParser:
    parser, sub = command_parser("memory", "Auto Memory: this project's (.evo-agent/memory/) and "
                                           "yours (~/.config/evo-agent/memory/).")
    sub.add_parser("list", help="each scope's index")
    for name, text in (("show", "print one memory file"), ("rm", "delete one memory file"),
                       ("edit", "edit one memory file in $EDITOR (a new name creates it)")):
        sub.add_parser(name, help=text).add_argument("name", metavar="NAME")
    return parser


def run_memory(argv: Sequence[str], project_dir_of: Callable[[argparse.Namespace], Path]) -> int:
    """Run the command; raises UsageError/CommandError (one line) for what cannot be done."""
    from evo_agent.safe_text import terminal_line, terminal_safe
    from evo_agent.session import MemoryRefused, MemoryStore, reveal_invisible

    args = build_parser().parse_args(list(argv))
    store = MemoryStore(project_dir_of(args))
    out: list[str] = []
    try:
        if args.memory_command in (None, "list"):
            for scope in ("project", "user"):
                index = store.index(scope)
                out.append(f"{scope} memory ({terminal_line(store.directory(scope))}):")
                out.append(index.text or "  (empty)")
                if index.truncated:
                    out.append(f"  … past the bound the model is given ({index.lines} lines, {index.size:,} bytes)")
        elif args.memory_command == "show":
            scope, file = store.resolve_name(args.name)
            out.append(reveal_invisible(store.read(scope, file))[0].rstrip("\n"))  # what the model is shown
        elif args.memory_command == "rm":
            scope, file = store.resolve_name(args.name)
            out.append(store.apply(store.plan("delete", {"path": f"/memories/{scope}/{file}"})))
        else:
            out.append(_edit(store, args.name))
    except MemoryRefused as exc:
        raise CommandError(f"memory: {exc}") from None
    except OSError as exc:
        raise CommandError(f"memory: {exc.strerror or exc}: {getattr(exc, 'filename', '') or ''}") from None
    sys.stdout.write("".join(terminal_safe(line) + "\n" for line in out))
    return 0


def _edit(store: MemoryStore, name: str) -> str:
    """Edit a copy in the user's editor, then save it through the store (front matter and secrets checked)."""
    from evo_agent.session import MemoryRefused

    scope, file = store.resolve_name(name, must_exist=False)
    path = f"/memories/{scope}/{file}"
    before = store.read(scope, file) if store.exists(scope, file) else None
    fd, temp = tempfile.mkstemp(prefix=f"evo-agent-memory-{file[:-3]}-", suffix=".md")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(before if before is not None else TEMPLATE.format(name=file[:-3]))
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    try:
        argv = _editor_argv(editor, store.project_dir)
    except CommandError:
        os.unlink(temp)
        raise
    try:  # started beside the temp file, never in the project: vim's `exrc` runs the `.exrc` of where it starts
        status = subprocess.run([*argv, temp], check=False, cwd=os.path.dirname(temp)).returncode
    except OSError as exc:
        os.unlink(temp)
        raise CommandError(f"memory: cannot run the editor {editor!r}: {exc.strerror or exc}") from None
    with open(temp, encoding="utf-8", errors="replace") as f:
        after = f.read()
    if status != 0 or after == before:
        os.unlink(temp)
        return f"{path}: not changed" + (f" (the editor exited with {status})" if status else "")
    try:
        if before is None:
            change = store.plan("create", {"path": path, "file_text": after})
        else:
            change = store.plan("str_replace", {"path": path, "old_str": before, "new_str": after}) if before else \
                store.plan("create", {"path": path, "file_text": after})
        result = store.apply(change)
    except MemoryRefused as exc:
        raise CommandError(f"memory: not saved: {exc} (your edit is in {temp})") from None
    os.unlink(temp)
    return result.splitlines()[0]


def _editor_argv(editor: str, project: Path) -> list[str]:
    """The editor's command line, its program by an absolute path the project does not control.

    A bare name is found like every program evo-agent starts by itself (session.absolute_program): a
    relative PATH entry or one inside the project (an activated in-repo `.venv/bin`) would make a clone's
    `bin/nano` the editor. A path is the user's choice, unless it is relative (looked up from here, often
    the project) or leads into the project."""
    from evo_agent.session import absolute_program, program_refused

    try:
        words = shlex.split(editor)
    except ValueError as exc:
        raise CommandError(f"memory: cannot read the editor command {editor!r}: {exc}") from None
    if not words:
        raise CommandError("memory: $VISUAL/$EDITOR names no editor")
    program = words[0]
    root = os.path.realpath(project)
    if "/" not in program:
        found = absolute_program(program, outside=root)
        if found is None:
            raise CommandError(f"memory: the editor {program!r} is not in a PATH entry outside this project "
                               "(set $VISUAL or $EDITOR to its absolute path)")
        return [found, *words[1:]]
    # judged as a PATH entry's program is (a project holding `~`, a dotfiles repository: an editor in `~` is the user's)
    if not os.path.isabs(program) or program_refused(program, root):
        raise CommandError(f"memory: not running the editor {program!r}: it lies inside this project or is a "
                           "relative path (set $VISUAL or $EDITOR to an editor of your own)")
    return words


__all__ = ["build_parser", "run_memory"]
