"""meta.json: a small cache of what messages.jsonl says, for fast listing.

It is never trusted blindly. It remembers how many bytes of the transcript it
describes (`messages_bytes`); when that differs from the file's size the
listing folds the missing tail (or the whole file) into it, so a session that
was killed before its meta was written is still listed, and listed right.
Writers therefore only need to refresh it now and then (see Recorder).

Two writers may replace it: the session's recorder (its own in-memory fold,
under the file's lock, through a fixed temp name) and a listing that had to
catch up (`write_back_meta`, through a unique temp name). Either way the file
on disk is always the fold of the complete lines in the first
`messages_bytes` bytes of an append-only transcript, so whichever replace
lands last, the next reader only folds what follows.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from .atomic import replace_file, write_back_private
from .jsonio import as_orjson_writes, decode, orjson, orjson_loaded
from .layout import MESSAGES_NAME, META_NAME, META_TMP_NAME
from .messages import SUMMARY_PREFIX, has_tool_results, is_reminder_block, text_of
from .records import MESSAGE_TYPES, NOT_ACTIVITY

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: `sessions list` loads this module
if TYPE_CHECKING:
    from typing import Any

_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
FIRST_PROMPT_MAX = 200
# SessionMeta's fields in their positional order (what meta.json holds, and the listing index's columns).
FIELDS = ("id", "created_ms", "updated_ms", "agent_version", "cwd", "git_branch", "model", "provider", "first_prompt",
          "name", "total_input_tokens", "total_output_tokens", "total_cache_creation_tokens",
          "total_cache_read_tokens", "summary_input_tokens", "summary_output_tokens", "summary_cache_creation_tokens",
          "summary_cache_read_tokens", "message_count", "answer_count", "compact_count", "resumed_from",
          "root_session_id", "messages_bytes")


class SessionMeta:
    """What meta.json holds about one session (`to_json`), plus `extra`: keys a later version wrote.

    A plain class, not a dataclass: `sessions list` builds one per row and would otherwise import
    `dataclasses` (and with it `inspect`), more than a third of listing 10,000 sessions with `--limit 20`.
    It behaves as the dataclass did: these fields in this order, keyword or positional; equal when every
    field is; `extra` left out of the repr.
    """

    __slots__ = (*FIELDS, "extra")
    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value

    def __init__(
        self,
        id: str,  # noqa: A002 - meta.json's key
        created_ms: int,
        updated_ms: int,
        agent_version: str = "",
        cwd: str = "",
        git_branch: str | None = None,
        model: str | None = None,
        provider: str | None = None,
        first_prompt: str | None = None,
        name: str | None = None,  # set by `session_name` records (-n, /rename, sessions rename) or inherited on resume
        total_input_tokens: int = 0,
        total_output_tokens: int = 0,
        total_cache_creation_tokens: int = 0,
        total_cache_read_tokens: int = 0,
        # The compaction summary calls' tokens (compact_boundary `usage`): spent, but not the SPEC's `total_*`, which
        # sum this file's assistant records only (SPEC §3). Cost adds them (agent/usage.py `meta_usage`).
        summary_input_tokens: int = 0,
        summary_output_tokens: int = 0,
        summary_cache_creation_tokens: int = 0,
        summary_cache_read_tokens: int = 0,
        message_count: int = 0,
        # assistant records this session got from a model itself (not restored copies), plus one for a rewind
        answer_count: int = 0,
        compact_count: int = 0,
        resumed_from: str | None = None,
        # The first session of the resume chain (None: this one): the conversation's identity, the cache key (§12).
        root_session_id: str | None = None,
        messages_bytes: int = 0,
        extra: dict[str, Any] | None = None,
    ) -> None:
        self.id = id
        self.created_ms = created_ms
        self.updated_ms = updated_ms
        self.agent_version = agent_version
        self.cwd = cwd
        self.git_branch = git_branch
        self.model = model
        self.provider = provider
        self.first_prompt = first_prompt
        self.name = name
        self.total_input_tokens = total_input_tokens
        self.total_output_tokens = total_output_tokens
        self.total_cache_creation_tokens = total_cache_creation_tokens
        self.total_cache_read_tokens = total_cache_read_tokens
        self.summary_input_tokens = summary_input_tokens
        self.summary_output_tokens = summary_output_tokens
        self.summary_cache_creation_tokens = summary_cache_creation_tokens
        self.summary_cache_read_tokens = summary_cache_read_tokens
        self.message_count = message_count
        self.answer_count = answer_count
        self.compact_count = compact_count
        self.resumed_from = resumed_from
        self.root_session_id = root_session_id
        self.messages_bytes = messages_bytes
        self.extra = {} if extra is None else extra

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, SessionMeta)
        return self.to_json() == other.to_json() and self.extra == other.extra

    def __repr__(self) -> str:
        return f"SessionMeta({', '.join(f'{k}={v!r}' for k, v in self.to_json().items())})"

    @property
    def has_conversation(self) -> bool:
        """Whether this session holds an exchange of its own: a model answered in it, or it is a rewind.

        False for an empty session, a resume with nothing new said, and a start
        the API refused: listing hides those (they repeat another row or hold
        nothing) and `sessions prune` removes them. A rewind (`resume_marker.at_turn`) is a conversation of
        its own from its first record: its history is not its source's, and hiding it made `--continue`
        bring back the turns the user had just undone.
        """
        return self.answer_count > 0

    @property
    def total_tokens(self) -> int:
        return self.total_input_tokens + self.total_output_tokens

    def to_json(self) -> dict[str, Any]:
        """The fields meta.json holds (built directly: `dataclasses.asdict` deep-copies, on every checkpoint)."""
        return {
            "id": self.id, "created_ms": self.created_ms, "updated_ms": self.updated_ms,
            "agent_version": self.agent_version, "cwd": self.cwd, "git_branch": self.git_branch,
            "model": self.model, "provider": self.provider, "first_prompt": self.first_prompt, "name": self.name,
            "total_input_tokens": self.total_input_tokens, "total_output_tokens": self.total_output_tokens,
            "total_cache_creation_tokens": self.total_cache_creation_tokens,
            "total_cache_read_tokens": self.total_cache_read_tokens,
            "summary_input_tokens": self.summary_input_tokens, "summary_output_tokens": self.summary_output_tokens,
            "summary_cache_creation_tokens": self.summary_cache_creation_tokens,
            "summary_cache_read_tokens": self.summary_cache_read_tokens,
            "message_count": self.message_count, "answer_count": self.answer_count,
            "compact_count": self.compact_count,
            "resumed_from": self.resumed_from, "root_session_id": self.root_session_id,
            "messages_bytes": self.messages_bytes,
        }

    def copy(self) -> SessionMeta:
        return SessionMeta(**self.to_json())


def decode_lenient(data: bytes) -> object:
    """Parse one JSON document as orjson does, else as the stdlib does; ValueError when neither can.

    The recorder writes through the stdlib when orjson refuses a value (a lone
    surrogate from a terminal, a NaN): those lines are the stdlib's JSON and
    must read back, not count as torn. Only lines orjson rejects pay for the
    second try.
    """
    try:
        return decode(data)
    except ValueError:
        pass
    try:
        return json.loads(bytes(data))
    except RecursionError:  # "[[[[…" deeper than the stdlib parser goes: as unreadable as any garbage
        raise ValueError("JSON nested too deeply") from None


def encode_meta(meta: SessionMeta) -> bytes:
    """meta.json's bytes: two-space indented UTF-8 (what `json.dumps(indent=2)` writes, at orjson's speed)."""
    data = meta.to_json()
    early = as_orjson_writes(data, indent=True)  # before orjson is loaded (a launch's first record): its bytes
    if early is not None:
        return early + b"\n"
    fast = orjson()
    if fast is not None:
        try:
            encoded: bytes = fast.dumps(data, option=fast.OPT_INDENT_2 | fast.OPT_APPEND_NEWLINE)
            return encoded
        except TypeError:
            pass  # a lone surrogate: the stdlib escapes it, so the file stays valid UTF-8
    return (json.dumps(data, ensure_ascii=True, indent=2) + "\n").encode("ascii")


# Fields a meta.json written before them lacks: read as 0 (right for it: its transcript's boundaries have no `usage`).
_OPTIONAL_INT_FIELDS = ("summary_input_tokens", "summary_output_tokens", "summary_cache_creation_tokens",
                        "summary_cache_read_tokens")
_REQUIRED_INT_FIELDS = ("created_ms", "updated_ms", "total_input_tokens", "total_output_tokens",
                        "total_cache_creation_tokens", "total_cache_read_tokens", "message_count", "answer_count",
                        "compact_count", "messages_bytes")
_INT_FIELDS = _REQUIRED_INT_FIELDS + _OPTIONAL_INT_FIELDS
_OPT_STR_FIELDS = ("git_branch", "model", "provider", "first_prompt", "name", "resumed_from", "root_session_id",
                   "agent_version", "cwd")
_KNOWN = frozenset(_INT_FIELDS + _OPT_STR_FIELDS + ("id",))


def meta_from_json(data: object, session_id: str) -> SessionMeta | None:
    """A SessionMeta when `data` is a well-formed meta for `session_id`, else None.

    On the listing's hot path (once per session), hence the plain loops.
    """
    if type(data) is not dict or data.get("id") != session_id:
        return None
    for name in _REQUIRED_INT_FIELDS:
        value = data.get(name)
        if type(value) is not int or value < 0:
            return None
    for name in _OPTIONAL_INT_FIELDS:
        value = data.get(name, 0)
        if type(value) is not int or value < 0:
            return None
    for name in _OPT_STR_FIELDS:
        value = data.get(name)
        if value is not None and type(value) is not str:
            return None
    if len(data) != len(_KNOWN) or not _KNOWN.issuperset(data):
        data = {k: v for k, v in data.items() if k in _KNOWN}
    meta = SessionMeta(**data)
    if meta.agent_version is None or meta.cwd is None:
        return None
    return meta


def _decode_meta(data: bytes) -> object:
    """`decode_lenient` of a meta.json, through the stdlib's parser until orjson is loaded anyway.

    The same document either way (decode_lenient falls back to the stdlib for whatever orjson refuses,
    and the two agree on what both accept); `newest()` reads a few dozen small files, which do not
    pay for importing orjson.
    """
    if orjson_loaded():
        return decode_lenient(data)
    try:
        return json.loads(data)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


def read_meta(session_dir: Path | str, session_id: str) -> SessionMeta | None:
    """The cached meta of a session, or None when missing, unreadable, a symlink or someone else's."""
    try:  # O_NOFOLLOW: a symlink is not our cache; O_NONBLOCK: a FIFO planted there cannot hang a listing
        fd = os.open(os.path.join(session_dir, META_NAME), os.O_RDONLY | os.O_NONBLOCK | _O_NOFOLLOW | _O_CLOEXEC)
    except OSError:
        return None
    try:
        return meta_from_json(_decode_meta(os.read(fd, 1 << 16)), session_id)
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)


