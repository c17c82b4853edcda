"""`evo-agent sessions import claude-code [SOURCE…] [--all] [--dry-run]` (issue #20)."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import TextIO

from evo_agent.importers.claude_code import source_id_of
from evo_agent.importers import (earlier_imports, find_claude_code_sources, read_claude_code, source_fingerprint,
                                 write_import)
from evo_agent.safe_text import terminal_safe
from evo_agent.session import SessionStore

from ..errors import CommandError


def _first_prompt(path: Path) -> str:
    try:
        with open(path, "rb") as f:
            for raw in f:
                try:
                    record = json.loads(raw)
                except ValueError:
                    continue
                message = record.get("message") if isinstance(record, dict) else None
                if record.get("type") == "user" and not record.get("isMeta") and isinstance(message, dict):
                    content = message.get("content")
                    if isinstance(content, str) and not content.lstrip().startswith("<"):
                        return " ".join(content.split())[:60]
    except OSError:
        pass
    return ""


def _source(text: str, known: list[Path]) -> Path:
    path = Path(text).expanduser()
    if path.is_file():
        return path
    matches = [p for p in known if p.stem.startswith(text) or source_id_of(p).startswith(text)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise CommandError(f"{text!r} matches {len(matches)} Claude Code sessions; give more of the id")
    raise CommandError(f"no Claude Code transcript {text!r} (a path, or a session id of this project)")


def sessions_import(store: SessionStore, agent: str, sources: list[str], *, import_all: bool, dry_run: bool,
                    out: TextIO) -> int:
    if agent != "claude-code":
        raise CommandError(f"importing from {agent} is not supported yet (claude-code is)")
    known = find_claude_code_sources(store.project_dir)
    if not sources and not import_all:
        if not known:
            out.write(f"No Claude Code sessions recorded in {store.project_dir} or below it\n")
            return 0
        for path in known:
            done = earlier_imports(store, "claude-code", source_id_of(path))
            when = datetime.fromtimestamp(path.stat().st_mtime).strftime("%Y-%m-%d %H:%M")
            mark = f"imported as {done[-1][0]}" if done else "not imported"
            out.write(f"{path.stem}  {when}  {path.stat().st_size:>9,} bytes  {mark:<34}  "
                      f"{terminal_safe(_first_prompt(path), keep_newlines=False)}\n")
        out.write("Import with: evo-agent sessions import claude-code ID… (or --all)\n")
        return 0
    paths = known if import_all else [_source(s, known) for s in sources]
    for path in paths:
        fingerprint = source_fingerprint(path)
        imported = read_claude_code(path)
        earlier = earlier_imports(store, "claude-code", imported.source_id)
        same = [sid for sid, origin in earlier if origin.get("sha256") == fingerprint["sha256"]]
        if same:
            out.write(f"{path} was already imported as {same[-1]} (unchanged since)\n")
            continue
        messages, subagents, compactions = imported.counts()
        skipped = sum(imported.skipped.values())
        new_id = "(dry run)" if dry_run else write_import(store, imported, fingerprint,
                                                           earlier[-1][0] if earlier else None)
        note = f"; it grew since {earlier[-1][0]}" if earlier else ""
        out.write(f"{path} → {new_id} ({messages} messages, {subagents} subagents, {compactions} compactions, "
                  f"{skipped} lines skipped{note})\n")
        if imported.skipped:
            kinds = ", ".join(f"{n} {kind}" for kind, n in imported.skipped.most_common())
            out.write(f"  not understood: {terminal_safe(kinds, keep_newlines=False)}\n")
    return 0
