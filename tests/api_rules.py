"""A checker that mirrors the Anthropic Messages API's rules for `messages` (and for cache_control).

Used by the session tests (every restored history must pass), by the local
model server (tests/fake_model_server.py) and by the in-process ScriptedProvider
(tests/scripted_provider.py): every request the agent sends must pass, so a
history the real API would refuse fails the suite.
"""

from __future__ import annotations


class InvalidConversation(AssertionError):
    pass


def _blocks(content) -> list[dict]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if not isinstance(content, list):
        raise InvalidConversation(f"content must be a string or a list, got {type(content).__name__}")
    return content


def merged_turns(messages: list[dict]) -> list[tuple[str, list[dict]]]:
    """Consecutive messages of one role form one turn, as the API merges them."""
    turns: list[tuple[str, list[dict]]] = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            raise InvalidConversation(f"messages.{i}: role must be user or assistant")
        blocks = _blocks(message.get("content"))
        if not blocks:
            raise InvalidConversation(f"messages.{i}: content must not be empty")
        if turns and turns[-1][0] == message["role"]:
            turns[-1][1].extend(blocks)
        else:
            turns.append((message["role"], list(blocks)))
    return turns


def check_conversation(messages: list[dict]) -> None:
    """Raise InvalidConversation naming the first rule the list breaks."""
    if not messages:
        raise InvalidConversation("messages: at least one message is required")
    turns = merged_turns(messages)
    if turns[0][0] != "user":
        raise InvalidConversation("messages.0: the first message must use the user role")
    pending: set[str] = set()
    all_ids: set[str] = set()
    for t, (role, blocks) in enumerate(turns):
        for block in blocks:
            if not isinstance(block, dict) or "type" not in block:
                raise InvalidConversation(f"turn {t}: every block needs a type")
            if block["type"] == "text" and not (isinstance(block.get("text"), str) and block["text"]):
                raise InvalidConversation(f"turn {t}: text content blocks must be non-empty")
        if role == "user":
            results = [b for b in blocks if b["type"] == "tool_result"]
            ids = [b.get("tool_use_id") for b in results]
            for tool_use_id in ids:
                if tool_use_id not in pending:
                    raise InvalidConversation(
                        f"turn {t}: unexpected tool_use_id {tool_use_id!r} in tool_result blocks: "
                        "each tool_result block must have a corresponding tool_use block in the previous message"
                    )
            if len(set(ids)) != len(ids):
                raise InvalidConversation(f"turn {t}: duplicate tool_result for one tool_use")
            missing = pending - set(ids)
            if missing:
                raise InvalidConversation(
                    f"turn {t}: tool_use ids were found without tool_result blocks immediately after: {sorted(missing)}"
                )
            if results and any(b["type"] != "tool_result" for b in blocks[: len(results)]):
                raise InvalidConversation(f"turn {t}: tool_result blocks must come first in the user turn")
            pending = set()
        else:
            ids = [b.get("id") for b in blocks if b["type"] == "tool_use"]
            if any(not isinstance(i, str) or not i for i in ids) or len(set(ids)) != len(ids) or all_ids & set(ids):
                raise InvalidConversation(f"turn {t}: tool_use blocks need unique ids")
            all_ids.update(ids)
            for b in blocks:
                if b["type"] == "tool_use" and not (isinstance(b.get("input"), dict) and isinstance(b.get("name"), str)):
                    raise InvalidConversation(f"turn {t}: tool_use needs a name and an object input")
            pending = set(ids)
    if pending:
        # A history may end on the assistant's tool_use only if the caller is about
        # to answer it; a request may not. The server fixture checks requests,
        # where the last turn is always the user's.
        pass


def check_request(messages: list[dict]) -> None:
    """A request additionally must not end with unanswered tool_use blocks."""
    check_conversation(messages)
    role, blocks = merged_turns(messages)[-1]
    if role == "assistant" and any(b["type"] == "tool_use" for b in blocks):
        raise InvalidConversation("the last assistant turn has tool_use blocks without tool_result blocks")


# ---- prompt caching (https://docs.claude.com/en/docs/build-with-claude/prompt-caching)

MAX_CACHE_BREAKPOINTS = 4
CACHEABLE_BLOCKS = frozenset({"text", "image", "document", "tool_use", "tool_result", "search_result"})


def _check_mark(where: str, mark: object) -> None:
    if not isinstance(mark, dict) or mark.get("type") != "ephemeral":
        raise InvalidConversation(f"{where}.cache_control: Input tag does not match the expected tag 'ephemeral'")
    for key in sorted(mark.keys() - {"type", "ttl"}):
        raise InvalidConversation(f"{where}.cache_control.{key}: Extra inputs are not permitted")
    if "ttl" in mark and mark["ttl"] not in ("5m", "1h"):
        raise InvalidConversation(f"{where}.cache_control.ttl: Input should be '5m' or '1h'")


def _block_marks(where: str, block: object) -> int:
    """The cache_control marks of one content block (and of the blocks inside a tool_result)."""
    if not isinstance(block, dict):
        return 0
    count = 0
    if "cache_control" in block:
        kind = block.get("type")
        if kind in ("thinking", "redacted_thinking"):
            raise InvalidConversation(f"{where}: cache_control cannot be set for thinking blocks")
        if kind not in CACHEABLE_BLOCKS:
            raise InvalidConversation(f"{where}.{kind}.cache_control: Extra inputs are not permitted")
        if kind == "text" and not block.get("text"):
            raise InvalidConversation(f"{where}: cache_control cannot be set for empty text blocks")
        _check_mark(where, block["cache_control"])
        count += 1
    inner = block.get("content") if block.get("type") == "tool_result" else None
    for j, nested in enumerate(inner if isinstance(inner, list) else []):
        count += _block_marks(f"{where}.content.{j}", nested)
    return count


def check_cache_control(body: dict) -> int:
    """The number of cache breakpoints of a request; InvalidConversation when the API would refuse them."""
    count = 0
    for j, tool in enumerate(body.get("tools") or []):
        if isinstance(tool, dict) and "cache_control" in tool:
            _check_mark(f"tools.{j}", tool["cache_control"])
            count += 1
    system = body.get("system")
    for j, block in enumerate(system if isinstance(system, list) else []):
        count += _block_marks(f"system.{j}", block)
    for i, message in enumerate(body.get("messages") or []):
        content = message.get("content") if isinstance(message, dict) else None
        for j, block in enumerate(content if isinstance(content, list) else []):
            count += _block_marks(f"messages.{i}.content.{j}", block)
    if count > MAX_CACHE_BREAKPOINTS:
        raise InvalidConversation(
            f"A maximum of {MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. Found {count}.")
    return count
