"""Where sessions live in a project, and the operations on them as a whole.

`SessionStore(project_dir)` creates sessions, lists them (from meta.json,
rebuilt where it lags and written back), resolves ids a user typed, and
resumes: a resume always starts a new, self-contained session and only ever
reads the source.

Listing has two speeds. `list()` reads every meta.json: the whole, exact
list. `newest(n)` (the picker's first screen, `latest()` for --continue)
orders the sessions by their transcript's mtime, one stat each, and reads the
meta of only as many as it must: a record's timestamp is taken before it is
appended, so a session's `updated_ms` is never later than its transcript's
mtime (give or take the clock's granularity, `MTIME_SLACK_MS`, and any skew
seen between the two), and once the next mtime cannot beat the n-th row, no
later one can.
"""

from __future__ import annotations

import builtins
import gc
import os
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from .ids import (
    AmbiguousSessionId,
    InvalidSessionId,
    SessionNotFound,
    created_ms_of,
    is_id_prefix,
    is_session_id,
    new_session_id,
    resolve_session_id,
)
from .layout import FILE_MODE, GITIGNORE_NAME, GITIGNORE_TEXT, MESSAGES_NAME, SESSIONS_SUBDIR
from .meta import SessionMeta, catch_up, clean_name, read_meta, write_back_meta
from .origin import Made, fetched_mark, read_made, record_made, record_session, store_key
from .project import git_branch_of
from .records import ENVELOPE_FIELDS, SCENE_TYPES
from .trust import (
    FUTURE_SLACK_MS,
    PLANTED_NOTE,
    ForeignSession,
    check_sessions_dir,
    foreign_reason,
    read_fetched,
    scan_sessions_dir,
    start_tracked_session_ids,
)
from .writer import DirHandle, dir_chain, open_private_dirs, stderr_warning

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: `sessions list` loads this module
if TYPE_CHECKING:  # imported where used: a session written or read whole, the whole list (start-up needs none)
    from typing import Any

    from .list_index import ListIndex
    from .recorder import Recorder
    from .resume import LoadedSession

# How much later than its transcript's mtime a session's last record may be stamped: the kernel
# stamps files from a coarse clock (a tick behind), FAT keeps 2-second mtimes.
MTIME_SLACK_MS = 2000
TRACKED_TTL_S = 1.0


class SessionInfo:
    """One row of the listing: the (fresh) meta and where the session lives.

    A plain class, not a dataclass: `sessions list` would otherwise import `dataclasses` (see SessionMeta).
    """

    __slots__ = ("dir", "foreign", "meta")
    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value

    def __init__(self, meta: SessionMeta, dir: str, foreign: str | None = None) -> None:  # noqa: A002
        self.meta = meta
        self.dir = dir  # kept as str: building a Path per row is a measurable share of listing 10,000
        self.foreign = foreign  # why this user did not record it here (trust.foreign_reason), None when ours

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SessionInfo) or other.__class__ is not self.__class__:
            return NotImplemented
        return (self.meta, self.dir, self.foreign) == (other.meta, other.dir, other.foreign)

    def __repr__(self) -> str:
        return f"SessionInfo(meta={self.meta!r}, dir={self.dir!r}, foreign={self.foreign!r})"

    @property
    def id(self) -> str:
        return self.meta.id

    @property
    def path(self) -> Path:
        """The session directory."""
        return Path(self.dir)


# (mtime ns, id, size, stats): `stats` is None when the transcript is ours by owner and mode (the common
# case), else (transcript lstat, directory lstat or None). Listing stats only the transcript: a second
# stat per session is a tenth of listing 10,000, and a clone or an archive sets both modes alike.
_Found = tuple[int, str, int, "tuple[os.stat_result, os.stat_result | None] | None"]
# (mtime ns, id, transcript lstat): what the scan saw, judged (`_judged`) only for the rows a listing visits.
_Seen = tuple[int, str, os.stat_result]
_REGULAR = stat.S_IFREG
_OPEN_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _order(row: SessionInfo) -> tuple[int, str]:
    """Newest update first; the id (creation order) breaks ties."""
    return (row.meta.updated_ms, row.meta.id)


