"""The library's previous read path and meta writer, verbatim, measured beside the current ones.

RESULTS.md reports what the changes bought in the same run: `load_for_resume_previous` is
`load_for_resume` as it was before the one-pass read and the copy-on-write repair (a backward scan
for the boundary, then a second, forward read with a bytes copy per line, then a repair that
rebuilds every message); `write_meta_previous` is `write_meta` before the dict was built directly
(the fields as `dataclasses.asdict` gave them, `tempfile.mkstemp`, stdlib json). Never used by evo-agent.
"""

from __future__ import annotations

import gc
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from evo_agent.session.jsonio import decode
from evo_agent.session.meta import META_NAME, SessionMeta, prompt_text
from evo_agent.session.resume import LoadedSession, summary_message
from evo_agent.session.writer import FILE_MODE

# The repair before copy-on-write is kept verbatim once, in the tests (they check the library
# against it); the repo root makes `tests` importable from this script.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.session.reference import reference_repair as repair_history_previous

BLOCK = 1 << 20
_NEEDLE = b'"compact_boundary"'


def write_meta_previous(session_dir: Path, meta: SessionMeta, *, dir_fd: int | None = None) -> None:
    """The old writer, by path (`dir_fd`, which today's recorder passes, is ignored: the old one had none)."""
    data = meta.to_json()  # what dataclasses.asdict gave, without `extra` (SessionMeta is no longer a dataclass)
    fd, tmp = tempfile.mkstemp(prefix=".meta.", suffix=".tmp", dir=session_dir)
    try:
        os.fchmod(fd, FILE_MODE)
        os.write(fd, (json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n").encode("utf-8"))
        os.close(fd)
        fd = -1
        os.replace(tmp, Path(session_dir) / META_NAME)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def load_for_resume_previous(transcript: Path, session_id: str | None = None) -> LoadedSession:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _load(Path(transcript), session_id)
    finally:
        if was_enabled:
            gc.enable()


# ---------------------------------------------------------------- resume.py before the one-pass read

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
    result.messages, result.repairs = repair_history_previous(messages)
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
