"""`evo-agent sessions fsck [ID] [--repair]`: find what is wrong with sessions on disk, fix what is safe to fix.

Reported: unreadable lines and torn last lines (main transcript and
sidechains), a meta.json that is missing, unreadable, stale or wrong,
sidechain files no marker names and markers naming no file, files and
directories more open than 0600/0700, leftovers of interrupted meta writes
and of resumes that ended while copying, foreign sessions (recorded
elsewhere: tracked by git, another owner, too open, dated in the future),
a sessions directory without a `.gitignore` holding `*`, and anything in it that is
not a session (a committed `HEAD`, `config`, `objects/` that make it look like a
git repository: every other command refuses the directory until it is gone).

`--repair` only ever touches caches and metadata: it rebuilds meta.json from
the transcript, narrows permissions, removes leftover temporary meta files
restores the `.gitignore` and moves what is not a session aside
(`.evo-agent/unexpected-<ms>/`, never deleted). It never narrows the permissions of a foreign
session: that would make a planted session look like the user's own
(`sessions adopt` takes one on deliberately). A transcript is never rewritten: its damage
stays reported (resume already skips it) and the exit status says so. A
session in use by a running evo-agent is checked but its meta is left to
its writer.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TextIO

from evo_agent.safe_text import terminal_line
from evo_agent.session import (
    DIR_MODE,
    FILE_MODE,
    GITIGNORE_NAME,
    LOCK_NAME,
    MESSAGES_NAME,
    META_NAME,
    STAGING_NAME,
    SUBAGENT_DIR,
    SessionStore,
    created_ms_of,
    foreign_reason,
    is_session_id,
    is_sidechain_path,
    iter_transcript,
    probe_live,
)
from evo_agent.session.admin import (
    gitignore_problem,
    read_meta,
    rebuild_meta,
    restore_gitignore,
    unexpected_entries,
    write_meta,
)

from ..trust import json_safe_dumps
from .common import plural


@dataclass
class Finding:
    session: str | None  # None: the sessions directory itself
    path: str  # relative to the session directory (or the sessions directory)
    kind: str
    message: str
    fix: Callable[[], None] | None = field(default=None, repr=False)
    no_fix_reason: str | None = None  # why --repair leaves it
    repaired: bool = False
    repair_error: str | None = None
    note: bool = False  # harmless: reported, never a failure (a torn last line of a finished session)

    def line(self) -> str:
        where = f"{self.session}  " if self.session else ""
        text = f"{'note: ' if self.note else ''}{where}{self.path}: {self.message}"
        if self.repaired:
            text += " — repaired"
        elif self.repair_error:
            text += f" — not repaired: {self.repair_error}"
        return terminal_line(text)  # file names in a session directory can hold anything, newlines too

    def to_json(self) -> dict:
        return {"session": self.session, "path": self.path, "kind": self.kind, "message": self.message,
                "repairable": self.fix is not None, "repaired": self.repaired, "repair_error": self.repair_error,
                "note": self.note}


_foreign_sessions: set[str] = set()  # sessions being checked that are foreign: their modes are never narrowed


def _mode_finding(session: str | None, rel: str, path: Path, want: int, st: os.stat_result) -> list[Finding]:
    out = []
    if st.st_uid != os.getuid():
        out.append(Finding(session, rel, "owner", f"owned by uid {st.st_uid}, not by you (uid {os.getuid()})"))
    mode = stat.S_IMODE(st.st_mode)
    if mode & 0o077:
        if session is not None and session in _foreign_sessions:
            out.append(Finding(session, rel, "permissions",
                               f"permissions {mode:04o} are too open (expected {want:04o})",
                               no_fix_reason=f"a foreign session is not made to look like yours; "
                                             f"take it on with: evo-agent sessions adopt {session}"))
        else:
            out.append(Finding(session, rel, "permissions",
                               f"permissions {mode:04o} are too open (expected {want:04o})",
                               fix=lambda: os.chmod(path, want)))
    return out


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except OSError:
        return None


def check_lines(session: str, rel: str, path: Path) -> tuple[list[Finding], list[dict]]:
    """Findings about the lines of one transcript file, and its readable records."""
    findings: list[Finding] = []
    records: list[dict] = []
    try:
        for line in iter_transcript(path):
            if line.record is not None:
                records.append(line.record)
            elif line.torn:
                findings.append(Finding(session, rel, "torn_last_line",
                                        f"line {line.number}: torn last line ({plural(len(line.raw), 'byte')}, "
                                        "a write cut short by a crash); harmless: resume skips it and the next "
                                        "record starts on a fresh line",
                                        no_fix_reason="transcripts are never rewritten", note=True))
            else:
                findings.append(Finding(session, rel, "unreadable_line",
                                        f"line {line.number}: unreadable ({plural(len(line.raw), 'byte')} that are "
                                        "not a JSON record); resume skips it",
                                        no_fix_reason="transcripts are never rewritten"))
    except OSError as exc:
        findings.append(Finding(session, rel, "unreadable_file", f"cannot be read: {exc.strerror or exc}"))
    return findings, records


def complete_bytes(path: Path, size: int, chunk: int = 1 << 16) -> int:
    """How many bytes of `path` end at its last newline: all of them unless a torn last line follows."""
    try:
        with open(path, "rb") as f:
            end = size
            while end > 0:
                start = max(0, end - chunk)
                f.seek(start)
                data = f.read(end - start)
                at = data.rfind(b"\n")
                if at >= 0:
                    return start + at + 1
                end = start
    except OSError:
        return size
    return 0


def _rebuild(session_dir: Path, sid: str) -> Callable[[], None]:
    def fix() -> None:
        meta = rebuild_meta(session_dir, sid, created_ms_of(sid), None)
        target = session_dir / META_NAME
        if target.is_dir() and not target.is_symlink():
            raise OSError(0, "meta.json is a directory; move it away first")
        write_meta(session_dir, meta)
    return fix


def _differences(a: dict, b: dict) -> list[str]:
    return [k for k in a if k != "messages_bytes" and a.get(k) != b.get(k)]


def _unfinished(staged: Path) -> str:
    """What left a staged transcript: an import (its session_start names the source) or a resume's copy."""
    from evo_agent.session import first_records

    try:
        start = next(iter(first_records(staged, 1)), {})
    except (OSError, ValueError):
        start = {}
    if isinstance(start, dict) and start.get("imported_from"):
        return "an import that ended before it was complete"
    return "a resume that ended while copying its history"


