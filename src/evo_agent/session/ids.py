"""Session ids and sidechain file names.

An id is `<unix ms, 13 digits>_<8 lowercase hex>`: lexicographic order is
creation order, and `_` never appears in the parts, so names split cleanly.
Every id a user types is checked here before any path is built from it.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

from .layout import SIDECHAIN_SUFFIX

_SESSION_ID = r"\A[0-9]{13}_[0-9a-f]{8}\Z"  # SESSION_ID_RE, compiled at its first use (`__getattr__`)
TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    SESSION_ID_RE: re.Pattern[str]


def __getattr__(name: str) -> re.Pattern[str]:
    """SESSION_ID_RE, compiled on first use and kept as the module's attribute (PEP 562), as layout.py's patterns:
    a new session's `-p` matches no id before its first request (issue #30), a listing compiles it once."""
    if name != "SESSION_ID_RE":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    compiled = globals()["SESSION_ID_RE"] = re.compile(_SESSION_ID)
    return compiled


# Matched through `re`'s own cache, so compiled at first use (a listing needs neither).
_PREFIX = r"\A[0-9]{1,13}(?:_[0-9a-f]{0,8})?\Z"
_SLUG_DROP = r"[^a-z0-9-]+"
SLUG_MAX = 40


class SessionError(Exception):
    """A foreseeable problem with a session a user named: print it as one line."""


class InvalidSessionId(SessionError):
    pass


class SessionNotFound(SessionError):
    pass


class AmbiguousSessionId(SessionError):
    pass


def random_hex(nbytes: int) -> str:
    """`nbytes` random bytes as hex (what `secrets.token_hex` does, without importing hmac/hashlib at start-up)."""
    return os.urandom(nbytes).hex()


def new_session_id(now_ms: int | None = None) -> str:
    ms = int(time.time() * 1000) if now_ms is None else now_ms
    return f"{ms:013d}_{random_hex(4)}"


def is_session_id(text: object) -> bool:
    pattern = globals().get("SESSION_ID_RE") or __getattr__("SESSION_ID_RE")
    return isinstance(text, str) and pattern.match(text) is not None


def created_ms_of(session_id: str) -> int:
    return int(session_id[:13])


def _shown(text: str) -> str:
    """A user's input, quoted and shortened so an error message stays one line."""
    shown = text if len(text) <= 40 else text[:37] + "..."
    return repr(shown)


def resolve_session_id(sessions_dir: Path, text: str) -> str:
    """Turn a full id or a unique prefix of an existing id into the full id.

    Raises InvalidSessionId for anything that is not id-shaped (path
    separators, dots, NULs, empty, too long) before touching the disk.
    """
    if not isinstance(text, str) or not re.match(_PREFIX, text):
        raise InvalidSessionId(
            f"invalid session id {_shown(str(text))}: expected <13 digits>_<8 hex>, "
            "e.g. 1780227556183_b525857d, or a prefix of one"
        )
    try:
        names = [entry.name for entry in os.scandir(sessions_dir) if entry.name.startswith(text)]
    except OSError:
        names = []
    matches = sorted(n for n in names if is_session_id(n))
    if not matches:
        raise SessionNotFound(f"no session {text} in {sessions_dir}")
    if len(matches) > 1:
        if text in matches:
            return text
        shown = ", ".join(matches[:5]) + (", ..." if len(matches) > 5 else "")
        raise AmbiguousSessionId(f"session id prefix {text} is ambiguous: {len(matches)} sessions match ({shown})")
    return matches[0]


def slug_agent_name(name: str) -> str:
    """`General Purpose!` → `general-purpose`: only [a-z0-9-], at most 40 chars."""
    slug = re.sub(_SLUG_DROP, "-", name.lower()).strip("-")
    slug = re.sub(r"-{2,}", "-", slug)[:SLUG_MAX].strip("-")
    return slug or "agent"


def sidechain_file_name(agent_name: str, now_ms: int | None = None) -> str:
    ms = int(time.time() * 1000) if now_ms is None else now_ms
    return f"{ms:013d}_{slug_agent_name(agent_name)}_{random_hex(2)}{SIDECHAIN_SUFFIX}"


def is_id_prefix(text: object) -> bool:
    """Whether `text` is shaped like a session id or a prefix of one (checked before any path is built)."""
    return isinstance(text, str) and re.match(_PREFIX, text) is not None
