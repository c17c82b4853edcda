"""Naive reference implementations the session library is checked against.

`reference_repair` is the repair as it was first written (it rebuilds every
message), kept verbatim; `reference_load` reads a transcript the obvious way
(every line, forward, in memory). The library's fast paths (copy-on-write
repair, one backward pass in blocks) must return exactly what these return.
"""

from __future__ import annotations

from evo_agent.session import INTERRUPTED_TEXT, summary_message
from evo_agent.session.meta import decode_lenient as decode
from evo_agent.session.meta import prompt_text


def interrupted_result(tool_use_id: str, text: str = INTERRUPTED_TEXT) -> dict:
    return {"type": "tool_result", "tool_use_id": tool_use_id, "content": text, "is_error": True}

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


def reference_repair(messages: list[dict]) -> tuple[list[dict], int]:
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


def _boundary(line: bytes) -> dict | None:
    """A line is a watermark when it is a compact_boundary record with a summary."""
    try:
        record = decode(line)
    except ValueError:
        return None
    if isinstance(record, dict) and record.get("type") == "compact_boundary" and isinstance(record.get("summary"), str):
        return record
    return None


def reference_load(data: bytes) -> dict:
    """What load_for_resume must return for a transcript holding `data`, field by field."""
    lines = data.split(b"\n")
    start, boundary = 0, None
    for i in range(len(lines) - 1, -1, -1):
        boundary = _boundary(lines[i])
        if boundary is not None:
            start = i + 1
            break
    out = {"skipped_lines": 0, "records": 0, "compact_count": 0, "summary": None, "first_prompt": None}
    messages: list = []
    if boundary is not None:
        out["summary"] = boundary["summary"]
        count = boundary.get("compact_count")
        out["compact_count"] = count if isinstance(count, int) else 1
        messages.append(summary_message(boundary["summary"]))
    for line in lines[start:]:
        if not line.strip():
            continue
        try:
            record = decode(line)
        except ValueError:
            out["skipped_lines"] += 1
            continue
        if not isinstance(record, dict):
            out["skipped_lines"] += 1
            continue
        out["records"] += 1
        rtype = record.get("type")
        if rtype in ("user", "assistant"):
            message = record.get("message")
            if isinstance(message, dict) and message.get("role") == rtype:
                messages.append(message)
                if rtype == "user" and out["first_prompt"] is None:
                    out["first_prompt"] = prompt_text(message)
            else:
                out["skipped_lines"] += 1
        elif rtype == "resume_marker":
            count = record.get("compact_count")
            if isinstance(count, int) and count > out["compact_count"]:
                out["compact_count"] = count
            if isinstance(record.get("first_prompt"), str):
                out["first_prompt"] = record["first_prompt"]
    out["messages"], out["repairs"] = reference_repair(messages)
    out["file_size"] = len(data)
    return out
