"""Reading a session as it lies on disk: every line of a transcript, its sidechain files.

The resume path (`load_for_resume`) reads only what it must restore and
repairs the result for the API. Tools that look after sessions — show,
export, fsck — need the opposite: every line as it is, with its number and
whether it parsed, and every file of the session, including the ones that
should not be there. Nothing here writes.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

from .layout import SIDECHAIN_PATH_RE, SUBAGENT_DIR
from .meta import decode_lenient


@dataclass
class TranscriptLine:
    """One line of a transcript file, parsed or not."""

    number: int  # 1-based
    offset: int  # byte offset of the line's start
    raw: bytes  # without the trailing newline
    record: dict[str, Any] | None  # None when the line is not a JSON object with a string "type"
    terminated: bool  # ended with "\n"

    @property
    def torn(self) -> bool:
        """An unreadable last line without its newline: a write cut short by a crash."""
        return self.record is None and not self.terminated


def parse_record(raw: bytes) -> dict[str, Any] | None:
    """The record on one line, or None when it is not one (not JSON, not an object, no type).

    Parsed as resume parses it: a line the recorder wrote through the stdlib (a lone surrogate, from a file
    name that is not UTF-8) is a record here too, not an unreadable line."""
    try:
        value = decode_lenient(raw)
    except ValueError:
        return None
    if isinstance(value, dict) and isinstance(value.get("type"), str):
        return value
    return None


def iter_transcript(path: Path | str) -> Iterator[TranscriptLine]:
    """Every non-blank line of a transcript, in order. Raises OSError when it cannot be opened.

    Blank lines are not reported: the writer starts a record with "\\n" after a
    failed write, which can leave an empty line that means nothing.
    """
    offset = 0
    with open(path, "rb") as f:
        for number, chunk in enumerate(f, 1):
            start, offset = offset, offset + len(chunk)
            terminated = chunk.endswith(b"\n")
            raw = chunk[:-1] if terminated else chunk
            if not raw.strip():
                continue
            yield TranscriptLine(number, start, raw, parse_record(raw), terminated)


def read_records(path: Path | str) -> tuple[list[dict[str, Any]], list[TranscriptLine]]:
    """(the records that parse, the lines that do not) of one transcript file."""
    records: list[dict[str, Any]] = []
    bad: list[TranscriptLine] = []
    for line in iter_transcript(path):
        if line.record is None:
            bad.append(line)
        else:
            records.append(line.record)
    return records, bad


def first_records(path: Path | str, limit: int) -> list[dict[str, Any]]:
    """The first `limit` readable records (a session's start and resume marker are the first two)."""
    out: list[dict[str, Any]] = []
    try:
        for line in iter_transcript(path):
            if line.record is not None:
                out.append(line.record)
                if len(out) >= limit:
                    break
    except OSError:
        pass
    return out


def is_sidechain_path(text: object) -> TypeGuard[str]:
    """Whether a marker's `subagent_path` is a sidechain file name that is safe to open."""
    return isinstance(text, str) and SIDECHAIN_PATH_RE.match(text) is not None


def sidechain_paths(session_dir: Path | str) -> list[str]:
    """Relative paths (`subagent/<file>`) of every entry in the session's subagent/ directory, sorted."""
    try:
        names = os.listdir(os.path.join(session_dir, SUBAGENT_DIR))
    except OSError:
        return []
    return sorted(f"{SUBAGENT_DIR}/{name}" for name in names)


def open_sidechain(session_dir: Path | str, relative: str) -> Path | None:
    """The sidechain file a marker names, when the name is well-formed and it is a regular file (no symlink)."""
    if not is_sidechain_path(relative):
        return None
    path = Path(session_dir) / relative
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    if os.path.islink(os.path.join(session_dir, SUBAGENT_DIR)):
        return None
    return path
