"""What the command line does with sessions it cannot simply trust (foreign ones), and safe JSON.

A foreign session (recorded elsewhere: tracked by git, another owner, modes
wider than 0700/0600, dated in the future — `evo_agent.session.trust`) is
resumed only when a person at a terminal says yes; print mode and piped
input refuse it with one line naming `evo-agent sessions adopt ID` (the
question is asked by the one resume path, agent/resuming.py, through
`foreign_confirm`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from evo_agent.safe_text import terminal_safe

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


def foreign_confirm(*, interactive: bool, ask: Callable[[str], str | None]) -> Callable[[str, str], bool] | None:
    """The `confirm` a resume asks (agent/resuming.py) when its source was recorded elsewhere.

    Not interactive (print mode, piped input): None, so the resume refuses with ForeignSession's one
    line naming `evo-agent sessions adopt ID`. Interactive: the question; a no raises
    CommandError("not resumed").
    """
    if not interactive:
        return None

    def confirm(session_id: str, reason: str) -> bool:
        answer = ask(confirm_prompt(reason))
        if answer is None or answer.strip().lower() not in ("y", "yes"):
            raise CommandError(f"session {session_id} not resumed (take it on deliberately with: "
                               f"evo-agent sessions adopt {session_id})")
        return True

    return confirm
