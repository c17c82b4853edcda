"""`sessions rm ID…` and `sessions prune --older-than 30d`: delete whole session directories, never a live one.

A session is live while a running evo-agent holds its lock (see
`evo_agent.session.live`); deleting holds that lock, so a session cannot
become live half-way through. Only directories directly inside
`.evo-agent/sessions` whose names are session ids are ever deleted, never
through a symbolic link.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from evo_agent.safe_text import terminal_safe
from evo_agent.session import MESSAGES_NAME, SUBAGENT_DIR, SessionStore, is_session_id, probe_live
from evo_agent.session.admin import SessionInUse, forget_made, held_for_removal

from ..errors import CommandError
from .common import fmt_bytes, fmt_ms, plural, resolve_session_dir, short

_DURATION_RE = re.compile(r"\A(\d{1,9})([smhdw])\Z")
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_duration(text: str) -> int:
    """`30d` → seconds. Units: s, m, h, d, w. Raises ValueError with a message for anything else."""
    match = _DURATION_RE.match(text.strip().lower())
    if not match:
        raise ValueError(f"invalid duration {text!r}: expected a number and a unit (s, m, h, d or w), e.g. 30d")
    return int(match.group(1)) * _UNIT_S[match.group(2)]


@dataclass
class Candidate:
    id: str
    path: Path
    updated_ms: int
    messages: int | None
    first_prompt: str | None
    size: int

    def describe(self) -> str:
        parts = [f"updated {fmt_ms(self.updated_ms)}"]
        if self.messages is not None:
            parts.append(plural(self.messages, "message"))
        parts.append(fmt_bytes(self.size))
        text = f"{self.id} ({', '.join(parts)})"
        if self.first_prompt:
            text += f" 「{terminal_safe(short(self.first_prompt, 50))}」"
        return text


def _mtime_ms(path: Path) -> int:
    try:
        return int(os.lstat(path).st_mtime * 1000)
    except OSError:
        return 0


def _size(path: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):  # does not follow symlinks
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total


def describe(store: SessionStore, sid: str, path: Path) -> Candidate:
    """What a session is, and when it was last updated: the newest of its last record's time and its
    transcripts' modification times (meta.json and the directory are left out: fsck --repair rewrites them)."""
    info = store.info(sid)
    stamps = [_mtime_ms(path / MESSAGES_NAME)]
    try:
        stamps += [_mtime_ms(path / SUBAGENT_DIR / n) for n in os.listdir(path / SUBAGENT_DIR)]
    except OSError:
        pass
    if info is not None:
        stamps.append(info.meta.updated_ms)
    updated = max(stamps) or _mtime_ms(path)
    return Candidate(sid, path, updated, info.meta.message_count if info else None,
                     info.meta.first_prompt if info else None, _size(path))


def delete_session(path: Path, sid: str) -> None:
    """Delete one session directory while holding its lock. Raises CommandError."""
    try:
        with held_for_removal(path):
            shutil.rmtree(path)
    except SessionInUse as exc:
        raise CommandError(f"{exc.liveness.describe(sid)}; not deleted") from None
    except OSError as exc:
        raise CommandError(f"cannot delete session {sid}: {exc.strerror or exc} ({exc.filename or path})") from None


def rm(
    store: SessionStore,
    texts: list[str],
    *,
    yes: bool,
    out: TextIO,
    err: TextIO,
    ask: Callable[[str], str | None],
) -> int:
    """Delete the named sessions after one confirmation; nothing is deleted if any of them cannot be."""
    targets: dict[str, Path] = {}
    for text in texts:  # every id is checked before anything is deleted
        sid, path = resolve_session_dir(store, text)
        targets[sid] = path
    for sid, path in targets.items():
        live = probe_live(path)
        if live.live or live.error:
            raise CommandError(f"{live.describe(sid)}; not deleted")
    candidates = [describe(store, sid, path) for sid, path in targets.items()]
    if not yes:
        for c in candidates:
            err.write(f"  {c.describe()}\n")
        err.flush()
        what = "this session" if len(candidates) == 1 else f"these {len(candidates)} sessions"
        answer = ask(f"Delete {what}? This cannot be undone. [y/N] ")
        if answer is None or answer.strip().lower() not in ("y", "yes"):
            raise CommandError("nothing deleted" + (" (no answer; pass --yes to delete without asking)"
                                                    if answer is None else ""))
    deleted: list[str] = []
    try:
        for c in candidates:
            delete_session(c.path, c.id)
            deleted.append(c.id)
            out.write(f"deleted {c.id}\n")
    finally:
        if deleted:
            forget_made(deleted, key=store.key)  # the registry of made sessions holds those that exist (best effort)
    return 0


