"""`evo-agent sessions rename ID NAME` (issue #19)."""

from __future__ import annotations

from typing import TextIO

from evo_agent.safe_text import terminal_safe
from evo_agent.session import SessionStore
from evo_agent.session.admin import rename_session


def rename(store: SessionStore, text: str, name: str, out: TextIO) -> int:
    session_id = store.resolve(text)
    stored = rename_session(store, session_id, name)
    out.write(f"Session {session_id} is now named {terminal_safe(stored, keep_newlines=False)!r}\n")
    return 0
