"""`load_for_resume`: one read path behind every way of resuming (SPEC §4).

The last `compact_boundary` is the watermark. The file is read once,
backwards, in blocks: each block's lines are replayed as soon as it is read,
and the scan stops at the last boundary, so the work and memory follow what is
restored, not the size of the transcript (a 1 GB file whose last boundary is
near its end costs one or two blocks). Lines that do not parse are skipped and
counted; the result is repaired so the API accepts it.

A history with no recent boundary can be far larger than anything that can be
sent (SPEC §8: it is compacted before its first request). `window=N` bounds the
memory of such a resume: once the restored records pass N bytes, only the head
(a fifth of N) and the tail of the history stay decoded, each cut at a user
prompt, and the middle is counted and stood for by one marker message
(`LoadedSession.windowed`). That is all a summary request can use anyway; a
windowed history is for summarising, never for sending or copying whole. The
middle is never decoded (a 1 GB history costs one read of its bytes, not one
decode of every record), so its unreadable lines are not counted.
"""

from __future__ import annotations

import gc
import io
import os
from collections.abc import Callable
from pathlib import Path

from .jsonio import orjson
from .lazyre import lazy_re
from .messages import summary_message as summary_message  # its home was here: `from .resume import` still works
from .meta import decode_lenient, prompt_text, records_in
from .plaindata import plain_dataclass as dataclass
from .records import CONVERSATION_TYPES, ENVELOPE_FIELDS
from .repair import repair_history

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)
if TYPE_CHECKING:
    from typing import Any


def _stdlib_loads_view(view: memoryview) -> object:
    return decode_lenient(bytes(view))


_loads_view: Callable[[memoryview], object] | None = None


def _view_loader() -> Callable[[memoryview], object]:
    """orjson's `loads`, which decodes memoryview slices of the read buffer (no bytes copy per line);
    imported at the first load, not with this module (a new session's first request needs neither)."""
    global _loads_view
    if _loads_view is None:
        fast = orjson()
        _loads_view = fast.loads if fast is not None else _stdlib_loads_view
    return _loads_view

BLOCK = 1 << 20
WINDOW_HEAD_SHARE = 5  # a windowed load keeps 1/5 of its window for the head, the rest for the tail


@dataclass
class LoadedSession:
    """What a transcript restores to, and what it took to find out."""

    session_id: str
    messages: list[dict[str, Any]]
    skipped_lines: int = 0
    repairs: int = 0
    compact_count: int = 0
    summary: str | None = None
    first_prompt: str | None = None
    bytes_read: int = 0
    file_size: int = 0
    records: int = 0
    windowed: bool = False  # the middle of the history was left out (see `window` in load_for_resume)
    omitted_messages: int = 0  # windowed: messages of the middle not loaded, stood for by one marker message
    gap_at: int | None = None  # windowed: the index of that marker in `messages`

    @property
    def restored_count(self) -> int:
        """How many messages the history holds, the omitted middle included (the marker is not one)."""
        return len(self.messages) - 1 + self.omitted_messages if self.windowed else len(self.messages)

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

    __slots__ = ("boundary", "bytes", "compact_count", "first_prompt", "gap", "marker_prompt", "messages", "omitted",
                 "records", "skipped", "span")

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.records = 0
        self.skipped = 0
        self.bytes = 0  # the lines of its messages
        self.gap: str | None = None  # windowed: where the omitted middle is ("before", "after" or "all" of it)
        self.omitted = 0  # windowed: its messages left out
        self.span: tuple[int, int] | None = None  # windowed: (start, end) in the file of lines not decoded (yet)
        self.first_prompt: str | None = None  # prompt text of the block's first user message that has one
        self.marker_prompt: str | None = None  # `first_prompt` of the block's last resume_marker naming one
        self.compact_count: int | None = None  # the largest int `compact_count` of its resume_markers
        self.boundary: dict[str, Any] | None = None  # the block's last valid compact_boundary: nothing before it counts


def _replay_lines(buf: bytearray, view: memoryview, start: int, end: int) -> _Part:
    """Decode and replay the lines of buf[start:end] (the last may lack its newline).

    A valid compact_boundary (one with a summary) starts the part afresh, as
    it starts the conversation afresh.
    """
    part = _Part()
    append = part.messages.append
    find = buf.find
    loads = _view_loader()
    records = skipped = size = 0
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
                    size += stop - pos
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
                records = skipped = size = 0
                want_prompt = True
        pos = stop + 1
    part.records, part.skipped, part.bytes = records, skipped, size
    return part


