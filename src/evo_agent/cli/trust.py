"""What the command line does with sessions it cannot simply trust: foreign ones, live ones, and safe JSON.

A foreign session (recorded elsewhere: tracked by git, another owner, modes
wider than 0700/0600, dated in the future — `evo_agent.session.trust`) is
resumed only when a person at a terminal says yes; print mode and piped
input refuse it with one line naming `evo-agent sessions adopt ID`. A
session live in another terminal is resumed as always (into a new session)
with one line that says so.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from evo_agent.safe_text import terminal_safe
from evo_agent.session import ForeignSession, SessionStore

from .errors import CommandError

# C1 controls, bidi embedding/override/isolate marks and the line/paragraph separators: json.dumps with
# ensure_ascii=False leaves them raw, and a terminal (or a reader's eye) acts on them.
_JSON_UNSAFE_RE = re.compile(r"[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def json_safe_dumps(data: object, **kwargs) -> str:
    """`json.dumps` that escapes every control and bidi character (`\\u009b`, `\\u202e`), keeping other text readable.

    Only the characters are rewritten, and only as JSON escapes, so the
    document parses to exactly the same data.
    """
    return json_escape_unsafe(json.dumps(data, ensure_ascii=False, **kwargs))


def json_escape_unsafe(text: str) -> str:
    """JSON text with its raw DEL, C1 and bidi characters written as `\\u` escapes (still valid, same data)."""
    return _JSON_UNSAFE_RE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def confirm_prompt(reason: str) -> str:
    return f"recorded elsewhere: {terminal_safe(reason, keep_newlines=False)} — resume anyway? [y/N] "


def allow_foreign(store: SessionStore, session_id: str, *, interactive: bool,
                  ask: Callable[[str], str | None]) -> bool:
    """Whether resuming `session_id` may go ahead when it is foreign: True when it is ours or the user said yes.

    Not interactive (print mode, piped input): raises CommandError naming the
    reason and `evo-agent sessions adopt ID`. Interactive and answered no:
    raises CommandError("not resumed").
    """
    reason = store.foreign_reason(session_id)
    if not reason:
        return False
    if not interactive:
        raise CommandError(str(ForeignSession(session_id, reason)))
    answer = ask(confirm_prompt(reason))
    if answer is None or answer.strip().lower() not in ("y", "yes"):
        raise CommandError(f"session {session_id} not resumed (take it on deliberately with: "
                           f"evo-agent sessions adopt {session_id})")
    return True


def live_note(store: SessionStore, session_id: str) -> str | None:
    """One line when `session_id` is live in another process: the resume copies it into a new session."""
    from evo_agent.session import probe_live  # live.py loads the recorder and redaction: not on the listing's path

    live = probe_live(store.sessions_dir / session_id)
    if not live.live:
        return None
    holder = f"pid {live.pid}" if live.pid else "another running evo-agent"
    return f"evo-agent: session {session_id} is in use by {holder}; this resume starts a new session from it"
