"""`load_for_resume`: one read path behind every way of resuming (SPEC §4).

The last `compact_boundary` is the watermark. The file is read once,
backwards, in blocks: each block's lines are replayed as soon as it is read,
and the scan stops at the last boundary, so the work and memory follow what is
restored, not the size of the transcript (a 1 GB file whose last boundary is
near its end costs one or two blocks). Lines that do not parse are skipped and
counted; the result is repaired so the API accepts it.
"""

from __future__ import annotations

import gc
import io
import os
from dataclasses import dataclass
from pathlib import Path

from .meta import SUMMARY_PREFIX, decode_lenient, prompt_text
from .repair import repair_history

try:  # decodes memoryview slices of the read buffer: no bytes copy per line
    from orjson import loads as _loads_view
except ImportError:  # pragma: no cover - orjson is a declared dependency
    def _loads_view(view):
        return decode_lenient(bytes(view))

BLOCK = 1 << 20
SUMMARY_SUFFIX = "\n</previous-conversation-summary>"


def summary_message(summary: str) -> dict:
    """The one synthetic user message that stands for everything before a boundary."""
    return {"role": "user", "content": [{"type": "text", "text": f"{SUMMARY_PREFIX}{summary}{SUMMARY_SUFFIX}"}]}


@dataclass
class LoadedSession:
    """What a transcript restores to, and what it took to find out."""

    session_id: str
    messages: list[dict]
    skipped_lines: int = 0
    repairs: int = 0
    compact_count: int = 0
    summary: str | None = None
    first_prompt: str | None = None
    bytes_read: int = 0
    file_size: int = 0
    records: int = 0

    @property
    def warning(self) -> str | None:
        """One line for the user when something in the file had to be skipped."""
        if not self.skipped_lines:
            return None
        n = self.skipped_lines
        return (f"evo-agent: session {self.session_id}: skipped {n} unreadable "
                f"line{'s' if n != 1 else ''} (a torn write or corruption); the rest was restored")


class _Part:
    """What the complete lines of one block replay to.

    Blocks are read newest first, so everything that depends on order is kept
    in a form that merges in file order afterwards (see `_merge`).
    """

    __slots__ = ("boundary", "compact_count", "first_prompt", "marker_prompt", "messages", "records", "skipped")

    def __init__(self) -> None:
        self.messages: list[dict] = []
        self.records = 0
        self.skipped = 0
        self.first_prompt: str | None = None  # prompt text of the block's first user message that has one
        self.marker_prompt: str | None = None  # `first_prompt` of the block's last resume_marker naming one
        self.compact_count: int | None = None  # the largest int `compact_count` of its resume_markers
        self.boundary: dict | None = None  # the block's last valid compact_boundary: nothing before it counts


def _replay_lines(buf: bytearray, view: memoryview, start: int, end: int) -> _Part:
    """Decode and replay the lines of buf[start:end] (the last may lack its newline).

    A valid compact_boundary (one with a summary) starts the part afresh, as
    it starts the conversation afresh.
    """
    part = _Part()
    append = part.messages.append
    find = buf.find
    loads = _loads_view
    records = skipped = 0
    want_prompt = True
    pos = start
    while pos < end:
        stop = find(b"\n", pos, end)
        if stop < 0:
            stop = end
        if stop > pos:
            try:
                record = loads(view[pos:stop])
            except ValueError:
                line = bytes(view[pos:stop])
                if not line.strip():  # a blank line is not a skipped one
                    pos = stop + 1
                    continue
                try:
                    record = decode_lenient(line)  # what the recorder's stdlib fallback wrote
                except ValueError:
                    skipped += 1
                    pos = stop + 1
                    continue
            if type(record) is not dict:
                skipped += 1
                pos = stop + 1
                continue
            records += 1
            rtype = record.get("type")
            if rtype == "user" or rtype == "assistant":
                message = record.get("message")
                if isinstance(message, dict) and message.get("role") == rtype:
                    append(message)
                    if want_prompt and rtype == "user":
                        text = prompt_text(message)
                        if text is not None:
                            part.first_prompt = text
                            want_prompt = False
                else:
                    skipped += 1
            elif rtype == "resume_marker":
                count = record.get("compact_count")
                if isinstance(count, int) and (part.compact_count is None or count > part.compact_count):
                    part.compact_count = count
                if isinstance(record.get("first_prompt"), str):
                    part.marker_prompt = record["first_prompt"]
            elif rtype == "compact_boundary" and isinstance(record.get("summary"), str):
                part = _Part()
                part.boundary = record
                append = part.messages.append
                records = skipped = 0
                want_prompt = True
        pos = stop + 1
    part.records, part.skipped = records, skipped
    return part


