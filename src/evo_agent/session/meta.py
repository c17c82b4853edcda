"""meta.json: a small cache of what messages.jsonl says, for fast listing.

It is never trusted blindly. It remembers how many bytes of the transcript it
describes (`messages_bytes`); when that differs from the file's size the
listing folds the missing tail (or the whole file) into it, so a session that
was killed before its meta was written is still listed, and listed right.
Writers therefore only need to refresh it now and then (see Recorder).
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Iterable

from .jsonio import decode, encode_pretty
from .writer import FILE_MODE

META_NAME = "meta.json"
FIRST_PROMPT_MAX = 200
SUMMARY_PREFIX = "<previous-conversation-summary>\n"


@dataclass
class SessionMeta:
    id: str
    created_ms: int
    updated_ms: int
    agent_version: str = ""
    cwd: str = ""
    git_branch: str | None = None
    model: str | None = None
    provider: str | None = None
    first_prompt: str | None = None
    total_input_tokens: int = 0
    total_output_tokens: int = 0
    message_count: int = 0
    compact_count: int = 0
    resumed_from: str | None = None
    messages_bytes: int = 0
    extra: dict = field(default_factory=dict, repr=False)

    @property
    def total_tokens(self) -> int:
        return self.total_input_tokens + self.total_output_tokens

    def to_json(self) -> dict:
        data = asdict(self)
        data.pop("extra")
        return data


_INT_FIELDS = ("created_ms", "updated_ms", "total_input_tokens", "total_output_tokens", "message_count",
               "compact_count", "messages_bytes")
_OPT_STR_FIELDS = ("git_branch", "model", "provider", "first_prompt", "resumed_from", "agent_version", "cwd")
_KNOWN = frozenset(_INT_FIELDS + _OPT_STR_FIELDS + ("id",))


def meta_from_json(data: object, session_id: str) -> SessionMeta | None:
    """A SessionMeta when `data` is a well-formed meta for `session_id`, else None.

    On the listing's hot path (once per session), hence the plain loops.
    """
    if type(data) is not dict or data.get("id") != session_id:
        return None
    for name in _INT_FIELDS:
        value = data.get(name)
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


def read_meta(session_dir: Path | str, session_id: str) -> SessionMeta | None:
    try:
        fd = os.open(os.path.join(session_dir, META_NAME), os.O_RDONLY)
    except OSError:
        return None
    try:
        return meta_from_json(decode(os.read(fd, 1 << 16)), session_id)
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)


def write_meta(session_dir: Path, meta: SessionMeta) -> None:
    """Replace meta.json atomically: a reader sees the old file or the new one, never half."""
    fd, tmp = tempfile.mkstemp(prefix=".meta.", suffix=".tmp", dir=session_dir)
    try:
        os.fchmod(fd, FILE_MODE)
        os.write(fd, encode_pretty(meta.to_json()))
        os.close(fd)
        fd = -1
        os.replace(tmp, session_dir / META_NAME)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def timestamp_ms(stamp: object) -> int | None:
    if not isinstance(stamp, str):
        return None
    try:
        return int(datetime.fromisoformat(stamp).timestamp() * 1000)
    except ValueError:
        return None


def prompt_text(message: object) -> str | None:
    """The human text of a user message, or None for tool results and summaries."""
    if not isinstance(message, dict) or message.get("role") != "user":
        return None
    content = message.get("content")
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        parts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
            return None
        text = "\n".join(p for p in parts if isinstance(p, str))
    else:
        return None
    if text.startswith(SUMMARY_PREFIX):
        return None
    line = " ".join(text.split())
    return line[:FIRST_PROMPT_MAX] or None


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def fold_record(meta: SessionMeta, record: dict) -> None:
    """Update `meta` with one record of the transcript, exactly as a writer would."""
    rtype = record.get("type")
    stamp = timestamp_ms(record.get("timestamp"))
    if stamp is not None and stamp > meta.updated_ms:
        meta.updated_ms = stamp
    if rtype == "session_start":
        for name in ("agent_version", "cwd", "git_branch", "model", "provider"):
            value = record.get(name)
            if isinstance(value, str):
                setattr(meta, name, value)
    elif rtype in ("user", "assistant"):
        meta.message_count += 1
        if rtype == "assistant":
            meta.total_input_tokens += _int(record.get("input_tokens"))
            meta.total_output_tokens += _int(record.get("output_tokens"))
        elif meta.first_prompt is None:
            meta.first_prompt = prompt_text(record.get("message"))
    elif rtype == "compact_boundary":
        meta.compact_count = max(meta.compact_count, _int(record.get("compact_count")))
    elif rtype == "resume_marker":
        source = record.get("from_session_id")
        meta.resumed_from = source if isinstance(source, str) else meta.resumed_from
        meta.compact_count = max(meta.compact_count, _int(record.get("compact_count")))
        if isinstance(record.get("first_prompt"), str):
            meta.first_prompt = record["first_prompt"]


def fold_lines(meta: SessionMeta, lines: Iterable[bytes]) -> None:
    for line in lines:
        if not line.strip():
            continue
        try:
            record = decode(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            fold_record(meta, record)


def empty_meta(session_id: str, created_ms: int) -> SessionMeta:
    return SessionMeta(id=session_id, created_ms=created_ms, updated_ms=created_ms)


def rebuild_meta(session_dir: Path, session_id: str, created_ms: int, cached: SessionMeta | None) -> SessionMeta:
    """Bring `cached` up to date with messages.jsonl, reading only what it has not seen."""
    path = session_dir / "messages.jsonl"
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if cached is not None and 0 < cached.messages_bytes <= size:
            meta = SessionMeta(**{k: getattr(cached, k) for k in SessionMeta.__dataclass_fields__})
            f.seek(cached.messages_bytes)
        else:
            meta = empty_meta(session_id, created_ms)
        data = f.read(size - f.tell())
    fold_lines(meta, data.split(b"\n"))
    meta.messages_bytes = size
    return meta
