"""git's answer of which sessions it tracks, kept until the git index it came from changes.

A session any of whose files git tracks is foreign (trust.py), so every listing asked git
(`git ls-files`): a process start, and the import of `subprocess`, about a quarter of
`sessions list --limit 20` at 10,000 sessions. `git ls-files` reports the index and nothing else
(what it expands a sparse or split index from is named by content hash, so it cannot change under
the same index), so its answer holds as long as the index file is the same file with the same bytes.

The answer is kept with the identity of the index it describes — device, inode, size, mtime and
ctime in ns, taken by `lstat` *before* git starts — and used only while all five still match. git
replaces its index by renaming a new file over it (a new inode), and any write, chmod or rename
moves the ctime, which no one can set back. An index changed after the `lstat` but before git read
it makes the kept identity older than the answer, so the next listing misses and asks git again;
never the other way round. An index changed within `RACY_NS` of the `lstat` is not kept at all
(the coarse file clock could hide a second write in the same tick: git's "racy" rule). Neither is
an answer from a repository the git door refused (git.py: another owner), and the repository's
git directory, worktree root and the sessions directory's path in it must also be the ones kept.

It lives in the user's cache dir beside the listing index (`$XDG_CACHE_HOME/evo-agent/list-index/
<key>.tracked.json`), a file a repository cannot plant; one of another owner, a link, or anything
malformed is ignored (and replaced). Deleting it is always safe: the next listing asks git.
"""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

from .atomic import write_back_private
from .ids import is_session_id
from .layout import DIR_MODE, GIT_INDEX_NAME, LIST_INDEX_DIR_NAME, TRACKED_CACHE_SUFFIX, USER_DIR_NAME

VERSION = 1
RACY_NS = 2_000_000_000  # an index changed this recently is not kept (the coarse file clock; FAT's 2 s)
MAX_BYTES = 1 << 20  # a larger file is not read (no answer of a sessions directory is that long)
_O_READ = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)

# What an answer is valid for: the sessions directory's real path, the worktree root, the git directory,
# the sessions directory relative to the root, and the index's [dev, ino, size, mtime_ns, ctime_ns].
Key = list[object]


def index_key(sessions_dir: str, root: Path, git_dir: Path, prefix: str) -> Key | None:
    """What `git ls-files` would read now, identified; None when there is no index or it changed too recently."""
    try:
        st = os.lstat(os.path.join(git_dir, GIT_INDEX_NAME))
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode) or max(st.st_mtime_ns, st.st_ctime_ns) >= time.time_ns() - RACY_NS:
        return None
    identity = [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]
    return [os.path.realpath(sessions_dir), str(root), str(git_dir), prefix, identity]


def load(key: Key) -> frozenset[str] | None:
    """The ids kept for exactly `key`, or None (nothing kept, another key, anything off)."""
    try:
        fd = os.open(_path(str(key[0])), _O_READ)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_size > MAX_BYTES:
            return None
        data = json.loads(os.read(fd, MAX_BYTES + 1))
    except (OSError, ValueError, RecursionError):
        return None
    finally:
        os.close(fd)
    if type(data) is not dict or data.get("version") != VERSION or data.get("key") != key:
        return None
    ids = data.get("ids")
    if type(ids) is not list or not all(type(sid) is str and is_session_id(sid) for sid in ids):
        return None
    return frozenset(ids)


def save(key: Key, ids: frozenset[str]) -> bool:
    """Keep `ids` as git's answer for `key`; True when it landed. Never raises, never follows a link."""
    path = _path(str(key[0]))
    directory, name = os.path.split(path)
    data = json.dumps({"version": VERSION, "key": key, "ids": sorted(ids)}).encode("utf-8")
    try:
        os.makedirs(directory, mode=DIR_MODE, exist_ok=True)
    except OSError:
        return False
    return write_back_private(directory, name, data)  # never a link, never another user's directory


def _path(real_sessions_dir: str) -> str:
    """`$XDG_CACHE_HOME/evo-agent/list-index/<key>.tracked.json` (else under `~/.cache`).

    The key is a 64-bit FNV-1a of the real path (the path itself is checked inside the file): no
    hashlib, whose import would cost a listing more than this cache saves it.
    """
    from .layout import xdg_base

    base = xdg_base("XDG_CACHE_HOME", (".cache",))
    digest = 0xCBF29CE484222325
    for byte in os.fsencode(real_sessions_dir):
        digest = ((digest ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return os.path.join(base, USER_DIR_NAME, LIST_INDEX_DIR_NAME, f"{digest:016x}{TRACKED_CACHE_SUFFIX}")