def read_meta_stat(session_dir: str, session_id: str) -> tuple[SessionMeta | None, os.stat_result | None]:
    """`read_meta`, with the fstat of the very file it read (None when none was opened): the listing index's key.

    The stat is taken on the open descriptor before reading, so the key and the bytes belong to one inode;
    a change after it also changes the ctime the index compares (list_index.py).
    """
    try:
        fd = os.open(os.path.join(session_dir, META_NAME), os.O_RDONLY | os.O_NONBLOCK | _O_NOFOLLOW | _O_CLOEXEC)
    except OSError:
        return None, None
    try:
        st = os.fstat(fd)
        return meta_from_json(_decode_meta(os.read(fd, 1 << 16)), session_id), st
    except (OSError, ValueError):
        return None, None
    finally:
        os.close(fd)


def write_meta(session_dir: Path | str, meta: SessionMeta, *, dir_fd: int | None = None) -> None:
    """Replace meta.json atomically: a reader sees the old file or the new one, never half.

    For the session's own recorder, which holds the file's lock: a fixed temp
    name (no random name to make), truncated if a crash left one behind.
    With `dir_fd` (the session directory, already open) both names are
    relative to it, so a directory swapped for a link cannot redirect them.
    Raises OSError.
    """
    if dir_fd is None:
        tmp, final = os.path.join(session_dir, META_TMP_NAME), os.path.join(session_dir, META_NAME)
    else:
        tmp, final = META_TMP_NAME, META_NAME
    replace_file(final, encode_meta(meta), dir_fd=dir_fd, tmp=tmp)