class ResumedSession:
    """A resume under way: the new session's recorder and the history it restores (a plain class, as SessionInfo)."""

    def __init__(self, recorder: Recorder, loaded: LoadedSession, notice: str | None = None,
                 instructions: dict[str, Any] | None = None) -> None:
        self.recorder = recorder
        self.loaded = loaded
        self.notice = notice  # what became of the history (e.g. it was summarised), for the front end to show
        # The `instructions` record's fields the new session holds: its source's (SPEC §11), None when there are none.
        self.instructions = instructions

    def __repr__(self) -> str:
        return f"ResumedSession(recorder={self.recorder!r}, notice={self.notice!r})"

    def copy_history(self) -> None:
        """Write the restored messages into the new session and publish it (what `resume` does by default).

        A windowed history (its middle never loaded) is not the history: it can only be summarised.
        """
        if self.loaded.windowed:
            raise ValueError("a windowed history cannot be copied: compact it instead")
        self.recorder.append_many((m["role"], {"message": m, "restored": True}) for m in self.loaded.messages)
        self.publish()

    def publish(self) -> None:
        """Make the staged new session listable and resumable (after the copy, or after its compaction)."""
        self.recorder.publish()
        self.recorder.checkpoint()



def _unmade(store: SessionStore, session_id: str, ctime_ns: int, note: str | None) -> bool:
    """Whether the user's evo-agent has no record of a session: not made here, and not a copy its own team-store
    fetch wrote (whose `fetched` note already says whose it is: "copied or unpacked here" beside it made every
    teammate's session fetched a moment ago read as planted)."""
    if note is not None and note != PLANTED_NOTE:
        return False
    return not store.made().knows_session(session_id, store.key, ctime_ns)

