"""The listing index: every session's meta.json in one file, so `list()` reads one file, not 10,000.

It lives in the user's cache dir (`$XDG_CACHE_HOME/evo-agent/list-index/<key>.json`, the key
from the sessions directory's real path): deleting it is always safe, a repository cannot plant
one, and versions that know nothing of it never see it.

A cache of a cache, never the source of truth. Each entry holds what `read_meta` returned for one
session and the identity of the meta.json it read (device, inode, size, mtime and ctime in ns, from
an fstat of the descriptor it read): the listing lstats meta.json and uses the entry only when all
five still match. meta.json is replaced by rename (a new inode) and any write, chmod or rename of
it moves its ctime, which no one can set back; so an entry that matches describes the bytes on disk,
and a meta.json another process rewrote, removed or replaced, a session added, renamed or deleted,
all simply miss and are read as without an index. What comes after (the transcript's size against
`messages_bytes`, catching up, writing back) is unchanged.

Racy entries are not stored: a meta.json whose ctime is within `RACY_NS` of the moment it was read
could still change within the same clock tick without its ctime moving (git's "racy clean" case).

A missing, unreadable, corrupt, foreign (another owner, a link, not a regular file) or differently
shaped index is ignored and rebuilt. It is replaced atomically through a unique temp name
(`atomic.write_back_private`), so two listings writing at once only decide whose entries survive (cache
efficiency), never what a listing shows. It is rewritten when a session it holds is gone (a deleted
session's first prompt does not linger here) or enough changed (`worth_saving`), so a session being
recorded (its meta.json replaced every few records) costs one meta.json read per listing instead of
rewriting the whole index each time; and only in a project with at least `MIN_SESSIONS` sessions
(below that, reading every meta.json is already fast).
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterable

from .atomic import write_back_private
from .jsonio import decode, encode_line
from .layout import DIR_MODE, LIST_INDEX_DIR_NAME, LIST_INDEX_SUFFIX, META_NAME, USER_DIR_NAME
from .meta import _INT_FIELDS, FIELDS, SessionMeta, read_meta_stat

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: `sessions list` loads this module
if TYPE_CHECKING:
    from typing import Any

VERSION = 1
MIN_SESSIONS = 200  # fewer sessions: no index file (tests lower it)
RESAVE_MIN = 32  # entries read again or dropped before an existing index is rewritten (and 1% of the sessions)
RACY_NS = 2_000_000_000  # the coarse file clock, FAT's 2 s mtimes: a meta.json changed this recently is not cached
_INT_POS = tuple(FIELDS.index(name) for name in _INT_FIELDS)
_STR_POS = (FIELDS.index("agent_version"), FIELDS.index("cwd"))
_OPT_STR_POS = tuple(i for i, name in enumerate(FIELDS) if i not in _INT_POS and i not in _STR_POS and name != "id")
_NONE = type(None)
_O_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)

# sid -> [key, meta values or None]: key = [dev, ino, size, mtime_ns, ctime_ns] of the meta.json read. Lists,
# as JSON gives them back: converting 10,000 of them to tuples costs more than comparing them as they are.
if TYPE_CHECKING:  # only annotations use it: `typing` is not imported at run time
    _Entry = list[Any]


class ListIndex:
    """The index of one sessions directory, as loaded, plus what this listing learned."""

    def __init__(self, path: str, entries: dict[str, _Entry]) -> None:
        self.path = path
        self.loaded = entries
        self.fresh: dict[str, _Entry] = {}  # what this listing saw: the next index
        self.misses = 0  # entries read again and stored (new, changed)
        self.now_ns = time.time_ns()

    @staticmethod
    def wanted(sessions: int) -> bool:
        """Whether a listing of this many sessions goes through the index."""
        return sessions >= MIN_SESSIONS

    @classmethod
    def load(cls, sessions_dir: str) -> ListIndex:
        """The index on disk, or an empty one when it is missing, foreign or not what this version writes."""
        path = index_path(sessions_dir)
        return cls(path, _read_entries(path))

    def read_meta(self, session_dir: str, session_id: str) -> SessionMeta | None:
        """What `meta.read_meta(session_dir, session_id)` returns, from the index when its entry still matches."""
        entry = self.loaded.get(session_id)
        if entry is not None:
            try:
                st = os.lstat(session_dir + "/" + META_NAME)
            except OSError:
                st = None
            if st is not None and entry[0] == [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]:
                self.fresh[session_id] = entry
                values = entry[1]
                return None if values is None else SessionMeta(*values)
        meta, st = read_meta_stat(session_dir, session_id)
        if st is not None and stat.S_ISREG(st.st_mode) and max(st.st_ctime_ns, st.st_mtime_ns) < self.now_ns - RACY_NS:
            key = [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]
            self.fresh[session_id] = [key, None if meta is None else list(meta.to_json().values())]
            self.misses += 1
        elif entry is not None:  # not cacheable now (just changed, gone): the old entry stays, it cannot match
            self.fresh[session_id] = entry
        return meta

    def worth_saving(self, sessions: int) -> bool:
        """Whether to rewrite the index: a session it holds is gone (its first prompt must not outlive it
        here), or enough entries were read again to pay for rewriting it (or there is none yet)."""
        if not ListIndex.wanted(sessions):
            return False
        if not self.loaded.keys() <= self.fresh.keys():
            return True
        return self.misses > 0 and (not self.loaded or self.misses >= max(RESAVE_MIN, sessions // 100))

    def save(self) -> bool:
        """Replace the index with what this listing saw; True when it landed. Never raises, never follows a link."""
        directory, name = os.path.split(self.path)
        try:
            data = encode_line({"version": VERSION, "fields": FIELDS, "entries": self.fresh})
            os.makedirs(directory, mode=DIR_MODE, exist_ok=True)
        except (OSError, TypeError, ValueError):
            return False
        return write_back_private(directory, name, data)


def index_path(sessions_dir: str) -> str:
    """`$XDG_CACHE_HOME/evo-agent/list-index/<key>.json` (else under `~/.cache`), the key from the real path."""
    import hashlib  # here: `newest()`, the first screen, never needs it

    from .layout import xdg_base

    base = xdg_base("XDG_CACHE_HOME", (".cache",))
    key = hashlib.sha256(os.fsencode(os.path.realpath(sessions_dir))).hexdigest()[:32]
    return os.path.join(base, USER_DIR_NAME, LIST_INDEX_DIR_NAME, key + LIST_INDEX_SUFFIX)


def _read_entries(path: str) -> dict[str, _Entry]:
    """The entries of the index at `path`; {} for anything but a well-formed index of ours."""
    try:
        fd = os.open(path, _O_FLAGS)
    except OSError:
        return {}
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
            return {}
        chunks = []
        while chunk := os.read(fd, 1 << 22):
            chunks.append(chunk)
        data = decode(b"".join(chunks))
    except (OSError, ValueError):
        return {}
    finally:
        os.close(fd)
    try:
        return _checked(data)
    except (TypeError, ValueError, KeyError, AttributeError):
        return {}


def _types(items: Iterable[object]) -> set[type]:
    return set(map(type, items))


def _checked(data: object) -> dict[str, _Entry]:
    """The entries when every one has the shape `ListIndex` writes, with values `meta_from_json` would accept.

    Checked a column at a time (C loops), since this runs for every session of a listing; anything off
    discards the whole index.
    """
    if type(data) is not dict or data.get("version") != VERSION or data.get("fields") != list(FIELDS):
        return {}
    entries = data["entries"]
    if type(entries) is not dict:
        return {}
    pairs = list(entries.values())
    if _types(pairs) - {list} or set(map(len, pairs)) - {2}:
        return {}
    keys, values = zip(*pairs, strict=True) if pairs else ((), ())
    if _types(keys) - {list} or set(map(len, keys)) - {5}:
        return {}
    for column in zip(*keys, strict=True):
        if _types(column) - {int}:
            return {}
    present = [v for v in values if v is not None]
    if _types(present) - {list} or set(map(len, present)) - {len(FIELDS)}:
        return {}
    if present:
        columns = list(zip(*present, strict=True))
        for i in _INT_POS:
            if _types(columns[i]) - {int} or min(columns[i]) < 0:
                return {}
        for i in _STR_POS:
            if _types(columns[i]) - {str}:
                return {}
        for i in _OPT_STR_POS:
            if _types(columns[i]) - {str, _NONE}:
                return {}
        for sid, (_, value) in entries.items():
            if value is not None and value[0] != sid:
                return {}
    return entries
