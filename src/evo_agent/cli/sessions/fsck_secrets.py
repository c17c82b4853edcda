"""`evo-agent sessions fsck --secrets [ID]`: the secrets today's rules find in transcripts written before.

Redaction masks at write time with the rules of the version that wrote the
record; a transcript written by an older version, or with EVO_AGENT_REDACT=0,
may hold credentials the current rules know. This reports them per file, by
kind and count, never the value, so the user knows what to rotate or delete.
Transcripts are never rewritten, and the exit status stays about integrity
(the ordinary fsck's): finding secrets is information, not damage.
"""

from __future__ import annotations

import io
import json
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from evo_agent.safe_text import terminal_line
from evo_agent.session import MESSAGES_NAME, SUBAGENT_DIR, SessionStore, is_sidechain_path, iter_transcript
from evo_agent.session.admin import count_secrets, may_hold_secret

from .common import plural


@dataclass
class SecretsFound:
    session: str
    path: str  # relative to the session directory
    kinds: Counter

    def to_json(self) -> dict:
        return {"session": self.session, "path": self.path, "secrets": sum(self.kinds.values()),
                "kinds": dict(sorted(self.kinds.items()))}

    def line(self) -> str:
        ordered = sorted(self.kinds.items(), key=lambda kv: (-kv[1], kv[0]))  # most frequent first
        kinds = ", ".join(f"{kind} {count:,}" for kind, count in ordered)
        return terminal_line(f"{self.session}  {self.path}: {plural(sum(self.kinds.values()), 'secret')} ({kinds})")


def scan_file(path: Path) -> Counter:
    """{kind: count} over the readable records of one transcript (lines that do not parse are fsck's business)."""
    found: Counter = Counter()
    try:
        for line in iter_transcript(path):
            if line.record is not None and may_hold_secret(line.raw):
                found += count_secrets(line.record)
    except OSError:
        pass  # reported by the integrity check
    return found


def _transcripts(session_dir: Path) -> list[tuple[str, Path]]:
    out = [(MESSAGES_NAME, session_dir / MESSAGES_NAME)] if (session_dir / MESSAGES_NAME).is_file() else []
    sub = session_dir / SUBAGENT_DIR
    if sub.is_dir() and not sub.is_symlink():
        for name in sorted(os.listdir(sub)):
            rel = f"{SUBAGENT_DIR}/{name}"
            if is_sidechain_path(rel) and (sub / name).is_file() and not (sub / name).is_symlink():
                out.append((rel, sub / name))
    return out


def scan_sessions(store: SessionStore, session_ids: list[str]) -> list[SecretsFound]:
    findings: list[SecretsFound] = []
    for sid in session_ids:
        session_dir = store.sessions_dir / sid
        if session_dir.is_symlink() or not session_dir.is_dir():
            continue
        for rel, path in _transcripts(session_dir):
            kinds = scan_file(path)
            if kinds:
                findings.append(SecretsFound(sid, rel, kinds))
    return findings


def report_secrets(findings: list[SecretsFound], checked: int, out: TextIO) -> None:
    if findings:
        out.write("Secrets in transcripts (by today's rules; never rewritten: rotate these credentials, "
                  "or delete the session with `evo-agent sessions rm ID`):\n")
    for finding in findings:
        out.write(finding.line() + "\n")
    sessions = len({f.session for f in findings})
    total = sum(sum(f.kinds.values()) for f in findings)
    out.write(f"scanned {plural(checked, 'session')} for secrets: "
              + (f"{plural(total, 'secret')} in {plural(sessions, 'session')}\n" if findings else "none found\n"))


def merge_json(integrity_json: str, findings: list[SecretsFound]) -> str:
    """The ordinary `fsck --json` document with a "secrets" list added."""
    doc = json.loads(integrity_json)
    doc["secrets"] = [f.to_json() for f in findings]
    return json.dumps(doc, ensure_ascii=False, indent=2) + "\n"


def fsck_with_secrets(store: SessionStore, ids: list[str], repair: bool, as_json: bool, out: TextIO,
                      whole: bool = True) -> int:
    """The ordinary fsck, then the secrets; its exit status is the ordinary one."""
    from .fsck import fsck, report

    problems = fsck(store, ids, repair=repair, whole=whole)
    findings = scan_sessions(store, ids)
    if as_json:
        buffer = io.StringIO()
        status = report(problems, len(ids), buffer, as_json=True)
        out.write(merge_json(buffer.getvalue(), findings))
        return status
    status = report(problems, len(ids), out, as_json=False)
    report_secrets(findings, len(ids), out)
    return status


__all__ = ["SecretsFound", "fsck_with_secrets", "merge_json", "report_secrets", "scan_file", "scan_sessions"]
