"""Search inside sessions: prompts, answers, tool inputs and outputs, summaries, sidechains.

People look for "the session where we fixed the flaky login test", not for an id. A project can
hold gigabytes of transcripts, so the search streams each file in large chunks and tests the raw
bytes before decoding anything: a line is parsed only when its bytes contain the needle (as it
would appear inside a JSON string), which keeps a search over a gigabyte close to the speed of
`grep -F`. A `--regex` search cannot be tested on raw bytes, so it decodes every record (slower;
measured in benchmarks/).

Matching is case-insensitive (ASCII letters in the byte test, full case folding when confirming).

When ripgrep (`rg`) is on PATH, it runs first over each batch of files (`_ripgrep_filter`), with
the same byte test made looser (Unicode case folding, so it finds everything the test does and
more), and only the files it names are scanned here: a file it skips holds no line the byte test
would pass. Batches start small and grow, so a search that stops at its limit scans little; a
batch ripgrep could not read whole (any error) is scanned here in full. Without ripgrep, or for
a search too small to be worth starting it, everything is scanned here.
Records a resume copied in (`"restored": true`) are skipped while their source session is still
in the project, so a conversation resumed five times is found once, where it was said.
Nothing here writes.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from .inspect import open_sidechain, parse_record, sidechain_paths
from .layout import MESSAGES_NAME
from .messages import content_blocks, is_reminder_block
from .records import SEARCHED_TYPES

__all__ = ["SearchHit", "search_sessions", "record_texts"]

CHUNK_BYTES = 8 << 20
RIPGREP_MIN_BYTES = 4 << 20  # a smaller batch is scanned faster here than ripgrep starts
FIRST_BATCH_BYTES = 32 << 20  # then 8× each batch: few ripgrep runs for a full scan, little work before a limit
BATCH_FILES = 2000  # paths per ripgrep command line (well under ARG_MAX)
SNIPPET_CONTEXT = 50  # characters shown on each side of the match


@dataclass(frozen=True)
class SearchHit:
    session_id: str
    file: str            # "messages.jsonl", or "subagent/<file>" for a subagent's transcript
    line: int            # 1-based line number in that file
    timestamp: str       # the record's own timestamp ("" when it has none)
    kind: str            # prompt, answer, reminder, tool call, tool result, thinking, summary, subagent result,
    #                      plan update, memory write
    snippet: str         # one line around the first match (not yet made terminal-safe)


def _block_texts(role: str, content: object) -> Iterator[tuple[str, str]]:
    for block in content_blocks(content):
        btype = block.get("type")
        if is_reminder_block(block):
            yield "reminder", block["text"]
        elif btype == "text" and isinstance(block.get("text"), str):
            yield ("prompt" if role == "user" else "answer"), block["text"]
        elif btype == "thinking" and isinstance(block.get("thinking"), str):
            yield "thinking", block["thinking"]
        elif btype == "tool_use":
            name = block.get("name") if isinstance(block.get("name"), str) else "?"
            yield "tool call", f"{name} " + json.dumps(block.get("input"), ensure_ascii=False)
        elif btype == "tool_result":
            inner = block.get("content")
            if isinstance(inner, str):
                yield "tool result", inner
            elif isinstance(inner, list):
                for part in inner:
                    if isinstance(part, dict) and isinstance(part.get("text"), str):
                        yield "tool result", part["text"]


# The searched record types that are not messages: the kind a hit is shown as, and the fields whose text is
# searched, joined by spaces ("task.subject": `subject` of the record's `task` object). A new searched type
# gets a row here (tests/session/test_records.py checks every searched type gives search some text).
_RECORD_TEXT_FIELDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "compact_boundary": ("summary", ("summary",)),
    "subagent_end": ("subagent result", ("result",)),
    "plan_update": ("plan update", ("plan", "op", "task.subject", "task.description", "task.status", "title", "goal")),
    "memory_write": ("memory write", ("op", "path", "diff")),
}


def _field(record: dict[str, Any], path: str) -> object:
    """`record[a][b]` for the path "a.b"; None where a step is missing or not an object."""
    value: object = record
    for key in path.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    return value


def record_texts(record: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(kind, text) for every searchable piece of text in one record."""
    rtype = record.get("type")
    if rtype in ("user", "assistant"):
        message = record.get("message")
        if isinstance(message, dict):
            yield from _block_texts(rtype, message.get("content"))
        return
    kind, fields = _RECORD_TEXT_FIELDS.get(rtype, ("", ())) if isinstance(rtype, str) else ("", ())
    parts = [value for value in (_field(record, f) for f in fields) if isinstance(value, str)]
    if parts:
        yield kind, " ".join(part for part in parts if part)