def check_meta(sid: str, session_dir: Path, live: bool) -> list[Finding]:
    transcript = session_dir / MESSAGES_NAME
    fix = _rebuild(session_dir, sid)
    meta_path = session_dir / META_NAME
    st = _lstat(meta_path)
    if st is None:
        return [Finding(sid, META_NAME, "meta_missing", "missing; listing rebuilds it from the transcript each time",
                        fix=fix)]
    findings = [] if not stat.S_ISREG(st.st_mode) else _mode_finding(sid, META_NAME, meta_path, FILE_MODE, st)
    cached = read_meta(session_dir, sid)
    if cached is None:
        return findings + [Finding(sid, META_NAME, "meta_unreadable",
                                   "unreadable or not a meta for this session; listing rebuilds it each time", fix=fix)]
    size = transcript.stat().st_size
    if cached.messages_bytes not in (size, complete_bytes(transcript, size)):  # a torn tail is never described
        if live:
            return findings  # its writer refreshes it at the end of every turn
        return findings + [Finding(sid, META_NAME, "meta_stale",
                                   f"stale: describes {cached.messages_bytes:,} of the transcript's {size:,} bytes",
                                   fix=fix)]
    fresh = rebuild_meta(session_dir, sid, created_ms_of(sid), None).to_json()
    wrong = _differences(fresh, cached.to_json())
    if wrong:
        shown = ", ".join(f"{k} {cached.to_json().get(k)!r} (transcript: {fresh.get(k)!r})" for k in wrong[:3])
        findings.append(Finding(sid, META_NAME, "meta_wrong", f"disagrees with the transcript: {shown}", fix=fix))
    return findings


