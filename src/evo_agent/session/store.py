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

import heapq
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .ids import (
    AmbiguousSessionId,
    InvalidSessionId,
    SessionNotFound,
    created_ms_of,
    is_session_id,
    new_session_id,
    resolve_session_id,
)
from .inspect import is_id_prefix
from .meta import SessionMeta, catch_up, clean_name, read_meta, write_back_meta
from .project import git_branch_of
from .recorder import MESSAGES_NAME, Recorder
from .resume import LoadedSession, load_for_resume
from .writer import make_private_dir, stderr_warning

SESSIONS_SUBDIR = Path(".evo-agent") / "sessions"
GITIGNORE_TEXT = "*\n"
# How much later than its transcript's mtime a session's last record may be stamped: the kernel
# stamps files from a coarse clock (a tick behind), FAT keeps 2-second mtimes.
MTIME_SLACK_MS = 2000


@dataclass
class SessionInfo:
    """One row of the listing: the (fresh) meta and where the session lives."""

    meta: SessionMeta
    dir: str  # kept as str: building a Path per row is a measurable share of listing 10,000

    @property
    def id(self) -> str:
        return self.meta.id

    @property
    def path(self) -> Path:
        """The session directory."""
        return Path(self.dir)


def _order(row: SessionInfo) -> tuple[int, str]:
    """Newest update first; the id (creation order) breaks ties."""
    return (row.meta.updated_ms, row.meta.id)


@dataclass
class ResumedSession:
    recorder: Recorder
    loaded: LoadedSession


