"""Whether a session was recorded here, by this user — or planted, copied or shared ("foreign").

Sessions live inside the project, which is exactly where a cloned repository
(or an unpacked archive, or a colleague with write access) can put files. A
planted transcript resumed as if it were the user's own would hand the model
a stranger's words as the user's history. So every session is judged before
it is continued, and one that this user did not record here is *foreign*:

- any of its files is tracked by git (evo-agent never lets git see them:
  `sessions/.gitignore` holds `*`);
- its directory or transcript belongs to another user;
- its directory or transcript is more open than 0700/0600 (evo-agent creates
  them exactly so, whatever the umask; git checkouts and archives do not);
- this user's evo-agent has no record of making it (origin.py): what an
  archive unpacked by the user brings, with the user's own owner and modes;
- it is dated in the future (its id or its last record), which would sort it
  above everything the user really did;
- it is a copy fetched from the team store of a session someone else wrote
  (or whose author the store cannot vouch for): the fetch leaves a `fetched`
  file saying whose it is, and a read-only transcript (0400), so listing
  sees it from the `lstat` it makes anyway.

The judgement is cheap: two `stat` results a session (which listing has
anyway) and one `git ls-files` per listing, never per session — none while the git
index is the one git last answered for (tracked_cache.py).

The sessions directory itself is checked the same way before anything is read
or written through it (`check_sessions_dir`): a symbolic link or another
owner is refused, a directory that is ours but open to others is tightened.
"""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Callable
from pathlib import Path

from evo_agent.safe_text import terminal_line

from . import ids as session_ids  # its SESSION_ID_RE is compiled at first use
from .ids import SessionError, is_session_id
from .layout import DIR_MODE, FETCHED_NAME, FILE_MODE, GITIGNORE_NAME, GITIGNORE_TEXT

FETCHED_MAX = 600  # bytes of a `fetched` marker read
PLANTED_NOTE = "a `fetched` note your evo-agent did not write"  # what a planted note is called, never quoted

FUTURE_SLACK_MS = 3600 * 1000  # a clock that jumped back an hour is not an attack


class ForeignSession(SessionError):
    """A resume of a foreign session that was not confirmed. `reason` says why it is foreign."""

    def __init__(self, session_id: str, reason: str) -> None:
        super().__init__(
            f"session {session_id} was recorded elsewhere ({reason}); not resumed. "
            f"To take it on deliberately, copy it into a session of your own: evo-agent sessions adopt {session_id}"
        )
        self.session_id = session_id
        self.reason = reason


class SessionsDirRefused(SessionError):
    """The sessions directory (or `.evo-agent`) cannot be trusted or read: nothing is read or written through it."""


def foreign_reason(
    dir_stat: os.stat_result | None,
    file_stat: os.stat_result | None,
    *,
    tracked: bool = False,
    created_ms: int | None = None,
    updated_ms: int | None = None,
    now_ms: int | None = None,
    uid: int | None = None,
    fetched: str | None = None,
    unmade: bool = False,
    vouched: bool = False,
) -> str | None:
    """Why a session is foreign, as a short phrase (`tracked by git`, `owned by uid 0`, …), or None when it is ours.

    `dir_stat`/`file_stat` are the `lstat` of the session directory and of its
    transcript (either may be None when unknown); `tracked` whether git tracks
    any file of it; `created_ms`/`updated_ms` its id's time and its last record's;
    `fetched` what a team store's copy says of whose it is (`read_fetched`);
    `unmade` that the user's evo-agent has no record of making it (origin.py); `vouched` that it has one
    naming this very session (its mark): then a date after now is a clock that was set back, not a plant.
    Several reasons are joined with ", ".
    """
    me = os.geteuid() if uid is None else uid
    reasons: list[str] = []
    if fetched:
        reasons.append(fetched)
    if tracked:
        reasons.append("tracked by git")
    if unmade:
        reasons.append("not made by your evo-agent (copied or unpacked here)")
    owners = {st.st_uid for st in (dir_stat, file_stat) if st is not None and st.st_uid != me}
    if owners:
        reasons.append(f"owned by uid {min(owners)}, not you")
    for st, want, what in ((dir_stat, DIR_MODE, "directory"), (file_stat, FILE_MODE, "transcript")):
        if st is not None and stat.S_IMODE(st.st_mode) & 0o077:
            reasons.append(f"{what} mode {stat.S_IMODE(st.st_mode):04o}, wider than {want:04o}")
    now = int(time.time() * 1000) if now_ms is None else now_ms
    stamps = [ms for ms in (created_ms, updated_ms) if ms is not None]
    if stamps and max(stamps) > now + FUTURE_SLACK_MS and not vouched:
        reasons.append("dated in the future")
    return ", ".join(reasons) or None


