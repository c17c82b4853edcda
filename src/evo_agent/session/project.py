"""Which directory is the project, and what git says about it — found the way git finds its repository.

SPEC §1: the project is `--project-dir`, else the nearest ancestor of the
current directory holding `.evo-agent/`, else the git worktree root, else the
current directory. So `-c` from `src/deep/dir` finds the sessions started at
the top, and no second `.evo-agent/` appears in a subdirectory.

The search for `.evo-agent/` stops at the git worktree root, as git stops at
its repository: a `~/.evo-agent/` left by a run in the home directory does
not capture every repository below it.

The branch is read from the repository's `HEAD` file, not by spawning git:
one small read against a process start (benchmarks/git_branch.py measures
both). Worktrees and submodules, whose `.git` is a file (`gitdir: …`), are
followed. An unborn HEAD (`git init`, no commit yet) gives the branch it
points at (`main`), a detached HEAD its short commit. When the file cannot be
understood, git itself is asked — through `git.py`, which names the
repository explicitly and turns off everything that could run its code.
"""

from __future__ import annotations

import os
from pathlib import Path

from .layout import PROJECT_DIR_NAME
from .lazyre import lazy_re
from .plaindata import plain_dataclass

SHORT_COMMIT = 7  # git's default abbreviation (core.abbrev) in a small repository
_SHA_RE = lazy_re(r"\A[0-9a-f]{40}(?:[0-9a-f]{24})?\Z")  # SHA-1 or SHA-256, compiled at first use
GIT_TIMEOUT_S = 5


def git_worktree_root(start: Path | str) -> Path | None:
    """The nearest ancestor of `start` (itself included) holding `.git` (a directory or a worktree's file); None
    when that `.git` is above `start` and another user's (`planted_above`)."""
    here = Path(start).absolute()
    for directory in (here, *here.parents):
        if os.path.lexists(directory / ".git"):
            return None if planted_above(here, directory / ".git") else directory
    return None


def planted_above(here: Path, marker: Path) -> bool:
    """`marker` (a `.git` or `.evo-agent` found above the start directory) belongs to another user (not you, not
    root): anyone can create `/tmp/.git` or `/tmp/.evo-agent`, and made the project of every directory below it,
    it put all of `/tmp` "inside the project" (read unasked, written in accept-edits) and its AGENTS.md in the
    prompt. git refuses such a repository too ("dubious ownership", CVE-2022-24765); the search stops at `here`."""
    if marker.parent == here:
        return False
    try:
        owner = os.lstat(marker).st_uid
    except OSError:
        return False
    return owner not in (os.geteuid(), 0)


def find_project_dir(start: Path | str) -> Path:
    """The project of a command run in `start`.

    The nearest `.evo-agent/` up to the git root, else the git root, else `start`; never the home directory
    for a `start` below it. A `~/.evo-agent/` (one run in `~`) or a dotfiles `~/.git` would otherwise make `~`
    the project of every directory below it that is no repository of its own (an unpacked tarball in
    `~/Downloads`): "inside the project" would then take in `~/.ssh`, read unasked (SPEC §9).
    """
    here = Path(start).absolute()
    homes = _home_dirs()
    for directory in (here, *here.parents):
        if directory in homes and directory != here:
            break  # the search stops below the home directory, as it stops at a repository
        agent_dir, git = directory / PROJECT_DIR_NAME, directory / ".git"
        marker = agent_dir if agent_dir.is_dir() else git if os.path.lexists(git) else None
        if marker is not None:  # the nearest `.evo-agent/`, or the worktree root: the search stops here, as git's does
            return here if planted_above(here, marker) else directory
    return here


def _home_dirs() -> tuple[Path, ...]:
    """The home directory as `$HOME` names it and as it really is (a start directory is a real path)."""
    home = os.path.expanduser("~")
    if not os.path.isabs(home):
        return ()
    return (Path(home), Path(os.path.realpath(home)))