def write_back_meta(session_dir: str, meta: SessionMeta) -> bool:
    """Store a meta a listing had to rebuild, so the next listing need not; True when it landed.

    It may run next to the session's live recorder and other listings (a unique temp), and never follows
    a link, writes into another user's directory or raises (atomic.write_back_private): a read-only or
    foreign directory only means the next listing catches up again.
    """
    return write_back_private(session_dir, META_NAME, encode_meta(meta))


def timestamp_ms(stamp: object) -> int | None:
    if not isinstance(stamp, str):
        return None
    from datetime import datetime  # here: a listing that reads meta.json never needs it

    try:
        return int(datetime.fromisoformat(stamp).timestamp() * 1000)
    except ValueError:
        return None


def prompt_text(message: object) -> str | None:
    """The human text of a user message, or None for tool results and summaries."""
    if not isinstance(message, dict) or message.get("role") != "user":
        return None
    if has_tool_results(message):
        return None
    content = message.get("content")
    if isinstance(content, list):  # reminders ride in user messages; they are not what a person typed
        message = {"role": "user", "content": [b for b in content if not is_reminder_block(b)]}
    text = text_of(message, "\n")
    if text.startswith(SUMMARY_PREFIX):
        return None
    line = " ".join(text.split())
    return line[:FIRST_PROMPT_MAX] or None