def _snippet(text: str, start: int, end: int) -> str:
    left = max(0, start - SNIPPET_CONTEXT)
    right = min(len(text), end + SNIPPET_CONTEXT)
    piece = " ".join(text[left:right].split())
    return ("…" if left > 0 else "") + piece + ("…" if right < len(text) else "")


class _Matcher:
    """The needle as a byte test for raw lines and as a confirming search over decoded text."""

    def __init__(self, needle: str, regex: bool) -> None:
        self.regex = regex
        if regex:
            try:
                self._pattern = re.compile(needle, re.IGNORECASE)
            except re.error as exc:
                raise ValueError(f"invalid regular expression {needle!r}: {exc}") from None
            self.raw: tuple[bytes, ...] = ()
            return
        self._pattern = re.compile(re.escape(needle), re.IGNORECASE)
        # The byte test looks for the needle's longest printable-ASCII run as it appears inside a JSON
        # string on disk (quotes and backslashes escaped), lowercased. Encoders agree on printable
        # ASCII but not on control characters (orjson writes DEL raw, json writes \u007f), and
        # bytes.lower() folds only ASCII, so everything else is left to the confirming search.
        run = max(re.findall(r"[\x20-\x7e]+", needle) or [""], key=len)
        self.raw = (json.dumps(run)[1:-1].encode("ascii").lower(),) if len(run.strip()) >= 2 else ()
        self.regex = not self.raw  # nothing to test cheaply: decode every record

    def find(self, text: str) -> tuple[int, int] | None:
        found = self._pattern.search(text)
        return found.span() if found else None


def _candidate_lines(path: str, matcher: _Matcher) -> Iterator[tuple[int, bytes]]:
    """(line number, raw line) of every line that may match, streaming the file in big chunks."""
    with open(path, "rb", buffering=0) as f:
        number = 0
        carry = b""
        while True:
            chunk = f.read(CHUNK_BYTES)
            if not chunk:
                if carry:
                    yield number + 1, carry
                return
            data = carry + chunk
            cut = data.rfind(b"\n") + 1
            if cut == 0:
                carry = data
                continue
            block, carry = data[:cut], data[cut:]
            if matcher.regex:
                for line in block.split(b"\n")[:-1]:
                    number += 1
                    yield number, line
                continue
            lowered = block.lower()
            hits: set[int] = set()
            for form in matcher.raw:
                pos = lowered.find(form)
                while pos != -1:
                    start = lowered.rfind(b"\n", 0, pos) + 1
                    hits.add(start)
                    nxt = lowered.find(b"\n", pos)
                    pos = lowered.find(form, nxt + 1) if nxt != -1 else -1
            line_no, counted = number, 0
            for start in sorted(hits):
                line_no += block.count(b"\n", counted, start)
                counted = start
                end = block.find(b"\n", start)
                yield line_no + 1, block[start:end]
            number += block.count(b"\n")


def _file_hits(session_id: str, session_dir: str, relative: str, matcher: _Matcher,
               skip_restored: bool) -> Iterator[SearchHit]:
    path = os.path.join(session_dir, relative)
    try:
        for number, raw in _candidate_lines(path, matcher):
            record = parse_record(raw)
            if record is None or record.get("type") not in SEARCHED_TYPES:
                continue
            if skip_restored and record.get("restored") is True:
                continue
            for kind, text in record_texts(record):
                span = matcher.find(text)
                if span is not None:
                    stamp = record.get("timestamp")
                    yield SearchHit(session_id, relative, number, stamp if isinstance(stamp, str) else "",
                                    kind, _snippet(text, *span))
                    break  # one hit per record is enough to find it
    except OSError:
        return


# (session id, session dir, file relative to it, skip restored records)
_File = tuple[str, str, str, bool]


