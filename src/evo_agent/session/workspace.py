"""Workspace trust: what a project brings that would grant authority, and whether this user trusts it.

A cloned repository (or an unpacked archive) is content, never authority (SPEC §9, §11). Some files
in a project would grant authority if evo-agent obeyed them: `.evo-agent/settings.json` (allow rules,
a permission mode, the sandbox switch) and `.mcp.json` (servers: programs to start). They are obeyed
only once the user has trusted the project, and the answer lives where no repository can put it or
change it: the user's own config directory, one small JSON file per project
(`$XDG_CONFIG_HOME/evo-agent/projects/<key>.json`, else `~/.config/evo-agent/…`).

An answer holds for one project *as it was when the user answered*:

- its real path (the key): a project moved elsewhere asks again;
- the directory itself (device, inode and the inode's generation): a project deleted and cloned again at the
  same path is a new directory, and asks again, even where the file system hands it the old inode number;
- a fingerprint of what it brings (sha256 over each file's name, kind and bytes): a `git pull` that
  changes the rules, the mode or the servers asks again, so trusting `Bash(npm test)` never silently
  becomes trusting `Bash`.

The same file keeps the rules the user grants with "always in this project" (`allow`): a repository
can neither plant nor widen them, and they apply whether or not the project is trusted (they are the
user's own). Every write is under a lock and replaces the file atomically (0600, in 0700 directories).
"""

from __future__ import annotations

import fcntl
import json
import os
import stat
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from .layout import (
    DIR_MODE,
    FILE_MODE,
    HISTORY_DIR_NAME,
    MCP_CONFIG_NAME,
    PROJECT_DIR_NAME,
    PROJECTS_DIR_NAME,
    PROJECTS_LOCK_NAME,
    SETTINGS_NAME,
    USER_DIR_NAME,
    user_state_dir,
)
from .plaindata import plain_dataclass as dataclass
from .project import read_upto

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "AUTHORITY_FILES",
    "AUTHORITY_MAX_BYTES",
    "AUTHORITY_TOO_LARGE",
    "Brought",
    "WorkspaceTrust",
    "add_user_rule",
    "fingerprint",
    "history_file",
    "project_key",
    "project_trusted",
    "remember_trust",
    "rules_set_aside",
    "revoke_trust",
    "user_config_dir",
    "user_record_path",
    "user_rules",
    "user_state_dir",
    "what_project_brings",
    "workspace_trust",
]

# What a project can bring that would grant authority, relative to the project (hooks would join here).
AUTHORITY_FILES: tuple[str, ...] = (f"{PROJECT_DIR_NAME}/{SETTINGS_NAME}", MCP_CONFIG_NAME)
# A file larger than this is never obeyed, trusted or not: the question showed its first MiB as "not valid JSON"
# while the loader obeyed all of it, and a pull changing what lay past the first MiB kept the fingerprint.
AUTHORITY_MAX_BYTES = 1 << 20
AUTHORITY_TOO_LARGE = f"larger than {AUTHORITY_MAX_BYTES} bytes"



def sha256(data: bytes = b"") -> Any:
    """`hashlib.sha256(data)` from the sha256 module alone: hashlib loads OpenSSL's (~3 ms, and
    a launch hashes the project and the memory indexes before its first request; SPEC §8)."""
    try:
        from _sha256 import sha256 as make  # type: ignore[import-not-found]
    except ImportError:  # pragma: no cover - a Python built without it
        from hashlib import sha256 as make
    return make(data)

def user_config_dir(environ: Mapping[str, str] | None = None) -> Path:
    """`$XDG_CONFIG_HOME/evo-agent`, else `~/.config/evo-agent`: the user's own settings."""
    from .layout import xdg_base

    return Path(xdg_base("XDG_CONFIG_HOME", (".config",), environ)) / USER_DIR_NAME


def project_key(project_dir: Path | str) -> str:
    """A file name for a project: the sha256 of its real path (32 hex characters)."""
    key: str = sha256(os.fsencode(os.path.realpath(project_dir))).hexdigest()[:32]
    return key


def history_file(project_dir: Path | str, environ: Mapping[str, str] | None = None) -> Path:
    """Where the prompt box's ↑ history of `project_dir` lives: the user's state dir, never the project."""
    return user_state_dir(environ) / HISTORY_DIR_NAME / project_key(project_dir)


