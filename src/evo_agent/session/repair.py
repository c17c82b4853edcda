"""Make a replayed history valid for the Messages API (SPEC §4 step 4).

The process may have died between an assistant's tool_use and its result,
or a line may have been lost to corruption. The repairs are few and
idempotent, so a history that is already valid passes through unchanged and
repairing twice changes nothing:

- a tool_use with no tool_result in the next user turn gets a synthetic
  `is_error` result saying the tool was interrupted;
- a tool_result with no tool_use in the previous assistant turn is dropped,
  and so is a second result for the same tool_use;
- a tool_use without a unique id, a name or an object input is dropped;
- empty text blocks and empty messages are dropped, and the history starts
  with the user (a leading assistant turn has nobody to answer);
- a message with keys besides `role` and `content` keeps only those two
  (the API refuses any other key).

Consecutive messages of one role are one turn, as the API treats them.

Copy on write: a message that needs no repair is returned as the very same
object (nothing is ever mutated), so repairing a long valid history costs
one check per block and no copies (benchmarks/RESULTS.md: rebuilding every
message was a third of a full-scan resume).
"""

from __future__ import annotations

from .messages import content_blocks, tool_result_block

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)
if TYPE_CHECKING:
    from typing import Any

INTERRUPTED_TEXT = (
    "The tool was interrupted before it returned a result (the session ended while it ran). "
    "Its effects, if any, are unknown; check before relying on them."
)


def interrupted_result(tool_use_id: str, text: str = INTERRUPTED_TEXT) -> dict[str, Any]:
    return tool_result_block(tool_use_id, text, is_error=True)


def _clean_content(content: object) -> str | list[Any] | None:
    """The content without empty text blocks (the same object when none is dropped); None when nothing is left."""
    if isinstance(content, str):
        return content or None
    if not isinstance(content, list):
        return None
    for block in content:
        if not isinstance(block, dict):
            break
        btype = block.get("type")
        if not isinstance(btype, str):
            break
        if btype == "text":
            text = block.get("text")
            if not (isinstance(text, str) and text):
                break
    else:
        return content or None
    kept = [
        b for b in content
        if isinstance(b, dict) and isinstance(b.get("type"), str)
        and not (b["type"] == "text" and not (isinstance(b.get("text"), str) and b["text"]))
    ]
    return kept or None


def _results_lead(out: list[dict[str, Any]], start: int) -> bool:
    """Do the tool_results of the user turn out[start:] all come before its other blocks?"""
    other = False
    for i in range(start, len(out)):
        content = out[i]["content"]
        if isinstance(content, str):
            other = True
            continue
        for block in content:
            if block.get("type") == "tool_result":
                if other:
                    return False
            else:
                other = True
    return True


def _results_first(out: list[dict[str, Any]], start: int) -> int:
    """In the user turn out[start:], tool_results must precede everything else.

    A turn already in that order is left exactly as it is; otherwise every
    result moves, in order, to the front of the turn's first message.
    """
    if _results_lead(out, start):
        return 0
    turn = [content_blocks(m["content"]) for m in out[start:]]
    results = [b for blocks in turn for b in blocks if b.get("type") == "tool_result"]
    rest = [[b for b in blocks if b.get("type") != "tool_result"] for blocks in turn]
    rest[0] = results + rest[0]
    rebuilt = [{**m, "content": blocks} for m, blocks in zip(out[start:], rest) if blocks]
    out[start:] = rebuilt
    return 1


def _usable_tool_use(block: dict[str, Any], seen: set[str]) -> bool:
    tid = block.get("id")
    if not isinstance(tid, str) or not tid or tid in seen:
        return False
    if not isinstance(block.get("name"), str) or not isinstance(block.get("input"), dict):
        return False
    seen.add(tid)
    return True


def _intact_assistant_ids(content: list[Any], seen: set[str]) -> list[str] | None:
    """The tool_use ids of an assistant turn's blocks when none needs a repair, else None."""
    ids: list[str] = []
    for block in content:
        if type(block) is not dict:
            return None
        btype = block.get("type")
        if btype == "text":
            text = block.get("text")
            if type(text) is not str or not text:
                return None
        elif btype == "tool_use":
            tid = block.get("id")
            if type(tid) is not str or not tid or tid in seen or tid in ids:
                return None
            if type(block.get("name")) is not str or type(block.get("input")) is not dict:
                return None
            ids.append(tid)
        elif type(btype) is not str:
            return None
    return ids


def _intact_user_results(content: list[Any], expected: list[str], answered: set[str], other: bool) -> list[str] | None:
    """The tool_use ids a user message's blocks answer when none needs a repair, else None.

    None too when a tool_result follows another kind of block of the turn
    (`other`: an earlier message of the turn has one), so that a turn whose
    messages all came through here is known to have its results first.
    """
    ids: list[str] = []
    for block in content:
        if type(block) is not dict:
            return None
        btype = block.get("type")
        if btype == "tool_result":
            tid = block.get("tool_use_id")
            if other or tid not in expected or tid in answered or tid in ids:
                return None
            ids.append(tid)
        else:
            other = True
            if btype == "text":
                text = block.get("text")
                if type(text) is not str or not text:
                    return None
            elif type(btype) is not str:
                return None
    return ids


