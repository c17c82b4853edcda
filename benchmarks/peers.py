"""The peers a user would pick instead, as SPEC §8 names them: the OpenAI Agents SDK's `SQLiteSession`
and LangGraph's SQLite checkpointer (the bench extra: `pip install -e '.[bench]'`).

A peer that is not installed is a skipped column, never a failure.
"""

from __future__ import annotations

from importlib import metadata

PEERS = {"sqlsession": ("openai-agents", "agents"),
         "langgraph": ("langgraph-checkpoint-sqlite", "langgraph.checkpoint.sqlite")}


def peer_status() -> dict[str, tuple[str | None, str]]:
    """name -> (version or None, reason when missing)."""
    out = {}
    for name, (dist, module) in PEERS.items():
        try:
            __import__(module)
            out[name] = (metadata.version(dist), "")
        except Exception as exc:  # not installed, or broken: skip the column, never fail
            out[name] = (None, f"{dist} not importable ({type(exc).__name__}: {exc})".splitlines()[0])
    return out


def lg_checkpoint(step: int, messages: list) -> dict:
    """A LangGraph checkpoint whose `messages` channel holds the whole list, as a `MessagesState` thread keeps it."""
    from langgraph.checkpoint.base import empty_checkpoint
    from langgraph.checkpoint.base.id import uuid6
    cp = empty_checkpoint()
    cp["id"] = str(uuid6(clock_seq=step))
    cp["channel_values"] = {"messages": messages}
    cp["channel_versions"] = {"messages": step}
    cp["updated_channels"] = ["messages"]
    return cp


def to_langchain(messages: list[dict]) -> list:
    """Anthropic-shaped messages as LangChain message objects (tool_use → tool_calls, tool_result → ToolMessage)."""
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    out = []
    for m in messages:
        content = m["content"]
        if m["role"] == "assistant":
            blocks = [b for b in content if b.get("type") != "tool_use"] if isinstance(content, list) else content
            calls = [{"name": b["name"], "args": b["input"], "id": b["id"], "type": "tool_call"}
                     for b in content if isinstance(content, list) and b.get("type") == "tool_use"]
            out.append(AIMessage(content=blocks, tool_calls=calls))
        elif isinstance(content, list) and content and content[0].get("type") == "tool_result":
            for b in content:
                out.append(ToolMessage(content=b.get("content") or "", tool_call_id=b["tool_use_id"],
                                       status="error" if b.get("is_error") else "success"))
        else:
            out.append(HumanMessage(content=content))
    return out
