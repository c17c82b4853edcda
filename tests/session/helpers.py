"""Small builders shared by the session tests: messages in the API's own shape."""

from __future__ import annotations

from pathlib import Path

from evo_agent.session import SessionStore


def user_text(text: str) -> dict:
    return {"role": "user", "content": text}


def assistant_text(text: str) -> dict:
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


def assistant_tools(text: str, *ids: str) -> dict:
    blocks = [{"type": "text", "text": text}] if text else []
    blocks += [{"type": "tool_use", "id": i, "name": "bash", "input": {"command": f"echo {i}"}} for i in ids]
    return {"role": "assistant", "content": blocks}


def tool_results(*ids: str) -> dict:
    return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": i, "content": f"out {i}"} for i in ids]}


def store_for(project: Path) -> SessionStore:
    return SessionStore(project, warn=lambda line: None)


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines()