def session_dirs(store: SessionStore) -> list[tuple[str, Path, bool]]:
    """(id, path, is a real directory) for every entry of the sessions directory named like a session."""
    try:
        entries = list(os.scandir(store.sessions_dir))
    except OSError:
        return []
    out = []
    for entry in entries:
        if is_session_id(entry.name):
            try:
                real = stat.S_ISDIR(entry.stat(follow_symlinks=False).st_mode)
            except OSError:
                continue
            out.append((entry.name, Path(entry.path), real))
    return sorted(out)


def _is_clutter(store: SessionStore, sid: str) -> bool:
    """A session listing hides (`SessionMeta.has_conversation` is false): empty, a resume with nothing new, refused."""
    info = store.info(sid)
    return info is not None and not info.meta.has_conversation


def prune(
    store: SessionStore,
    older_than_s: int | None,
    *,
    dry_run: bool,
    out: TextIO,
    now_ms: int | None = None,
    yes: bool = True,
    err: TextIO | None = None,
    ask: Callable[[str], str | None] | None = None,
    interactive: bool = True,
) -> int:
    """Delete the sessions listing hides (no exchange of their own) and, with `older_than_s`, every session
    last updated longer ago than that — never a live one or a symlink. Asks first unless `yes` or `dry_run`."""
    now = int(time.time() * 1000) if now_ms is None else now_ms
    cutoff = None if older_than_s is None else now - older_than_s * 1000
    chosen: list[Candidate] = []
    kept = 0
    for sid, path, real in session_dirs(store):
        if not real:
            if cutoff is not None and _mtime_ms(path) < cutoff:
                out.write(f"skipped {sid}: not a directory (a symbolic link?); "
                          "prune deletes only real session directories\n")
            continue
        candidate = describe(store, sid, path)
        if not (cutoff is not None and candidate.updated_ms < cutoff) and not _is_clutter(store, sid):
            continue
        live = probe_live(path)
        if live.live or live.error:
            out.write(f"kept {sid}: {live.reason}\n")
            kept += 1
            continue
        chosen.append(candidate)
    if dry_run:
        for candidate in chosen:
            out.write(f"would delete {candidate.describe()}\n")
    elif chosen and not yes:
        _confirm_prune(chosen, err or out, ask, interactive)
    deleted: list[Candidate] = []
    failures: list[str] = []
    for candidate in [] if dry_run else chosen:
        try:
            delete_session(candidate.path, candidate.id)
        except CommandError as exc:
            failures.append(str(exc))
            continue
        out.write(f"deleted {candidate.describe()}\n")
        deleted.append(candidate)
    if deleted:
        # the registry of made sessions holds those that exist (best effort)
        forget_made((c.id for c in deleted), key=store.key)
    done = chosen if dry_run else deleted
    freed = sum(c.size for c in done)
    verb = "would delete" if dry_run else "deleted"
    summary = f"{verb} {plural(len(done), 'session')} ({fmt_bytes(freed)})" if done else "nothing to prune"
    if kept:
        summary += f"; kept {kept:,} in use"
    out.write(summary + "\n")
    if failures:
        raise CommandError(failures[0] + (f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""))
    return 0


def _confirm_prune(chosen: list[Candidate], err: TextIO, ask: Callable[[str], str | None] | None,
                   interactive: bool) -> None:
    """List what would go and ask, like `rm -i`; without a terminal to ask on, refuse (raises CommandError)."""
    if not interactive or ask is None:
        raise CommandError(f"prune would delete {plural(len(chosen), 'session')}; nothing deleted: "
                           "no terminal to ask on (pass --yes to delete without asking, --dry-run to see the list)")
    for c in chosen:
        err.write(f"  {c.describe()}\n")
    err.flush()
    answer = ask(f"Delete {plural(len(chosen), 'session')}? This cannot be undone. [y/N] ")
    if answer is None or answer.strip().lower() not in ("y", "yes"):
        raise CommandError("nothing deleted")
