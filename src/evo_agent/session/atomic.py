"""Replacing a file atomically: a temp beside it, written (and fsynced when asked), renamed over it.

Why one module: meta.json, the listing index, the MCP tool list, workspace answers, the Session Plan,
Auto Memory and a rewind's file restore each wrote their own temp-and-rename; they differed only in
the temp's name, the mode and whether the data is fsynced first. A reader sees the old file or the
new one, never half; nothing is written through a link (the temp is opened O_NOFOLLOW and O_EXCL or
O_TRUNC, and a rename replaces a link rather than following it); a failure removes the temp.
"""

from __future__ import annotations

import os

from .layout import FILE_MODE

_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _O_NOFOLLOW | _O_CLOEXEC

__all__ = ["replace_file", "replace_private_file", "write_back_private"]


def replace_file(final: str, data: bytes, *, dir_fd: int | None = None, tmp: str | None = None,
                 mode: int = FILE_MODE, exact_mode: bool = True, fsync: bool = False) -> None:
    """Replace `final` (relative to `dir_fd` when given) with `data`; raises OSError.

    `tmp`: a fixed temp name beside it, truncated if a crash left one (for a writer that holds the
    file's lock); None: a unique one (pid and random bytes, created O_EXCL), so writers running at
    once never share it. `exact_mode`: the file ends with exactly `mode` (the umask may have narrowed
    it, a leftover temp be wider); False: `mode` under the umask, as a new file gets. `fsync`: the data
    is on disk before the rename (the caller fsyncs the directory if the rename must be too).
    """
    if tmp is None:
        head, name = os.path.split(final)
        tmp = os.path.join(head, f".{name.lstrip('.')}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
        flags = os.O_EXCL
    else:
        flags = os.O_TRUNC
    try:
        _write(tmp, data, flags | os.O_WRONLY | os.O_CREAT | _O_NOFOLLOW | _O_CLOEXEC, mode, exact_mode, fsync, dir_fd)
        os.replace(tmp, final, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=dir_fd)
        except OSError:
            pass
        raise


def replace_private_file(dir_fd: int, name: str, data: bytes, *, fsync: bool = False) -> None:
    """Replace `name` in the open directory `dir_fd` with `data`: mode 0600, a unique temp, never through a link.

    Used where no lock orders the writers (a listing's write-back of a rebuilt meta.json, the listing
    index, fsck's repair of `sessions/.gitignore`) and by the stores that hold their own lock.
    """
    replace_file(name, data, dir_fd=dir_fd, fsync=fsync)


def write_back_private(directory: str, name: str, data: bytes) -> bool:
    """Store a cache (a rebuilt meta.json, the listing index) as `directory/name`, 0600; True when it landed.

    It may run beside other writers, so the temp is unique. It never follows a link (the directory is
    opened O_NOFOLLOW and the rest is relative to it), never writes into a directory another user owns,
    and never raises: a cache that cannot be stored is only rebuilt next time.
    """
    try:
        fd = os.open(directory, _O_DIR)
    except (OSError, TypeError):
        return False
    try:
        if os.fstat(fd).st_uid != os.geteuid():
            return False
        replace_private_file(fd, name, data)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def _write(name: str, data: bytes, flags: int, mode: int, exact_mode: bool, fsync: bool, dir_fd: int | None) -> None:
    fd = os.open(name, flags, mode, dir_fd=dir_fd)
    try:
        if exact_mode:
            os.fchmod(fd, mode)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        if fsync:
            os.fsync(fd)
    finally:
        os.close(fd)