def read_regular(path: str | Path, limit: int) -> bytes | None:
    """Up to `limit` bytes of a regular file (to that limit or its end), or None: missing, unreadable, or not a
    regular file. Opened without blocking: a FIFO an unpacked archive put in the place of one of git's files
    would hang the read (and every git evo-agent starts)."""
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except (OSError, ValueError):
        return None
    try:
        return read_upto(fd, limit) if stat.S_ISREG(os.fstat(fd).st_mode) else None
    except OSError:
        return None
    finally:
        os.close(fd)


def read_upto(fd: int, limit: int) -> bytes:
    """What `fd` holds, to its end or `limit` bytes (a read may return less than asked: it is read again)."""
    chunks, left = [], limit
    while left > 0:
        chunk = os.read(fd, left)
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_git_file(path: Path, limit: int = 4096) -> str | None:
    """The start of one of git's small files (`.git`, `HEAD`, `commondir`), or None: missing, unreadable, or not a
    regular file (`read_regular`). Up to its first NUL, as git reads it (a C string): a path with a NUL in it made
    every stat raise ValueError."""
    data = read_regular(path, limit)
    return None if data is None else data.partition(b"\0")[0].decode("utf-8", "replace")


# How much of `commondir` is read: git reads all of it, so 4 KiB of `./` before `../.shared` named `.git` itself
# to a shorter read, and a FIFO in the directory git used went unseen (tools/shell_readonly.py asks beyond this).
COMMONDIR_LIMIT = 1 << 20


# The files of a git directory git opens on a status, log or diff (or evo-agent's plumbing): each one a FIFO (an
# unpacked archive's) makes git wait for a writer forever; a device or socket is no git file either.
GIT_OWN_FILES = ("HEAD", "config", "config.worktree", "index", "packed-refs", "commondir", "gitdir", "shallow",
                 "info/exclude", "info/attributes", "info/grafts", "info/sparse-checkout", "objects/info/alternates",
                 "objects/info/http-alternates", "objects/info/commit-graph", "objects/info/packs", "logs/HEAD",
                 "MERGE_HEAD", "MERGE_MSG", "MERGE_MODE", "CHERRY_PICK_HEAD", "REVERT_HEAD", "REBASE_HEAD",
                 "BISECT_LOG", "BISECT_START", "FETCH_HEAD", "ORIG_HEAD", "AUTO_MERGE")


def git_special_file(git_dir: Path) -> Path | None:
    """The first of git's own files (GIT_OWN_FILES, and every file under GIT_OWN_TREES) in `git_dir`, and in the
    common directory its `commondir` names, that exists but is no regular file (symlinks followed: a link to
    `/dev/zero` counts); else None.

    One stat per name (a FIFO's stat never blocks): about 30 stats per call, and a scandir per refs/objects
    directory.
    """
    import stat

    directories = [str(git_dir)]
    common = (read_git_file(git_dir / "commondir", COMMONDIR_LIMIT) or "").strip()  # whole, as git reads it
    if common:
        directories.append(os.path.realpath(os.path.join(git_dir, common)))  # (a long `./././…` stats as ENAMETOOLONG)
    for directory in directories:
        for name in GIT_OWN_FILES:
            path = os.path.join(directory, name)
            try:
                mode = os.stat(path).st_mode
            except OSError:
                continue
            if not stat.S_ISREG(mode):
                return Path(path)
        for tree in GIT_OWN_TREES:
            odd = _special_under(os.path.join(directory, tree))
            if odd is not None:
                return Path(odd)
        odd = _special_in_alternates(os.path.join(directory, "objects"), 0, set())
        if odd is not None:
            return Path(odd)
        for name in ("config", "config.worktree"):
            included = included_special_file(os.path.join(directory, name))
            if included is not None:
                return Path(included)
        shared = _special_shared_index(directory)
        if shared is not None:
            return Path(shared)
    return None


def _special_shared_index(directory: str) -> str | None:
    """A `sharedindex.<hash>` in `directory` that is no regular file: a split index (`update-index --split-index`)
    names one, and every read of the index opens it (a FIFO there held `git ls-files` until the timeout)."""
    import stat

    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                if entry.name.startswith("sharedindex."):
                    try:
                        if not stat.S_ISREG(os.stat(entry.path).st_mode):
                            return entry.path
                    except OSError:
                        continue  # a dangling link: git finds no file there, nothing to wait on
    except OSError:
        pass
    return None