NAME_MAX = 100


def clean_name(text: str) -> str:
    """A session name as it is stored and matched: one line, single spaces, at most NAME_MAX characters."""
    return " ".join(text.split())[:NAME_MAX]


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _fold_usage(meta: SessionMeta, counts: Mapping[str, object]) -> None:
    """Add an assistant record's token counts to the totals (SPEC §3: sums over the assistant records)."""
    meta.total_input_tokens += _int(counts.get("input_tokens"))
    meta.total_output_tokens += _int(counts.get("output_tokens"))
    meta.total_cache_creation_tokens += _int(counts.get("cache_creation_input_tokens"))
    meta.total_cache_read_tokens += _int(counts.get("cache_read_input_tokens"))


def _fold_summary_usage(meta: SessionMeta, usage: Mapping[str, object]) -> None:
    """Add a compact_boundary's `usage` (its summary calls) to the summary totals, kept apart from `total_*`."""
    meta.summary_input_tokens += _int(usage.get("input_tokens"))
    meta.summary_output_tokens += _int(usage.get("output_tokens"))
    meta.summary_cache_creation_tokens += _int(usage.get("cache_creation_input_tokens"))
    meta.summary_cache_read_tokens += _int(usage.get("cache_read_input_tokens"))


def fold_record(meta: SessionMeta, record: dict[str, Any], stamp_ms: int | None = None) -> None:
    """Update `meta` with one record of the transcript, exactly as a writer would.

    `stamp_ms`: `timestamp_ms(record["timestamp"])` when the caller has it already (the recorder that
    made the text, recorder.stamp_now), which saves parsing it on every append.
    """
    rtype = record.get("type")
    if not isinstance(rtype, str):  # a damaged line's list or dict cannot be looked up in the type sets
        rtype = ""
    stamp = timestamp_ms(record.get("timestamp")) if stamp_ms is None else stamp_ms
    # A name is about the session, not activity in it: renaming last month's session must not make
    # it the newest one (the list's order, `-c`).
    if stamp is not None and stamp > meta.updated_ms and rtype not in NOT_ACTIVITY:
        meta.updated_ms = stamp
    if rtype == "session_start":
        for name in ("agent_version", "cwd", "git_branch", "model", "provider"):
            value = record.get(name)
            if isinstance(value, str):
                setattr(meta, name, value)
    elif rtype in MESSAGE_TYPES:
        meta.message_count += 1
        if rtype == "assistant":
            if not record.get("restored"):
                meta.answer_count += 1
            _fold_usage(meta, record)
        elif meta.first_prompt is None:
            meta.first_prompt = prompt_text(record.get("message"))
    elif rtype == "compact_boundary" or rtype == "compact_failed":  # a failed one: its paid summary calls
        meta.compact_count = max(meta.compact_count, _int(record.get("compact_count")))
        usage = record.get("usage")  # the summary calls' tokens (absent from transcripts before it was recorded)
        if isinstance(usage, dict):
            _fold_summary_usage(meta, usage)
    elif rtype == "resume_marker":
        source = record.get("from_session_id")
        meta.resumed_from = source if isinstance(source, str) else meta.resumed_from
        root = record.get("root_session_id")
        meta.root_session_id = root if isinstance(root, str) else meta.root_session_id
        after = record.get("source_updated_ms")  # a continuation is newer than its source, whatever the clock says
        if isinstance(after, int) and not isinstance(after, bool) and after >= meta.updated_ms:
            meta.updated_ms = after + 1
        meta.compact_count = max(meta.compact_count, _int(record.get("compact_count")))
        if type(record.get("at_turn")) is int:  # a rewind: see has_conversation
            meta.answer_count += 1
        if isinstance(record.get("first_prompt"), str):
            meta.first_prompt = record["first_prompt"]
        if isinstance(record.get("name"), str):
            meta.name = clean_name(record["name"]) or None
    elif rtype == "session_name" and isinstance(record.get("name"), str):
        meta.name = clean_name(record["name"]) or None