# ---------------------------------------------------------------- what a project brings


@dataclass(frozen=True)
class Brought:
    """One file a project brings that would grant authority."""

    path: str        # relative to the project, e.g. ".evo-agent/settings.json"
    kind: str        # "file", "symlink", "not a regular file", "unreadable"
    data: bytes = b""  # a file's bytes (at most AUTHORITY_MAX_BYTES), a link's target
    uid: int = -1
    mode: int = 0

    @property
    def unsafe(self) -> str | None:
        """Why this file is never obeyed, even in a trusted project; None when it may be."""
        if self.kind != "file":
            return "a symbolic link" if self.kind == "symlink" else self.kind
        if self.uid != os.geteuid():
            return f"owned by uid {self.uid}, not you"
        if self.mode & 0o022:
            return f"writable by others (mode {self.mode:04o})"
        return None


def _bring(project: Path, rel: str) -> Brought | None:
    path = project / rel
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return Brought(rel, "unreadable", str(exc).encode())
    if stat.S_ISLNK(st.st_mode):
        try:
            target = os.readlink(path)
        except OSError:
            target = ""
        return Brought(rel, "symlink", os.fsencode(target), st.st_uid, stat.S_IMODE(st.st_mode))
    if not stat.S_ISREG(st.st_mode):
        return Brought(rel, "not a regular file", b"", st.st_uid, stat.S_IMODE(st.st_mode))
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        return Brought(rel, "unreadable", str(exc).encode(), st.st_uid, stat.S_IMODE(st.st_mode))
    try:
        fst = os.fstat(fd)
        data = read_upto(fd, AUTHORITY_MAX_BYTES + 1)  # a byte more: a larger file is refused, not judged by its start
    except OSError as exc:
        return Brought(rel, "unreadable", str(exc).encode(), st.st_uid, stat.S_IMODE(st.st_mode))
    finally:
        os.close(fd)
    # what the question shows and the fingerprint covers is the whole file, or nothing
    if len(data) > AUTHORITY_MAX_BYTES:
        return Brought(rel, AUTHORITY_TOO_LARGE, data[:AUTHORITY_MAX_BYTES], fst.st_uid, stat.S_IMODE(fst.st_mode))
    return Brought(rel, "file", data, fst.st_uid, stat.S_IMODE(fst.st_mode))


def what_project_brings(project_dir: Path | str) -> tuple[Brought, ...]:
    """The files in `project_dir` that would grant authority (AUTHORITY_FILES that exist), read without
    following a symbolic link."""
    project = Path(project_dir)
    return tuple(b for b in (_bring(project, rel) for rel in AUTHORITY_FILES) if b is not None)


def fingerprint(brought: tuple[Brought, ...]) -> str:
    """sha256 over what a project brings: each file's name, kind and bytes (owner and mode are judged apart)."""
    h = sha256()
    for b in brought:
        for part in (b.path.encode(), b.kind.encode(), b.data):
            h.update(len(part).to_bytes(8, "big"))
            h.update(part)
    text: str = h.hexdigest()
    return text


# ---------------------------------------------------------------- the user's answer


@dataclass(frozen=True)
class WorkspaceTrust:
    """What a project brings and what the user said about exactly that."""

    project: Path                     # the real path
    brought: tuple[Brought, ...]
    fingerprint: str
    answer: str | None                # "trusted" or "declined" for this very content and directory, else None
    earlier: str | None = None        # an answer given to other content or another directory at this path
    # The `.mcp.json` servers the user chose one by one when trusting (None: every server of the file).
    # Kept with the answer, so a changed file (any server changed) asks again.
    servers: tuple[str, ...] | None = None
    # Whether a trusted answer covers `.evo-agent/settings.json`: False when the user, choosing the servers one
    # by one, said no to the settings (a "c" then "n" to every server obeyed the rules nobody had said yes to).
    settings: bool = True

    @property
    def trusted(self) -> bool:
        return self.answer == "trusted"

    @property
    def needs_answer(self) -> bool:
        """The project brings something the user has not answered for (the app and the REPL ask)."""
        return bool(self.brought) and self.answer is None

    @property
    def changed(self) -> bool:
        """The user answered for this path before, but what it brings (or the directory itself) is new."""
        return self.answer is None and self.earlier is not None


