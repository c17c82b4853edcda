"""The one lookup of a program evo-agent starts by itself: git, bash, setpriv, bwrap, rg, the user's $EDITOR.

A program evo-agent starts on its own (its git reads, the shell every bash call runs in, the
reaper's setpriv, the sandbox's bwrap, ripgrep, `memory edit`'s editor) runs before anyone looked
at the project. So it is found the way a project cannot steer, in the PATH entries that belong to the machine:

- only absolute entries count: a relative one (`node_modules/.bin`, `bin`, `.`, and the empty
  entry, which means `.`) is looked up from where the program runs, the project;
- an entry inside the project never counts either, however it is spelled: an activated in-repo
  `.venv/bin`, `/work/clone/bin/`, `/work/clone/./bin`, `/work/x/../clone/bin`, or a directory
  outside that is a link into the project (`~/tools -> ~/src/clone/bin`). Each entry is judged
  by its real path, and so is the program found there (`/usr/local/bin/git` linking into the
  clone is the clone's); an entry under `/proc/` or `/dev/fd/` never counts (`/proc/self/cwd/bin` is a
  different directory in evo-agent and in the child it starts);
- an unset PATH means `os.defpath` (`/bin:/usr/bin`), what `execvp` and a shell use then; a
  PATH set to "" has one entry, the empty one (`.`), so nothing counts and nothing is found.

The one exception is a project holding the home directory (a dotfiles `~/.git` makes `~` a work
tree): the user's own programs live there (`~/.local/bin`, conda), so entries inside the home
directory count for it; the rest of such a project still does not.

None when there is no such program: the caller then runs none (git, rg), or a fixed path
(`/bin/bash`), never the bare name, whose lookup would search exactly the entries refused here.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: cli/startup_env.py runs before `--help`
if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["absolute_program", "library_environment", "program_refused", "program_search_path", "search_entries"]


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _roots(outside: Path | str | Iterable[Path | str] | None) -> list[tuple[str, str | None]]:
    """(real root, the home directory when the root holds it, else None) for each directory refused."""
    if outside is None:
        return []
    items = [outside] if isinstance(outside, (str, os.PathLike)) else list(outside)
    home = os.path.realpath(os.path.expanduser("~"))
    out = []
    for item in items:
        root = os.path.realpath(item)
        out.append((root, home if _under(home, root) else None))
    return out


# Paths that name a different place in each process: `/proc/self/cwd/bin` is judged from evo-agent's directory
# but run from the child's (the project's root).
_PER_PROCESS = ("/proc/", "/dev/fd/", "/dev/stdin", "/dev/stdout", "/dev/stderr")


def _refused(real: str, roots: list[tuple[str, str | None]]) -> bool:
    if real.startswith(_PER_PROCESS):
        return True
    return any(_under(real, root) and not (home is not None and _under(real, home)) for root, home in roots)


def program_refused(path: Path | str, outside: Path | str | Iterable[Path | str] | None) -> bool:
    """Whether a program at `path` (judged by its real path) lies where a project can steer it: inside `outside`
    (but a project holding the home directory's own programs), or under `/proc/`, `/dev/fd/`."""
    return _refused(os.path.realpath(path), _roots(outside))


def program_search_path(outside: Path | str | Iterable[Path | str] | None = None,
                        environ: Mapping[str, str] | None = None) -> str:
    """The PATH entries that count (see the module docstring), joined: for a child that looks programs up."""
    base = os.environ if environ is None else environ
    roots = _roots(outside)
    entries = base.get("PATH", os.defpath)
    return os.pathsep.join(e for e in entries.split(os.pathsep) if os.path.isabs(e)
                           and not _refused(os.path.normpath(e), []) and not _refused(os.path.realpath(e), roots))


def absolute_program(name: str, outside: Path | str | Iterable[Path | str] | None = None,
                     environ: Mapping[str, str] | None = None) -> str | None:
    """`name`'s absolute path in the first PATH entry that counts, never one inside `outside`; None if none.

    `environ` defaults to this process's environment (only its PATH is read)."""
    if "/" in name or not name:
        return None
    roots = _roots(outside)
    for entry in program_search_path(None, environ).split(os.pathsep):
        if not entry or _refused(os.path.normpath(entry), []) or _refused(os.path.realpath(entry), roots):
            continue
        candidate = os.path.join(entry, name)
        if _refused(os.path.realpath(candidate), roots):
            continue
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def library_environment(outside: Path | str | Iterable[Path | str] | None,
                        environ: Mapping[str, str]) -> dict[str, str]:
    """`environ` whose `LD_LIBRARY_PATH` keeps only the entries that count for a program evo-agent starts itself
    (and for a command run unasked): absolute, outside `outside`, by the rule of PATH above (unset when none does).

    The dynamic loader reads a relative entry, and the empty one (`/opt/x/lib:`, what `export
    LD_LIBRARY_PATH=/opt/x/lib:$LD_LIBRARY_PATH` leaves when it was unset), from the directory the program runs in:
    the project, where a clone commits `libz.so.1` or `libpcre2-8.so.0` whose constructor runs inside git, rg,
    grep or bwrap (outside the sandbox) before anything was asked. The process's own variable loses those at start
    (cli/startup_env.py); this drops the entries inside the project too.
    """
    env = dict(environ)
    value = env.pop("LD_LIBRARY_PATH", None)
    if value is None:
        return env
    roots = _roots(outside)
    kept = [e for e in search_entries(value) if os.path.isabs(e)
            and not _refused(os.path.normpath(e), []) and not _refused(os.path.realpath(e), roots)]
    if kept:
        env["LD_LIBRARY_PATH"] = ":".join(kept)
    return env


def search_entries(value: str) -> list[str]:
    """The entries of `LD_LIBRARY_PATH` as the dynamic loader splits it: at `:` and at `;`."""
    return value.replace(";", ":").split(":")