def fold_lines(meta: SessionMeta, lines: Iterable[bytes]) -> None:
    for record in records_in(lines):
        fold_record(meta, record)


def records_in(lines: Iterable[bytes]) -> Iterator[dict[str, Any]]:
    """The records of transcript lines: blank lines, lines that do not parse and non-objects are passed over."""
    for line in lines:
        if not line.strip():
            continue
        try:
            record = decode_lenient(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            yield record


def empty_meta(session_id: str, created_ms: int) -> SessionMeta:
    return SessionMeta(id=session_id, created_ms=created_ms, updated_ms=created_ms)


def catch_up(session_dir: Path | str, session_id: str, created_ms: int,
             cached: SessionMeta | None) -> tuple[SessionMeta, SessionMeta]:
    """Bring `cached` up to date with messages.jsonl, reading only what it has not seen.

    Returns (the meta of the whole file, the meta of its complete lines). They
    differ only when the file ends in a line without its newline: a torn
    write, or a record being appended right now. Only the second may be
    stored (its `messages_bytes` ends at a newline, so the next catch-up never
    starts inside a line).
    """
    with open(os.path.join(session_dir, MESSAGES_NAME), "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if cached is not None and 0 < cached.messages_bytes <= size:
            meta = cached.copy()
            f.seek(cached.messages_bytes)
        else:
            meta = empty_meta(session_id, created_ms)
        offset = f.tell()
        data = f.read(size - offset)
    lines = data.split(b"\n")
    tail = lines.pop()  # b"" when the file ends with a newline
    fold_lines(meta, lines)
    meta.messages_bytes = offset + len(data) - len(tail)
    if not tail.strip():
        whole = meta.copy() if tail else meta
    else:
        whole = meta.copy()
        fold_lines(whole, [tail])
    whole.messages_bytes = offset + len(data)
    return whole, meta


def rebuild_meta(session_dir: Path | str, session_id: str, created_ms: int, cached: SessionMeta | None) -> SessionMeta:
    """The meta of the whole transcript: `cached` brought up to date, reading only what it has not seen."""
    return catch_up(session_dir, session_id, created_ms, cached)[0]