def check_sidechains(sid: str, session_dir: Path, records: list[dict]) -> list[Finding]:
    findings: list[Finding] = []
    named: dict[str, int] = {}
    for record in records:
        if record.get("type") not in ("subagent_start", "subagent_end"):
            continue
        path = record.get("subagent_path")
        if not is_sidechain_path(path):
            findings.append(Finding(sid, MESSAGES_NAME, "bad_marker_path",
                                    f"a {record['type']} names {str(path)[:80]!r}, which is not a sidechain file name"))
            continue
        named[path] = named.get(path, 0) + 1
    sub_dir = session_dir / SUBAGENT_DIR
    st = _lstat(sub_dir)
    present: set[str] = set()
    if st is not None:
        if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
            findings.append(Finding(sid, SUBAGENT_DIR, "not_a_directory",
                                    "is not a directory (or a symbolic link); not followed"))
        else:
            findings += _mode_finding(sid, SUBAGENT_DIR, sub_dir, DIR_MODE, st)
            for name in sorted(os.listdir(sub_dir)):
                rel = f"{SUBAGENT_DIR}/{name}"
                path = sub_dir / name
                fst = _lstat(path)
                if fst is None:
                    continue
                if not is_sidechain_path(rel) or not stat.S_ISREG(fst.st_mode):
                    findings.append(Finding(sid, rel, "unexpected_file",
                                            "not a sidechain transcript (unexpected name, or not a regular file)"))
                    continue
                present.add(rel)
                findings += _mode_finding(sid, rel, path, FILE_MODE, fst)
                findings += check_lines(sid, rel, path)[0]
    for rel in sorted(present - set(named)):
        findings.append(Finding(sid, rel, "sidechain_without_marker",
                                "no subagent_start or subagent_end in the transcript names this sidechain"))
    for rel in sorted(set(named) - present):
        findings.append(Finding(sid, rel, "marker_without_sidechain",
                                "named by a marker in the transcript, but the file is missing"))
    return findings


def check_foreign(sid: str, session_dir: Path, st: os.stat_result, tst: os.stat_result | None,
                  tracked: frozenset[str]) -> list[Finding]:
    """A finding when the session was recorded elsewhere (and it is then remembered as foreign)."""
    cached = read_meta(session_dir, sid)
    reason = foreign_reason(st, tst if tst is not None and stat.S_ISREG(tst.st_mode) else None,
                            tracked=sid in tracked, created_ms=created_ms_of(sid),
                            updated_ms=cached.updated_ms if cached else None)
    if not reason:
        return []
    _foreign_sessions.add(sid)
    return [Finding(sid, ".", "foreign", f"recorded elsewhere: {reason}; never continued by -c, resuming asks first",
                    no_fix_reason=f"take it on deliberately with: evo-agent sessions adopt {sid}")]


def check_session(store: SessionStore, sid: str, tracked: frozenset[str] = frozenset()) -> list[Finding]:
    session_dir = store.sessions_dir / sid
    st = _lstat(session_dir)
    if st is None:
        return [Finding(sid, ".", "missing", "vanished while being checked")]
    if stat.S_ISLNK(st.st_mode):
        return [Finding(sid, ".", "symlink", "is a symbolic link; not followed")]
    if not stat.S_ISDIR(st.st_mode):
        return [Finding(sid, ".", "not_a_directory", "is not a directory")]
    transcript = session_dir / MESSAGES_NAME
    tst = _lstat(transcript)
    findings = check_foreign(sid, session_dir, st, tst, tracked)
    findings += _mode_finding(sid, ".", session_dir, DIR_MODE, st)
    live = probe_live(session_dir).live
    if tst is None or not stat.S_ISREG(tst.st_mode):
        if tst is None and (session_dir / STAGING_NAME).exists() and not live:
            what = _unfinished(session_dir / STAGING_NAME)
            findings.append(Finding(sid, STAGING_NAME, "unfinished_resume",
                                    f"{what} (its source is untouched); "
                                    "it is never listed or continued (sessions rm deletes it)"))
            return findings
        what = "missing" if tst is None else "not a regular file"
        findings.append(Finding(sid, MESSAGES_NAME, "no_transcript",
                                f"{what}: this session cannot be shown or resumed (sessions rm deletes it)"))
        return findings + check_sidechains(sid, session_dir, [])
    findings += _mode_finding(sid, MESSAGES_NAME, transcript, FILE_MODE, tst)
    line_findings, records = check_lines(sid, MESSAGES_NAME, transcript)
    findings += line_findings
    if not any(f.kind == "unreadable_file" for f in line_findings):
        findings += check_meta(sid, session_dir, live)
    findings += check_sidechains(sid, session_dir, records)
    for name in sorted(os.listdir(session_dir)):
        path = session_dir / name
        if name.startswith(".meta.") and name.endswith(".tmp") and not live:
            findings.append(Finding(sid, name, "leftover", "left by an interrupted meta.json write",
                                    fix=partial(os.unlink, path)))
        elif name == LOCK_NAME:
            lst = _lstat(path)
            if lst is not None and stat.S_ISREG(lst.st_mode):
                findings += _mode_finding(sid, name, path, FILE_MODE, lst)
    return findings


