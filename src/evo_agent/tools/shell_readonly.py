"""Which bash commands may run unasked, and the exact command that then runs (issues #15, #26).

`plan_read_only(command, project_dir)` returns a `ReadOnlyPlan` when the command only reads the
project, else a short reason (a str). It errs on the side of asking: anything it does not fully
understand asks. The rules, in order:

1. Characters whose meaning this checker does not model are refused: `$` (expansion, `$(…)`),
   backticks, `<`/`>` (redirection, process substitution), `{`/`}`, `\\`, newlines, `;`.
2. The rest is cut into words as bash does (shell_words.py: quotes understood). Only `|`, `&&`
   and `||` may join commands; any other operator asks. A word starting with an unquoted `~`
   (a home directory) or `#` (a comment) asks.
3. Each command's first word is a program of the allowlist (shell_allowlist.py), found in an
   absolute PATH entry outside the project (a `cat` in `node_modules/.bin` or `.` asks); `git`
   only as `git status|log|diff|show`, with no option before the subcommand.
4. Globs are expanded here, not by bash: a match that starts with `-` (a file named `--pre=sh`)
   or lies outside the project asks; the expansion, not the pattern, is what runs.
5. Every option must be listed for that program, matched whole (`sort --outp` asks), and is an option
   wherever it stands, as GNU getopt permutes (the command runs without `POSIXLY_CORRECT`); every
   operand or option argument that names a file must resolve (symlinks followed, never through
   /proc) inside the project (`grep -r x link-to-ssh` asks) and be no FIFO, device or socket
   (`cat pipe` would never end); git asks when one of its own files is one (`.git/config` a FIFO) or one
   it opens in the work tree (a `.gitignore`, a nested repository's `HEAD`), when its git directory
   reads outside the project (a link, alternates, a commondir), and for status and diff when its
   index names a path outside the work tree.

Relative paths and globs are read from the directory the command runs in (`cwd`: the start
directory, inside the project); what they must stay inside is the project, wherever that is.

The plan's `command` is the checked command rebuilt from its words, each quoted, each program
by its absolute path, git with the configuration that could run code switched off on its
command line (shell_allowlist.GIT_SAFE_CONFIG, the settings of evo-agent's own git door), no
submodule entered, and an environment (`NAME=value` words before it) that allows no transport
(so no lazy fetch from a "partial clone"), takes no optional lock, reads no global or system
configuration (HOME and XDG_CONFIG_HOME an empty private directory: session.git_config_pins), and
turns off every filter driver by its verbatim name; rg with no configuration file and no message quoting an
ignore file (shell_allowlist.RG_SAFE); `path` is the PATH it runs with (the user's,
minus relative and in-project entries). The bash tool runs exactly that, in the read-only
sandbox where bubblewrap works (sandbox.py).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from evo_agent.session import (
    GIT_SAFE_ENV,
    alternate_entries,
    git_config_pins,
    git_dir_of,
    git_special_file,
    git_worktree_root,
    library_environment,
    program_search_path,
    read_git_file,
    read_regular,
)

from .confine import inside_project, is_within, real
from .shell_allowlist import (
    BUILTINS,
    FIND_LEADING,
    FIND_NO_ARG,
    FIND_PATH_ARG,
    FIND_TEXT_ARG,
    GIT_NO_SUBMODULES,
    GIT_SAFE_CONFIG,
    GIT_SAFE_DIFF,
    GIT_SUBCOMMANDS,
    PROGRAMS,
    RG_SAFE,
    Spec,
    denied_option,
)
from .shell_words import ShellSyntaxError, Word, expand, git_subcommand, git_subcommand_at, split_words

FORBIDDEN_CHARS = {
    "$": "expansion or substitution",
    "`": "command substitution",
    ">": "redirection",
    "<": "redirection",
    "{": "brace expansion",
    "}": "brace expansion",
    "\\": "escapes",
    "\n": "several lines",
    "\r": "several lines",
    ";": "a command sequence",
}
JOINERS = frozenset({"|", "&&", "||"})
HARMLESS_PATHS = frozenset({"-", "/dev/null"})


@dataclass(frozen=True)
class ReadOnlyPlan:
    """A command that may run unasked: what to run, and with which PATH."""

    command: str
    path: str


class _Where(NamedTuple):
    """Where a command is judged: the project it must stay in, the directory it runs in (both real)."""

    root: Path
    cwd: Path


class _Ask(Exception):
    """The command needs approval; the message completes "the command ...". """


def read_only_reason(command: str, project_dir: Path | str, cwd: Path | str | None = None) -> str | None:
    """None when `command` is read-only by the rules above; otherwise why it needs approval."""
    plan = plan_read_only(command, project_dir, cwd=cwd)
    return plan if isinstance(plan, str) else None


def plan_read_only(command: str, project_dir: Path | str, search_path: str | None = None, *,
                   cwd: Path | str | None = None) -> ReadOnlyPlan | str:
    """The plan to run `command` unasked in `cwd` (default: the project), or why it needs approval (see the
    module docstring). A `cwd` outside the project is judged as the project itself: nothing runs there."""
    for char, what in FORBIDDEN_CHARS.items():
        if char in command:
            return f"uses {what} ({char!r})"
    try:
        tokens = split_words(command)
    except ShellSyntaxError as exc:
        return f"cannot be parsed ({exc})"
    if not tokens:
        return "is empty"
    path = os.environ.get("PATH", "") if search_path is None else search_path
    project = real(project_dir)
    start = real(cwd) if cwd is not None else project
    where = _Where(project, start if inside_project(project, start) else project)
    pieces: list[str] = []
    words: list[Word] = []
    try:
        for token in [*tokens, "|"]:
            if isinstance(token, Word):
                words.append(token)
                continue
            if token not in JOINERS:
                raise _Ask(f"uses the shell operator {token!r}")
            if not words:
                raise _Ask("has an empty command")
            pieces.append(_plan_command(words, where, path))
            pieces.append(token)
            words = []
    except _Ask as exc:
        return str(exc)
    return ReadOnlyPlan(" ".join(pieces[:-1]), safe_search_path(path, project))


def safe_search_path(path: str, project: Path) -> str:
    """PATH without relative entries and entries inside the project, however spelled (session.program_search_path,
    the one rule of evo-agent's own program lookups)."""
    return program_search_path(project, {"PATH": path})


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def resolve_program(name: str, path: str, project: Path, cwd: Path | None = None) -> str:
    """The absolute path bash would run for `name`; _Ask when that is a relative or in-project PATH entry.

    A relative entry means the directory the command runs in (`cwd`, default the project)."""
    if "/" in name:
        raise _Ask(f"runs {name!r} by its path")
    for entry in path.split(":"):
        candidate = os.path.join(entry or ".", name)
        full = candidate if os.path.isabs(candidate) else os.path.join(cwd or project, candidate)
        if not (os.path.isfile(full) and os.access(full, os.X_OK)):
            continue
        if not os.path.isabs(entry) or _under(os.path.realpath(full), str(project)):
            raise _Ask(f"runs {name} from {entry or '.'!r}, a PATH entry the project controls")
        return full
    return name  # not installed: bash, with the safe PATH, will say so


def _plan_command(words: list[Word], where: _Where, path: str) -> str:
    program_word, rest = words[0], words[1:]
    program = program_word.text
    if program_word.is_pattern or program not in (*PROGRAMS, "git", "find"):
        raise _Ask(f"runs {program!r}, which may have side effects")
    args = _expanded(rest, where)
    if program == "printf" and args and args[0].startswith("-v"):
        # bash's `printf -v NAME VALUE` assigns a variable: `printf -v HOME <clone>/cfg && git diff` hands git a
        # configuration the clone wrote (an exported variable stays exported)
        raise _Ask("uses printf -v, which assigns a shell variable")
    head = [program] if program in BUILTINS else [resolve_program(program, path, where.root, where.cwd)]
    assignments: list[str] = []
    if program == "git":
        head += _check_git(args, where)  # first: the filter scan below runs git, which must not meet a FIFO
        tracked = _check_index(head[0], where, outside_asks=args[0] in WORKTREE_READERS)
        # `status --ignored` (traditional, the default) enters ignored directories too: walk every one then
        _check_work_tree(where, None if any(_enters_ignored(a) for a in args) else tracked)
        assignments = _git_assignments(head[0], where)
        args = args[1:]
    elif program == "find":
        _check_find(args, where)
    else:
        if program == "tail" and args and (args[0].startswith("+") or _TAIL_OBSOLETE_FOLLOW.fullmatch(args[0])):
            # coreutils reads a first word `+N[bcl][f]` as its obsolete option (`tail +1f F` is `-n +1 -f F`), and
            # `-[N][bcl]f` too (`tail -cf F`, getopt's `-c f` as judged, is `-c 10 -f F`): it would follow the file
            # and never end, as `tail -f`
            raise _Ask(f"uses tail's obsolete option {args[0]!r}, which may follow the file for ever")
        operands = _check_options(program, PROGRAMS[program], args, where)
        if program == "rg":
            odd = rg_ignore_special(operands, where.cwd, prune=not any(_rg_ignores_off(a) for a in args),
                                    project=where.root)
            if odd is not None:
                shown = os.path.relpath(odd, where.cwd) if inside_project(where.root, real(odd.parent)) else str(odd)
                kind = special_kind(str(odd)) or "no regular file"
                raise _Ask(f"runs rg, which opens the ignore file {shown!r}, {kind}: it would wait on it forever")
            head += RG_SAFE
    return " ".join([*assignments, *(shlex.quote(w) for w in [*head, *args])])


_TAIL_OBSOLETE_FOLLOW = re.compile(r"-[0-9]*[bcl]?f")


def _rg_ignores_off(word: str) -> bool:
    """Whether `word` may turn off rg's `.gitignore` (`--no-ignore…`, `--unrestricted`, `-u` in a bundle) or take
    rg into a directory it ignores (a glob override, `-g '*'`, `--glob=vendor`, `--iglob`: override globs outrank
    ignore files): read generously, so the walk then enters every directory (a word that only looks like one costs
    time, never a miss)."""
    return word.startswith(("--no-ignore", "--unrestricted", "--glob", "--iglob")) or (
        word.startswith("-") and not word.startswith("--") and ("u" in word or "g" in word))


def _expanded(words: list[Word], where: _Where) -> list[str]:
    out: list[str] = []
    for word in words:
        if word.starts_unquoted("~"):
            raise _Ask(f"reads {word.text!r}, outside the project")
        if word.starts_unquoted("#"):
            raise _Ask("has a comment")
        matches, from_glob = expand(word, where.cwd)
        if from_glob:
            for match in matches:
                if match.startswith("-"):
                    raise _Ask(f"has a glob ({word.text}) that expands to the option-like name {match!r}")
                _confine(match, where)
        out += matches
    return out


def _confine(word: str, where: _Where) -> None:
    if word in HARMLESS_PATHS:
        return
    if word.startswith("~"):
        raise _Ask(f"reads {word!r}, outside the project")
    full = word if os.path.isabs(word) else os.path.join(where.cwd, word)
    if through_proc(full):
        raise _Ask(f"reads {word!r} through /proc, whose `self` is evo-agent when checked, the command when run")
    if not inside_project(where.root, real(full)):
        raise _Ask(f"reads {word!r}, outside the project")
    kind = special_kind(full)
    if kind is not None:
        raise _Ask(f"reads {word!r}, {kind}: reading it may never end")


def through_proc(path: str) -> bool:
    """Whether resolving `path` (absolute; links followed, as the kernel does) passes through /proc.

    `realpath` runs in evo-agent, and there `/proc/self/cwd` is evo-agent's directory: a resumed session runs its
    commands in its recorded start directory while evo-agent runs where `evo-agent -c` was typed, so
    `/proc/self/cwd/../.ssh/id_rsa` (or `/dev/fd/../cwd/..`, or a clone's link to either) was judged inside the
    project and read `~/.ssh/id_rsa` (where bubblewrap, which hides /proc, cannot run). Nothing of a project is there.
    """
    parts = [p for p in path.split("/") if p]
    resolved, hops = "/", 0
    while parts:
        part = parts.pop(0)
        if part == ".":
            continue
        if part == "..":
            resolved = os.path.dirname(resolved)
            continue
        candidate = os.path.join(resolved, part)
        if candidate == "/proc" or candidate.startswith("/proc/"):
            return True
        try:
            target = os.readlink(candidate)
        except OSError:
            resolved = candidate  # no link (or nothing there): a plain component
            continue
        hops += 1
        if hops > 40:
            return True  # a loop: the kernel gives up too (ELOOP); asking costs nothing
        if target.startswith("/"):
            resolved = "/"
        parts = [p for p in target.split("/") if p] + parts
    return False


def special_kind(path: str) -> str | None:
    """"a FIFO", "a device", "a socket" when `path` (symlinks followed) is one, else None (also when missing).

    An archive can unpack a FIFO into the project and a clone can commit a link to one: `cat pipe` would wait for
    a writer forever (until the tool's timeout), inside the sandbox too. stat() of a FIFO never blocks."""
    import stat

    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return None


def _check_value(kind: str | None, value: str, where: _Where) -> None:
    if kind == "path":
        _confine(value, where)


def _check_options(program: str, spec: Spec, args: list[str], where: _Where) -> list[str]:
    """getopt's reading of `args` for `program`: _Ask on an unlisted option or an operand outside the project.
    Returns the operands (the pattern of grep and rg left out)."""
    if spec.any_words:
        return []
    operands: list[str] = []
    pattern_given = False
    i, options_done = 0, False
    while i < len(args):
        word = args[i]
        i += 1
        if options_done or word == "-" or not word.startswith("-"):
            operands.append(word)
            continue
        if word == "--":
            options_done = True
            continue
        if word.startswith("--"):
            name, eq, value = word[2:].partition("=")
            if name not in spec.long:
                raise _Ask(_unlisted(program, word))
            kind = spec.long[name]
            if kind is None and eq:
                raise _Ask(_unlisted(program, word))
            if kind in ("text", "path") and not eq:
                value, i = _separate_argument(program, f"--{name}", args, i)
            _check_value(kind, value, where)
            pattern_given |= name in spec.pattern_options
            continue
        letters = word[1:]
        if spec.digits and letters.isdigit():
            continue
        for j, letter in enumerate(letters):
            if letter not in spec.short:
                raise _Ask(_unlisted(program, word))
            kind = spec.short[letter]
            pattern_given |= letter in spec.pattern_options
            if kind is None:
                continue
            if kind in ("text", "path"):
                value = letters[j + 1:]
                if not value:
                    value, i = _separate_argument(program, f"-{letter}", args, i)
                _check_value(kind, value, where)
            break  # the rest of the word was the argument
    if spec.pattern_first and not pattern_given and operands:
        operands = operands[1:]
    if spec.max_operands is not None and len(operands) > spec.max_operands:
        raise _Ask(f"gives {program} {len(operands)} operands (the last may be a file it writes)")
    if spec.operands == "path":
        for operand in operands:
            _confine(operand, where)
    return operands


def _separate_argument(program: str, option: str, args: list[str], i: int) -> tuple[str, int]:
    """The next word as `option`'s argument; _Ask when there is none, or when it looks like an option
    (getopt would take it as the argument, ripgrep's parser as an option: the two readings differ)."""
    if i >= len(args):
        raise _Ask(f"gives {program} {option} without its argument")
    negative_number = args[i][1:].isdigit() and not program.startswith("rg")  # getopt's `head -n -5`
    if args[i].startswith("-") and args[i] != "-" and not negative_number:
        raise _Ask(f"gives {program} {option} the option-like argument {args[i]!r}")
    return args[i], i + 1


def _unlisted(program: str, word: str) -> str:
    option = word.split("=")[0]
    if denied_option(program.split()[0], word):
        return f"uses {program} {option}, which may write or execute"
    return f"uses {program} {option}, an option not known to be read-only"


def _check_find(args: list[str], where: _Where) -> None:
    i = 0
    while i < len(args) and args[i] in FIND_LEADING:
        i += 1
    while i < len(args) and not (args[i].startswith("-") or args[i] in ("!", "(", ")", ",")):
        _confine(args[i], where)
        i += 1
    while i < len(args):
        word = args[i]
        i += 1
        if word in FIND_NO_ARG:
            continue
        if word in FIND_TEXT_ARG or word in FIND_PATH_ARG:
            if i >= len(args):
                raise _Ask(f"gives find {word} without its argument")
            if word in FIND_PATH_ARG:
                _confine(args[i], where)
            i += 1
            continue
        raise _Ask(_unlisted("find", word))


def _check_git(args: list[str], where: _Where) -> list[str]:
    """What goes between `git` and the user's words; _Ask unless a read-only subcommand with listed options
    whose operands (revisions or paths) all resolve inside the project."""
    if not args or args[0] not in GIT_SUBCOMMANDS:
        raise _Ask("runs a git command other than status, log, diff or show")
    repository = git_worktree_root(where.cwd)
    if repository is not None and not inside_project(where.root, real(repository)) and is_within(
            real(os.path.expanduser("~")), real(repository)):
        # A dotfiles `~/.git` is no repository of a project below home (session.find_project_dir): its history
        # (a committed .netrc) lies outside the project.
        raise _Ask(f"runs git in the repository at {repository}, which holds the home directory, outside the project")
    if repository is not None and ":" in str(repository.parent):
        # GIT_CEILING_DIRECTORIES (the repository's parent: `_git_assignments`) is a `:`-separated list; split, it
        # names no ancestor, and git climbs past an empty or broken `.git` to the archive's wrapper repository,
        # whose alternates no check here has read.
        raise _Ask(f"runs git below {repository.parent}, whose ':' git cannot take as the directory to stop at")
    elsewhere = None if repository is None else _borrowed_git_dir(repository, where.root)
    if elsewhere is not None:
        raise _Ask(f"runs git on a repository that reads {elsewhere}, outside the project (its .git leads there)")
    git_dir = None if repository is None else git_dir_of(repository)
    odd = None if git_dir is None else git_special_file(git_dir)
    if repository is not None and special_kind(str(repository / ".git")) is not None:
        odd = repository / ".git"
    if odd is not None:
        shown = os.path.relpath(odd, repository) if repository is not None else odd.name  # .git/refs/heads/main
        kind = special_kind(str(odd)) or "not a regular file"
        if shown.startswith(".."):  # a file its configuration includes (session.git_special_file): /dev/tty
            shown = f"configuration includes {odd}, which"
            kind = special_kind(str(odd)) or "another user's file"
        raise _Ask(f"runs git on a repository whose {shown} is {kind}: git would wait on it forever")
    subcommand = args[0]
    _check_options(f"git {subcommand}", GIT_SUBCOMMANDS[subcommand], args[1:], where)
    # The work tree is the directory holding `.git`, whatever `core.worktree` an unpacked archive's config says
    # (`~`: `git diff` would print ~/.ssh/id_rsa against a dummy blob its index lists).
    # (`-c core.worktree=` would not do: git reads it from the repository's own file while it sets up.)
    worktree = [f"--work-tree={repository}"] if repository is not None else []
    before, after = git_safe_words(subcommand)
    return [*before, *worktree, subcommand, *after]


# The files git opens by name in the work tree's directories (attributes on the paths it diffs or re-hashes,
# ignore rules on a status's walk, the mailmap on a log that shows a name), and what it opens of a nested
# repository a status meets (`is_git_directory`: `HEAD`, then `commondir`).
WORK_TREE_GIT_FILES = frozenset({".gitignore", ".gitattributes", ".mailmap", ".gitmodules"})
NESTED_GIT_FILES = ("HEAD", "commondir")
# The ignore files ripgrep opens in every directory it searches and in every one above where it starts, and what
# it opens of a repository it meets there (its `info/exclude`, through a worktree's `commondir`).
RG_IGNORE_FILES = frozenset({".ignore", ".rgignore", ".gitignore"})
RG_GIT_FILES = ("info/exclude", "commondir")


def _enters_ignored(word: str) -> bool:
    """Whether `word` may make git status walk into ignored directories (`--ignored`, `--ignored=traditional`, …)."""
    return word.startswith("--ignored") and word != "--ignored=no"


def _check_work_tree(where: _Where, tracked: set[str] | None) -> None:
    """_Ask when a file git opens in the work tree is a FIFO, device or socket (`work_tree_special`; `tracked`
    None: every directory is walked)."""
    repository = git_worktree_root(where.cwd)
    waits = None if repository is None else work_tree_special(repository, tracked, project=where.root)
    if waits is not None and repository is not None:
        shown, kind = os.path.relpath(waits, repository), special_kind(str(waits)) or "not a regular file"
        raise _Ask(f"runs git on a work tree whose {shown} is {kind}: git would wait on it forever")


def work_tree_special(root: Path, tracked: set[str] | None = None, project: Path | None = None) -> Path | None:
    """The first file of the work tree at `root` that git opens itself (WORK_TREE_GIT_FILES, a nested repository's
    `.git` and its NESTED_GIT_FILES) and that is a FIFO, device or socket (links followed), else None.

    An unpacked archive keeps FIFOs: a `docs/.gitignore`, a `.mailmap` or a `vendor/lib/.git/HEAD` that is one made
    an unasked `git status` or `git log` wait for a writer until the bash tool's timeout.

    Given `tracked` (the directories holding index entries, relative to `root`), the walk is git's own: a directory
    its ignore rules exclude is entered only when it holds a tracked file (whose attributes git reads). A
    `node_modules/` of 33,000 directories cost 450 ms a command; git never looks inside it."""
    descend = None
    if tracked is not None:
        from .ignore import IgnoreRules

        rules, top = IgnoreRules(root), str(root)

        def descend(path: str) -> bool:
            return os.path.relpath(path, top) in tracked or not rules.ignored(path, True)

    return _special_in_tree(root, WORK_TREE_GIT_FILES, NESTED_GIT_FILES, top_git=False, descend=descend,
                            project=project)


def rg_ignore_special(paths: list[str], cwd: Path, prune: bool = False, project: Path | None = None) -> Path | None:
    """The first ignore file rg would open searching `paths` (relative to `cwd`; none: `cwd` itself) that is a FIFO,
    device or socket (links followed), else None: below each directory searched, and above each path up to `/`.

    An archive's FIFO `docs/.ignore`, a clone's `.ignore` link to `/dev/zero` (one endless line, read into memory)
    or another user's FIFO `/tmp/.ignore` above the project held an unasked `rg needle` until the timeout.

    `prune` (rg obeys `.gitignore`: no `--no-ignore…`, no `-u`): in a git repository the walk skips what its
    `.gitignore` files exclude, as rg does (a `node_modules/` of 33,000 directories cost 450 ms)."""
    for path in [os.path.join(cwd, p) for p in paths if p != "-"] or [str(cwd)]:
        full = Path(os.path.abspath(path))
        for directory in full.parents:
            found = next((directory / n for n in RG_IGNORE_FILES if _would_wait(str(directory / n), project)),
                         None) or _git_special(directory, str(directory / ".git"), RG_GIT_FILES, project)
            if found is not None:
                return found
        if full.is_dir():
            found = _special_in_tree(full, RG_IGNORE_FILES, RG_GIT_FILES, top_git=True,
                                     descend=_gitignored_skipped(full) if prune else None, project=project)
            if found is not None:
                return found
    return None


def _gitignored_skipped(root: Path) -> Callable[[str], bool] | None:
    """Which directories below `root` rg enters when it obeys `.gitignore`: those the repository's ignore rules
    leave in (tools/ignore.py, git's rules); None (every one) outside a repository, where rg reads no `.gitignore`,
    or when the walk starts in an ignored directory, which rg searches as named."""
    if git_worktree_root(root) is None:
        return None
    from .ignore import IgnoreRules

    rules = IgnoreRules(root)
    if rules.ignored_within(root):
        return None
    overridden: dict[str, bool] = {}

    def under_rg_ignore(directory: str) -> bool:
        """Whether an `.ignore` or `.rgignore` lies in `directory` or above it: rg's own ignore files outrank
        `.gitignore` (a `!vendor/` line there takes rg into a directory git ignores), so none is skipped below."""
        known = overridden.get(directory)
        if known is None:
            parent = os.path.dirname(directory)
            known = any(os.path.lexists(os.path.join(directory, n)) for n in (".ignore", ".rgignore")) or (
                parent != directory and under_rg_ignore(parent))
            overridden[directory] = known
        return known

    return lambda path: not rules.ignored(path, True) or under_rg_ignore(os.path.dirname(path))


def _would_wait(path: str, project: Path | None) -> bool:
    """Whether opening `path` (links followed) could wait forever or never end: a FIFO, device or socket. Not
    `/dev/null`, nor, where the read-only sandbox runs the command (`project` given), what it hides: outside the
    project, its `/dev` holds `/dev/null` alone and its `/proc`, `/tmp` and sockets' directories are empty, so a
    clone's `.ignore -> /dev/zero` or another user's FIFO `/tmp/.ignore` reads as missing there
    (tests/security/test_ignore_links_to_devices.py), while a FIFO in the project, or in the home directory above
    it, stays one."""
    if special_kind(path) is None:
        return False
    target = Path(os.path.realpath(path))
    if str(target) == "/dev/null":
        return False
    if project is None or is_within(target, real(project)):
        return True
    from .sandbox import read_only_sandbox, socket_dirs

    hidden = [Path("/dev"), Path("/proc"), Path("/tmp"), *(Path(d) for d in socket_dirs())]
    if not any(is_within(target, directory) for directory in hidden):
        return True
    return read_only_sandbox(project) is None


def _special_in_tree(root: Path, names: frozenset[str], git_files: tuple[str, ...], top_git: bool,
                     descend: Callable[[str], bool] | None = None, project: Path | None = None) -> Path | None:
    """The first of `names` in any directory under `root` (`root` included), or of `git_files` in the git directory
    of a `.git` there (`top_git`: the one in `root` too), that is a FIFO, device or socket, else None. `descend`,
    given, says which directories below `root` to enter.

    The walk is git's and ripgrep's own (no link followed, no `.git` entered; names compared as a case-insensitive
    file system would); os.scandir's d_type spares a stat per plain entry."""
    pending = [str(root)]
    while pending:
        directory = pending.pop()
        try:
            with os.scandir(directory) as it:
                entries = list(it)
        except OSError:
            continue
        for entry in entries:
            name = entry.name.lower()
            if name == ".git":
                if top_git or entry.name != ".git" or directory != str(root):
                    found = _git_special(Path(directory), entry.path, git_files, project)
                    if found is not None:
                        return found
            elif name in names:
                if _would_wait(entry.path, project):
                    return Path(entry.path)
            elif entry.is_dir(follow_symlinks=False) and (descend is None or descend(entry.path)):
                pending.append(entry.path)
    return None


def _git_special(worktree: Path, dot_git: str, git_files: tuple[str, ...], project: Path | None = None) -> Path | None:
    """The `.git` at `worktree`, or one of `git_files` in the git directory it leads to (or in that one's
    `commondir`), that is a FIFO, device or socket, else None (also when there is no `.git`)."""
    if _would_wait(dot_git, project):
        return Path(dot_git)
    found = git_dir_of(worktree) if os.path.lexists(dot_git) else None
    if found is None:
        return None
    git_dir = Path(found)
    directories = [git_dir]
    if special_kind(str(git_dir / "commondir")) is None:
        common = (read_git_file(git_dir / "commondir") or "").strip()
        directories += [git_dir / common] if common else []
    for directory in directories:
        for name in git_files:
            if _would_wait(str(directory / name), project):
                return directory / name
    return None


def git_safe_words(subcommand: str) -> tuple[list[str], list[str]]:
    """The words put before and after a read-only git subcommand, unasked or under a user's rule: nothing the
    repository's configuration names may run, no submodule entered, and for log/show/diff no textconv nor
    external diff (shell_allowlist.GIT_SAFE_CONFIG, GIT_NO_SUBMODULES, GIT_SAFE_DIFF)."""
    return list(GIT_SAFE_CONFIG), [*GIT_NO_SUBMODULES, *(GIT_SAFE_DIFF if subcommand != "status" else ())]


def _borrowed_git_dir(root: Path, project: Path) -> Path | None:
    """The git directory `root/.git` leads to when it is another repository's, else None.

    A `.git` link or `gitdir:` file may point out of the project (an archive's `gitdir: ../work/.git` reads the
    victim's repository next door). Git itself makes two such: a linked worktree, whose git directory names this
    `.git` back (its `gitdir` file), and a submodule, in the superproject's `.git/modules/` above it."""
    dot_git = root / ".git"
    if dot_git.is_dir() and not dot_git.is_symlink():
        return _reads_out(dot_git, project)
    found = git_dir_of(root)
    if found is None:
        return None  # git will not find a repository there either
    git_dir = real(found)
    if inside_project(project, git_dir):
        return _reads_out(git_dir, project)  # (a `gitdir:` or link into the project: its commondir counts too)
    back = (read_git_file(git_dir / "gitdir") or "").strip()
    if back and real(back) == real(dot_git) and not dot_git.is_symlink():
        return None  # a linked worktree (`git worktree add`)
    parts = git_dir.parts
    for i in range(len(parts) - 1, 0, -1):
        if parts[i] == "modules" and parts[i - 1] == ".git" and is_within(real(root), Path(*parts[:i - 1])):
            return None  # a submodule: the superproject's .git/modules/<name>, the superproject above
    return git_dir


def _reads_out(git_dir: Path, project: Path) -> Path | None:
    """Where a git directory inside the project reads outside it, else None: its `commondir` (which takes refs,
    objects and config from elsewhere: only linked worktrees' have one) or what `_leads_out` finds in it or there."""
    common = (_git_file_text(git_dir / "commondir") or "").strip()
    if not common:
        return _leads_out(git_dir, project)
    shared = real(git_dir / common)
    return (_leads_out(git_dir, project) or _leads_out(shared, project)) if inside_project(project, shared) \
        else shared


# What git reads below a git directory on a status, log, show or diff, besides its top-level files: loose refs and
# reflogs, objects and packs, `info/` (grafts and attributes: git quotes their bad lines), linked worktrees' HEADs,
# and an interrupted rebase's or cherry-pick's todo list (`git status` prints its lines).
GIT_READ_TREES = ("info", "refs", "logs", "objects", "worktrees", "rebase-merge", "rebase-apply", "sequencer")
GIT_FILE_LIMIT = 1 << 20   # git reads `commondir` and `info/alternates` whole; the check reads as much or asks
ALTERNATES_DEPTH = 5       # git follows an alternate's own alternates this deep


def _leads_out(git_dir: Path, project: Path) -> Path | None:
    """Where a git directory of the project reads a file outside it, else None: a link among its entries or
    anywhere under GIT_READ_TREES (`refs`, `objects/pack`, `refs/heads/main`, `info/grafts` into the victim's
    `.git` next door or `~/.netrc`: git quotes each bad graft line and `git status` each todo line), or an
    alternate object directory outside (what `clone --shared` writes), however its line is spelled and however
    deep in the alternates of in-project alternates it is named."""
    found = _link_out([git_dir], project, recurse=False)
    found = found or _link_out([git_dir / tree for tree in GIT_READ_TREES], project, recurse=True)
    return found or _alternates_out(git_dir / "objects", project, set(), 0)


def _link_out(tops: list[Path], project: Path, recurse: bool) -> Path | None:
    """The target of the first link in `tops` (and, with `recurse`, below them) that leaves the project.

    A link that stays inside is followed (once: links can loop), since what git reads through it is what counts;
    os.scandir's d_type spares a stat per plain entry (a repository's `objects/` holds thousands)."""
    pending: list[str] = [str(top) for top in tops]
    seen: set[Path] = set()
    while pending:
        try:
            with os.scandir(pending.pop()) as it:
                entries = list(it)
        except OSError:
            continue
        for entry in entries:
            if entry.is_symlink():
                target = real(entry.path)
                if not inside_project(project, target):
                    return target
                if recurse and target not in seen and os.path.isdir(target):
                    seen.add(target)
                    pending.append(str(target))
            elif recurse and entry.is_dir(follow_symlinks=False):
                pending.append(entry.path)
    return None


def _alternates_out(objects: Path, project: Path, seen: set[Path], depth: int) -> Path | None:
    """An alternate object directory `objects/info/alternates` names outside the project (or one of its own
    alternates does), else None. Each entry is read as git reads it (a `"quoted"` line, a `#` only in the first
    column, `..` taken lexically after the directory's real path) and as a line stripped: either reading out asks."""
    text = _git_file_text(objects / "info" / "alternates")
    if text is None:
        return None
    lines = text.split("\n")
    for entry in {*alternate_entries(text), *lines, *(line.strip() for line in lines)}:
        if not entry or entry.startswith("#"):
            continue
        joined = entry if os.path.isabs(entry) else os.path.join(real(objects), entry)
        target = real(os.path.normpath(joined))
        if not inside_project(project, target):
            return target
        if target in seen or not os.path.isdir(target):  # (os.path: a name too long is no directory)
            continue
        if depth >= ALTERNATES_DEPTH:
            raise _Ask("runs git on a repository whose alternate object directories nest deeper than git reads")
        seen.add(target)
        found = _link_out([target], project, recurse=True) or _alternates_out(target, project, seen, depth + 1)
        if found is not None:
            return found
    return None


def _git_file_text(path: Path) -> str | None:
    """The whole of one of git's files (None: missing); _Ask when it is no regular file or longer than git's
    own limit of what it reads: the check must read what git reads, not its first 4 KiB (a `commondir` of
    2,000 `./` then `../../work/.git` pointed git next door while the check saw the repository itself), and no
    further than git, which stops at a NUL (a path holding one made every later stat raise ValueError)."""
    data = read_regular(path, GIT_FILE_LIMIT + 1)
    if data is None:
        if os.path.exists(path) and not os.path.isfile(path):  # a stat never blocks, even a FIFO's
            raise _Ask(f"runs git on a repository whose {path.name} is not a regular file")
        return None
    if len(data) > GIT_FILE_LIMIT:
        raise _Ask(f"runs git on a repository whose {path.name} is too long to check")
    return data.partition(b"\0")[0].decode("utf-8", "surrogateescape")  # a C string to git: it ends at a NUL


def _git_assignments(git: str, where: _Where, options: Sequence[str] = ()) -> list[str]:
    """`NAME=value` words put before git: the door's environment (session GIT_SAFE_ENV: no transport, no
    lazy fetch, no optional lock) and each filter driver switched off through GIT_CONFIG_KEY_n/VALUE_n,
    which take a key verbatim (`-c filter.x=y.clean=` would set `filter.x`). `options`: the command's own words
    before its subcommand (`-C dir`, `--git-dir=…`: under a rule), so the scan reads the configuration git will."""
    settings = _filter_overrides(git, where, options)
    env = {**GIT_SAFE_ENV, **git_config_pins()}  # (assignments before git outrank a `printf -v HOME` before it)
    root = git_worktree_root(where.cwd)
    if root is not None:
        # git stops at the `.git` judged (`_check_git`): past one that is no repository (an empty directory, a
        # FIFO) it would climb on to the dotfiles `~/.git` or the repository the archive was unpacked in.
        env["GIT_CEILING_DIRECTORIES"] = str(root.parent)
    env["GIT_CONFIG_COUNT"] = str(len(settings))
    for n, (key, value) in enumerate(settings):
        env[f"GIT_CONFIG_KEY_{n}"] = key
        env[f"GIT_CONFIG_VALUE_{n}"] = value
    return [f"{name}={shlex.quote(value)}" for name, value in env.items()]


# What the filter scan reads: the filter drivers, and the settings naming a file git opens on a status, log or
# diff (`core.attributesFile` is pinned to /dev/null on the command line).
# And the probe: a setting given the way the overrides are (GIT_CONFIG_COUNT), which only git >= 2.31 reads.
PROBE_KEY = "evo-agent.probe"
FILTER_AND_FILE_KEYS = (r"^(filter\.|diff\..*\.textconv$|core\.excludesfile$|mailmap\.file$|diff\.orderfile$"
                        r"|evo-agent\.probe$)")


def _check_named_file(key: str, value: str, where: _Where) -> None:
    """_Ask when a setting names a FIFO, device or socket: git opens it (`core.excludesFile` on a status,
    `mailmap.file` on a log, `diff.orderFile` on a diff) and would wait for a writer until the timeout. The path
    as git takes it: `~/` in the pinned empty home, relative to the work tree's top."""
    path = value
    if path.startswith("~/"):
        path = os.path.join(git_config_pins()["HOME"], path[2:])
    root = git_worktree_root(where.cwd) or where.cwd
    kind = special_kind(os.path.join(root, path))
    if kind is not None:
        raise _Ask(f"runs git with {key} naming {value!r}, {kind}: git would wait on it")


def _filter_overrides(git: str, where: _Where, options: Sequence[str] = ()) -> list[tuple[str, str]]:
    """(key, value) turning off each filter driver the configuration defines: `filter.X.clean` empty, ….

    Read in `where.cwd`, where the command runs: a repository nested in the project has its own configuration.

    `git status` and `git diff` run a file's clean filter when they re-hash it; an empty command
    turns a driver off. Reading the configuration runs nothing. Its stdin is /dev/null, as every git evo-agent
    starts: an archive's `.git/config` can `[include] path = /dev/stdin`, and git read the user's terminal (the
    keys typed meanwhile were gone) until its timeout.

    The overrides go through GIT_CONFIG_COUNT, which git reads only since 2.31: Debian 11's and Ubuntu 20.04's git
    ran the filter anyway. So the scan itself is given a setting that way (`PROBE_KEY`, a value drawn anew: the
    repository cannot set it in advance), and a git that does not report it back cannot be told to skip a driver.
    """
    import secrets

    nonce = secrets.token_hex(8)
    env = {**_git_env(where.root), "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": PROBE_KEY, "GIT_CONFIG_VALUE_0": nonce}
    try:
        found = subprocess.run([git, *options, "config", "--null", "--get-regexp", FILTER_AND_FILE_KEYS],
                               cwd=where.cwd, stdin=subprocess.DEVNULL, capture_output=True, timeout=10, env=env)
    except subprocess.TimeoutExpired:
        # An `[include] path` that is a FIFO (or anything as slow) holds git's configuration reading: the command
        # would wait the same way, and a scan that never finished must not read as "no filter driver".
        raise _Ask("runs git on a repository whose configuration could not be read in time") from None
    except OSError:
        return []  # no git to run: the command will not find one either
    names: set[str] = set()
    out: list[tuple[str, str]] = []
    honoured = False
    for item in found.stdout.split(b"\0"):
        key, _, value = item.decode("utf-8", "surrogateescape").partition("\n")
        if key == PROBE_KEY:
            honoured |= value == nonce
        elif key.startswith("filter."):
            names.add(key.rsplit(".", 1)[0])
        elif key.startswith("diff.") and key.endswith(".textconv"):
            # `git status -v` (under a rule) has no --no-textconv: the driver shows the file as it is (an empty
            # command would fail the whole diff)
            out.append((key, _cat(where.root)))
        elif key:
            _check_named_file(key, value, where)
    for name in sorted(names):
        out += [(f"{name}.{field}", "") for field in ("clean", "smudge", "process")]
        out.append((f"{name}.required", "false"))
    if out and not honoured:
        raise _Ask("runs a git older than 2.31 on a repository with filter or textconv drivers, which that git "
                   "cannot be told to skip")
    return out


def _cat(project: Path) -> str:
    """cat by its absolute path from a PATH entry that counts (never the clone's `node_modules/.bin/cat`)."""
    from evo_agent.session import absolute_program

    return shlex.quote(absolute_program("cat", outside=str(project)) or "/bin/cat")




# The subcommands that read the work tree's file of every index entry (log and show read only objects).
WORKTREE_READERS = frozenset({"status", "diff"})


def _check_index(git: str, where: _Where, outside_asks: bool = True) -> set[str]:
    """_Ask when the index lists a path that leaves the work tree.

    git reads the work tree's file of each index entry by its name, and an unpacked archive ships its own
    `.git/index`: an entry named `../../.ssh/id_rsa` or `/home/u/.netrc` (git never writes one, nor reads one
    from a commit) made an unasked `git diff` print that file as the entry's change. The names come from git's own
    reading of the index (`ls-files -z`: every version, a split index), with the door's settings (`core.fsmonitor`
    runs on an index read); listing cannot finish, or names one out (`outside_asks`: status and diff, which read
    those files; log and show read objects only): ask.

    Returns the directories holding index entries, relative to the top: the work-tree walk enters them even where
    the ignore rules exclude them (`work_tree_special`)."""
    from evo_agent.session import GIT_SAFE_CONFIG as door_config

    root = git_worktree_root(where.cwd)
    env = _git_env(where.root)
    if root is not None:
        env["GIT_CEILING_DIRECTORIES"] = str(root.parent)  # the repository the command will find, no other
    argv = [git, "--no-pager", *(w for setting in door_config for w in ("-c", setting)), "ls-files", "-z",
            "--full-name"]
    try:
        # from the top: run in a subdirectory, ls-files lists that subtree alone, and the walk then skipped an
        # ignored directory elsewhere whose tracked files (and their FIFO `.gitattributes`) git still reads
        listed = subprocess.run(argv, cwd=root or where.cwd, stdin=subprocess.DEVNULL, capture_output=True,
                                timeout=10, env=env)
    except (OSError, subprocess.TimeoutExpired):
        if not outside_asks:
            return set()  # log and show never read the index: as before, they run (the walk then skips ignored dirs)
        raise _Ask("runs git on a repository whose index could not be listed") from None
    directories: set[str] = set()
    for name in listed.stdout.split(b"\0"):
        parts = name.removesuffix(b"/").split(b"/")
        if name and (name.startswith(b"/") or any(part in (b"", b".", b"..") for part in parts)):
            if not outside_asks:
                continue
            shown = name.decode("utf-8", "replace")
            raise _Ask(f"runs git on a repository whose index lists {shown!r}, outside its work tree")
        for depth in range(1, len(parts)):
            directories.add(b"/".join(parts[:depth]).decode("utf-8", "surrogateescape"))
    return directories


def _git_env(project: Path) -> dict[str, str]:
    """The environment the filter scan runs in: the one the unasked command runs in (bash.py drops every `GIT_*`
    of the caller's, see `unasked_environment`), so the scan sees exactly the configuration the command will."""
    env = unasked_environment(os.environ, project)  # (it runs outside the sandbox: no library of the project's)
    env.update(GIT_SAFE_ENV)
    env.update(git_config_pins())
    return env


# Variables that change how the allowlist's programs read their words, dropped for a command run unasked.
# `POSIXLY_CORRECT`: GNU getopt stops at the first operand, so `head README.md -n5/../../x` (judged as head's `-n`)
# opened the path through a clone's directory `-n5`, and `uniq README.md -f1/../../x` wrote to it.
# `GREP_OPTIONS`: options put before grep's own by GNU grep before 3.6 (Ubuntu 20.04, RHEL 8) and BSD grep (macOS),
# which the allowlist never saw (`-R` follows links out of the project).
UNJUDGED_READING = frozenset({"POSIXLY_CORRECT", "GREP_OPTIONS"})


def unasked_environment(environ: Mapping[str, str], project: Path | str | None = None) -> dict[str, str]:
    """`environ` without any `GIT_*`: what an unasked command runs with (before its own assignments). Nor any
    `LD_LIBRARY_PATH` entry that is relative or inside `project` (session.library_environment): the loader would
    take the clone's `libpcre2-8.so.0` into grep, rg or git from there. Nor `UNJUDGED_READING`: the command's
    programs read each word as the allowlist read it (options anywhere, as GNU getopt permutes them).

    Unasked git must read the repository `_check_git` judged, with the settings it chose: a caller's
    `GIT_DIR`, `GIT_WORK_TREE`, `GIT_INDEX_FILE`, `GIT_OBJECT_DIRECTORY`, `GIT_COMMON_DIR` (set for a hook, a
    dotfiles setup) point it at another repository; `GIT_CONFIG_PARAMETERS`, `GIT_CONFIG_COUNT`,
    `GIT_CONFIG_GLOBAL`/`_SYSTEM`/`GIT_CONFIG` add settings (a filter's clean command) the check never saw;
    `GIT_EXTERNAL_DIFF`, `GIT_PAGER`, `GIT_SSH_COMMAND`, `GIT_ASKPASS`, `GIT_EDITOR`, `GIT_EXEC_PATH` name
    programs; `GIT_TRACE*` make a read write files. None is needed for a look at status, a log or a diff,
    so all go, as for evo-agent's own git door (session/git.py); an approved command keeps them."""
    kept = {k: v for k, v in environ.items() if not k.startswith("GIT_") and k not in UNJUDGED_READING}
    return library_environment(project, kept)


def plan_ruled_git(command: str, project_dir: Path | str, cwd: Path | str | None = None,
                   search_path: str | None = None) -> str | None:
    """The command a user's rule approved as it then runs, when it is one read-only git command (a subcommand the
    allowlist knows: status, log, diff, show, whatever its options); None: it runs as written.

    `Bash(git status:*)` covers `git status -v`, which the allowlist does not list: without this, git read an
    unpacked archive's `.git/config` and ran its `core.fsmonitor`, hooks, `diff.external`, textconv, filters. So
    it gets exactly what unasked git gets (`git_safe_words`, `_git_assignments`): git by its absolute path from
    the PATH entries that count, the settings put right before the subcommand (after the command's own `-c`,
    `-p`: they win), the door's environment. The command's words are kept as bash reads them; a command this
    cannot rebuild faithfully (an operator, `$`, a backslash) runs as written. A writing subcommand (`git commit`
    under `Bash(git commit:*)`) runs as written: the user approved it, hooks included."""
    try:
        tokens = split_words(command)
    except ShellSyntaxError:
        return None
    words = [t for t in tokens if isinstance(t, Word)]
    if not words or len(words) != len(tokens) or words[0].is_pattern or words[0].text != "git":
        return None
    if any(not quoted and ("$" in text or "`" in text or "\\" in text) for w in words for text, quoted in w.parts):
        return None
    texts = [w.text for w in words[1:]]
    at = git_subcommand_at(texts)
    if at is None or texts[at] not in GIT_SUBCOMMANDS:
        return None
    project = real(project_dir)
    start = real(cwd) if cwd is not None else project
    where = _Where(project, start)
    path = os.environ.get("PATH", "") if search_path is None else search_path
    git = resolve_program("git", safe_search_path(path, project), project, start)
    try:
        assignments = _git_assignments(git, where, texts[:at])
    except _Ask as exc:  # a configuration git cannot read in time (a FIFO): git would wait on it the same way
        return f"echo {shlex.quote(f'evo-agent: not run: the command {exc}')} >&2; exit 1"
    before, after = git_safe_words(texts[at])
    rendered = [_render(w) for w in words[1:]]
    return " ".join([*assignments, shlex.quote(git), *rendered[:at], *before, rendered[at], *after,
                     *rendered[at + 1:]])


def _render(word: Word) -> str:
    """`word` as bash reads it: quoted parts quoted, the rest (globs, `~`) as written."""
    return "".join(shlex.quote(text) if quoted else text for text, quoted in word.parts) or "''"


def prefix_rule_problem(command: str, prefix: str, project_dir: Path | str) -> str | None:
    """Why a `Bash(prefix:*)` rule must not cover `command`, or None.

    The rule covers the prefix and arguments, but not an argument that is (or a glob that expands
    to) a writing or executing option of that program (shell_allowlist.DENIED_LONG), nor a glob that
    expands to anything option-like.
    """
    try:
        tokens = split_words(command)
        prefix_words = split_words(prefix)
    except ShellSyntaxError as exc:
        return f"cannot be parsed ({exc})"
    words = [t for t in tokens if isinstance(t, Word)]
    if len(words) != len(tokens) or not words:
        return "is not a simple command"
    program = words[0].text
    subcommand = git_subcommand([w.text for w in words[1:]]) if program == "git" else None
    for word in words[len(prefix_words):]:
        matches, from_glob = expand(word, project_dir)
        for match in matches:
            if from_glob and match.startswith("-"):
                return f"has a glob ({word.text}) that expands to the option-like name {match!r}"
            if denied_option(program, match, subcommand):
                return f"uses {program} {match.split('=')[0]}, which may write or execute"
    return None


__all__ = ["ReadOnlyPlan", "git_safe_words", "plan_read_only", "plan_ruled_git", "prefix_rule_problem",
           "read_only_reason", "resolve_program", "safe_search_path", "through_proc", "unasked_environment"]
