"""Helpers for the UI tests: sessions made quickly in a temporary project."""

from __future__ import annotations

import asyncio
import inspect
import json
import os
from pathlib import Path

import pytest

from evo_agent.session import SessionStore


def make_session(store: SessionStore, prompt: str, *, tokens: tuple[int, int] = (0, 0), session_id: str | None = None):
    """A real session through the library: one user record, one assistant record, meta refreshed."""
    rec = store.create(model="test-model", provider="demo", git_branch=None, session_id=session_id)
    rec.user({"role": "user", "content": prompt})
    rec.assistant({"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
                  input_tokens=tokens[0], output_tokens=tokens[1])
    rec.checkpoint()
    return rec


def write_sessions_fast(store: SessionStore, count: int, *, base_ms: int = 1_780_000_000_000) -> list[str]:
    """`count` sessions written straight to disk (a transcript and a matching meta.json each)."""
    store.ensure_sessions_dir()
    ids = []
    for i in range(count):
        created = base_ms + i * 1000
        sid = f"{created:013d}_{i:08x}"
        d = store.sessions_dir / sid
        os.mkdir(d, 0o700)
        line = json.dumps({"type": "user", "session_id": sid,
                           "message": {"role": "user", "content": f"prompt number {i}"}}) + "\n"
        line += json.dumps({"type": "assistant", "session_id": sid, "input_tokens": i, "output_tokens": 1,
                            "message": {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}}) + "\n"
        (d / "messages.jsonl").write_text(line)
        os.chmod(d / "messages.jsonl", 0o600)  # as the recorder writes it: wider modes mark a session foreign
        meta = {"id": sid, "created_ms": created, "updated_ms": created + 500, "agent_version": "0.1.0",
                "cwd": str(store.project_dir), "git_branch": None, "model": "m", "provider": "demo",
                "first_prompt": f"prompt number {i}", "total_input_tokens": i, "total_output_tokens": 1,
                "total_cache_creation_tokens": 0, "total_cache_read_tokens": 0,
                "message_count": 2, "answer_count": 1, "compact_count": 0, "resumed_from": None,
                "messages_bytes": len(line.encode())}
        (d / "meta.json").write_text(json.dumps(meta))
        ids.append(sid)
    return ids


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    return SessionStore(tmp_path / "proj")


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    """Run `async def` tests of this directory with asyncio.run (no async plugin needed)."""
    if inspect.iscoroutinefunction(pyfuncitem.obj):
        names = pyfuncitem._fixtureinfo.argnames
        kwargs = {name: pyfuncitem.funcargs[name] for name in names}
        asyncio.run(pyfuncitem.obj(**kwargs))
        return True
    return None