def check_sessions_dir(store: SessionStore) -> list[Finding]:
    root = store.sessions_dir
    try:
        st = os.stat(root)
    except OSError:
        return []
    findings = _mode_finding(None, str(root), root, DIR_MODE, st)
    ignore = root / GITIGNORE_NAME
    problem = gitignore_problem(ignore)
    if problem:
        findings.append(Finding(None, str(ignore), "gitignore",
                                f"{problem}: transcripts could be committed to git by accident",
                                fix=lambda: restore_gitignore(root)))
    try:
        strange = unexpected_entries(os.listdir(root))
    except OSError:
        strange = []
    if strange:
        aside = root.parent / f"unexpected-{int(time.time() * 1000)}"
        findings += [Finding(None, str(root / name), "unexpected",
                             "not a session (a repository may have planted it); sessions are not used until it is "
                             f"gone: --repair moves it to {aside}", fix=partial(_move_aside, root, name, aside))
                     for name in strange]
    return findings


def _move_aside(root: Path, name: str, aside: Path) -> None:
    """Move something that is not a session out of the sessions directory (never deleted: it may be someone's)."""
    aside.mkdir(mode=DIR_MODE, exist_ok=True)
    os.rename(root / name, aside / name)


def fsck(store: SessionStore, session_ids: list[str], *, repair: bool, whole: bool = True) -> list[Finding]:
    """Check `session_ids`, and the sessions directory itself when `whole` (every session is being checked)."""
    findings = check_sessions_dir(store) if whole else []
    tracked = store.tracked_ids() if session_ids else frozenset()
    _foreign_sessions.clear()
    for sid in session_ids:
        try:
            findings += check_session(store, sid, tracked)
        except OSError as exc:  # it changed under us (deleted, permissions): report it, check the rest
            findings.append(Finding(sid, ".", "unreadable", f"cannot be checked: {exc.strerror or exc}"))
    if repair:
        for finding in findings:
            if finding.note:
                continue  # nothing to repair
            if finding.fix is None:
                finding.repair_error = finding.no_fix_reason or "fsck does not repair this"
                continue
            try:
                finding.fix()
                finding.repaired = True
            except OSError as exc:
                finding.repair_error = exc.strerror or str(exc)
    return findings


def all_session_ids(store: SessionStore) -> list[str]:
    try:
        return sorted(e.name for e in os.scandir(store.sessions_dir) if is_session_id(e.name))
    except OSError:
        return []


def report(findings: list[Finding], checked: int, out: TextIO, *, as_json: bool) -> int:
    """Print the findings; the exit status is 1 while a problem (not a note) is still unrepaired."""
    notes = [f for f in findings if f.note]
    problems = [f for f in findings if not f.note]
    left = [f for f in problems if not f.repaired]
    repaired = len(problems) - len(left)
    if as_json:
        out.write(json_safe_dumps({"checked": checked, "problems": [f.to_json() for f in problems],
                                   "notes": [f.to_json() for f in notes], "unrepaired": len(left)},
                                  indent=2) + "\n")
        return 1 if left else 0
    for finding in problems + notes:
        out.write(finding.line() + "\n")
    summary = f"checked {plural(checked, 'session')}: "
    if not problems:
        summary += "no problems"
    else:
        summary += plural(len(problems), "problem")
        if repaired:
            summary += f", {repaired:,} repaired"
        fixable = sum(1 for f in left if f.fix is not None and not f.repair_error)
        if fixable:
            summary += f" ({fixable:,} can be repaired with --repair)"
    if notes:
        summary += f"; {plural(len(notes), 'harmless note')}"
    out.write(summary + "\n")
    return 1 if left else 0