def _files(sessions: Iterable[tuple[str, str, str | None]], exists: Callable[[str], bool]) -> Iterator[_File]:
    """Every file to search, in the order to report: each session's transcript, then its sidechains."""
    for session_id, session_dir, resumed_from in sessions:
        skip_restored = bool(resumed_from and exists(resumed_from))
        yield session_id, session_dir, MESSAGES_NAME, skip_restored
        for relative in sidechain_paths(session_dir):
            if open_sidechain(session_dir, relative) is not None:
                yield session_id, session_dir, relative, skip_restored


def _batches(files: Iterator[_File]) -> Iterator[list[tuple[_File, int]]]:
    """The files in order, in batches of growing size, each with its size (0 when it cannot be stat'ed)."""
    budget = FIRST_BATCH_BYTES
    batch: list[tuple[_File, int]] = []
    total = 0
    for item in files:
        try:
            size = os.stat(item[1] + "/" + item[2]).st_size
        except OSError:
            size = 0
        batch.append((item, size))
        total += size
        if total >= budget or len(batch) >= BATCH_FILES:
            yield batch
            batch, total, budget = [], 0, budget * 8
    if batch:
        yield batch


def _ripgrep(project: str) -> str | None:
    """ripgrep from the PATH entries that count (programs.absolute_program): a relative one (`.`, `bin`) or one
    inside `project` would run a repository's own `rg`."""
    return _ripgrep_in(os.path.realpath(project), os.environ.get("PATH"))


@lru_cache(maxsize=4)
def _ripgrep_in(project: str, path: str | None) -> str | None:
    from .programs import absolute_program

    return absolute_program("rg", outside=project, environ={} if path is None else {"PATH": path})


def _ripgrep_filter(paths: list[str], form: bytes, project: str) -> set[str] | None:
    """The paths among `paths` holding `form` (ASCII case aside), by ripgrep; None when it cannot say for all.

    An `rg` inside `project` (the sessions' project) is never run: a repository could have planted it there.

    `-i` folds case as Unicode does, a superset of the byte test's ASCII folding; `-a` and
    `--encoding none` search the raw bytes (no binary skipping, no BOM transcoding); `--no-config`
    keeps a user's ripgrep settings out; `--mmap` because ripgrep reads a list of files through
    buffers otherwise (twice as slow here). Any error (an unreadable file, a crash) answers None.
    """
    rg = _ripgrep(project)
    if rg is None:
        return None
    cmd = [rg, "--no-config", "--files-with-matches", "--null", "--ignore-case", "--fixed-strings", "--text",
           "--encoding", "none", "--no-messages", "--mmap", "-e", form.decode("ascii"), "--", *paths]
    try:
        proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    except OSError:
        return None
    if proc.returncode not in (0, 1):
        return None
    return set(os.fsdecode(p) for p in proc.stdout.split(b"\0") if p)


def _to_scan(batch: list[tuple[_File, int]], matcher: _Matcher) -> list[_File]:
    """The files of `batch` that may hold a hit: those ripgrep names when it can run on the batch, else all."""
    files = [item for item, _ in batch]
    if matcher.regex or len(matcher.raw) != 1 or sum(size for _, size in batch) < RIPGREP_MIN_BYTES:
        return files
    paths = [item[1] + "/" + item[2] for item in files]
    project = os.path.dirname(os.path.dirname(os.path.dirname(files[0][1])))  # <project>/.evo-agent/sessions/<id>
    named = _ripgrep_filter(paths, matcher.raw[0], project)
    if named is None:
        return files
    return [item for item, path in zip(files, paths, strict=True) if path in named]


def search_sessions(sessions: Iterable[tuple[str, str, str | None]], needle: str, *, regex: bool = False,
                    limit: int | None = 50, exists: Callable[[str], bool] = lambda sid: False) -> Iterator[SearchHit]:
    """Hits for `needle` in `sessions` ((id, session dir, resumed_from) in the order to report).

    `exists(id)` says whether a session is still in the project: a resumed session's copied-in
    records are searched only when its source is gone. Raises ValueError for a bad regex.
    """
    if not needle:
        raise ValueError("nothing to search for")
    matcher = _Matcher(needle, regex)
    found = 0
    for batch in _batches(_files(sessions, exists)):
        for session_id, session_dir, relative, skip_restored in _to_scan(batch, matcher):
            for hit in _file_hits(session_id, session_dir, relative, matcher, skip_restored):
                yield hit
                found += 1
                if limit is not None and found >= limit:
                    return
