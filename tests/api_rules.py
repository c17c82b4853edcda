"""A checker that mirrors the Anthropic Messages API's rules for `messages`.

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
