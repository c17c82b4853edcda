"""The library's previous read path and meta writer, verbatim, measured beside the current ones.

RESULTS.md reports what the changes bought in the same run: `load_for_resume_previous` is
`load_for_resume` as it was before the one-pass read and the copy-on-write repair (a backward scan
for the boundary, then a second, forward read with a bytes copy per line, then a repair that
rebuilds every message); `write_meta_previous` is `write_meta` before the dict was built directly
(`dataclasses.asdict`, `tempfile.mkstemp`, stdlib json). Never used by evo-agent.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import os
import tempfile
from pathlib import Path
from typing import Iterator

from evo_agent.session.jsonio import decode
from evo_agent.session.meta import META_NAME, SessionMeta, prompt_text
from evo_agent.session.repair import interrupted_result
from evo_agent.session.resume import LoadedSession, summary_message
from evo_agent.session.writer import FILE_MODE

BLOCK = 1 << 20
_NEEDLE = b'"compact_boundary"'


def write_meta_previous(session_dir: Path, meta: SessionMeta) -> None:
    data = dataclasses.asdict(meta)
    data.pop("extra", None)
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

# ---------------------------------------------------------------- repair.py before copy-on-write

def _clean_content(content: object) -> str | list | None:
    """The content without empty text blocks; None when nothing is left."""
    if isinstance(content, str):
        return content or None
    if not isinstance(content, list):
        return None
    kept = [
        b for b in content
        if isinstance(b, dict) and isinstance(b.get("type"), str)
        and not (b["type"] == "text" and not (isinstance(b.get("text"), str) and b["text"]))
    ]
    return kept or None


def _tool_use_ids(content: str | list) -> list[str]:
    if isinstance(content, str):
        return []
    return [b["id"] for b in content if b.get("type") == "tool_use" and isinstance(b.get("id"), str)]


def _as_blocks(content: str | list) -> list:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def _results_first(out: list[dict], start: int) -> int:
    """In the user turn out[start:], tool_results must precede everything else.

    A turn already in that order is left exactly as it is; otherwise every
    result moves, in order, to the front of the turn's first message.
    """
    turn = [_as_blocks(m["content"]) for m in out[start:]]
    flat = [b for blocks in turn for b in blocks]
    n_results = sum(1 for b in flat if b.get("type") == "tool_result")
    if all(b.get("type") == "tool_result" for b in flat[:n_results]):
        return 0
    results = [b for b in flat if b.get("type") == "tool_result"]
    rest = [[b for b in blocks if b.get("type") != "tool_result"] for blocks in turn]
    rest[0] = results + rest[0]
    rebuilt = [{**m, "content": blocks} for m, blocks in zip(out[start:], rest) if blocks]
    out[start:] = rebuilt
    return 1


def _usable_tool_use(block: dict, seen: set[str]) -> bool:
    tid = block.get("id")
    if not isinstance(tid, str) or not tid or tid in seen:
        return False
    if not isinstance(block.get("name"), str) or not isinstance(block.get("input"), dict):
        return False
    seen.add(tid)
    return True


def repair_history_previous(messages: list[dict]) -> tuple[list[dict], int]:
    """Return (valid messages, number of repairs made). Input dicts are not mutated."""
    out: list[dict] = []
    repairs = 0
    expected: list[str] = []  # tool_use ids of the latest assistant turn
    answered: set[str] = set()
    turn_start = 0  # index in `out` of the first user message after that assistant turn
    seen_ids: set[str] = set()  # tool_use ids must be unique across the conversation

    def close_user_turn() -> None:
        nonlocal repairs
        if turn_start < len(out):
            repairs += _results_first(out, turn_start)
        missing = [i for i in expected if i not in answered]
        if not missing:
            return
        repairs += len(missing)
        synthetic = [interrupted_result(i) for i in missing]
        if turn_start < len(out) and out[turn_start]["role"] == "user":
            first = out[turn_start]
            blocks = _as_blocks(first["content"])
            lead = 0
            while lead < len(blocks) and blocks[lead].get("type") == "tool_result":
                lead += 1
            out[turn_start] = {**first, "content": blocks[:lead] + synthetic + blocks[lead:]}
        else:
            out.append({"role": "user", "content": synthetic})

    for message in messages:
        role = message.get("role") if isinstance(message, dict) else None
        content = _clean_content(message.get("content")) if role in ("user", "assistant") else None
        if content is None:
            repairs += 1
            continue
        if role == "assistant":
            if not out:
                repairs += 1  # nobody asked: a history starts with the user
                continue
            if isinstance(content, list):
                kept = [b for b in content if b.get("type") != "tool_use" or _usable_tool_use(b, seen_ids)]
                repairs += len(content) - len(kept)
                if not kept:
                    continue
                content = kept if len(kept) != len(content) else content
            if out[-1]["role"] == "user":
                close_user_turn()
                expected, answered = [], set()
            expected = expected + _tool_use_ids(content)
            out.append({**message, "content": content})
            turn_start = len(out)
            continue
        # role == "user"
        if isinstance(content, list):
            kept = []
            for block in content:
                if block.get("type") == "tool_result":
                    tid = block.get("tool_use_id")
                    if tid not in expected or tid in answered:
                        repairs += 1
                        continue
                    answered.add(tid)
                kept.append(block)
            if not kept:
                repairs += 1
                continue
            if len(kept) != len(content):
                content = kept
        out.append({**message, "content": content})
    close_user_turn()
    return out, repairs