# How deep git follows includes (MAX_INCLUDE_DEPTH), and how much of one configuration file is judged.
INCLUDE_DEPTH = 10
CONFIG_LIMIT = 1 << 20


def included_special_file(config: str, depth: int = 0, seen: set[tuple[int, int, str]] | None = None) -> str | None:
    """The first file the git configuration file `config` includes (`[include] path`, `[includeIf "…"] path`, and
    what those include in turn) that exists but is no regular file (links followed), or is another user's (not
    yours, not root's), else None.

    git opens an included path as configuration whatever it is: an unpacked archive's `.git/config` with
    `path = /dev/tty` (or a link to it, or `/dev/pts/0` … `/dev/pts/255`, which reach the user's terminal from any
    session) made every git evo-agent started read the keys the user typed, as configuration, until its
    timeout; a FIFO made it wait out the timeout. Every condition is taken as true. A file too large to judge
    whole counts as special (its `path` may lie past what was read). Each file is judged once from each real
    directory (`seen`; its relative includes depend on the directory it was named in): a configuration
    including itself a hundred times would otherwise be read 100**10 times.
    """
    import stat

    seen = set() if seen is None else seen
    data = _read_config(config)
    if data is None:
        return None
    if len(data) > CONFIG_LIMIT:
        return config
    for value in {v for spellings in _include_paths(data) for v in spellings}:
        for target in _interpolate(value, os.path.dirname(config)):
            try:
                st = os.stat(target)
            except (OSError, ValueError):
                continue  # nothing there: git skips a missing include
            mode = st.st_mode
            if st.st_uid not in (os.geteuid(), 0):
                return target  # another user's: they may make it include a terminal once this check is done
            if stat.S_ISREG(mode):
                key = (st.st_dev, st.st_ino, os.path.realpath(os.path.dirname(target)))
                if depth < INCLUDE_DEPTH and key not in seen:
                    seen.add(key)
                    found = included_special_file(target, depth + 1, seen)
                    if found is not None:
                        return found
            elif not stat.S_ISDIR(mode):
                return target
    return None


def _read_config(path: str) -> bytes | None:
    """A regular file's bytes (one more than CONFIG_LIMIT at most), without blocking; None when it is not one."""
    return read_regular(path, CONFIG_LIMIT + 1)


def _include_paths(data: bytes) -> list[tuple[str, ...]]:
    """Every `include.path` and `includeIf.<condition>.path` value of one configuration file, read the way git's
    parser reads it (config.c: a key after a header on the same line, quotes, escapes, a value continued
    past a backslash-newline, comments; only ASCII space, tab, CR and LF are whitespace), up to the first error,
    where git stops too. Each value in every spelling a git version gives it (see `_value`).

    A section name is letters, digits, `-` and `.` only, never escaped or continued: a file that does not hold
    `include` in any case has none (the common case costs one search).
    """
    if b"include" not in data.lower():
        return []
    text = data.decode("utf-8", "surrogateescape").replace("\r\n", "\n")
    text = text.removeprefix("\ufeff")
    found: list[tuple[str, ...]] = []
    section = ""
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        i += 1
        if c in _SPACE:
            continue
        if c in "#;":
            i = _line_end(text, i)
            continue
        if c == "[":
            header = _section_header(text, i)
            if header is None:
                return found
            section, i = header
            continue
        if not _is_alpha(c):
            return found
        start = i - 1
        while i < n and (_is_alnum(text[i]) or text[i] == "-"):
            i += 1
        key = text[start:i].lower()
        while i < n and text[i] in " \t":
            i += 1
        if i >= n or text[i] == "\n":
            continue  # a key with no `=`: a boolean, no path
        if text[i] != "=":
            return found
        value, i = _value(text, i + 1)
        if value is None:
            return found
        if key == "path" and (section == "include" or section.startswith("includeif\0")):
            found.append(tuple(dict.fromkeys(v.partition("\0")[0] for v in value)))  # a C string: ends at a NUL
    return found


