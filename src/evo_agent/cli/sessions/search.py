"""`evo-agent sessions search TEXT`: find sessions by what was said in them (issue #19)."""

from __future__ import annotations

import json
from typing import TextIO

from evo_agent.safe_text import terminal_safe
from evo_agent.session import MESSAGES_NAME, SessionStore, search_sessions

from ..errors import UsageError
from .common import fmt_stamp
from .listing import foreign_mark


def sessions_search(store: SessionStore, needle: str, out: TextIO, *, regex: bool = False, as_json: bool = False,
                    limit: int = 20) -> int:
    """Hits newest session first, one line each; exit 1 when nothing matched (like grep)."""
    rows = store.list()
    ids = {row.id for row in rows}
    titles = {row.id: (getattr(row.meta, "name", None) or row.meta.first_prompt or "") for row in rows}
    foreign = {row.id: row for row in rows if row.foreign}  # marked as `sessions list` marks them: not the user's
    sessions = [(row.id, row.dir, row.meta.resumed_from) for row in rows]
    try:
        hits = list(search_sessions(sessions, needle, regex=regex, limit=limit, exists=ids.__contains__))
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if as_json:
        out.write(json.dumps([{
            "session_id": h.session_id, "file": h.file, "line": h.line, "timestamp": h.timestamp,
            "kind": h.kind, "snippet": h.snippet, "title": titles.get(h.session_id, ""),
            "foreign": foreign[h.session_id].foreign if h.session_id in foreign else None,
        } for h in hits], ensure_ascii=True, indent=2) + "\n")
        return 0 if hits else 1
    if not hits:
        out.write(f"No session mentions {terminal_safe(needle, keep_newlines=False)!s}\n")
        return 1
    current = None
    for hit in hits:
        if hit.session_id != current:
            current = hit.session_id
            title = " ".join(titles.get(current, "").split())[:60]
            mark = foreign_mark(foreign[current]) if current in foreign else ""
            out.write(f"{current}  {mark}{terminal_safe(title, keep_newlines=False)}\n")
        where = "" if hit.file == MESSAGES_NAME else f" [subagent {terminal_safe(hit.file.split('/', 1)[-1])}]"
        out.write(f"  {fmt_stamp(hit.timestamp, date=True)}  {hit.kind}{where}: "
                  f"{terminal_safe(hit.snippet, keep_newlines=False)}\n")
    if len(hits) >= limit:
        out.write(f"(stopped at {limit} hits; --limit N for more)\n")
    return 0