class _Window:
    """Keeps the tail and the head of a history decoded while it is read backwards; skips the middle.

    The newest parts fill the tail until it holds its share of the window.
    Older blocks are not decoded at all unless they may hold a boundary (their
    bytes contain `compact_boundary`); each becomes a placeholder that knows
    its byte span and how many messages it holds (records start with their
    type, SPEC §2, and a quote inside a string is escaped, so counting
    `{"type":"user"` counts user records). Once the start of the history is
    known, the oldest spans are decoded until the head holds its share; the
    rest is the middle, stood for by one marker message.
    """

    BOUNDARY_HINT = b"compact_boundary"
    OPENINGS = (b'{"type":"user"', b'{"type":"assistant"')

    def __init__(self, budget: int) -> None:
        self.head_budget = max(1, budget // WINDOW_HEAD_SHARE)
        self.tail_budget = max(1, budget - self.head_budget)
        self.tail_bytes = 0
        self.tail_oldest: _Part | None = None  # set once the tail is full

    def skips(self, buf: bytearray, first: int, end: int) -> bool:
        """Whether the lines buf[first:end] can be left undecoded for now."""
        return self.tail_oldest is not None and buf.find(self.BOUNDARY_HINT, first, end) < 0

    def placeholder(self, buf: bytearray, first: int, end: int, span: tuple[int, int]) -> _Part:
        part = _Part()
        part.span, part.bytes = span, end - first
        part.omitted = sum(buf.count(opening, first, end) for opening in self.OPENINGS)
        return part

    def add(self, part: _Part, span: tuple[int, int]) -> None:
        """A decoded part: it joins the tail, or (without a boundary) waits undecoded like the middle."""
        if self.tail_oldest is None:
            self.tail_bytes += part.bytes
            if self.tail_bytes >= self.tail_budget:
                self.tail_oldest = part
        elif part.boundary is None:
            part.span, part.omitted, part.messages = span, len(part.messages), []

    def finish(self, parts: list[_Part], f: io.FileIO) -> None:
        """Decode the head (the oldest spans, up to its share), then mark the gap and cut it at user prompts."""
        if self.tail_oldest is None:
            return
        older = parts.index(self.tail_oldest) + 1
        head_bytes = 0
        i = len(parts) - 1
        while i >= older and head_bytes < self.head_budget:
            span = parts[i].span
            if span is not None:
                parts[i] = _decode_span(f, span)
            head_bytes += parts[i].bytes
            i -= 1
        if i < older:
            return  # the head reached the tail: nothing was left out
        for j in range(older, i + 1):
            parts[j].gap = "all"
        head_end, tail_start = parts[i + 1], self.tail_oldest
        cut = _last_prompt(head_end.messages)
        head_end.gap = "after"
        if cut > 0:
            head_end.omitted, head_end.messages = len(head_end.messages) - cut, head_end.messages[:cut]
        cut = _first_prompt(tail_start.messages)
        tail_start.gap = "before"
        if cut > 0:
            tail_start.omitted, tail_start.messages = cut, tail_start.messages[cut:]


def _decode_span(f: io.FileIO, span: tuple[int, int]) -> _Part:
    """The lines of a span a windowed read skipped, decoded now (they turned out to be the head)."""
    lo, hi = span
    buf = bytearray(hi - lo)
    with memoryview(buf) as view:
        f.seek(lo)
        got = 0
        while got < len(buf):
            n = f.readinto(view[got:])
            if not n:
                break
            got += n
        part = _replay_lines(buf, view, 0, got)
    return part


def _last_prompt(messages: list[dict[str, Any]]) -> int:
    """The index of the last user prompt after the first message (0 when there is none)."""
    for i in range(len(messages) - 1, 0, -1):
        if prompt_text(messages[i]) is not None:
            return i
    return 0


def _first_prompt(messages: list[dict[str, Any]]) -> int:
    """The index of the first user prompt (0 when there is none)."""
    return next((i for i, m in enumerate(messages) if prompt_text(m) is not None), 0)


OMITTED_RE = lazy_re(r"\[… [\d,]+ messages of the middle of this conversation were not loaded: "
                        r"the history is too large to send whole …\]")


def omitted_marker(count: int) -> dict[str, Any]:
    """The user message that stands for the middle a windowed load left out."""
    return {"role": "user", "content": [{"type": "text", "text": (
        f"[… {count:,} messages of the middle of this conversation were not loaded: the history is too "
        "large to send whole …]")}]}


def is_omitted_marker(message: object) -> bool:
    """Whether a message is a windowed load's marker (for the summary request to put its gap there)."""
    if not isinstance(message, dict) or message.get("role") != "user":
        return False
    content = message.get("content")
    return (isinstance(content, list) and len(content) == 1 and isinstance(content[0], dict)
            and isinstance(content[0].get("text"), str) and OMITTED_RE.fullmatch(content[0]["text"]) is not None)


def _read_backwards(
    f: io.FileIO, size: int, window: _Window | None = None
) -> tuple[list[_Part], dict[str, Any] | None, int]:
    """Replay the file block by block from its end until a block holds a valid compact_boundary.

    Returns the parts (newest first), the last boundary record (None when
    there is none) and the bytes read. One buffer is reused for every block:
    a fresh buffer per block would cost a page fault per 4 KiB read.
    `window` may leave a block undecoded, or empty a decoded one (see _Window).
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
            span = (start + first, start + end)
            if window is not None and window.skips(buf, first, end):
                parts.append(window.placeholder(buf, first, end, span))
            else:
                part = _replay_lines(buf, view, first, end)
                parts.append(part)
                if window is not None:
                    window.add(part, span)
                if part.boundary is not None:
                    return parts, part.boundary, read
            carry, pos = bytes(view[:first]), start
    return parts, None, read


def load_for_resume(transcript: Path | str, session_id: str | None = None, *,
                    window: int | None = None) -> LoadedSession:
    """Turn a transcript into the message list to send next.

    `window`: the most bytes of message records to keep decoded; a longer
    history comes back `windowed` (its head and tail, see the module's doc).
    Raises OSError only when the file cannot be opened; everything inside it
    is handled (skipped, counted, repaired).
    """
    # Decoding allocates millions of containers and none of them form cycles:
    # the cyclic GC would only walk the growing history again and again
    # (benchmarks/RESULTS.md: pausing it is ~1.8x on a full scan).
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _load(Path(transcript), session_id, window)
    finally:
        if was_enabled:
            gc.enable()


def _load(path: Path, session_id: str | None, window: int | None = None) -> LoadedSession:
    sid = session_id or path.parent.name
    keeper = _Window(window) if window is not None else None
    with open(path, "rb", buffering=0) as f:
        size = os.fstat(f.fileno()).st_size
        parts, boundary, read = _read_backwards(f, size, keeper)
        if keeper is not None:
            keeper.finish(parts, f)
    result = LoadedSession(session_id=sid, messages=[], file_size=size, bytes_read=read)
    messages: list[dict[str, Any]] = []
    if boundary is not None:
        result.summary = boundary["summary"]
        count = boundary.get("compact_count")
        result.compact_count = count if isinstance(count, int) else 1
        messages.append(summary_message(boundary["summary"]))
    gap = _merge(parts, messages, result)
    result.messages, result.repairs = repair_history(messages)
    if gap is not None:
        result.gap_at = next(i for i, m in enumerate(result.messages) if m is gap)  # repair leaves it as it is
    return result


def _merge(parts: list[_Part], messages: list[dict[str, Any]], result: LoadedSession) -> dict[str, Any] | None:
    """Join the parts in file order, as one forward replay of the same lines would have.

    Forward, the first user message with a prompt sets `first_prompt` unless a
    resume_marker names one, and each later marker overrides it: so the last
    marker that names one wins, else the first prompt. A windowed load's gap
    becomes one marker message, returned (None when nothing was left out).
    """
    marker_prompt = first_prompt = gap = None
    for part in reversed(parts):
        if part.gap is not None and gap is None and part.gap != "after":
            gap = omitted_marker(0)
            messages.append(gap)
        messages.extend(part.messages)
        if part.gap == "after" and gap is None:
            gap = omitted_marker(0)
            messages.append(gap)
        result.omitted_messages += part.omitted
        result.records += part.records
        result.skipped_lines += part.skipped
        if part.compact_count is not None and part.compact_count > result.compact_count:
            result.compact_count = part.compact_count
        if part.marker_prompt is not None:
            marker_prompt = part.marker_prompt
        if first_prompt is None:
            first_prompt = part.first_prompt
    result.first_prompt = marker_prompt if marker_prompt is not None else first_prompt
    if gap is not None:
        gap.update(omitted_marker(result.omitted_messages))
        result.windowed = True
    return gap


# ---- the scene a session was given: its `instructions` record --------------------------------------------

SCENE_BYTES = 1 << 20  # the head of a transcript searched for it (it follows session_start and resume_marker)


def recorded_instructions(path: Path | str) -> dict[str, Any] | None:
    """The fields of a transcript's `instructions` record (SPEC §2), None when it has none.

    Read from the head of the file only: the record is written at a session's start, before any
    message, so the search stops at the first message and never reads past SCENE_BYTES.
    """
    try:
        with open(path, "rb") as f:
            head = f.read(SCENE_BYTES)
    except OSError:
        return None
    for record in records_in(head.split(b"\n")[:-1] if not head.endswith(b"\n") else head.split(b"\n")):
        rtype = record.get("type")
        if rtype == "instructions":
            return {k: v for k, v in record.items() if k not in ENVELOPE_FIELDS}
        if rtype in CONVERSATION_TYPES:
            return None
    return None