_SPACE = " \t\r\n"  # git's isspace (sane_ctype): a no-break space or a vertical tab is part of a path to git


def _is_alpha(c: str) -> bool:
    return c.isascii() and c.isalpha()


def _is_alnum(c: str) -> bool:
    return c.isascii() and c.isalnum()


def _line_end(text: str, i: int) -> int:
    end = text.find("\n", i)
    return len(text) if end < 0 else end


def _section_header(text: str, i: int) -> tuple[str, int] | None:
    """(`name` lowercased, or `name\\0subsection`; the index after `]`) for a header starting at `text[i]`."""
    n, start = len(text), i
    while i < n and (_is_alnum(text[i]) or text[i] in "-."):
        i += 1
    name = text[start:i].lower()
    if i < n and text[i] == "]":
        return name, i + 1
    if i >= n or text[i] not in _SPACE:
        return None
    while i < n and text[i] in _SPACE:
        if text[i] == "\n":
            return None
        i += 1
    if i >= n or text[i] != '"':
        return None
    i += 1
    sub: list[str] = []
    while i < n and text[i] != '"':
        if text[i] == "\n":
            return None
        if text[i] == "\\":
            i += 1
            if i >= n or text[i] == "\n":
                return None
        sub.append(text[i])
        i += 1
    if i + 1 >= n or text[i + 1] != "]":
        return None
    return f"{name}\0{''.join(sub)}", i + 2


def _value(text: str, i: int) -> tuple[tuple[str, str] | None, int]:
    """A value from `text[i]` (after `=`) to its line's end, as git's parse_value makes it: unquoted whitespace
    dropped before and after, and inside it kept as written (newer git) or one space per character (older
    git, 2.39 among them: both are returned); the end of the file ends a line (and a backslash before it)."""
    out: list[str] = []
    old: list[str] = []
    n, quote, comment, pending = len(text), False, False, ""
    while True:
        c = text[i] if i < n else "\n"
        i += 1
        if c == "\n":
            if quote:
                return None, i
            return ("".join(out), "".join(old)), i
        if comment:
            continue
        if c in _SPACE and not quote:
            if out:
                pending += c
            continue
        if not quote and c in ";#":
            comment = True
            continue
        out.append(pending)
        old.append(" " * len(pending))
        pending = ""
        if c == "\\":
            c = text[i] if i < n else "\n"
            i += 1
            if c == "\n":
                continue  # a value continued on the next line
            c = {"t": "\t", "b": "\b", "n": "\n"}.get(c, c)
            if c not in "\t\b\n\\\"":
                return None, i
            out.append(c)
            old.append(c)
        elif c == '"':
            quote = not quote
        else:
            out.append(c)
            old.append(c)


def _interpolate(value: str, base: str) -> list[str]:
    """The paths git may open for an include `value` (interpolate_path): `~/` in the pinned empty home (git.py),
    `~user/`, `%(prefix)/` under each usual prefix, anything relative to the including file's directory."""
    if not value:
        return []
    if value.startswith("%(prefix)/"):
        rest = value[len("%(prefix)/"):]
        return [os.path.join(prefix, rest) for prefix in ("/usr", "/usr/local", "/")]
    if value.startswith("~"):
        user, _, rest = value[1:].partition("/")
        if not user:
            from .git import config_pins

            return [os.path.join(config_pins()["HOME"], rest)]
        import pwd

        try:
            return [os.path.join(pwd.getpwnam(user).pw_dir, rest)]
        except KeyError:
            return []
    return [value if os.path.isabs(value) else os.path.join(base, value)]


