"""`load_for_resume`: one read path behind every way of resuming (SPEC §4).

The last `compact_boundary` is the watermark: it is found by reading the file
backwards in blocks, so the work and memory follow what is restored, not the
size of the transcript. Everything after it is replayed in order; lines that
do not parse are skipped and counted; the result is repaired so the API
accepts it.
"""

from __future__ import annotations

import gc
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from .jsonio import decode
from .meta import SUMMARY_PREFIX, prompt_text
from .repair import repair_history

BLOCK = 1 << 20
_NEEDLE = b'"compact_boundary"'
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
    warnings: list[str] = field(default_factory=list)

    @property
    def warning(self) -> str | None:
        """One line for the user when something in the file had to be skipped."""
        if not self.skipped_lines:
            return None
        n = self.skipped_lines
        return (f"evo-agent: session {self.session_id}: skipped {n} unreadable "
                f"line{'s' if n != 1 else ''} (a torn write or corruption); the rest was restored")


def _is_boundary(line: bytes) -> dict | None:
    try:
        record = decode(line)
    except ValueError:
        return None
    if isinstance(record, dict) and record.get("type") == "compact_boundary" and isinstance(record.get("summary"), str):
        return record
    return None


def find_last_boundary(f, size: int) -> tuple[int, dict | None, int]:
    """Scan backwards for the last parseable compact_boundary line.

    Returns (offset just past that line, the record, bytes read); offset 0
    and None when there is none.
    """
    pos = size
    tail = b""  # the start of a line whose beginning lies in an earlier block
    read = 0
    while pos > 0:
        start = max(0, pos - BLOCK)
        f.seek(start)
        data = f.read(pos - start)
        read += len(data)
        data += tail
        complete_from = 0
        if start > 0:
            newline = data.find(b"\n")
            if newline < 0:
                tail, pos = data, start
                continue
            complete_from = newline + 1
        region = data[complete_from:]
        hit = region.rfind(_NEEDLE)
        while hit >= 0:
            line_start = region.rfind(b"\n", 0, hit) + 1
            line_end = region.find(b"\n", hit)
            line_end = len(region) if line_end < 0 else line_end
            record = _is_boundary(region[line_start:line_end])
            if record is not None:
                return start + complete_from + min(line_end + 1, len(region)), record, read
            hit = region.rfind(_NEEDLE, 0, line_start)
        tail, pos = data[:complete_from], start
    return 0, None, read


def iter_lines(f, offset: int, size: int) -> Iterator[bytes]:
    """Lines from `offset` to `size`, block by block; the last may lack its newline."""
    f.seek(offset)
    rest = b""
    remaining = size - offset
    while remaining > 0:
        block = f.read(min(BLOCK * 8, remaining))
        if not block:
            break
        remaining -= len(block)
        lines = (rest + block).split(b"\n")
        rest = lines.pop()
        yield from lines
    if rest:
        yield rest


def load_for_resume(transcript: Path, session_id: str | None = None) -> LoadedSession:
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
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        offset, boundary, scanned = find_last_boundary(f, size)
        result = LoadedSession(session_id=sid, messages=[], file_size=size)
        messages: list[dict] = []
        if boundary is not None:
            result.summary = boundary["summary"]
            result.compact_count = boundary.get("compact_count") if isinstance(boundary.get("compact_count"), int) else 1
            messages.append(summary_message(boundary["summary"]))
        for line in iter_lines(f, offset, size):
            if not line.strip():
                continue
            try:
                record = decode(line)
            except ValueError:
                result.skipped_lines += 1
                continue
            if not isinstance(record, dict):
                result.skipped_lines += 1
                continue
            result.records += 1
            _replay(record, messages, result)
        result.bytes_read = scanned + (size - offset)
    result.messages, result.repairs = repair_history(messages)
    return result


def _replay(record: dict, messages: list[dict], result: LoadedSession) -> None:
    rtype = record.get("type")
    if rtype in ("user", "assistant"):
        message = record.get("message")
        if isinstance(message, dict) and message.get("role") == rtype:
            messages.append(message)
            if rtype == "user" and result.first_prompt is None:
                result.first_prompt = prompt_text(message)
        else:
            result.skipped_lines += 1
    elif rtype == "resume_marker":
        count = record.get("compact_count")
        if isinstance(count, int) and count > result.compact_count:
            result.compact_count = count
        if isinstance(record.get("first_prompt"), str):
            result.first_prompt = record["first_prompt"]
    elif rtype == "compact_boundary":
        # Only reached for a boundary line the backward scan could not parse as one.
        pass