class SessionStore:
    """The sessions of one project.

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

    # Creating -------------------------------------------------------------

    def ensure_sessions_dir(self) -> bool:
        """Create `.evo-agent/sessions` (0700) with its `.gitignore`; False when impossible."""
        try:
            make_private_dir(self.sessions_dir)
            ignore = self.sessions_dir / ".gitignore"
            if not ignore.exists():
                fd = os.open(ignore, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "w") as f:
                    f.write(GITIGNORE_TEXT)
            return True
        except FileExistsError:
            return True
        except OSError:
            return False

    def create(
        self,
        *,
        model: str | None,
        provider: str | None,
        agent_version: str | None = None,
        git_branch: str | None | bool = True,
        session_id: str | None = None,
        meta_interval: float | None = None,
        staged: bool = False,
        start_fields: dict | None = None,
    ) -> Recorder:
        """Start a new session and write its `session_start`. Never raises.

        `git_branch=True` asks git; a string uses it; None records none.
        `staged=True` writes to a staging file until `recorder.publish()`.
        When the directory cannot be made the recorder still works: its
        writes fail and warn once, and the conversation goes on.
        """
        sid = session_id or new_session_id()
        branch = git_branch_of(self.project_dir) if git_branch is True else (git_branch or None)
        session_dir = self.sessions_dir / sid
        if self.ensure_sessions_dir():
            try:
                make_private_dir(session_dir)
            except OSError:
                pass  # reported by the first append
        kwargs = {} if meta_interval is None else {"meta_interval": meta_interval}
        recorder = Recorder(
            session_dir, sid, cwd=str(self.project_dir), agent_version=agent_version,
            git_branch=branch, warn=self.warn, redact=self.redact, staged=staged, **kwargs,
        )
        recorder.session_start(model=model, provider=provider, **(start_fields or {}))
        return recorder

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

        Raises SessionNotFound, or AmbiguousSessionId listing the candidates.
        """
        wanted = clean_name(text).casefold() if isinstance(text, str) else ""
        if not wanted:
            raise InvalidSessionId("invalid session id '': expected <13 digits>_<8 hex>, a prefix of one, or a session's name")
        named = [row for row in self.list() if row.meta.name and row.meta.name.casefold() == wanted]
        superseded = {row.meta.resumed_from for row in named}
        heads = [row for row in named if row.id not in superseded]
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
            st = os.stat(os.path.join(path, MESSAGES_NAME))
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode):
            return None
        return self._row(session_id, path, st.st_size, write_back)

    def _row(self, session_id: str, path: str, size: int, write_back: bool | None = None) -> SessionInfo | None:
        cached = read_meta(path, session_id)
        if cached is not None and cached.messages_bytes == size:
            return SessionInfo(cached, path)
        try:
            meta, complete = catch_up(path, session_id, created_ms_of(session_id), cached)
        except OSError:
            return None
        if (self.write_back if write_back is None else write_back) and (
                cached is None or complete.messages_bytes != cached.messages_bytes):
            write_back_meta(path, complete)  # best effort: a failure only means the next listing catches up again
        return SessionInfo(meta, path)

    def _transcripts(self) -> list[tuple[int, str, int]]:
        """(mtime in ns, id, size) of every session directory's transcript; symlinks are never followed."""
        base = self._sessions_str
        found = []
        try:
            with os.scandir(base) as entries:
                for entry in entries:
                    name = entry.name
                    if not is_session_id(name) or not entry.is_dir(follow_symlinks=False):
                        continue
                    try:
                        st = os.stat(os.path.join(base, name, MESSAGES_NAME))
                    except OSError:
                        continue
                    if stat.S_ISREG(st.st_mode):
                        found.append((st.st_mtime_ns, name, st.st_size))
        except OSError:
            return []
        return found

    def list(self, *, include_empty: bool = False) -> list[SessionInfo]:
        """Every session of the project, most recently updated first.

        Sessions without an exchange of their own (`SessionMeta.has_conversation`:
        empty, resumed with nothing new said, refused by the API) are hidden
        unless `include_empty`. Symlinked entries are never followed. A
        meta.json that had to be rebuilt is written back (see `meta.write_back_meta`).
        """
        base = self._sessions_str
        rows = []
        for _, name, size in self._transcripts():
            row = self._row(name, os.path.join(base, name), size)
            if row is not None and (include_empty or row.meta.has_conversation):
                rows.append(row)
        rows.sort(key=_order, reverse=True)
        return rows

    def newest(self, count: int, *, include_empty: bool = False) -> list[SessionInfo]:
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
        base = self._sessions_str
        found = self._transcripts()
        found.sort(reverse=True)
        best: list[tuple[tuple[int, str], SessionInfo]] = []  # a min-heap of the `count` best so far
        skew = MTIME_SLACK_MS
        for mtime_ns, name, size in found:
            mtime_ms = mtime_ns // 1_000_000
            if len(best) == count and mtime_ms + skew < best[0][0][0]:
                break
            row = self._row(name, os.path.join(base, name), size)
            if row is None or not (include_empty or row.meta.has_conversation):
                continue
            skew = max(skew, row.meta.updated_ms - mtime_ms + MTIME_SLACK_MS)
            item = (_order(row), row)
            if len(best) < count:
                heapq.heappush(best, item)
            elif item[0] > best[0][0]:
                heapq.heapreplace(best, item)
        return [row for _, row in sorted(best, key=lambda item: item[0], reverse=True)]

    def latest(self) -> SessionInfo | None:
        """The most recently updated session with a conversation of its own (for --continue)."""
        rows = self.newest(1)
        return rows[0] if rows else None

    def lineage(self, session_id: str, *, limit: int = 1000) -> list[SessionInfo]:
        """The sessions `session_id` was resumed from, nearest first, following each meta's `resumed_from`.

        Stops at a session that is missing (deleted) or seen before, and after `limit` steps.
        """
        chain: list[SessionInfo] = []
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

    # Resuming ---------------------------------------------------------------

    def load(self, session_id: str) -> LoadedSession:
        """`load_for_resume` of one session of this project (id already resolved)."""
        try:
            return load_for_resume(self._transcript(session_id), session_id)
        except OSError as exc:
            raise SessionNotFound(f"cannot read session {session_id}: {exc.strerror or exc}") from None

    def resume(
        self,
        session_id: str,
        *,
        model: str | None,
        provider: str | None,
        agent_version: str | None = None,
        git_branch: str | None | bool = True,
        before_turn: int | None = None,
    ) -> ResumedSession:
        """Start a new session that holds the whole restored history of `session_id`.

        With `before_turn=N` (a rewind), the history is what the session held just before its
        user turn N (numbered as `rewind.prompt_turns` numbers them).

        Writes `session_start`, `resume_marker`, then every restored message as
        a `user`/`assistant` record with `"restored": true` — into a staging
        file that becomes `messages.jsonl` only once the copy is complete, so
        a crash mid-copy leaves nothing to list or continue. The source is only read.
        """
        marker: dict = {}
        if before_turn is None:
            loaded = self.load(session_id)
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
        recorder.resume_marker(session_id, len(loaded.messages), **marker)
        recorder.append_many((m["role"], {"message": m, "restored": True}) for m in loaded.messages)
        recorder.publish()
        recorder.checkpoint()
        return ResumedSession(recorder, loaded)