def alternate_entries(text: str) -> list[str]:
    """`info/alternates` cut into entries as git's parse_alt_odb_entry does: a `#` in the first column starts a
    comment, a `"` a C-quoted path (after which one character, the newline git assumes, is skipped), anything
    else runs to the newline. Nothing is stripped."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        quoted = _unquote_c(text, i) if text[i] == '"' else None
        if quoted is not None:
            entry, end = quoted
        else:
            end = text.find("\n", i)
            end = n if end < 0 else end
            entry = "" if text[i] == "#" else text[i:end]
        if end < n:
            end += 1
        out.append(entry)
        i = end
    return out


_C_ESCAPES = {'"': '"', "\\": "\\", "a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


def _unquote_c(text: str, start: int) -> tuple[str, int] | None:
    """(the path, the index after its closing quote) for the C-quoted string at `start`, as git's
    unquote_c_style reads it; None where git's fails too (it then reads the line unquoted)."""
    out: list[str] = []
    i = start + 1
    while i < len(text):
        char = text[i]
        if char == '"':
            return "".join(out), i + 1
        if char == "\\":
            code = text[i + 1:i + 4]
            if code[:1] in _C_ESCAPES:
                out.append(_C_ESCAPES[code[:1]])
                i += 2
                continue
            if len(code) == 3 and code[0] in "0123" and all(c in "01234567" for c in code):
                byte = int(code, 8)
                out.append(chr(byte) if byte < 0x80 else chr(0xDC00 + byte))  # as surrogateescape decodes it
                i += 4
                continue
            return None
        out.append(char)
        i += 1
    return None


ALTERNATES_LIMIT = 1 << 20  # git reads `objects/info/alternates` whole: one longer counts as special
ALTERNATES_DEPTH = 5        # git follows an alternate's own alternates this deep


def _special_in_alternates(objects: str, depth: int, seen: set[str]) -> str | None:
    """The first entry that is neither a regular file nor a real directory where git looks for objects in an
    alternate object directory `objects/info/alternates` names (`_special_in_objects`; and in their own alternates,
    as deep as git follows them), else None.

    git looks up objects there too (what `clone --shared` writes; an archive's `../../vendor/objects`): a FIFO pack
    index in one held an unasked `git log` until the bash tool's timeout and evo-agent's own `rev-parse --short
    HEAD` until its git timeout, at every start. Each line as git reads it (`alternate_entries`) and as written."""
    path = os.path.join(objects, "info", "alternates")
    data = read_regular(path, ALTERNATES_LIMIT + 1)
    if data is None:
        return None  # (one that is no regular file is among GIT_OWN_FILES)
    if len(data) > ALTERNATES_LIMIT:
        return path
    text = data.partition(b"\0")[0].decode("utf-8", "surrogateescape")
    lines = text.split("\n")
    base = os.path.realpath(objects)
    for entry in sorted({*alternate_entries(text), *lines, *(line.strip() for line in lines)}):
        if not entry or entry.startswith("#"):
            continue
        target = os.path.normpath(os.path.join(base, entry))
        if target in seen:
            continue
        seen.add(target)
        found = _special_in_objects(target)
        if found is None and depth < ALTERNATES_DEPTH:
            found = _special_in_alternates(target, depth + 1, seen)
        if found is not None:
            return found
    return None


def _special_in_objects(objects: str) -> str | None:
    """`_special_under` of what git reads in an object directory: its `pack/`, `info/` and two-digit fan-out
    directories. An alternate may name any directory (a home directory, `/`): scanning all of it held every check."""
    try:
        with os.scandir(objects) as entries:
            subdirs = [e.path for e in entries if e.name in ("pack", "info") or (
                len(e.name) == 2 and all(c in "0123456789abcdef" for c in e.name))]
    except OSError:
        return None
    return next((found for found in map(_special_under, subdirs) if found is not None), None)


# Directories whose every file git may open on a status or log: loose refs (HEAD's branch, tags, remotes) and
# objects (a loose commit, a pack). A FIFO at `refs/heads/main` made `git log` wait as one at `HEAD` did; and each
# linked worktree's record, which `git worktree list` reads (a FIFO at `worktrees/<id>/locked` held it). Reflogs
# (`git log -g main`, `git status --show-stash`) and the todo lists of a cherry-pick or rebase in progress, which
# `git status` reads to describe it, held them the same way.
GIT_OWN_TREES = ("refs", "objects", "worktrees", "logs", "sequencer", "rebase-merge", "rebase-apply")