class SessionStore:
    """The sessions of one project.

    Why two store classes: this one creates, lists, resumes and removes sessions but holds no
    lock, so the commands that work on sessions from outside (`sessions list/show/rm/import…`,
    the picker, another worktree's sessions, the team store's import) use it beside a running
    agent without claiming any session. `LiveSessionStore` (live.py) is the one a running agent
    uses: it also holds the lock of the session it writes, so `sessions rm/prune` leave that one alone.

    `write_back=False` makes listing read-only (it still catches up in
    memory): for looking at someone else's sessions without touching them.
    `redact=False` writes secret shapes to disk as they are (see redact.py).
    """

    def __init__(self, project_dir: Path | str, *, warn: Callable[[str], None] = stderr_warning,
                 write_back: bool = True, redact: bool = True) -> None:
        self.project_dir = Path(project_dir).absolute()
        self.redact = redact  # recorders mask secret shapes on disk (redact.py)
        self.sessions_dir = self.project_dir / SESSIONS_SUBDIR
        self._sessions_str = str(self.sessions_dir)
        self.warn = warn
        self.write_back = write_back
        self._tracked: tuple[float, frozenset[str]] | None = None
        self._made: tuple[float, Made] | None = None
        self._key: str | None = None  # `key`, computed at its first use
        self._checked: tuple[float, builtins.list[str]] | None = None  # check_dir's scan, for the next listing

    # Trusting -------------------------------------------------------------

    def check_dir(self, *, for_fsck: bool = False) -> str | None:
        """Refuse a symlinked or foreign-owned `.evo-agent`/`sessions` (SessionsDirRefused); narrow one too open.

        Returns a notice line when it narrowed permissions or restored the `.gitignore`. Front ends call it
        once before anything else, so nothing is read or written through a
        directory this user does not own. `for_fsck`: what is not a session is left for fsck to report,
        and the `.gitignore` for it to report and repair (`--repair`).
        """
        ids: builtins.list[str] = []
        notice = check_sessions_dir(self.project_dir, self.sessions_dir, unexpected_ok=for_fsck,
                                    repair=not for_fsck, found=ids)
        self._checked = (time.monotonic(), ids)  # the listing that follows reads the names the check judged
        return notice

    def _checked_ids(self) -> builtins.list[str] | None:
        """The session directories `check_dir` just saw (once, and only within TRACKED_TTL_S), else None.

        A sessions directory is read once per command: the names the planted-entry check judged are the
        names listed (a session made since is left to the next listing, as one made after it).
        """
        checked, self._checked = self._checked, None
        if checked is None or time.monotonic() - checked[0] >= TRACKED_TTL_S:
            return None
        return checked[1]

    def tracked_ids(self, pending: Callable[[], frozenset[str]] | None = None) -> frozenset[str]:
        """Ids of sessions git tracks: one `git ls-files` for the whole directory, reused for a second.

        A resume asks twice in a row (the front end to word its question, `resume()` to enforce it);
        a second later, a listing asks git again. `pending`: an answer already started
        (`_start_tracked`), so git runs while the directory is scanned.
        """
        now = time.monotonic()
        cached = self._tracked
        if cached is not None and now - cached[0] < TRACKED_TTL_S:
            return cached[1]
        ids = (pending or start_tracked_session_ids(self.sessions_dir))()
        self._tracked = (now, ids)
        return ids

    def _start_tracked(self) -> Callable[[], frozenset[str]] | None:
        """Start git for `tracked_ids` unless a fresh answer is cached (None then)."""
        cached = self._tracked
        if cached is not None and time.monotonic() - cached[0] < TRACKED_TTL_S:
            return None
        return start_tracked_session_ids(self.sessions_dir)

    def made(self) -> Made:
        """Which sessions this user's evo-agent made (origin.py), read at most once a second like `tracked_ids`."""
        now = time.monotonic()
        cached = self._made
        if cached is not None and now - cached[0] < TRACKED_TTL_S:
            return cached[1]
        made = read_made()
        self._made = (now, made)
        return made

    @property
    def key(self) -> str:
        """What this store's sessions add to their id in the registry (`<id>@<key>`, origin.store_key: of the
        sessions directory's real path), so a copy of one of them elsewhere is not the user's own.
        Computed once per store: a listing judges 10,000 sessions with it."""
        key = self._key
        if key is None:
            key = self._key = store_key(self.sessions_dir)
        return key

    def record_own(self, session_id: str) -> bool:
        """Count a session as this user's own in this store's registry of made sessions: a copy a team store
        vouched they wrote (sync's fetch). False when the registry cannot be written."""
        self._made = None  # read again at the next verdict
        return record_session(session_id, self.key)

    def record_fetched(self, session_id: str) -> bool:
        """Note in the registry that this store's `fetched` note of `session_id` is one sync's fetch wrote: only
        such a note is quoted (`fetched_note`). False when the registry cannot be written."""
        self._made = None
        return record_made(fetched_mark(session_id, self.key))

    def fetched_note(self, path: str | Path, session_id: str, ctime_ns: int | None) -> str | None:
        """What a session's `fetched` note says when sync's fetch wrote it; a note a repository or an archive
        planted is named as such, never quoted: its words would speak for the team store ("written by <you>")."""
        note = read_fetched(path)
        if note is None or ctime_ns is None or self.made().knows(fetched_mark(session_id, self.key), ctime_ns):
            return note
        return PLANTED_NOTE

    def foreign_reason(self, session_id: str) -> str | None:
        """Why one session is foreign (`tracked by git`, …), or None when this user recorded it here.

        Also judges the directory's owner and mode (listing looks at the transcript's only), so a
        resume can refuse what a listing let through, never the other way round.
        """
        path = self.session_dir(session_id)
        try:
            dst = os.lstat(path)
            fst = os.lstat(path / MESSAGES_NAME)
        except OSError:
            return None  # missing: whoever asked reports that
        cached = read_meta(path, session_id)
        note = self.fetched_note(path, session_id, fst.st_ctime_ns)
        return foreign_reason(dst, fst, tracked=session_id in self.tracked_ids(), created_ms=created_ms_of(session_id),
                              updated_ms=cached.updated_ms if cached else None, fetched=note,
                              unmade=_unmade(self, session_id, fst.st_ctime_ns, note),
                              vouched=self.made().vouches(session_id, self.key))

    # Creating -------------------------------------------------------------

    def ensure_sessions_dir(self) -> bool:
        """Create `.evo-agent/sessions` (0700) with its `.gitignore`; False when impossible.

        Never through a symbolic link: `.evo-agent` and `sessions` are opened `O_NOFOLLOW`.
        """
        try:
            fd = open_private_dirs(self.project_dir, list(SESSIONS_SUBDIR.parts))
        except OSError:
            return False
        try:
            ignore = os.open(GITIGNORE_NAME, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                             FILE_MODE, dir_fd=fd)
            with os.fdopen(ignore, "w") as f:
                f.write(GITIGNORE_TEXT)
        except FileExistsError:
            pass
        except OSError:
            return False
        finally:
            os.close(fd)
        return True

    def create(
        self,
        *,
        model: str | None,
        provider: str | None,
        agent_version: str | None = None,
        git_branch: str | bool | None = True,
        session_id: str | None = None,
        meta_interval: float | None = None,
        staged: bool = False,
        start_fields: dict[str, Any] | None = None,
        deferred: bool = False,
    ) -> Recorder:
        """Start a new session and write its `session_start`. Never raises.

        `git_branch=True` asks git; a string uses it; None records none.
        `staged=True` writes to a staging file until `recorder.publish()`.
        `deferred=True`: nothing reaches the disk until something is said (see `Recorder`'s `opener`), so
        a launch that ends without a word leaves no session behind.
        When the directory cannot be made the recorder still works: its
        writes fail and warn once, and the conversation goes on.
        """
        sid = session_id or new_session_id()
        self._checked = None  # the check's pass no longer holds every session: the next listing scans
        vouched = record_session(sid, self.key)
        if vouched and self._made is not None:
            self._made = None  # read again: the count may have just begun
        branch = git_branch_of(self.project_dir) if git_branch is True else (git_branch or None)
        if branch and self.redact:  # the envelope is never scanned, and a branch is a name anyone could type a key into
            from .redact import redact_text

            branch = redact_text(branch)
        session_dir = self.sessions_dir / sid
        # Opened at the first record if it cannot be now (reported then), never through a link below the project.
        directory = dir_chain(self.project_dir, [*SESSIONS_SUBDIR.parts, sid])
        if not deferred:
            fd = self._make_session_dir(sid)
            if fd is not None:
                directory = DirHandle(session_dir, fd=fd)
        from .recorder import Recorder

        kwargs = {} if meta_interval is None else {"meta_interval": meta_interval}
        recorder = Recorder(
            session_dir, sid, cwd=str(self.project_dir), agent_version=agent_version,
            git_branch=branch, warn=self.warn, redact=self.redact, staged=staged, directory=directory,
            opener=(lambda: _close(self._make_session_dir(sid))) if deferred else None, **kwargs,
        )
        if not vouched:
            recorder.unvouched = lambda: self._vouch(sid)
        recorder.session_start(model=model, provider=provider, **(start_fields or {}))
        return recorder

    def _vouch(self, session_id: str) -> bool:
        """Append a session's registry line once more (its first try at `create` failed); True when it landed."""
        if not record_session(session_id, self.key):
            return False
        self._made = None
        return True

    def _make_session_dir(self, session_id: str) -> int | None:
        """Make a session's directory (0700, never through a link); its open descriptor, or None when it cannot."""
        if not self.ensure_sessions_dir():
            return None
        try:
            return open_private_dirs(self.project_dir, [*SESSIONS_SUBDIR.parts, session_id])
        except OSError:
            return None

    # Finding --------------------------------------------------------------

    def resolve(self, text: str) -> str:
        """A full id from a full id, a unique prefix or a unique session name; raises a SessionError subclass.

        Id-shaped text is tried as an id first; a name is looked up only when no id matches.
        """
        if not is_id_prefix(text):
            return self.resolve_name(text)
        try:
            sid = resolve_session_id(self.sessions_dir, text)
        except SessionNotFound:
            try:
                return self.resolve_name(text)
            except SessionNotFound:
                raise SessionNotFound(f"no session {text} in {self.sessions_dir}") from None
        if not self._transcript(sid).is_file():
            raise SessionNotFound(f"session {sid} has no transcript ({self._transcript(sid)})")
        return sid

    def resolve_name(self, text: str) -> str:
        """The session named `text` (case-insensitive). A resume chain shares its name: its newest wins.

        The user's own sessions come first, and only they can supersede: a foreign session (a repository's,
        pulled in with the clone) that says it continues one of the user's, under its name, takes nothing from
        it, since an id is no secret and the claim is a field of the stranger's own transcript.
        Raises SessionNotFound, or AmbiguousSessionId listing the candidates.
        """
        wanted = clean_name(text).casefold() if isinstance(text, str) else ""
        if not wanted:
            raise InvalidSessionId(
                "invalid session id '': expected <13 digits>_<8 hex>, a prefix of one, or a session's name")
        named = [row for row in self.list() if row.meta.name and row.meta.name.casefold() == wanted]
        if not named:  # a session named (/rename) before anything was said in it is kept, and resumes by its name
            named = [row for row in self.list(include_empty=True) if row.meta.name
                     and row.meta.name.casefold() == wanted and not row.meta.resumed_from]
        superseded = {row.meta.resumed_from for row in named if not row.foreign}
        heads = [row for row in named if row.id not in superseded]
        heads = [row for row in heads if not row.foreign] or heads
        if not heads:
            shown = text if len(text) <= 40 else text[:37] + "..."
            if is_id_prefix(text):
                raise SessionNotFound(f"no session id or name {shown!r} in {self.sessions_dir}")
            raise InvalidSessionId(f"invalid session id and no session named {shown!r}: expected <13 digits>_<8 hex> "
                                   "(e.g. 1780227556183_b525857d), a prefix of one, or a session's name")
        if len(heads) > 1:
            listed = ", ".join(row.id for row in heads[:5]) + (", ..." if len(heads) > 5 else "")
            raise AmbiguousSessionId(f"{len(heads)} sessions are named {heads[0].meta.name!r} ({listed}); "
                                     "name one by its id")
        return heads[0].id

    def session_dir(self, session_id: str) -> Path:
        """The directory of a real session; refuses symlinks that could point outside the project."""
        if not is_session_id(session_id):
            raise SessionNotFound(f"no session {session_id!r}")
        path = self.sessions_dir / session_id
        if path.is_symlink():
            raise SessionNotFound(f"session {session_id} is a symbolic link; refusing to follow it")
        return path

    def _transcript(self, session_id: str) -> Path:
        """The transcript of a real session: a regular file, never a link to somewhere else (or a FIFO)."""
        path = self.session_dir(session_id) / MESSAGES_NAME
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            return path  # missing: the caller says so
        if not stat.S_ISREG(mode):
            kind = "a symbolic link" if stat.S_ISLNK(mode) else "not a regular file"
            raise SessionNotFound(f"session {session_id}: {MESSAGES_NAME} is {kind}; refusing to read it")
        return path

    def info(self, session_id: str, *, write_back: bool | None = None) -> SessionInfo | None:
        """The listing row of one session, meta rebuilt from the transcript where it lags.

        A rebuilt meta is written back as a listing does (`write_back=None`:
        as the store was made), unless `write_back=False`.
        """
        path = os.path.join(self._sessions_str, session_id)  # str paths: this runs once per session
        try:
            dst = os.lstat(path)
            st = os.lstat(os.path.join(path, MESSAGES_NAME))
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode) or not stat.S_ISDIR(dst.st_mode):
            return None
        return self._row((st.st_mtime_ns, session_id, st.st_size, (st, dst)), self.tracked_ids(), write_back)

    def _row(self, found: _Found, tracked: frozenset[str], write_back: bool | None = None,
             index: ListIndex | None = None, future_ms: int | None = None) -> SessionInfo | None:
        """The listing row of one found session: its meta (caught up where it lags) and whether it is foreign.

        `index`: where meta.json is read from when its entry still matches (list_index.py), else as without it.
        `future_ms`: `_future_ms()`, taken once by a listing rather than twice per row.
        """
        _, session_id, size, stats = found
        path = self._sessions_str + "/" + session_id
        cached = read_meta(path, session_id) if index is None else index.read_meta(path, session_id)
        if cached is not None and cached.messages_bytes == size:
            meta = cached
        else:
            try:
                meta, complete = catch_up(path, session_id, created_ms_of(session_id), cached)
            except OSError:
                return None
            if (self.write_back if write_back is None else write_back) and (
                    cached is None or complete.messages_bytes != cached.messages_bytes) and not (
                    session_id in tracked or (stats is not None and _foreign_by_stat(*stats))):
                write_back_meta(path, complete)  # best effort: a failure only means the next listing catches up again
        created_ms = created_ms_of(session_id)  # the id's, not meta.json's: a planted meta.json can say anything
        future = _future_ms() if future_ms is None else future_ms
        if (stats is None and session_id not in tracked
                and meta.updated_ms <= future and created_ms <= future):
            return SessionInfo(meta, path)  # the common case, without building a reason (once per session)
        fst, dst = stats if stats is not None else (None, None)
        note = self.fetched_note(path, session_id, fst.st_ctime_ns if fst else None) if stats is not None else None
        reason = foreign_reason(dst, fst, tracked=session_id in tracked, created_ms=created_ms,
                                updated_ms=meta.updated_ms, fetched=note,
                                unmade=fst is not None and _unmade(self, session_id, fst.st_ctime_ns, note),
                                vouched=self.made().vouches(session_id, self.key))
        return SessionInfo(meta, path, reason)

    def _transcripts(self) -> builtins.list[_Seen]:
        """Every session directory's regular transcript with its lstat; symlinks are never followed.

        The one stat a session costs, made relative to the opened sessions directory (no walk down the
        project's path each time); ownership, modes and the registry are judged later (`_judged`), and only
        for the rows a listing visits: `newest(20)` judges about 20 of 10,000.
        """
        names = self._checked_ids()
        try:
            fd = os.open(self._sessions_str, _OPEN_DIR)
        except OSError:
            return []
        found: builtins.list[_Seen] = []
        keep, lstat, suffix, regular = found.append, os.stat, "/" + MESSAGES_NAME, _REGULAR
        try:
            if names is None:
                names = scan_sessions_dir(fd)[0]
            for name in names:
                try:
                    st = lstat(name + suffix, dir_fd=fd, follow_symlinks=False)
                except OSError:
                    continue
                if st.st_mode & 0o170000 == regular:
                    keep((st.st_mtime_ns, name, st))
        except OSError:
            return []
        finally:
            os.close(fd)
        return found

    def list(self, *, include_empty: bool = False) -> list[SessionInfo]:
        """Every session of the project, most recently updated first.

        Sessions without an exchange of their own (`SessionMeta.has_conversation`:
        empty, resumed with nothing new said, refused by the API) are hidden
        unless `include_empty`. Symlinked entries are never followed. A
        meta.json that had to be rebuilt is written back (see `meta.write_back_meta`).

        With many sessions, meta.json is read through the listing index (list_index.py): one file
        instead of one per session, each entry used only while its meta.json is unchanged; the
        rows are the same as without it.
        """
        with _gc_paused():
            return self._list(include_empty)

    def _list(self, include_empty: bool) -> builtins.list[SessionInfo]:
        rows = []
        pending = self._start_tracked()
        found = self._transcripts()
        tracked = self.tracked_ids(pending) if found or pending else frozenset()
        from .list_index import ListIndex  # here: `newest()` (the first screen) reads a few metas without it

        index = ListIndex.load(self._sessions_str) if ListIndex.wanted(len(found)) else None
        future = _future_ms()
        made = self.made()
        key = self.key if made.since_ns is not None else ""  # no registry: nothing to key
        for item in found:
            row = self._row(_judged(item, made, key), tracked, index=index, future_ms=future)
            if row is not None and (include_empty or row.meta.has_conversation):
                rows.append(row)
        rows.sort(key=_order, reverse=True)
        if index is not None and self.write_back and index.worth_saving(len(found)):
            index.save()
        return rows

    def newest(
        self, count: int, *, include_empty: bool = False, include_foreign: bool = True
    ) -> builtins.list[SessionInfo]:
        """The first `count` rows of `list()`, reading the meta of only as many sessions as it must.

        Sessions are visited newest transcript mtime first; a visit stops when
        the next mtime (plus the slack and the largest skew seen so far
        between a session's `updated_ms` and its mtime) is older than the
        `count`-th best row found. So it reads about `count` metas whatever
        the number of sessions, and agrees with `list()` unless a transcript's
        mtime was set back by hand (e.g. `touch -d`) further than that.
        """
        if count <= 0:
            return []
        with _gc_paused():  # 10,000 scanned transcripts are as many stat results: no cycles to look for
            return self._newest(count, include_empty, include_foreign)

    def _newest(self, count: int, include_empty: bool, include_foreign: bool) -> builtins.list[SessionInfo]:
        pending = self._start_tracked()
        found = self._transcripts()
        tracked = self.tracked_ids(pending) if found or pending else frozenset()
        best: builtins.list[tuple[tuple[int, str], SessionInfo]] = []  # a min-heap of the `count` best so far
        skew = MTIME_SLACK_MS
        made = self.made()
        key = self.key if made.since_ns is not None else ""  # no registry: nothing to key
        import heapq  # here: a new session's `-p` never lists (issue #30)

        now_ms = int(time.time() * 1000)
        for item in _newest_first(found, 2 * count + 16):
            mtime_ms = item[0] // 1_000_000
            # A best row dated after now: the clock was set back since it was written, so a later session (its
            # continuation, fold_record's `source_updated_ms`) may have an older mtime; every meta is read then.
            if len(best) == count and mtime_ms + skew < best[0][0][0] <= now_ms:
                break
            row = self._row(_judged(item, made, key), tracked)
            if row is None or not (include_empty or row.meta.has_conversation):
                continue
            if row.foreign and not include_foreign:
                continue
            if not row.foreign:  # a planted session dated 2033 must not make every later visit read its meta
                skew = max(skew, row.meta.updated_ms - mtime_ms + MTIME_SLACK_MS)
            entry = (_order(row), row)
            if len(best) < count:
                heapq.heappush(best, entry)
            elif entry[0] > best[0][0]:
                heapq.heapreplace(best, entry)
        return [row for _, row in sorted(best, key=lambda item: item[0], reverse=True)]

    def latest(self) -> SessionInfo | None:
        """The most recently updated session of this user with a conversation of its own (for --continue).

        Foreign sessions (planted by a clone, another user's, dated in the future) are never picked.
        """
        rows = self.newest(1, include_foreign=False)
        return rows[0] if rows else None

    def lineage(self, session_id: str, *, limit: int = 1000) -> builtins.list[SessionInfo]:
        """The sessions `session_id` was resumed from, nearest first, following each meta's `resumed_from`.

        Stops at a session that is missing (deleted) or seen before, and after `limit` steps.
        """
        chain: builtins.list[SessionInfo] = []
        seen = {session_id}
        info = self.info(session_id, write_back=False)
        while info is not None and len(chain) < limit:
            source = info.meta.resumed_from
            if not source or source in seen or not is_session_id(source):
                break
            seen.add(source)
            info = self.info(source, write_back=False)
            if info is not None:
                chain.append(info)
        return chain

    def _chain_root(self, session_id: str, source: SessionInfo | None) -> str:
        """The first session of `session_id`'s resume chain: recorded by its resume, else found by walking back."""
        if source is None or not source.meta.resumed_from:
            return session_id
        if source.meta.root_session_id:
            return source.meta.root_session_id
        chain = self.lineage(session_id)  # a session resumed before roots were recorded
        if not chain:
            return source.meta.resumed_from
        oldest = chain[-1].meta
        return oldest.root_session_id or oldest.resumed_from or oldest.id

    # Resuming ---------------------------------------------------------------

    def load(self, session_id: str, *, window: int | None = None) -> LoadedSession:
        """`load_for_resume` of one session of this project (id already resolved)."""
        from .resume import load_for_resume

        try:
            return load_for_resume(self._transcript(session_id), session_id, window=window)
        except OSError as exc:
            raise SessionNotFound(f"cannot read session {session_id}: {exc.strerror or exc}") from None

    def resume(
        self,
        session_id: str,
        *,
        model: str | None,
        provider: str | None,
        agent_version: str | None = None,
        git_branch: str | bool | None = True,
        before_turn: int | None = None,
        allow_foreign: bool = False,
        copy: bool = True,
        window: int | None = None,
    ) -> ResumedSession:
        """Start a new session that holds the whole restored history of `session_id`.

        With `before_turn=N` (a rewind), the history is what the session held just before its
        user turn N (numbered as `rewind.prompt_turns` numbers them).

        A foreign session (see `foreign_reason`) raises ForeignSession unless
        `allow_foreign` says the user confirmed it; the new session's
        `resume_marker` then records `adopted` (the reason), so a foreign
        history never enters a session of this user unnoticed.

        Writes `session_start`, `resume_marker`, then every restored message as
        a `user`/`assistant` record with `"restored": true` — into a staging
        file that becomes `messages.jsonl` only once the copy is complete, so
        a crash mid-copy leaves nothing to list or continue. The source is only read.

        `copy=False` stops after the
        resume_marker and leaves the session staged: the caller writes what replaces
        the history (a compact_boundary) and calls `publish()`, or `copy_history()`.
        `window` (with `copy=False`): load_for_resume's, so that an oversized history is
        held only as far as its summary needs (`loaded.windowed`: it can then only be compacted).
        A rewind (`before_turn`) ignores it and loads its history whole.

        The source's `instructions` record (the project instructions its model was given and its start
        directory) is copied right after the resume_marker, so the new session sends the same system
        prompt, however the files changed since. A source without one had none (nothing was found, or it
        was recorded before they existed), and neither has the new session. `resumed.instructions`: the
        fields written.
        """
        if window is not None and copy:
            raise ValueError("a windowed resume cannot copy the history")
        reason = self.foreign_reason(session_id)
        if reason and not allow_foreign:
            raise ForeignSession(session_id, reason)
        marker: dict[str, Any] = {}
        if before_turn is None:
            loaded = self.load(session_id, window=window)
            marker["source_bytes"] = loaded.file_size
        else:  # a rewind: the history just before user turn `before_turn`
            from .rewind import choose_turn, load_before

            transcript = self._transcript(session_id)
            try:
                turn = choose_turn(transcript, before_turn)
                loaded = load_before(transcript, session_id, turn.offset)
            except OSError as exc:
                raise SessionNotFound(f"cannot read session {session_id}: {exc.strerror or exc}") from None
            marker.update(at_turn=before_turn, source_bytes=turn.offset)
        source = self.info(session_id, write_back=False)  # a resume writes nothing into the source's directory
        recorder = self.create(model=model, provider=provider, agent_version=agent_version, git_branch=git_branch,
                               staged=True)
        first_prompt = source.meta.first_prompt if source else loaded.first_prompt
        marker["compact_count"] = loaded.compact_count
        if first_prompt:
            marker["first_prompt"] = first_prompt
        if source and source.meta.name:
            marker["name"] = source.meta.name  # the continuation keeps its name (meta folds it)
        marker["root_session_id"] = self._chain_root(session_id, source)
        if source is not None and not reason:
            # A clock that ran ahead and was set back dates the source later than anything written now: the
            # continuation ranks after it all the same (meta.fold_record), or `-c` would bring the source back
            # without the turns said since. Its own mark vouches for it, so that date never makes it foreign.
            # Only the user's own source: an adopted stranger's date (2033) would pin the adoption on top.
            marker["source_updated_ms"] = source.meta.updated_ms
        if reason:
            marker["adopted"] = reason
        recorder.resume_marker(session_id, loaded.restored_count, **marker)
        from .redact import redact_text
        from .resume import recorded_instructions

        scene = recorded_instructions(self._transcript(session_id))
        if scene is not None:
            recorder.append("instructions", **scene)
            if self.redact and isinstance(scene.get("text"), str):  # as the record holds it
                scene = {**scene, "text": redact_text(scene["text"])}
        self._carry_scene(session_id, recorder)
        resumed = ResumedSession(recorder, loaded, instructions=scene)
        if copy:
            resumed.copy_history()
        return resumed


    def _carry_scene(self, source_id: str, recorder: Recorder) -> None:
        """Copy the source's prefix records (SCENE_TYPES: the memory index it was given) into the new session.

        They are among a session's first records (a fresh one writes them right after session_start, a resumed
        one right after its resume_marker), so reading the head of the source is enough.
        """
        from .inspect import first_records

        found: dict[str, dict[str, Any]] = {}
        for record in first_records(self._transcript(source_id), 8):
            if record.get("type") in SCENE_TYPES and record["type"] not in found:
                found[record["type"]] = {k: v for k, v in record.items() if k not in ENVELOPE_FIELDS}
        for rtype in SCENE_TYPES:
            if rtype in found:
                recorder.append(rtype, **found[rtype])