def repair_history(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """Return (valid messages, number of repairs made).

    Input dicts are never mutated; those that need no repair are returned as
    they are (the same objects), the others as repaired copies.
    """
    out: list[dict[str, Any]] = []
    append = out.append
    repairs = 0
    expected: list[str] = []  # tool_use ids of the latest assistant turn
    answered: set[str] = set()
    turn_start = 0  # index in `out` of the first user message after that assistant turn
    seen_ids: set[str] = set()  # tool_use ids must be unique across the conversation
    turn_ordered = True  # every message of the user turn came by the fast path: its results come first
    turn_other = False  # the user turn so far has a block that is not a tool_result

    def close_user_turn() -> None:
        nonlocal repairs
        if turn_start < len(out) and not turn_ordered:
            repairs += _results_first(out, turn_start)
        if len(answered) == len(expected):  # answered ⊆ expected, whose ids are unique: all answered
            return
        missing = [i for i in expected if i not in answered]
        if not missing:
            return
        repairs += len(missing)
        synthetic = [interrupted_result(i) for i in missing]
        if turn_start < len(out) and out[turn_start]["role"] == "user":
            first = out[turn_start]
            blocks = content_blocks(first["content"])
            lead = 0
            while lead < len(blocks) and blocks[lead].get("type") == "tool_result":
                lead += 1
            out[turn_start] = {**first, "content": blocks[:lead] + synthetic + blocks[lead:]}
        else:
            out.append({"role": "user", "content": synthetic})

    for message in messages:
        # The fast path: a message that needs no repair is checked in one pass and kept as it is.
        if type(message) is dict and len(message) == 2:  # exactly role and content, nothing the API refuses
            role = message.get("role")
            content = message.get("content")
            if role == "assistant":
                if out and type(content) is list and content:
                    intact = _intact_assistant_ids(content, seen_ids)
                    if intact is not None:
                        if out[-1]["role"] == "user":
                            if not turn_ordered or len(answered) != len(expected):
                                close_user_turn()
                            expected, answered = [], set()
                        seen_ids.update(intact)
                        expected.extend(intact)
                        append(message)
                        turn_start = len(out)
                        turn_ordered, turn_other = True, False
                        continue
            elif role == "user" and content:
                if type(content) is str:
                    append(message)
                    turn_other = True
                    continue
                if type(content) is list:
                    results = _intact_user_results(content, expected, answered, turn_other)
                    if results is not None:
                        answered.update(results)
                        append(message)
                        turn_other = turn_other or len(results) != len(content)
                        continue
        # The general path: the same rules, building a repaired copy where needed.
        role = message.get("role") if isinstance(message, dict) else None
        if role != "user" and role != "assistant":
            repairs += 1
            continue
        original = message.get("content")
        content = _clean_content(original)
        if content is None:
            repairs += 1
            continue
        if len(message) != 2:  # keys besides role and content ("Extra inputs are not permitted")
            repairs += 1
            message = {"role": role, "content": original}
        if role == "assistant":
            if not out:
                repairs += 1  # nobody asked: a history starts with the user
                continue
            ids: list[str] = []
            if isinstance(content, list):
                kept = None  # built only once a block is dropped
                for i, block in enumerate(content):
                    if block.get("type") == "tool_use":
                        if _usable_tool_use(block, seen_ids):
                            ids.append(block["id"])
                        else:
                            if kept is None:
                                kept = content[:i]
                            continue
                    if kept is not None:
                        kept.append(block)
                if kept is not None:
                    repairs += len(content) - len(kept)
                    if not kept:
                        continue
                    content = kept
            if out[-1]["role"] == "user":
                close_user_turn()
                expected, answered = [], set()
            expected.extend(ids)
            append(message if content is original else {**message, "content": content})
            turn_start = len(out)
            turn_ordered, turn_other = True, False
            continue
        # role == "user"
        if isinstance(content, list):
            kept = None
            for i, block in enumerate(content):
                if block.get("type") == "tool_result":
                    tid = block.get("tool_use_id")
                    if tid not in expected or tid in answered:
                        repairs += 1
                        if kept is None:
                            kept = content[:i]
                        continue
                    answered.add(tid)
                if kept is not None:
                    kept.append(block)
            if kept is not None:
                if not kept:
                    repairs += 1
                    continue
                content = kept
        append(message if content is original else {**message, "content": content})
        turn_ordered = False  # checked as a whole when the turn closes
    close_user_turn()
    return out, repairs