def _read_backwards(f: io.FileIO, size: int) -> tuple[list[_Part], dict | None, int]:
    """Replay the file block by block from its end until a block holds a valid compact_boundary.

    Returns the parts (newest first), the last boundary record (None when
    there is none) and the bytes read. One buffer is reused for every block:
    a fresh buffer per block would cost a page fault per 4 KiB read.
    """
    parts: list[_Part] = []
    buf = bytearray(BLOCK)
    carry = b""  # the start of a line that began in an earlier block
    pos = size
    read = 0
    while pos > 0:
        start = max(0, pos - BLOCK)
        n = pos - start
        need = n + len(carry)
        if need > len(buf):  # a line longer than a block: a bigger buffer (never resize one in use)
            buf = bytearray(max(need, 2 * len(buf)))
        with memoryview(buf) as view:
            f.seek(start)
            got = 0
            while got < n:
                chunk = f.readinto(view[got:n])
                if not chunk:
                    break  # the file shrank under us: what is missing reads as unparseable lines
                got += chunk
            read += got
            end = got + len(carry)
            view[got:end] = carry
            first = 0
            if start > 0:
                first = buf.find(b"\n", 0, end) + 1
                if first == 0:  # no line ends in this block: it all belongs to an earlier line
                    carry, pos = bytes(view[:end]), start
                    continue
            part = _replay_lines(buf, view, first, end)
            parts.append(part)
            if part.boundary is not None:
                return parts, part.boundary, read
            carry, pos = bytes(view[:first]), start
    return parts, None, read


def load_for_resume(transcript: Path | str, session_id: str | None = None) -> LoadedSession:
    """Turn a transcript into the message list to send next.

    Raises OSError only when the file cannot be opened; everything inside it
    is handled (skipped, counted, repaired).
    """
    # Decoding allocates millions of containers and none of them form cycles:
    # the cyclic GC would only walk the growing history again and again
    # (benchmarks/RESULTS.md: pausing it is ~1.8x on a full scan).
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _load(Path(transcript), session_id)
    finally:
        if was_enabled:
            gc.enable()


def _load(path: Path, session_id: str | None) -> LoadedSession:
    sid = session_id or path.parent.name
    with open(path, "rb", buffering=0) as f:
        size = os.fstat(f.fileno()).st_size
        parts, boundary, read = _read_backwards(f, size)
    result = LoadedSession(session_id=sid, messages=[], file_size=size, bytes_read=read)
    messages: list[dict] = []
    if boundary is not None:
        result.summary = boundary["summary"]
        count = boundary.get("compact_count")
        result.compact_count = count if isinstance(count, int) else 1
        messages.append(summary_message(boundary["summary"]))
    _merge(parts, messages, result)
    result.messages, result.repairs = repair_history(messages)
    return result


def _merge(parts: list[_Part], messages: list[dict], result: LoadedSession) -> None:
    """Join the parts in file order, as one forward replay of the same lines would have.

    Forward, the first user message with a prompt sets `first_prompt` unless a
    resume_marker names one, and each later marker overrides it: so the last
    marker that names one wins, else the first prompt.
    """
    marker_prompt = first_prompt = None
    for part in reversed(parts):
        messages.extend(part.messages)
        result.records += part.records
        result.skipped_lines += part.skipped
        if part.compact_count is not None and part.compact_count > result.compact_count:
            result.compact_count = part.compact_count
        if part.marker_prompt is not None:
            marker_prompt = part.marker_prompt
        if first_prompt is None:
            first_prompt = part.first_prompt
    result.first_prompt = marker_prompt if marker_prompt is not None else first_prompt