_EUID = os.geteuid()


class _gc_paused:  # noqa: N801 - used as a function: `with _gc_paused():`
    """No garbage collection while a listing builds its rows: 10,000 sessions make hundreds of thousands of
    objects, none of them cyclic, and the collector's passes over them were a fifth of listing them.

    A class, not `contextlib.contextmanager`: the listing's path does not import contextlib.
    """

    def __enter__(self) -> None:
        self.enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc: object) -> None:
        if self.enabled:
            gc.enable()


def _judged(seen: _Seen, made: Made, key: str) -> _Found:
    """A scanned transcript with the verdict of its owner, mode and the registry (stats None: ours); `key`: the
    store's (SessionStore.key)."""
    mtime_ns, name, st = seen
    # 0400: a team store's copy of someone else's session (trust.read_fetched says whose)
    ours = st.st_uid == _EUID and st.st_mode & 0o277 == 0o200 and made.knows_session(name, key, st.st_ctime_ns)
    return (mtime_ns, name, st.st_size, None if ours else (st, None))


def _newest_first(found: builtins.list[_Seen], head: int) -> Iterator[_Seen]:
    """`found` newest transcript first, sorted only as far as it is read.

    `newest(n)` usually stops after about n rows: the first `head` come from a heap (one comparison
    for most of 10,000), and the whole list is sorted only if the visit goes beyond them. Ids are unique,
    so the order is total and the stats are never compared.
    """
    import heapq

    first = heapq.nlargest(head, found)
    yield from first
    if len(found) > head:
        yield from sorted(found, reverse=True)[head:]


def _future_ms() -> int:
    """The latest time a session of ours can be dated (now plus the clock slack of trust.foreign_reason)."""
    return int(time.time() * 1000) + FUTURE_SLACK_MS


def _foreign_by_stat(fst: os.stat_result | None, dst: os.stat_result | None) -> bool:
    """Whether ownership or modes alone make a session foreign (then listing writes nothing into it)."""
    return foreign_reason(dst, fst, tracked=False) is not None


def _close(fd: int | None) -> None:
    if fd is not None:
        os.close(fd)
