"""Where sessions live in a project, and the operations on them as a whole.

`SessionStore(project_dir)` creates sessions, lists them (from meta.json,
rebuilt where it lags), resolves ids a user typed, and resumes: a resume
always starts a new, self-contained session and only ever reads the source.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .ids import (
    SessionNotFound,
    created_ms_of,
    is_session_id,
    new_session_id,
    resolve_session_id,
)
from .meta import SessionMeta, read_meta, rebuild_meta
from .recorder import MESSAGES_NAME, Recorder, git_branch_of
from .resume import LoadedSession, load_for_resume
from .writer import make_private_dir, stderr_warning

SESSIONS_SUBDIR = Path(".evo-agent") / "sessions"
GITIGNORE_TEXT = "*\n"


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


@dataclass
class ResumedSession:
    recorder: Recorder
    loaded: LoadedSession


class SessionStore:
    def __init__(
        self, project_dir: Path | str, *, warn: Callable[[str], None] = stderr_warning, redact: bool = True
    ) -> None:
        self.project_dir = Path(project_dir).absolute()
        self.redact = redact  # recorders mask secret shapes on disk (redact.py)
        self.sessions_dir = self.project_dir / SESSIONS_SUBDIR
        self._sessions_str = str(self.sessions_dir)
        self.warn = warn

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
    ) -> Recorder:
        """Start a new session and write its `session_start`. Never raises.

        `git_branch=True` asks git; a string uses it; None records none.
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
            git_branch=branch, warn=self.warn, redact=self.redact, **kwargs,
        )
        recorder.session_start(model=model, provider=provider)
        return recorder

    # Finding --------------------------------------------------------------

    def resolve(self, text: str) -> str:
        """A full id from a full id or unique prefix; raises a SessionError subclass."""
        sid = resolve_session_id(self.sessions_dir, text)
        if not self._transcript(sid).is_file():
            raise SessionNotFound(f"session {sid} has no transcript ({self._transcript(sid)})")
        return sid

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

    def info(self, session_id: str) -> SessionInfo | None:
        """The listing row of one session, meta rebuilt from the transcript where it lags."""
        path = os.path.join(self._sessions_str, session_id)  # str paths: this runs once per session
        try:
            size = os.stat(os.path.join(path, MESSAGES_NAME)).st_size
        except OSError:
            return None
        cached = read_meta(path, session_id)
        if cached is None or cached.messages_bytes != size:
            try:
                cached = rebuild_meta(Path(path), session_id, created_ms_of(session_id), cached)
            except OSError:
                return None
        return SessionInfo(cached, path)

    def list(self, *, include_empty: bool = False) -> list[SessionInfo]:
        """Every session of the project, most recently updated first.

        Sessions without a single user or assistant message are hidden
        unless `include_empty`. Symlinked entries are never followed.
        """
        try:
            entries = [e.name for e in os.scandir(self.sessions_dir)
                       if is_session_id(e.name) and e.is_dir(follow_symlinks=False)]
        except OSError:
            return []
        rows = []
        for name in entries:
            row = self.info(name)
            if row is not None and (include_empty or row.meta.message_count > 0):
                rows.append(row)
        rows.sort(key=lambda r: (r.meta.updated_ms, r.meta.id), reverse=True)
        return rows

    def latest(self) -> SessionInfo | None:
        """The most recently updated session with at least one message (for --continue)."""
        rows = self.list()
        return rows[0] if rows else None

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
    ) -> ResumedSession:
        """Start a new session that holds the whole restored history of `session_id`.

        Writes `session_start`, `resume_marker`, then every restored message as
        a `user`/`assistant` record with `"restored": true`. The source is only read.
        """
        loaded = self.load(session_id)
        source = self.info(session_id)
        recorder = self.create(model=model, provider=provider, agent_version=agent_version, git_branch=git_branch)
        first_prompt = source.meta.first_prompt if source else loaded.first_prompt
        marker: dict = {"compact_count": loaded.compact_count}
        if first_prompt:
            marker["first_prompt"] = first_prompt
        recorder.resume_marker(session_id, len(loaded.messages), **marker)
        recorder.append_many((m["role"], {"message": m, "restored": True}) for m in loaded.messages)
        recorder.checkpoint()
        return ResumedSession(recorder, loaded)