def _special_under(top: str) -> str | None:
    """The first entry under `top` that is neither a regular file nor a real directory (a FIFO, device, socket, a
    link to anything but a regular file), else None.

    os.scandir reads each entry's type from the directory itself: no stat per file but for links, so a repository's
    thousands of loose objects cost a readdir per fan-out directory (about 1 ms for 256 of them)."""
    import stat

    pending = [top]
    while pending:
        try:
            with os.scandir(pending.pop()) as entries:
                for entry in entries:
                    if entry.is_symlink():
                        try:
                            if stat.S_ISREG(os.stat(entry.path).st_mode):
                                continue
                        except OSError:
                            continue  # a dangling link: git finds no file there, nothing to wait on
                        return entry.path
                    if entry.is_dir(follow_symlinks=False):
                        pending.append(entry.path)
                    elif not entry.is_file(follow_symlinks=False):
                        return entry.path
        except OSError:
            continue
    return None


def git_dir_of(worktree_root: Path) -> Path | None:
    """The git directory of a worktree root: `.git` itself, or where its `gitdir: …` file points."""
    dot_git = worktree_root / ".git"
    if dot_git.is_dir():
        return dot_git
    text = read_git_file(dot_git)
    if text is None:
        return None
    for line in text.splitlines():
        if line.startswith("gitdir:"):
            target = Path(line[len("gitdir:"):].strip())
            return target if target.is_absolute() else (worktree_root / target)
    return None


def branch_from_head(head: str) -> str | None:
    """What `HEAD`'s text names: the branch of `ref: refs/heads/X`, the short commit of a detached HEAD."""
    head = head.strip()
    if head.startswith("ref:"):
        ref = head[len("ref:"):].strip()
        for prefix in ("refs/heads/", "refs/"):
            if ref.startswith(prefix):
                return ref[len(prefix):] or None
        return ref or None
    if _SHA_RE.match(head):
        return head[:SHORT_COMMIT]
    return None


def git_branch_of(cwd: Path | str) -> str | None:
    """The branch at `cwd` (unborn included), the short commit when detached, None outside a repository."""
    root = git_worktree_root(cwd)
    if root is None:
        return None
    git_dir = git_dir_of(root)
    if git_dir is None:
        return None if os.path.lexists(root / ".git") and not os.path.isdir(root / ".git") else \
            git_branch_by_spawning(cwd)
    head = git_dir / "HEAD"
    text = read_git_file(head)
    if text is None and os.path.lexists(head) and not os.path.isfile(head):
        return None  # a FIFO or a device in its place: git would block on it too
    branch = branch_from_head(text) if text is not None else None
    return branch or git_branch_by_spawning(cwd)


def _git(cwd: Path | str, *args: str) -> str | None:
    """git through the one door that cannot run the repository's code (git.py); None outside a repository."""
    from .git import run_git

    return run_git(cwd, *args, timeout=GIT_TIMEOUT_S)


def git_branch_by_spawning(cwd: Path | str) -> str | None:
    """The same answer from git itself: `symbolic-ref --short HEAD`, else `rev-parse --short HEAD`."""
    for args in (("symbolic-ref", "--short", "HEAD"), ("rev-parse", "--short", "HEAD")):
        out = _git(cwd, *args)
        if out and out.strip():
            return out.strip()
    return None


@plain_dataclass(frozen=True)
class Worktree:
    """One worktree of a repository (a plain data class: `sessions list` loads this module without `dataclasses`)."""

    path: Path
    branch: str | None


def git_worktrees(cwd: Path | str) -> list[Worktree]:
    """Every worktree of the repository at `cwd` (`git worktree list --porcelain`); [] outside one."""
    out = _git(cwd, "worktree", "list", "--porcelain")
    if out is None:
        return []
    trees: list[Worktree] = []
    path: Path | None = None
    branch: str | None = None
    for line in out.splitlines() + [""]:
        if line.startswith("worktree "):
            path, branch = Path(line[len("worktree "):]), None
        elif line.startswith("branch "):
            branch = branch_from_head("ref: " + line[len("branch "):])
        elif line.startswith("HEAD ") and branch is None:
            branch = branch_from_head(line[len("HEAD "):])
        elif not line and path is not None:
            trees.append(Worktree(path, branch))
            path, branch = None, None
    return trees
