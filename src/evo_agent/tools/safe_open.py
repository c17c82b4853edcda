"""Open the file that was checked: no symlink followed on the way (SPEC §9, issue #26).

The file tools check where a path really points (confine.py resolves it, symlinks followed), then
open it. Opened by name, a symlink swapped in between — at the file itself or at any directory above
it — would redirect the open: a write checked as `src/app.py` would land in `~/.bashrc`. So the
checked path (resolved, hence free of symlinks) is opened from an opened directory: the project's
root for a path inside the project, `/` for one outside it that the user approved. The directories
are reached in one `openat2` call with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS where the kernel has
it, else one component at a time with O_NOFOLLOW; the file itself is opened with O_NOFOLLOW from
its directory. A symlink met on the way is an error (`SymlinkInPath`), never followed.

    fd = open_file(path, os.O_RDONLY, root=project)          # read
    fd = open_file(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, root=project, create_dirs=True)
    dir_fd = open_dir(path.parent, root=project, create=True)   # then *at calls relative to it
"""

from __future__ import annotations

import errno
import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["SymlinkInPath", "open_dir", "open_file", "set_openat2"]

_O_PATH = getattr(os, "O_PATH", os.O_RDONLY)
_DIR_FLAGS = os.O_DIRECTORY | _O_PATH | getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_RESOLVE_NO_SYMLINKS, _RESOLVE_BENEATH = 0x04, 0x08
_SYS_OPENAT2 = {"x86_64": 437, "aarch64": 437, "arm64": 437, "riscv64": 437, "ppc64le": 437, "s390x": 437}

_openat2_state: dict[str, object] = {"usable": None}  # None: not tried yet; False: fall back to the walk


class SymlinkInPath(OSError):
    """A symlink where the checked path had a directory or the file: it appeared after the check."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__(errno.ELOOP, "a symbolic link appeared in the path after it was checked; not followed",
                         str(path))


def set_openat2(usable: bool | None) -> None:
    """Force the per-component walk (False), or let the next call probe openat2 again (None); for tests."""
    _openat2_state["usable"] = usable


def _split(path: str | os.PathLike[str], root: str | os.PathLike[str] | None) -> tuple[str, tuple[str, ...]]:
    """The directory to start from and the components below it (the path must be absolute and normalised)."""
    text = os.path.normpath(os.fspath(path))
    if not os.path.isabs(text):
        raise ValueError(f"not an absolute path: {text}")
    base = os.path.normpath(os.fspath(root)) if root is not None else "/"
    if not (text == base or text.startswith(base.rstrip("/") + "/")):
        base = "/"
    return base, tuple(part for part in text[len(base):].split("/") if part)


def _openat2(dir_fd: int, relative: str, flags: int) -> int | None:
    """`openat2(dir_fd, relative, flags, RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS)`; None when the kernel lacks it."""
    if _openat2_state["usable"] is False:
        return None
    syscall_number = _SYS_OPENAT2.get(os.uname().machine)
    if syscall_number is None:
        _openat2_state["usable"] = False
        return None
    import ctypes  # only when a file tool opens something

    if "libc" not in _openat2_state:
        class OpenHow(ctypes.Structure):  # struct open_how (linux/openat2.h)
            _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]

        _openat2_state["how"] = OpenHow
        _openat2_state["libc"] = ctypes.CDLL(None, use_errno=True)
    libc: Any = _openat2_state["libc"]
    how = _openat2_state["how"](flags, 0, _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS)  # type: ignore[operator]  # OpenHow
    fd: int = libc.syscall(syscall_number, dir_fd, os.fsencode(relative), ctypes.byref(how), ctypes.sizeof(how))
    if fd >= 0:
        _openat2_state["usable"] = True
        return fd
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EPERM, errno.EINVAL) and _openat2_state["usable"] is None:
        _openat2_state["usable"] = False  # no openat2 here (an old kernel, a seccomp filter): walk instead
        return None
    if err in (errno.ELOOP, errno.EXDEV):
        raise SymlinkInPath(relative)
    raise OSError(err, os.strerror(err), relative)


def _step(dir_fd: int, name: str, create: bool, shown: str) -> int:
    """The directory `name` inside `dir_fd`, never through a symlink (made first when `create`)."""
    for _ in range(2):
        try:
            return os.open(name, _DIR_FLAGS | _NOFOLLOW, dir_fd=dir_fd)
        except FileNotFoundError:
            if not create:
                raise
            try:
                os.mkdir(name, 0o777, dir_fd=dir_fd)
            except FileExistsError:
                pass
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR) and _is_symlink(dir_fd, name):
                raise SymlinkInPath(shown) from None
            raise
    return os.open(name, _DIR_FLAGS | _NOFOLLOW, dir_fd=dir_fd)


def _is_symlink(dir_fd: int, name: str) -> bool:
    import stat

    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def open_dir(path: str | os.PathLike[str], *, root: str | os.PathLike[str] | None = None, create: bool = False) -> int:
    """A descriptor of directory `path` (absolute, already resolved), reached without following any symlink.

    Starts from `root` when `path` lies inside it (the project), else from `/`. With `create`, missing
    directories are made on the way (as `mkdir -p`, each one inside the directory already opened).
    The caller closes the descriptor.
    """
    base, parts = _split(path, root)
    fd = os.open(base, _DIR_FLAGS)
    try:
        return _descend(fd, base, parts, create)
    finally:
        os.close(fd)


def _descend(base_fd: int, base: str, parts: tuple[str, ...], create: bool) -> int:
    """A new descriptor of `parts` below `base_fd` (which the caller keeps and closes)."""
    if not parts:
        return os.dup(base_fd)
    if _openat2_state["usable"] is not False:
        try:
            opened = _openat2(base_fd, os.path.join(*parts), _DIR_FLAGS)
        except FileNotFoundError:
            if not create:
                raise
            opened = None  # made below, one component at a time
        if opened is not None:
            return opened
    fd = os.dup(base_fd)
    try:
        for i, name in enumerate(parts):
            next_fd = _step(fd, name, create, os.path.join(base, *parts[: i + 1]))
            os.close(fd)
            fd = next_fd
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_file(path: str | os.PathLike[str], flags: int, mode: int = 0o666, *,
              root: str | os.PathLike[str] | None = None, create_dirs: bool = False) -> int:
    """`os.open` of the checked `path` with O_NOFOLLOW, from its directory reached as `open_dir` does.

    Raises `SymlinkInPath` when the file or a directory above it is now a symlink, and the usual
    OSError otherwise (FileNotFoundError, IsADirectoryError, PermissionError, ...).
    """
    text = os.path.normpath(os.fspath(path))
    parent, name = os.path.split(text)
    if not name:
        raise IsADirectoryError(errno.EISDIR, "is a directory", text)
    dir_fd = open_dir(parent, root=root, create=create_dirs)
    try:
        return os.open(name, flags | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0), mode, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP or (exc.errno == errno.EEXIST and _is_symlink(dir_fd, name)):
            raise SymlinkInPath(text) from None
        raise
    finally:
        os.close(dir_fd)
