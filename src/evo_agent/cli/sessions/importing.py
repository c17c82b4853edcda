"""`evo-agent sessions import claude-code|codex [SOURCE…] [--all] [--dry-run]` (issue #20)."""

from __future__ import annotations

import re
import sys
from datetime import datetime
from itertools import islice
from pathlib import Path
from typing import TextIO

from evo_agent.importers import claude_code, codex, earlier_imports, source_fingerprint, write_import
from evo_agent.importers.model import ImportedSession, ImportNotWritten, Message, consume
from evo_agent.safe_text import terminal_line
from evo_agent.session import SessionStore, text_of

from ..errors import CommandError

AGENTS = {  # agent -> (its sessions of a project, read one, its session id, what the user calls it)
    "claude-code": (claude_code.find_sources, claude_code.read_claude_code, claude_code.source_id_of, "Claude Code"),
    "codex": (codex.find_sources, codex.read_codex, codex.source_id_of, "Codex"),
}


_SINGULAR = {"API error notices": "API error notice", "encrypted reasoning items": "encrypted reasoning item",
             "messages of rewound branches": "message of a rewound branch", "subagent messages": "subagent message",
             "subagent messages without their Task call": "subagent message without its Task call",
             "encrypted parts of agents' messages": "encrypted part of an agent's message",
             "encrypted compactions (the conversation before them kept whole)":
                 "encrypted compaction (the conversation before it kept whole)",
             "forked-from rollouts not found (their turns before the fork)":
                 "forked-from rollout not found (its turns before the fork)",
             "tool calls Claude Code dropped unanswered": "tool call Claude Code dropped unanswered",
             "lines written twice": "line written twice",
             "subagents whose call has no result": "subagent whose call has no result"}


# Codex wraps an attached image in `<image name=[Image #1] path="…">` … `</image>` texts, Claude Code a paste in
# `<pasted_content id="…">` … `</pasted_content>`: not the prompt's words.
_WRAPPER_TAG = re.compile(r"</?(?:image|pasted_content)(?: [^>]*)?>")


def _first_prompt(imported: ImportedSession) -> str:
    for event in islice(imported.events, 50):
        if isinstance(event, Message) and event.message["role"] == "user":
            text = " ".join(_WRAPPER_TAG.sub(" ", text_of(event.message, " ")).split())
            if text:
                return text[:60]
    return ""


def _source(text: str, known: list[Path], agent: str) -> Path:
    _, _, source_id_of, label = AGENTS[agent]
    path = Path(text).expanduser()
    if path.is_file():
        return path
    matches = [p for p in known if p.stem.startswith(text) or source_id_of(p).startswith(text)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise CommandError(f"{text!r} matches {len(matches)} {label} sessions; give more of the id")
    raise CommandError(f"no {label} transcript {text!r} (a path, or a session id of this project)")


def sessions_import(store: SessionStore, agent: str, sources: list[str], *, import_all: bool, dry_run: bool,
                    out: TextIO) -> int:
    find_sources, read, source_id_of, label = AGENTS[agent]
    known = find_sources(store.project_dir)
    if not sources and not import_all:
        if not known:
            out.write(f"No {label} sessions recorded in {terminal_line(store.project_dir)} "
                      "or below it\n")
            return 0
        for path in known:
            done = earlier_imports(store, agent, source_id_of(path))
            when = datetime.fromtimestamp(path.stat().st_mtime).strftime("%Y-%m-%d %H:%M")
            mark = f"imported as {done[-1][0]}" if done else "not imported"
            stem = terminal_line(path.stem)
            out.write(f"{stem}  {when}  {path.stat().st_size:>9,} bytes  {mark:<34}  "
                      f"{terminal_line(_first_prompt(read(path)))}\n")
        out.write(f"Import with: evo-agent sessions import {agent} ID… (or --all)\n")
        return 0
    paths = known if import_all else [_source(s, known, agent) for s in sources]
    failed = 0
    for path in paths:
        shown = terminal_line(path)  # a downloaded file's name is anyone's text
        fingerprint = source_fingerprint(path)
        try:
            imported = read(path)
        except OSError as exc:
            raise CommandError(f"cannot read {path}: {exc.strerror or exc}") from None
        except ImportNotWritten as exc:
            raise CommandError(f"cannot import {shown}: {exc}") from None
        earlier = earlier_imports(store, agent, imported.source_id)
        same = [sid for sid, origin in earlier if origin.get("sha256") == fingerprint["sha256"]]
        if same:
            out.write(f"{shown} was already imported as {same[-1]} (unchanged since)\n")
            continue
        try:
            if dry_run:
                consume(imported)
                new_id: str | None = "(dry run)" if imported.totals else None
            else:
                new_id = write_import(store, imported, fingerprint, earlier[-1][0] if earlier else None)
        except OSError as exc:
            raise CommandError(f"cannot read {path}: {exc.strerror or exc}") from None
        except ImportNotWritten as exc:
            raise CommandError(f"cannot import {shown}: {exc}") from None
        if new_id is None:
            unread = sum(imported.skipped.values())
            problem = f"nothing to import from {shown}: no {label} conversation in it ({unread} lines not understood)"
            if len(paths) == 1:
                raise CommandError(problem)
            sys.stderr.write(f"evo-agent: {terminal_line(problem)}\n")  # the others go on
            failed += 1
            continue
        messages, subagents, compactions = imported.counts()
        skipped = sum(imported.skipped.values())
        note = f"; it grew since {earlier[-1][0]}" if earlier else ""
        out.write(f"{shown} → {new_id} ({messages} messages, {subagents} subagents, {compactions} compactions, "
                  f"{skipped} lines skipped{note})\n")
        if imported.left_out:
            kinds = ", ".join(f"{n} {_SINGULAR.get(kind, kind) if n == 1 else kind}"
                              for kind, n in imported.left_out.most_common())
            out.write(f"  left out: {kinds}\n")
        if imported.skipped:
            kinds = ", ".join(f"{n} {kind}" for kind, n in imported.skipped.most_common())
            out.write(f"  not understood: {terminal_line(kinds)}\n")
    return 1 if failed else 0
