"""Prototypes of the fixes RESULTS.md proposes for the library (measured, never used by evo-agent).

`load_for_resume_fast` returns exactly what `evo_agent.session.load_for_resume` returns (run.py
checks this on every transcript it measures) but changes how the file is read:

1. the cyclic garbage collector is paused while records are decoded: a resume allocates one
   container per JSON object and keeps them all, so every generation-2 collection walks the
   whole growing history (quadratic in the transcript);
2. the file is read once, backwards, in blocks: each block's lines are decoded as soon as it is
   read, and the scan stops at the last compact_boundary, instead of a backward scan for the
   boundary followed by a second, forward read of everything after it;
3. lines are decoded from memoryview slices of the block (no per-line bytes copies).

Replay and `repair_history` are the library's own functions, unchanged.
"""

from __future__ import annotations

import gc
import os
from pathlib import Path

from evo_agent.session.jsonio import decode
from evo_agent.session.resume import BLOCK, LoadedSession, _is_boundary, _replay, summary_message
from evo_agent.session.repair import repair_history

_NEEDLE = b'"compact_boundary"'


def _decode_lines(data, start: int, end: int, records: list, result: LoadedSession) -> None:
    """Decode the lines of data[start:end] (each ends at a newline or at `end`) into `records`."""
    view = memoryview(data)
    find = data.find
    pos = start
    while pos < end:
        nl = find(b"\n", pos, end)
        stop = end if nl < 0 else nl
        if stop > pos:
            chunk = view[pos:stop]
            try:
                record = decode(chunk)
            except ValueError:
                if bytes(chunk).strip():
                    result.skipped_lines += 1
                record = None
            else:
                if isinstance(record, dict):
                    records.append(record)
                else:
                    result.skipped_lines += 1
        pos = stop + 1


def load_for_resume_fast(transcript: Path, session_id: str | None = None) -> LoadedSession:
    path = Path(transcript)
    sid = session_id or path.parent.name
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        fd = os.open(path, os.O_RDONLY)
        try:
            size = os.fstat(fd).st_size
            result = LoadedSession(session_id=sid, messages=[], file_size=size)
            blocks: list[list[dict]] = []  # newest block first
            boundary = None
            pos = size
            carry = b""  # the beginning of the line that starts in an earlier block
            read = 0
            while pos > 0 and boundary is None:
                start = max(0, pos - BLOCK)
                data = os.pread(fd, pos - start, start)
                read += len(data)
                if carry:
                    data += carry
                first = 0
                if start > 0:
                    nl = data.find(b"\n")
                    if nl < 0:
                        carry, pos = data, start
                        continue
                    first = nl + 1
                # the last boundary in this block, if any: only what follows it is replayed
                lo = first
                hit = data.rfind(_NEEDLE, first)
                while hit >= 0:
                    ls = data.rfind(b"\n", first, hit) + 1 or first
                    ls = max(ls, first)
                    le = data.find(b"\n", hit)
                    le = len(data) if le < 0 else le
                    record = _is_boundary(data[ls:le])
                    if record is not None:
                        boundary, lo = record, min(le + 1, len(data))
                        break
                    hit = data.rfind(_NEEDLE, first, ls)
                records: list[dict] = []
                _decode_lines(data, lo, len(data), records, result)
                blocks.append(records)
                carry, pos = data[:first], start
            result.bytes_read = read
        finally:
            os.close(fd)
        messages: list[dict] = []
        if boundary is not None:
            result.summary = boundary["summary"]
            count = boundary.get("compact_count")
            result.compact_count = count if isinstance(count, int) else 1
            messages.append(summary_message(boundary["summary"]))
        while blocks:  # oldest block first; each is dropped once replayed
            records = blocks.pop()
            result.records += len(records)
            for record in records:
                _replay(record, messages, result)
        result.messages, result.repairs = repair_history(messages)
        return result
    finally:
        if was_enabled:
            gc.enable()


def first_screen_by_mtime(project: Path | str, rows: int = 30):
    """The picker's first screen without reading every meta.json.

    Sort the sessions by their transcript's mtime (one stat each: the last append is the last
    update), then read meta.json (rebuilt where it lags, as `SessionStore.info` does) only for
    the newest until `rows` non-empty sessions are found. The rest can be loaded after the first
    paint (for typing-to-filter). Returns (rows, number of sessions seen).
    """
    from evo_agent.session import SessionStore
    from evo_agent.session.ids import is_session_id

    store = SessionStore(project, warn=lambda _: None)
    base = str(store.sessions_dir)
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        stamped = []
        with os.scandir(base) as it:
            for entry in it:
                name = entry.name
                if not is_session_id(name) or not entry.is_dir(follow_symlinks=False):
                    continue
                try:
                    mtime = os.stat(os.path.join(base, name, "messages.jsonl")).st_mtime_ns
                except OSError:
                    continue
                stamped.append((mtime, name))
        stamped.sort(reverse=True)
        screen = []
        for _, name in stamped:
            row = store.info(name)
            if row is not None and row.meta.message_count > 0:
                screen.append(row)
                if len(screen) == rows:
                    break
        return screen, len(stamped)
    finally:
        if was_enabled:
            gc.enable()
