"""`evo-agent sessions adopt ID`: take on a session recorded elsewhere, deliberately, as a copy of your own.

A foreign session (tracked by git, another user's, too open, dated in the
future) is never continued or resumed without a word. Adopting copies its
restored history into a new session of this user — the same copy a resume
makes, with `"adopted": <reason>` in its resume_marker — and leaves the
source untouched. The new session is then resumed like any other.
"""

from __future__ import annotations

from typing import TextIO

from evo_agent.safe_text import terminal_safe
from evo_agent.session import SessionStore

from ..errors import CommandError
from .common import plural


def adopt(store: SessionStore, text: str, out: TextIO) -> int:
    source = store.resolve(text)
    reason = store.foreign_reason(source)
    resumed = store.resume(source, model=None, provider=None, allow_foreign=True)
    new_id = resumed.recorder.session_id
    resumed.recorder.checkpoint()
    if resumed.recorder.writer.failures:  # its one warning is on stderr already
        raise CommandError(f"session {source} was not adopted: the copy could not be written")
    where = f"recorded elsewhere: {terminal_safe(reason, keep_newlines=False)}" if reason else "already yours"
    out.write(f"adopted {source} ({where}): {plural(len(resumed.loaded.messages), 'message')} copied into "
              f"new session {new_id}\n")
    out.write(f"Resume it with: evo-agent --resume {new_id}\n")
    if resumed.loaded.warning:
        out.write(terminal_safe(resumed.loaded.warning) + "\n")
    return 0
