"""Recorders: the only code that writes transcripts.

A `Recorder` owns one session's messages.jsonl (and its meta.json); a
`SidechainRecorder` owns one subagent's file under `subagent/`. Each record
method builds the envelope, appends one line, and returns whether it landed;
none of them ever raises into the agent loop.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from .ids import created_ms_of, sidechain_file_name
from .jsonio import encode_line
from .layout import FILE_MODE, MESSAGES_NAME, META_NAME, STAGING_NAME, SUBAGENT_DIR
from .meta import SessionMeta, empty_meta, fold_record, write_meta
from .project import git_branch_of  # noqa: F401 - re-exported: the library's old home of it
from .records import HELD_UNTIL_SAID, META_AT_ONCE, SCENE_TYPES
from .redact import encode_redacted
from .writer import AppendWriter, DirHandle, StagedWriter, stderr_warning

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)
if TYPE_CHECKING:
    from typing import Any

META_INTERVAL_S = 1.0


def package_version() -> str:
    """The package's version: its top-level `__version__` (always loaded before this module).

    Not importlib.metadata: importing it costs ~15 ms of every start (SPEC §8).
    """
    version = getattr(sys.modules.get(__name__.split(".")[0]), "__version__", None)
    if isinstance(version, str) and version:
        return version
    from importlib import metadata

    try:
        return metadata.version("evo-agent")
    except metadata.PackageNotFoundError:
        return "0+unknown"


# (unix second, "YYYY-MM-DDTHH:MM:SS", "+08:00", that second as written, in µs since the epoch)
_second_stamp: tuple[int, str, str, int] = (-1, "", "", 0)


def _second(second: int) -> tuple[int, str, str, int]:
    """`datetime.fromtimestamp(second).astimezone().isoformat()` cut in two, from `time` (datetime is ~4 M
    instructions before `-p`'s first request, issue #30): the local time and its UTC offset, `+HH:MM` (with
    `:SS` when the offset has seconds, as isoformat writes it)."""
    local = time.localtime(second)
    offset = local.tm_gmtoff or 0
    sign = "-" if offset < 0 else "+"
    hours, rest = divmod(abs(offset), 3600)
    minutes, seconds = divmod(rest, 60)
    zone = f"{sign}{hours:02d}:{minutes:02d}" + (f":{seconds:02d}" if seconds else "")
    return second, time.strftime("%Y-%m-%dT%H:%M:%S", local), zone, second * 1_000_000


def stamp_now() -> tuple[str, int]:
    """(`now_iso()`, the same instant in ms exactly as `meta.timestamp_ms` reads it back from the text).

    Every record takes one; building it with datetime costs ~2 µs, a fifth of
    an append (SPEC §8), so the date, time and offset are formatted once per
    second and only the milliseconds per call. The number lets the recorder's
    meta fold skip parsing the text it has just made: `timestamp_ms` divides
    the instant's whole microseconds by 10**6 and multiplies by 1000 in floats,
    and so does this, from the same integers, so the two never differ.
    """
    global _second_stamp
    now = time.time()
    second = int(now)
    stamp = _second_stamp
    if stamp[0] != second:
        stamp = _second_stamp = _second(second)
    millis = int((now - second) * 1000)
    # ".%03d" without a format spec's parse: a table of the thousand was ~3 M instructions to import (issue #30)
    return (stamp[1] + "." + str(1000 + millis)[1:] + stamp[2],
            int((stamp[3] + millis * 1000) / 1_000_000 * 1000))


def now_iso() -> str:
    """Local time with milliseconds and offset: 2026-05-31T19:58:42.705+08:00."""
    return stamp_now()[0]


class _TranscriptRecorder:
    """Envelope + append for one transcript file. Shared by both recorder kinds."""

    def __init__(
        self,
        path: Path,
        *,
        session_id: str,
        cwd: str,
        agent_version: str,
        git_branch: str | None,
        label: str,
        warn: Callable[[str], None],
        redact: bool = True,
        directory: DirHandle | None = None,
        writer_class: type[AppendWriter] = AppendWriter,
    ) -> None:
        self.path = path
        self.session_id = session_id
        self.cwd = cwd
        self.agent_version = agent_version
        self.git_branch = git_branch
        self.prompt_id: str | None = None
        self.redact = redact  # mask secret shapes in what goes to disk (redact.py); the caller's dicts stay as they are
        self.directory = directory or DirHandle(path.parent)
        self.writer = writer_class(path, label=label, warn=warn, directory=self.directory)

    def _envelope(self, rtype: str, fields: dict[str, Any], timestamp: str | None = None) -> dict[str, Any]:
        record = {
            "type": rtype,
            "timestamp": timestamp or now_iso(),
            "agent_version": self.agent_version,
            "session_id": self.session_id,
            "cwd": self.cwd,
        }
        if self.prompt_id is not None:
            record["prompt_id"] = self.prompt_id
        if self.git_branch is not None:
            record["git_branch"] = self.git_branch
        record.update(fields)
        return record

    def _encode(self, record: dict[str, Any], fields: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
        """(the record as written, its line): redacted unless redaction is off."""
        if self.redact:
            return encode_redacted(record, next(iter(fields), None))
        return record, encode_line(record)

    def _after_append(self, record: dict[str, Any], ok: bool, stamp_ms: int | None = None) -> None:
        """Hook for bookkeeping, called with the writer's lock held (`stamp_ms`: the record's timestamp, when known)."""

    def append(self, rtype: str, **fields: Any) -> bool:
        """Append one record of any type (readers skip types they do not know)."""
        return self._record(rtype, fields)

    def _record(self, rtype: str, fields: dict[str, Any]) -> bool:
        """`append` without the keyword packing: envelope, encoding with redaction, one append, the hook.

        Every record of a turn takes this path (SPEC §8's append budget), so it is
        one flat function: the envelope as `_envelope` builds it, inline.
        """
        timestamp, now_ms = stamp_now()
        stamp_ms: int | None = now_ms
        record = {"type": rtype, "timestamp": timestamp, "agent_version": self.agent_version,
                  "session_id": self.session_id, "cwd": self.cwd}
        if self.prompt_id is not None:
            record["prompt_id"] = self.prompt_id
        if self.git_branch is not None:
            record["git_branch"] = self.git_branch
        record.update(fields)
        if "timestamp" in fields:  # a record that keeps its own instant (an import): meta folds that one, not now
            stamp_ms = None
        try:
            if self.redact:
                record, line = encode_redacted(record, next(iter(fields), None))
            else:
                line = encode_line(record)
        except Exception as exc:  # noqa: BLE001 — a value the encoders cannot take: report, never raise
            self.writer._fail(OSError(0, f"cannot encode a {rtype} record ({exc})"))
            return False
        writer = self.writer
        with writer.lock:
            ok = writer.append_locked(line)
            self._after_append(record, ok, stamp_ms)
        return ok

    def append_many(self, records: Iterable[tuple[str, dict[str, Any]]], batch_bytes: int = 1 << 20) -> bool:
        """Append several records, several lines per write (used to copy restored history)."""
        ok = True
        batch: list[bytes] = []
        size = 0
        built: list[dict[str, Any]] = []
        for rtype, fields in records:
            try:
                record, line = self._encode(self._envelope(rtype, fields), fields)
            except Exception as exc:  # noqa: BLE001 — as in `_record`: a restored message nested too deeply for the
                # redactor (a planted or imported transcript) is reported in one line and left out, never a traceback
                self.writer._fail(OSError(0, f"cannot encode a {rtype} record ({exc})"))
                ok = False
                continue
            built.append(record)
            batch.append(line)
            size += len(line)
            if size >= batch_bytes:
                ok = self._flush_batch(batch, built) and ok
                batch, built, size = [], [], 0
        if batch:
            ok = self._flush_batch(batch, built) and ok
        return ok

    def _flush_batch(self, lines: list[bytes], records: list[dict[str, Any]]) -> bool:
        with self.writer.lock:
            ok = self.writer.append_locked(b"".join(lines))
            for record in records:
                self._after_append(record, ok)
        return ok

    # The record types of SPEC §2 -------------------------------------------

    def user(self, message: dict[str, Any], **extra: Any) -> bool:
        return self._record("user", {"message": message, **extra})

    def assistant(
        self,
        message: dict[str, Any],
        *,
        input_tokens: int = 0,
        output_tokens: int = 0,
        cache_creation_input_tokens: int | None = None,
        cache_read_input_tokens: int | None = None,
        **extra: Any,
    ) -> bool:
        fields: dict[str, Any] = {"message": message, "input_tokens": input_tokens, "output_tokens": output_tokens}
        if cache_creation_input_tokens is not None:
            fields["cache_creation_input_tokens"] = cache_creation_input_tokens
        if cache_read_input_tokens is not None:
            fields["cache_read_input_tokens"] = cache_read_input_tokens
        fields.update(extra)
        return self._record("assistant", fields)

    def compact_boundary(self, summary: str, compact_count: int, trigger: str, **extra: Any) -> bool:
        return self.append("compact_boundary", summary=summary, compact_count=compact_count, trigger=trigger, **extra)

    def checkpoint(self) -> None:
        """End of a turn. A sidechain keeps no meta.json, so there is nothing to refresh."""


class SidechainRecorder(_TranscriptRecorder):
    """A subagent's own transcript: `subagent/<ms>_<name>_<4hex>.jsonl`."""

    def __init__(self, path: Path, *, agent_name: str, relative_path: str, **kw: Any) -> None:
        super().__init__(path, **kw)
        self.agent_name = agent_name
        self.relative_path = relative_path


# HELD_UNTIL_SAID: records that only set the scene, kept in memory by a session started deferred until
# something is said. SCENE_TYPES: records that hold part of the request's fixed prefix (SPEC §12): the recorder
# keeps the last of each type (`Recorder.scene`), and a resume carries them into the new session right after its
# resume_marker (`SessionStore.resume`), so the first request after a resume repeats its source's prefix byte for
# byte. Both are derived from the table of record types (records.py).


class Recorder(_TranscriptRecorder):
    """One session's main transcript plus its meta.json cache.

    The meta is kept in memory, updated per record, and written to disk at
    most once per `meta_interval` seconds and on `checkpoint()`/`close()`.
    Listing notices a meta.json that lags the transcript and catches up, so
    a lagging meta costs a little reading, never a wrong list.
    """

    def __init__(
        self,
        session_dir: Path,
        session_id: str,
        *,
        cwd: str,
        agent_version: str | None = None,
        git_branch: str | None = None,
        warn: Callable[[str], None] = stderr_warning,
        meta_interval: float = META_INTERVAL_S,
        redact: bool = True,
        staged: bool = False,
        directory: DirHandle | None = None,
        opener: Callable[[], None] | None = None,
    ) -> None:
        """`directory`: the session directory already opened (SessionStore.create opens the whole chain
        without following links); by default it is opened at the first record, `O_NOFOLLOW`.

        `opener` (a session started before anything is said): `session_start` and the records that only
        set the scene (`HELD_UNTIL_SAID`) are held in memory; the first other record calls `opener()`
        (which makes the directory and takes the live lock) and writes them all, in order, before itself.
        A launch where nothing is said leaves nothing on disk."""
        self.session_dir = Path(session_dir)
        self._opener = opener
        self._held: list[tuple[dict[str, Any], dict[str, Any], int | None]] | None = [] if opener is not None else None
        self._held_lock = threading.Lock()
        self._warn = warn
        super().__init__(
            self.session_dir / (STAGING_NAME if staged else MESSAGES_NAME),
            session_id=session_id,
            cwd=cwd,
            agent_version=agent_version or package_version(),
            git_branch=git_branch,
            label=f"session {session_id}",
            warn=warn,
            redact=redact,
            directory=directory or DirHandle(self.session_dir),
            writer_class=StagedWriter if staged else AppendWriter,
        )
        # Staged records a failed write kept off the file (and out of meta) until the writer wrote them again.
        self._unfolded: list[tuple[dict[str, Any], int | None]] = []
        self._publish_wanted = False  # publish() came while the staged file was incomplete
        self._staging = staged  # until published: the one test the append path pays for it
        self._landed = False  # a record of this session reached its transcript
        self.resumed_from: str | None = None  # the resume_marker's source, whether or not the marker landed
        self.meta: SessionMeta = empty_meta(session_id, created_ms_of(session_id))
        self.scene: dict[str, dict[str, Any]] = {}  # type -> fields of the last SCENE_TYPES record (the prefix's parts)
        self._meta_interval = meta_interval
        self._meta_written_at = 0.0
        self._meta_dirty = False
        self._meta_failed = False
        # The registry line that vouches for this session (SessionStore.create), when appending it failed (a full
        # disk): tried again at each meta.json write until it lands, or the session stays foreign for ever.
        self.unvouched: Callable[[], bool] | None = None

    @property
    def id(self) -> str:
        return self.session_id

    @property
    def on_disk(self) -> bool:
        """Whether the session exists on disk (always, unless it was started deferred and nothing was said)."""
        return self._held is None

    @property
    def resumable(self) -> bool:
        """Whether `--resume` can open this session now: its transcript is published and a record of it landed.

        Not so when every write failed (a full disk, a read-only directory) or a resume's copy is still
        staged: the exit hint must then name another session (see Agent.holder_session_id).
        """
        return self._landed and not self._staging

    def _record(self, rtype: str, fields: dict[str, Any]) -> bool:
        if rtype in SCENE_TYPES:
            self.scene[rtype] = dict(fields)
        if self._held is not None:
            with self._held_lock:
                if self._held is not None:
                    if rtype in HELD_UNTIL_SAID:
                        # its instant in ms kept beside it: the meta fold then parses no timestamp (datetime)
                        timestamp, stamp_ms = stamp_now()
                        own = "timestamp" in fields  # an instant of its own (an import): folded from the record
                        self._held.append((self._envelope(rtype, fields, timestamp), fields, None if own else stamp_ms))
                        return True
                    self._write_held()
        return _TranscriptRecorder._record(self, rtype, fields)

    def _write_held(self) -> None:
        """The session begins on disk: its directory, then the held records with their own timestamps."""
        held, self._held = self._held or [], None
        if self._opener is not None:
            self._opener()
        for record, fields, stamp_ms in held:
            try:
                written, line = self._encode(record, fields)
            except Exception as exc:  # noqa: BLE001 — as append(): report, never raise
                self.writer._fail(OSError(0, f"cannot encode a {record.get('type')} record ({exc})"))
                continue
            with self.writer.lock:
                self._after_append(written, self.writer.append_locked(line), stamp_ms)

    def publish(self) -> bool:
        """Make a staged transcript the session's `messages.jsonl` (one rename); later records append there.

        A resume copies the restored history into a staged file first, so a
        copy cut short by a crash is never listed, continued or resumed as
        if it were the whole conversation. A copy cut short by a failed write
        (a full disk) is not published either: False, and the rename happens
        after the next record once the staged writer has written the whole file again.
        """
        with self.writer.lock:
            return self._publish_locked()

    def _publish_locked(self) -> bool:
        final = self.session_dir / MESSAGES_NAME
        if self.path == final:
            return True
        writer = self.writer
        if isinstance(writer, StagedWriter) and writer.incomplete:
            self._publish_wanted = True
            return False
        try:
            dir_fd = self.directory.fileno()
            os.rename(self.path.name, MESSAGES_NAME, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except OSError as exc:
            writer._fail(exc)
            return False
        self.path = final
        writer.moved_to(final)
        if isinstance(writer, StagedWriter):
            writer.release()
        self._publish_wanted = self._staging = False
        return True

    def _after_append(self, record: dict[str, Any], ok: bool, stamp_ms: int | None = None) -> None:
        if self._staging:
            if not ok:  # kept by the staged writer: folded once it has written the file whole again
                lost = isinstance(self.writer, StagedWriter) and self.writer.lost
                if lost:  # never written now: nothing to fold later
                    self._unfolded = []
                else:
                    self._unfolded.append((record, stamp_ms))
                return
            if self._unfolded:
                held, self._unfolded = self._unfolded, []
                for earlier, earlier_ms in held:
                    fold_record(self.meta, earlier, earlier_ms)
            if self._publish_wanted:
                self._publish_locked()
        if not ok:
            return
        self._landed = True
        fold_record(self.meta, record, stamp_ms)
        self._meta_dirty = True
        now = time.monotonic()
        if now - self._meta_written_at >= self._meta_interval or record["type"] in META_AT_ONCE:
            self._write_meta_locked(now)

    def _write_meta_locked(self, now: float | None = None) -> None:
        self._meta_written_at = time.monotonic() if now is None else now
        if self.unvouched is not None and self.unvouched():
            self.unvouched = None
        try:
            dir_fd = self.directory.fileno()
            self.meta.messages_bytes = os.stat(self.path.name, dir_fd=dir_fd, follow_symlinks=False).st_size
            write_meta(self.session_dir, self.meta, dir_fd=dir_fd)
            self._meta_dirty = False
        except OSError as exc:
            if not self._meta_failed and not self.writer.failures:
                self._meta_failed = True
                self._warn(f"evo-agent: cannot update {self.session_dir / META_NAME}: {exc.strerror or exc}"
                           "; listing will rebuild it from the transcript")

    def checkpoint(self) -> None:
        """Write meta.json now if records arrived since it was last written (end of a turn)."""
        with self.writer.lock:
            if self._meta_dirty:
                self._write_meta_locked()

    close = checkpoint

    # Record types only the main transcript has ----------------------------

    def session_start(self, *, model: str | None, provider: str | None, **extra: Any) -> bool:
        return self.append("session_start", model=model, provider=provider, **extra)

    def session_name(self, name: str, **extra: Any) -> bool:
        """Name (or rename) this session: `-n`, `/rename`, `sessions rename` (meta folds the latest)."""
        return self.append("session_name", name=name, **extra)

    def memory_write(self, scope: str, path: str, op: str, diff: str, **extra: Any) -> bool:
        """A change to Auto Memory (SPEC §11): which scope and file, the command, its unified diff (redacted)."""
        return self.append("memory_write", scope=scope, path=path, op=op, diff=diff, **extra)

    def resume_marker(self, from_session_id: str, restored_count: int, **extra: Any) -> bool:
        self.resumed_from = from_session_id
        return self.append("resume_marker", from_session_id=from_session_id, restored_count=restored_count, **extra)

    def start_subagent(
        self,
        agent_name: str,
        tool_use_id: str,
        *,
        model: str | None = None,
        provider: str | None = None,
        **extra: Any,
    ) -> SidechainRecorder:
        """Write `subagent_start` here and open the child's sidechain (with its `session_start`).

        `extra` fields (e.g. `subagent_type`) go into the `subagent_start` record.
        """
        name, directory = self._claim_sidechain_name(agent_name)
        relative = f"{SUBAGENT_DIR}/{name}"
        slug = name.split("_")[1]
        side = SidechainRecorder(
            self.session_dir / relative,
            agent_name=slug,
            relative_path=relative,
            session_id=self.session_id,
            cwd=self.cwd,
            agent_version=self.agent_version,
            git_branch=self.git_branch,
            label=f"subagent transcript {relative} of session {self.session_id}",
            warn=self._warn,
            redact=self.redact,
            directory=directory,
        )
        side.prompt_id = self.prompt_id
        self.append("subagent_start", agent_name=slug, subagent_path=relative, tool_use_id=tool_use_id, **extra)
        side.append(
            "session_start", model=model, provider=provider, agent_name=slug, parent_session_id=self.session_id
        )
        return side

    def _claim_sidechain_name(self, agent_name: str, attempts: int = 16) -> tuple[str, DirHandle]:
        """A sidechain file name no other subagent holds, created empty (0600) to claim it.

        Parallel subagents with the same name started in the same millisecond
        could draw the same 4 hex digits; O_EXCL makes the clash visible, and
        a new name is drawn, so two children never share one file. The
        directory is made and opened relative to the session's open directory,
        never through a symbolic link.
        """
        try:
            directory = self.directory.make_subdir(SUBAGENT_DIR)
        except OSError:
            # the sidechain writer will report the failure once
            return sidechain_file_name(agent_name), DirHandle(self.session_dir / SUBAGENT_DIR, parent=self.directory)
        for _ in range(attempts):
            name = sidechain_file_name(agent_name)
            try:
                flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
                os.close(os.open(name, flags, FILE_MODE, dir_fd=directory.fileno()))
                return name, directory
            except FileExistsError:
                continue
            except OSError:
                break
        return name, directory

    def end_subagent(self, side: SidechainRecorder, tool_use_id: str, result: str, **extra: Any) -> bool:
        return self.append(
            "subagent_end",
            agent_name=side.agent_name,
            subagent_path=side.relative_path,
            tool_use_id=tool_use_id,
            result=result,
            **extra,
        )
