"""`sessions show --json` and `sessions export`: a session as data, Markdown, HTML or one JSONL stream."""

from __future__ import annotations

from pathlib import Path

from evo_agent.session import MESSAGES_NAME, SessionInfo, SessionStore, encode_line, iter_transcript

from ..errors import CommandError
from ..trust import json_safe_dumps
from .listing import row_json
from .model import SessionView, SubagentRun, load_session

_SUFFIXES = {".md": "md", ".markdown": "md", ".html": "html", ".htm": "html", ".jsonl": "jsonl"}


def load_view(store: SessionStore, session_id: str) -> SessionView:
    try:
        return load_session(store, session_id)
    except OSError as exc:
        raise CommandError(f"cannot read session {session_id}: {exc.strerror or exc}") from None


def choose_format(fmt: str | None, output: str | None) -> str:
    """--format, else the output file's suffix (.html/.htm, .jsonl, .md/.markdown), else Markdown (`notes.txt` too)."""
    if fmt:
        return fmt
    if output and output != "-":
        return _SUFFIXES.get(Path(output).suffix.lower(), "md")
    return "md"


FORMAT_NAMES = {"md": "Markdown", "html": "HTML", "jsonl": "JSONL"}


def _all_runs(view: SessionView) -> list[SubagentRun]:
    return view.transcript.runs() + view.unlinked


def show_json(view: SessionView) -> str:
    """The records, as data: the main transcript's, each sidechain's, and what could not be read."""
    info = view.meta
    doc = {
        "id": view.id,
        "dir": str(view.dir),
        "meta": row_json_of(view) if info else None,
        "live": view.live,
        "resumed_from": view.lineage,
        "resumed_as": view.resumed_as,
        "records": view.transcript.records,
        "sidechains": {run.path: run.transcript.records for run in _all_runs(view) if run.transcript is not None},
        "unreadable_lines": [
            {"file": s.file, "line": s.line, "bytes": s.size, "torn": s.torn}
            for s in view.transcript.skipped
            + [g for r in _all_runs(view) if r.transcript for g in r.transcript.skipped]
        ],
    }
    return json_safe_dumps(doc, indent=2, default=str) + "\n"


def row_json_of(view: SessionView) -> dict:
    assert view.meta is not None
    return row_json(SessionInfo(view.meta, str(view.dir)))


def export_jsonl(view: SessionView) -> bytes:
    """The whole session as one stream of records.

    The main transcript's lines come byte for byte; each sidechain's records
    follow right after the `subagent_start` that names it, with a
    `"sidechain": "subagent/<file>"` field added (a child's records carry the
    parent's session_id, so without it they could not be told apart).
    Sidechains no marker names come last. Unreadable lines are left out;
    `show` and `fsck` name them.
    """
    out: list[bytes] = []
    emitted: set[str] = set()
    by_path = {run.path: run for run in _all_runs(view)}

    def sidechain(path: str) -> None:
        run = by_path.get(path)
        if run is None or run.transcript is None or path in emitted:
            return
        emitted.add(path)
        for record in run.transcript.records:
            out.append(encode_line({**record, "sidechain": path}))

    for line in iter_transcript(view.dir / MESSAGES_NAME):
        if line.record is None:
            continue
        out.append(line.raw + b"\n")
        if line.record.get("type") == "subagent_start" and isinstance(line.record.get("subagent_path"), str):
            sidechain(line.record["subagent_path"])
    for run in _all_runs(view):
        sidechain(run.path)
    return b"".join(out)