def read_fetched(session_dir: Path | str) -> str | None:
    """What a fetched copy's `fetched` marker says (one line: whose it is), or None when there is none."""
    try:
        fd = os.open(os.path.join(session_dir, FETCHED_NAME),  # never blocking: a FIFO an archive planted
                     os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        data = os.read(fd, FETCHED_MAX)
    except OSError:
        data = b""
    finally:
        os.close(fd)
    text = " ".join(data.decode("utf-8", "replace").split())
    return text or "fetched from the team store"


def tracked_session_ids(sessions_dir: Path | str) -> frozenset[str]:
    """The ids of the sessions any of whose files git tracks: one `git ls-files` for the whole directory.

    Outside a git worktree (no `.git` above) git is not run at all. When git
    cannot answer (not installed, a repository it refuses to read) the answer
    is "none tracked"; ownership and modes still catch what a clone plants.
    """
    return start_tracked_session_ids(sessions_dir)()


def start_tracked_session_ids(sessions_dir: Path | str) -> Callable[[], frozenset[str]]:
    """Start `git ls-files` now and return the function that waits for its answer.

    Listing scans the directory while git runs (a few milliseconds of process
    start that would otherwise add to every listing). git runs at the worktree
    root with the repository named explicitly (git.py): a sessions directory
    that looks like a repository (`HEAD`, `config`, `objects/`) is never one to git.
    """
    sessions_dir = Path(sessions_dir).absolute()
    if not sessions_dir.is_dir():
        return lambda: frozenset()
    from .project import git_worktree_root

    root = git_worktree_root(sessions_dir.parent)
    if root is None:
        return lambda: frozenset()
    try:
        prefix = sessions_dir.relative_to(root).as_posix()
    except ValueError:
        return lambda: frozenset()
    from . import tracked_cache
    from .git import repository, start_in

    found = repository(root)  # None: no repository git may read (git.py), so nothing is tracked
    if found is None:
        return lambda: frozenset()
    key = tracked_cache.index_key(str(sessions_dir), *found, prefix)  # taken before git starts (tracked_cache.py)
    kept = tracked_cache.load(key) if key is not None else None
    if kept is not None:  # the index git would read is the one it read last time: the same answer, no process
        return lambda: kept
    started = start_in(found, "ls-files", "-z", "--", prefix)
    if started is None:
        return lambda: frozenset()
    proc, _ = started
    lead = (prefix + "/").encode("utf-8", "surrogateescape")

    def answer() -> frozenset[str]:
        import subprocess  # loaded by start_git already: only a listing inside a repository pays for it

        try:
            out, _ = proc.communicate(timeout=10)
        except subprocess.SubprocessError:
            proc.kill()
            proc.communicate()
            return frozenset()
        if proc.returncode != 0:
            return frozenset()
        ids = set()
        for raw in out.split(b"\0"):
            if not raw.startswith(lead):
                continue
            first = raw[len(lead):].split(b"/", 1)[0].decode("utf-8", "replace")
            if is_session_id(first):
                ids.add(first)
        if key is not None:
            tracked_cache.save(key, frozenset(ids))
        return frozenset(ids)

    return answer


def _narrow(path: Path, st: os.stat_result, mode: int) -> None:
    """chmod a directory we just lstat'ed, through a descriptor that cannot follow a swapped-in link."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        now = os.fstat(fd)
        if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
            raise OSError(0, "it changed while being checked")
        os.fchmod(fd, mode)
    finally:
        os.close(fd)


def check_sessions_dir(project_dir: Path, sessions_dir: Path, *, unexpected_ok: bool = False,
                       repair: bool = True, found: list[str] | None = None) -> str | None:
    """Refuse what cannot be trusted on the way to the sessions; tighten what is ours but too open.

    Checks `.evo-agent` and `.evo-agent/sessions` (when they exist): a
    symbolic link or another owner raises SessionsDirRefused (nothing is read
    or written through them); a sessions directory of ours more open than
    0700 is narrowed to 0700 (`.evo-agent` only loses group/world write) and
    the returned notice says so; one that cannot be read raises too.
    Something that is not a directory is left to the writers, which report it
    once and carry on unsaved.

    A sessions directory holding anything but sessions, its `.gitignore` and
    evo-agent's own staging names (`unexpected_entries`: a committed `HEAD`,
    `config`, `objects/` that make it look like a git repository) raises
    SessionsDirRefused naming them, unless `unexpected_ok` (`sessions fsck`,
    which reports and repairs them). A `.gitignore` that does not ignore every
    transcript is restored to `*` (unless not `repair`), and the notice says so.

    `found`, when given, receives the ids of the session directories the check saw (`scan_sessions_dir`):
    a listing right after it needs no second pass over a directory of thousands of sessions.
    """
    me = os.geteuid()
    notices = []
    for path in (sessions_dir.parent, sessions_dir):
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            break
        except OSError as exc:
            raise SessionsDirRefused(f"cannot use {path}: {exc.strerror or exc}") from None
        if stat.S_ISLNK(st.st_mode):
            try:
                target = f" (to {os.readlink(path)})"
            except OSError:
                target = ""
            raise SessionsDirRefused(
                f"{path} is a symbolic link{target}; "
                "refusing to keep sessions through it (they stay inside the project)")
        if not stat.S_ISDIR(st.st_mode):
            break
        if st.st_uid != me:
            import shlex  # only for the refusal: the pasted command names the path quoted

            raise SessionsDirRefused(
                f"{path} belongs to uid {st.st_uid}, not to you (uid {me}); refusing to read or write sessions there "
                f"(made by sudo? take it back with: sudo chown -R {me} {shlex.quote(str(path))})")
        mode = stat.S_IMODE(st.st_mode)
        wanted = DIR_MODE if path == sessions_dir else mode & ~0o022
        if mode & ~wanted & 0o777:
            try:
                _narrow(path, st, wanted)
            except OSError as exc:
                raise SessionsDirRefused(f"{path} is open to others (mode {mode:04o}) and cannot be narrowed: "
                                         f"{exc.strerror or exc}") from None
            if mode & 0o022:  # others could have planted or swapped sessions: say so (read bits are narrowed quietly)
                notices.append(f"evo-agent: {terminal_line(path)} was writable by others (mode {mode:04o}); "
                               f"narrowed to {wanted:04o}")  # one line each: the notices are joined by newlines
        if path == sessions_dir:
            try:
                ids, others = scan_sessions_dir(sessions_dir)
            except OSError as exc:
                raise SessionsDirRefused(f"cannot read {sessions_dir}: {exc.strerror or exc}") from None
            strange = unexpected_entries(others)
            if strange and not unexpected_ok:
                raise SessionsDirRefused(unexpected_line(sessions_dir, strange))
            notice = repair_gitignore(sessions_dir) if repair else None
            if notice:
                notices.append(notice)
            if found is not None:
                found.extend(ids)
    return "\n".join(notices) or None


def scan_sessions_dir(sessions_dir: Path | str | int) -> tuple[list[str], list[str]]:
    """One pass over a sessions directory (a path or an open descriptor): the ids naming a directory (not a
    link: the entry's type, no stat), and every name that is not a session id (what `unexpected_entries` judges).

    An id naming anything else (a file, a link) is in neither: not a session, and not planted either.
    Raises OSError when the directory cannot be read.
    """
    ids: list[str] = []
    others: list[str] = []
    is_id, keep, other = session_ids.SESSION_ID_RE.match, ids.append, others.append
    with os.scandir(sessions_dir) as entries:
        for entry in entries:
            name = entry.name
            if not is_id(name):
                other(name)
            elif entry.is_dir(follow_symlinks=False):
                keep(name)
    return ids, others


# Names a sessions directory may hold besides session ids: its `.gitignore`, the temp name of the
# `.gitignore`'s atomic replace, and a team-store fetch being staged (sync/remote.py).
# Matched through `re`'s own cache, compiled at the first name that needs it (a listing usually has none).
_GITIGNORE_TMP = r"\A\.gitignore\.[0-9]+\.[0-9a-f]{8}\.tmp\Z"


def unexpected_entries(names: list[str]) -> list[str]:
    """The names in a sessions directory that are neither a session nor evo-agent's own, sorted."""
    is_id = session_ids.SESSION_ID_RE.match  # one test per name first: a sessions directory holds thousands of sessions
    others = [n for n in names if not is_id(n) and n != GITIGNORE_NAME]
    if not others:
        return []
    from . import layout  # its FETCH_STAGING_RE is compiled at first use

    return sorted(n for n in others if not (re.match(_GITIGNORE_TMP, n) or layout.FETCH_STAGING_RE.match(n)))


def unexpected_line(sessions_dir: Path, strange: list[str]) -> str:
    """The refusal of a sessions directory holding what evo-agent never puts there."""
    shown = ", ".join(repr(n) for n in strange[:6]) + (", ..." if len(strange) > 6 else "")
    looks = " (it looks like a git repository)" if {"HEAD", "config"} & set(strange) else ""
    return (f"{sessions_dir} holds {shown}, which {'is' if len(strange) == 1 else 'are'} not a session{looks}; "
            "a repository may have planted it: nothing is read or written there until it is removed "
            "(evo-agent sessions fsck --repair moves it aside)")


def gitignore_problem(ignore: Path) -> str | None:
    """What is wrong with `sessions/.gitignore`, or None when it holds `*` (every transcript ignored)."""
    try:
        fd = os.open(ignore, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return "missing"
    except OSError as exc:
        return f"unreadable ({exc.strerror or exc})"
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return "not a regular file"
        text = os.read(fd, 1 << 16).decode("utf-8", "replace")
    finally:
        os.close(fd)
    lines = [line.strip() for line in text.splitlines()]
    if "*" not in lines:
        return "does not hold `*`"
    if any(line.startswith("!") for line in lines):
        return "re-includes files (a line starting with `!`)"
    return None


def restore_gitignore(sessions_dir: Path) -> None:
    """Replace `sessions/.gitignore` with `*` atomically, relative to the opened directory (never through a link)."""
    from .atomic import replace_private_file

    dir_fd = os.open(sessions_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        replace_private_file(dir_fd, GITIGNORE_NAME, GITIGNORE_TEXT.encode())
    finally:
        os.close(dir_fd)


def repair_gitignore(sessions_dir: Path) -> str | None:
    """Restore a `.gitignore` that does not ignore every transcript; the one line saying so (None: it was fine).

    A missing one in an empty directory is simply created (a directory being made); one that a repository
    shipped empty, or that re-includes files, is replaced and reported, so nobody commits a transcript by accident.
    """
    problem = gitignore_problem(sessions_dir / GITIGNORE_NAME)
    if problem is None:
        return None
    try:
        restore_gitignore(sessions_dir)
    except OSError as exc:
        return (f"evo-agent: {terminal_line(sessions_dir / GITIGNORE_NAME)} {problem} and cannot be restored "
                f"({exc.strerror or exc}): transcripts could be committed to git by accident")
    if problem == "missing":
        return None  # nothing was wrong but a file not made yet (or deleted): now it is there
    return (f"evo-agent: {terminal_line(sessions_dir / GITIGNORE_NAME)} {problem}; restored it to `*` so no "
            "transcript is committed")
