"""Which sessions this user's evo-agent made: the one proof of origin an archive cannot carry.

Ownership and modes (trust.py) catch what git checks out, but not a session
unpacked from a tar archive by the user: tar keeps 0700/0600 and makes the
user the owner, so a planted transcript looks exactly like one of theirs. What
the archive cannot bring is an entry in the user's own state: every session
evo-agent creates is appended, by id and directory, to `$XDG_STATE_HOME/evo-agent/made`
(0600, outside every project). A session whose mark is not there is foreign.

Sessions made before this file existed are judged by time instead: the file
starts with the moment it was made (`# since <ns>`), and a transcript whose
inode changed before then (its ctime, which unpacking or copying sets to the
moment it happens and which no user-level tool can set back) is the user's
own history from before. So an archive unpacked after the first run of this
version is caught; one unpacked before it is indistinguishable from the
user's own old sessions, and passes (the README says so).

Session Plans have the same proof in a file of their own (`plans-made`, `plans_made`): a plan.md unpacked
with 0600 looks exactly like one the plan store wrote. Their registry starts (header only) the first time a
plan is judged, so every plan on disk then stays the user's and what is unpacked later is judged.

A missing or unreadable file judges nothing (`Made.knows` is then always
true): the first session created makes it. Appends are one `write` of a short
line with O_APPEND, so concurrent agents never interleave inside a line.

A session's line is its id and the directory of sessions it was made in (`<id>@<16 hex>`, `record_session`), as
plans' are: an id is not a secret (`evo-agent --resume <id>` is pasted into bug reports), and by id alone an
archive shipping `.evo-agent/sessions/<a leaked id>/` was the user's own (tests/security/test_unpacked_sessions.py).
Registries written by older versions hold bare ids: those stay the user's own while the transcript's ctime is
older than the `# keyed since <ns>` header, written when the file is made and, in an older file, put on top of
it (one rewrite) by the first keyed line appended. Until then (an upgraded user who has not made a session yet)
a bare id counts whatever its ctime, as every id did before.

The ids of sessions `sessions rm`/`prune` deleted are taken out again (`forget_made`), so the file holds
about the sessions that exist (a session deleted by other means stays: 40 bytes). That rewrite replaces
the file under `flock` on it, and every append takes the same lock and checks that the file it holds is
still the one at the path (else it opens the new one), so no append lands in a replaced file.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from .layout import DIR_MODE, FILE_MODE, MADE_NAME, PLANS_MADE_NAME, user_state_dir
from .plaindata import plain_dataclass

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: `sessions list` loads this module
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

HEADER = b"# since "
KEYED_HEADER = b"# keyed since "  # bare ids (older versions') count only for transcripts older than this
_HEAD_BYTES = 512  # where an append looks for KEYED_HEADER first: the top of the file, above any racing line
MAX_BYTES = 64 << 20  # a file larger than this is not read (judging nothing), never half-read


@plain_dataclass(frozen=True)
class Made:
    """The ids this user's evo-agent made, and since when it has been keeping count (ns, or None: not judging).

    A plain data class: `sessions list` and `-p` read it, and `dataclasses` costs more to import than listing
    (a NamedTuple's class ~2 ms to make).
    """

    ids: frozenset[str]
    since_ns: int | None
    keyed_ns: int | None = None  # `# keyed since`; None: no keyed line was ever written, bare ids always count

    def knows(self, mark: str, ctime_ns: int) -> bool:
        """Whether a plan (its `plan_mark`) with this ctime can be the user's own: made here, or older than
        the count."""
        return self.since_ns is None or mark in self.ids or ctime_ns < self.since_ns

    def vouches(self, session_id: str, key: str) -> bool:
        """Whether this user's evo-agent recorded making this very session in this store (its mark is here):
        proof no date can outweigh (a clock that ran hours ahead dated it after now, trust.foreign_reason)."""
        return f"{session_id}@{key}" in self.ids

    def knows_session(self, session_id: str, key: str, ctime_ns: int) -> bool:
        """Whether a session of the store with this `store_key` can be the user's own: its mark is here, or its
        transcript is older than the count, or its bare id is here (an older version's line) and the transcript
        older than the keyed count (an archive unpacked since has a fresh ctime)."""
        since = self.since_ns
        if since is None or ctime_ns < since or f"{session_id}@{key}" in self.ids:
            return True
        return session_id in self.ids and (self.keyed_ns is None or ctime_ns < self.keyed_ns)


NOT_JUDGING = Made(frozenset(), None)


def made_file() -> Path:
    """`$XDG_STATE_HOME/evo-agent/made` (else under `~/.local/state`): the user's own, never a project's."""
    return user_state_dir() / MADE_NAME


def read_made(path: Path | None = None) -> Made:
    """The registry as it is now; NOT_JUDGING when it does not exist or cannot be read."""
    path = made_file() if path is None else path
    try:
        fd = _open_plain(path, os.O_RDONLY)
    except OSError:
        return NOT_JUDGING
    try:
        data = _read_own(fd)
    except OSError:
        return NOT_JUDGING
    finally:
        os.close(fd)
    if not data:  # a first writer killed before its header (or None: not ours, too large): no count began
        return NOT_JUDGING
    since, keyed, ids = _parsed(data)
    # A racing first writer may have appended its id before the header landed: then count from the start of time.
    return Made(ids, 0 if since is None else since, keyed)


def _read_own(fd: int) -> bytes | None:
    """The whole file behind `fd`; None when it is another user's or larger than MAX_BYTES (never half-read)."""
    st = os.fstat(fd)
    if st.st_uid != os.geteuid() or st.st_size > MAX_BYTES:
        return None
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def _open_plain(path: Path, flags: int) -> int:
    """`os.open` of a registry that must be a plain file: never a link, never waiting (a FIFO in its place
    would block every listing for good: tests/security/test_registry_is_a_plain_file.py); OSError otherwise."""
    import stat

    fd = os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, FILE_MODE)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(f"{path}: not a plain file")
    return fd


def _parsed(data: bytes) -> tuple[int | None, int | None, frozenset[str]]:
    """The earliest `# since` and `# keyed since` stamps and the ids of a registry's bytes, one a line (ASCII;
    anything else replaced).

    Whole-buffer operations rather than a loop over the lines: a user with 10,000 sessions has as many
    lines, read by every listing (a loop took ~0.9 µs a line). The lines are those of `bytes.splitlines`.
    """
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    text = data.decode("ascii", "replace")
    headers = {""}  # lines that are not ids: the empty one and every header line
    since = _stamp(text, HEADER.decode("ascii"), headers)
    keyed = _stamp(text, KEYED_HEADER.decode("ascii"), headers)
    return since, keyed, frozenset(text.split("\n")).difference(headers)


def _stamp(text: str, header: str, headers: set[str]) -> int | None:
    """The earliest stamp of the lines of `text` starting with `header` (each added to `headers`), else None."""
    stamp: int | None = None
    at = text.find(header)
    while at != -1:
        end = text.find("\n", at)
        if at == 0 or text[at - 1] == "\n":
            line = text[at:] if end == -1 else text[at:end]
            headers.add(line)
            try:
                value = int(line[len(header):])
            except ValueError:
                pass
            else:
                stamp = value if stamp is None else min(stamp, value)
        at = text.find(header, at + 1)
    return stamp


def record_made(session_id: str, path: Path | None = None) -> bool:
    """Append one line (making the file, headed with now, when it is new); False when it cannot be written.

    The line as it is: a plan's mark (plan_store), or a bare id (what older versions wrote for sessions)."""
    return _append(session_id, path, keyed=False)


def record_session(session_id: str, key: str, path: Path | None = None) -> bool:
    """Append a session's mark `<id>@<key>` (`store_key` of its store); False when it cannot be written.

    A new file is headed with both counts; an older one without `# keyed since` gets it on top first (under the
    file's lock, so once), which ends the bare ids' trust for transcripts unpacked from then on."""
    return _append(f"{session_id}@{key}", path, keyed=True)


def fetched_mark(session_id: str, key: str) -> str:
    """The registry's line for a `fetched` note sync's fetch wrote into a copy (`SessionStore.record_fetched`)."""
    return f"fetched:{session_id}@{key}"


def _append(mark: str, path: Path | None, *, keyed: bool) -> bool:
    path = made_file() if path is None else path
    line = mark.encode("ascii", "replace") + b"\n"

    def open_fd() -> tuple[int, bool]:
        try:
            return _open_plain(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_APPEND), True
        except FileExistsError:
            return _open_plain(path, os.O_RDWR | os.O_APPEND), False

    def append(fd: int, created: bool) -> bool:
        if created or os.fstat(fd).st_size == 0:  # new, or left empty by a first writer killed before its header
            stamp = str(time.time_ns()).encode() + b"\n"
            _write_new_registry(path, fd, HEADER + stamp + (KEYED_HEADER + stamp if keyed else b"") + line)
            return True
        older = _older_registry(fd) if keyed else None
        if older is not None:
            return _keyed_on_top(path, older, line)
        os.write(fd, line)
        return True

    try:
        path.parent.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
        return _under_lock(path, _APPEND_TRIES, open_fd, append)
    except OSError:
        return False


def _write_new_registry(path: Path, fd: int, data: bytes) -> None:
    """The first bytes of a registry just made (O_EXCL): all of them, or no registry at all (OSError).

    A registry left empty or without its header by a full disk counts from the start of time: every
    session and plan made before the count began, in every project, would no longer be the user's
    (tests/faults/test_registry_disk.py)."""
    try:
        if os.write(fd, data) != len(data):
            raise OSError(f"{path}: written in part")
    except OSError:
        try:
            os.unlink(path)
        except OSError:
            pass
        raise


def _older_registry(fd: int) -> bytes | None:
    """The locked registry's bytes when it has no `# keyed since` (an older version's), else None.

    Its top is looked at first (where the header is put), then the whole file: that is read only in an older
    registry's first keyed append (or after a racing first writer's line landed above the header), every other
    session creation reads _HEAD_BYTES. None too when it is not read at all (another user's, too large)."""
    top = os.pread(fd, _HEAD_BYTES, 0)
    if top.startswith(KEYED_HEADER) or b"\n" + KEYED_HEADER in top:
        return None
    data = _read_own(fd)
    if data is None or data.startswith(KEYED_HEADER) or b"\n" + KEYED_HEADER in data:
        return None
    return data


def _keyed_on_top(path: Path, data: bytes, line: bytes) -> bool:
    """Replace the locked older registry by itself headed with `# keyed since now`, plus `line` (forget_made's
    way: appends waiting for the lock find the new file)."""
    from .atomic import replace_file

    if data and not data.endswith((b"\n", b"\r")):
        data += b"\n"
    replace_file(str(path), KEYED_HEADER + str(time.time_ns()).encode() + b"\n" + data + line, mode=FILE_MODE)
    return True


_REOPENS = 8  # a file replaced (forget_made) between our open and our lock: open it again, this many times
# An id not appended makes the user's own session look foreign, so an append outlasts any plausible run of
# rewrites (each failed try means a rewrite finished: the others progress); pruning may give up after _REOPENS.
_APPEND_TRIES = 1000


def _locked_current(fd: int, path: Path) -> bool:
    """Take `flock` on `fd` (released by closing it); whether it is still the file at `path` (not replaced)."""
    import fcntl

    fcntl.flock(fd, fcntl.LOCK_EX)
    st, now = os.fstat(fd), os.stat(path, follow_symlinks=False)
    return (st.st_dev, st.st_ino) == (now.st_dev, now.st_ino)


def _under_lock(path: Path, tries: int, open_fd: Callable[[], tuple[int, bool]],
                work: Callable[[int, bool], bool]) -> bool:
    """`work(fd, created)` on the registry at `path`, under its lock: the one read-modify-write of appends and
    rewrites. `open_fd` opens it (and says whether it created it); a file replaced between the open and the lock
    (a rewrite finished meanwhile) is opened again, up to `tries` times, so `work` always sees the current file.
    The lock goes with the fd's close. `work`'s answer, or False when every try found the file replaced."""
    for _ in range(tries):
        fd, created = open_fd()
        try:
            if _locked_current(fd, path):
                return work(fd, created)
        finally:
            os.close(fd)
    return False


def forget_made(session_ids: Iterable[str], path: Path | None = None, *, key: str | None = None) -> bool:
    """Take ids out of the registry (sessions deleted): their bare lines and, with the `store_key` of the store
    they were deleted from, their marks (a fetched copy's note's too: a copy planted later under the same id
    is not vouched for); the rest, and the headers, stay as they were.

    The file is replaced (a temp beside it, renamed) while holding its lock, so an append waiting for the
    lock finds the new file (record_made). False when it could not be done; nothing is lost then.
    """
    from .atomic import replace_file

    path = made_file() if path is None else path
    bare = [sid.encode("ascii", "replace") for sid in session_ids]
    gone = set(bare)
    if key is not None:  # the session's mark, and the mark of a `fetched` note its copy had (fetched_mark)
        at = b"@" + key.encode("ascii", "replace")
        gone |= {sid + at for sid in bare} | {b"fetched:" + sid + at for sid in bare}

    def rewrite(fd: int, created: bool) -> bool:
        data = _read_own(fd)
        if data is None:
            return False
        lines = data.splitlines(keepends=True)
        kept = [x for x in lines if x.rstrip(b"\r\n") not in gone]
        if len(kept) < len(lines):
            if kept and not kept[-1].endswith((b"\n", b"\r")):
                kept[-1] += b"\n"
            replace_file(str(path), b"".join(kept), mode=FILE_MODE)
        return True

    try:
        return _under_lock(path, _REOPENS, lambda: (_open_plain(path, os.O_RDONLY), False), rewrite)
    except OSError:
        return False


def plans_made_file() -> Path:
    """`$XDG_STATE_HOME/evo-agent/plans-made`: the id of every Session Plan this user's evo-agent made."""
    return user_state_dir() / PLANS_MADE_NAME


def plan_mark(plan_id: str, plans_dir: Path) -> str:
    """A plan's line in `plans-made`: its id and the directory of plans it was made in (`<id>@<16 hex>`).

    A plan's id is its date and its title's slug, the same in every project: by id alone, an archive shipping
    `2026-12-04-setup` was the user's own as soon as they made a "Setup" plan anywhere that day
    (tests/security/test_unpacked_plans.py). The key is of the real path, so a project moved elsewhere
    has plans that are no longer counted as the user's (like sessions copied from another machine)."""
    return f"{plan_id}@{store_key(plans_dir)}"


def store_key(directory: Path | str) -> str:
    """16 hex of the sha256 of the real path of a store's directory: what a mark adds to an id (computed once
    per store, not per session). `_sha256`/`_sha2` (what hashlib wraps when OpenSSL is absent) rather than
    hashlib, whose OpenSSL costs ~4.6 ms to load on `-p`'s path (issue #30)."""
    data = os.fsencode(os.path.realpath(directory))
    for name in ("_sha2", "_sha256"):  # 3.12+, 3.11
        try:
            sha256 = __import__(name).sha256
        except (ImportError, AttributeError):
            continue
        return str(sha256(data).hexdigest()[:16])
    import hashlib

    return hashlib.sha256(data).hexdigest()[:16]


def start_registry(path: Path) -> bool:
    """Make the registry at `path` holding only its `# since now` header; False when it exists or cannot be made."""
    try:
        path.parent.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
        fd = _open_plain(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND)
    except OSError:
        return False
    try:
        _write_new_registry(path, fd, HEADER + str(time.time_ns()).encode() + b"\n")
    except OSError:
        return False
    finally:
        os.close(fd)
    return True


def plans_made() -> Made:
    """The plans this user's evo-agent made; the registry is started first when there is none yet (plans already
    on disk then predate it and stay the user's)."""
    path = plans_made_file()
    if not os.path.lexists(path):
        start_registry(path)
    return read_made(path)