# FS_IOC_GETVERSION, _IOR('v', 1, long): an inode's generation (ext4, XFS, btrfs; tmpfs never reuses a number).
_FS_IOC_GETVERSION = (2 << 30) | ((8 if sys.maxsize > 2**32 else 4) << 16) | (ord("v") << 8) | 1


def _dir_id(real: Path) -> list[int]:
    """The directory itself: its device, inode and the inode's generation (0 where the file system keeps none).

    Device and inode name a slot, not a directory: ext4 gives a deleted directory's inode number to the next
    directory made, so `rm -rf demo && git clone <another> demo` got the very same pair and inherited the
    trust answer and the "always" rules granted for the old clone. The generation is drawn anew each time the
    number is handed out again (what NFS file handles rely on): one ioctl on the descriptor the stat uses."""
    try:
        fd = os.open(real, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        try:
            st = os.stat(real)
        except OSError:
            return [0, 0, 0]
        return [st.st_dev, st.st_ino, 0]
    try:
        st = os.fstat(fd)
        try:
            generation = int.from_bytes(fcntl.ioctl(fd, _FS_IOC_GETVERSION, bytes(8))[:4], sys.byteorder)
        except OSError:  # ENOTTY: a file system that keeps no generation
            generation = 0
        return [st.st_dev, st.st_ino, generation]
    finally:
        os.close(fd)


def _record_path(project_dir: Path | str, environ: Mapping[str, str] | None) -> Path:
    return user_config_dir(environ) / PROJECTS_DIR_NAME / f"{project_key(project_dir)}.json"


def _read_record(path: Path) -> dict[str, Any]:
    """The user's record of one project; {} when there is none or it cannot be read as an object."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return {}
    try:
        raw = os.read(fd, AUTHORITY_MAX_BYTES)
    except OSError:
        return {}
    finally:
        os.close(fd)
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def workspace_trust(project_dir: Path | str, environ: Mapping[str, str] | None = None) -> WorkspaceTrust:
    """What `project_dir` brings and whether the user trusts exactly that (one lstat per file, one small read)."""
    real = Path(os.path.realpath(project_dir))
    brought = what_project_brings(real)
    mark = fingerprint(brought)
    record = _read_record(_record_path(real, environ))
    trust = record.get("trust") if isinstance(record.get("trust"), dict) else None
    answer = earlier = servers = None
    settings = True
    if trust is not None and trust.get("answer") in ("trusted", "declined"):
        same = (record.get("path") == str(real) and trust.get("fingerprint") == mark
                and trust.get("dir") == _dir_id(real))
        if same:
            answer = trust["answer"]
            chosen = trust.get("mcp_servers")
            if isinstance(chosen, list):
                servers = tuple(str(n) for n in chosen)
            settings = trust.get("settings") is not False
        else:
            earlier = trust["answer"]
    return WorkspaceTrust(real, brought, mark, answer, earlier, servers, settings)


def project_trusted(project_dir: Path | str, environ: Mapping[str, str] | None = None) -> bool:
    """Whether the user trusts `project_dir` as it is now: what it brings (settings, `.mcp.json`) may be obeyed.

    The one question the rest of evo-agent asks (the MCP servers of `.mcp.json` start only when it is True).
    False for a project the user never trusted, declined, moved, re-cloned or whose files changed since.
    """
    return workspace_trust(project_dir, environ).trusted


class _Locked:
    """The user's projects directory, created 0700 and locked (flock) for one read-modify-write."""

    def __init__(self, environ: Mapping[str, str] | None) -> None:
        self.dir = user_config_dir(environ) / PROJECTS_DIR_NAME

    def __enter__(self) -> int:
        self.dir.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
        self.dir_fd = os.open(self.dir, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            self.lock_fd = os.open(PROJECTS_LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE,
                                   dir_fd=self.dir_fd)
        except BaseException:
            os.close(self.dir_fd)
            raise
        fcntl.flock(self.lock_fd, fcntl.LOCK_EX)
        return self.dir_fd

    def __exit__(self, *exc: object) -> None:
        os.close(self.lock_fd)
        os.close(self.dir_fd)


def _update(project_dir: Path | str, environ: Mapping[str, str] | None,
            change: Callable[[dict[str, Any]], None]) -> Path:
    """Re-read the project's record under the lock, apply `change(record)`, replace the file atomically."""
    from .atomic import replace_private_file

    real = Path(os.path.realpath(project_dir))
    path = _record_path(real, environ)
    with _Locked(environ) as dir_fd:
        record = _read_record(path)
        record["path"] = str(real)
        change(record)
        replace_private_file(dir_fd, path.name, (json.dumps(record, indent=2, ensure_ascii=False) + "\n").encode())
    return path


def remember_trust(status: WorkspaceTrust, trusted: bool, environ: Mapping[str, str] | None = None, *,
                   servers: list[str] | None = None, settings: bool = True) -> Path:
    """Record the user's answer for `status` (what the project brings now); returns the record's path.

    `servers`: the `.mcp.json` servers the user chose one by one (None: all of them); `settings`: False when,
    choosing them, the user said no to `.evo-agent/settings.json` (its rules, mode and sandbox stay ignored)."""
    import datetime  # only when an answer is saved

    def change(record: dict[str, Any]) -> None:
        record["trust"] = {
            "answer": "trusted" if trusted else "declined",
            "fingerprint": status.fingerprint,
            "dir": _dir_id(status.project),
            "files": [b.path for b in status.brought],
            "at": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        }
        if trusted and not settings:
            record["trust"]["settings"] = False
        if trusted and servers is not None:
            record["trust"]["mcp_servers"] = list(servers)

    return _update(status.project, environ, change)


def revoke_trust(project_dir: Path | str, environ: Mapping[str, str] | None = None) -> bool:
    """Forget the trust answer for `project_dir` (its "always" rules stay); False when there was none."""
    path = _record_path(project_dir, environ)
    if "trust" not in _read_record(path):
        return False
    _update(project_dir, environ, lambda record: record.pop("trust", None))
    return True


def user_rules(project_dir: Path | str, environ: Mapping[str, str] | None = None) -> list[str]:
    """The rules the user granted with "always in this project", as written (strings); none when they were
    granted in another directory at this path (`rules_set_aside`)."""
    record = _read_record(_record_path(project_dir, environ))
    if not _rules_here(record, project_dir):
        return []
    return _written_rules(record)


def rules_set_aside(project_dir: Path | str, environ: Mapping[str, str] | None = None) -> int:
    """How many "always" rules of this path were granted in a directory since deleted (a clone made there again
    is another project, as for trust: its build.sh is not the one `Bash(sh build.sh)` was granted for)."""
    record = _read_record(_record_path(project_dir, environ))
    return 0 if _rules_here(record, project_dir) else len(_written_rules(record))


def _written_rules(record: dict[str, Any]) -> list[str]:
    allow = record.get("allow")
    return [r for r in allow if isinstance(r, str)] if isinstance(allow, list) else []


def _rules_here(record: dict[str, Any], project_dir: Path | str) -> bool:
    """Whether the record's rules were granted in this very directory (`_dir_id`). A record written
    before the directory was kept with its rules (no `allow_dir`) holds for the path."""
    granted_in = record.get("allow_dir")
    return granted_in is None or granted_in == _dir_id(Path(os.path.realpath(project_dir)))


def add_user_rule(project_dir: Path | str, rule: str, environ: Mapping[str, str] | None = None) -> Path:
    """Add `rule` to the user's own rules for `project_dir` (once), kept with this directory (a rule granted in
    a directory since deleted is dropped); returns the file it is kept in."""
    def change(record: dict[str, Any]) -> None:
        here = _dir_id(Path(os.path.realpath(project_dir)))
        if not _rules_here(record, project_dir):
            record.pop("allow", None)
        record["allow_dir"] = here
        allow = record.get("allow")
        if not isinstance(allow, list):
            allow = record["allow"] = []
        if rule not in allow:
            allow.append(rule)

    return _update(project_dir, environ, change)


def user_record_path(project_dir: Path | str, environ: Mapping[str, str] | None = None) -> Path:
    """The file holding the user's trust answer and rules for `project_dir`."""
    return _record_path(project_dir, environ)
