"""What an importer produces, and how it becomes an evo-agent session (issue #20).

An importer reads another agent's transcript (read only, streaming) and yields `Event`s in
conversation order: messages in the Anthropic MessageParam shape, compactions, and subagent runs.
`write_import` records them as evo-agent would have recorded them live — user/assistant records,
`compact_boundary` before the kept messages, `subagent_start`/`subagent_end` around a sidechain
file — keeping the source's timestamps, and `session_start` names the source (`imported_from`).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Any

from evo_agent.session import MESSAGES_NAME, SessionStore, first_records, seal_summary


@dataclass
class Message:
    message: dict[str, Any]                  # {"role": ..., "content": ...}
    timestamp: str | None = None
    tokens: dict[str, Any] = field(default_factory=dict)   # input_tokens, output_tokens, cache_* (assistant only)


@dataclass
class Compaction:
    summary: str
    trigger: str                   # manual | auto
    timestamp: str | None = None


@dataclass
class Subagent:
    tool_use_id: str
    agent_name: str
    messages: list[Message]
    result: str
    timestamp: str | None = None


Event = Message | Compaction | Subagent


@dataclass
class ImportedSession:
    agent: str                     # "claude-code" | "codex"
    source_path: Path
    source_id: str
    version: str | None = None
    cwd: str | None = None
    git_branch: str | None = None
    model: str | None = None
    # The conversation in order. Readers make it a generator that streams the source, so a 1 GB
    # transcript imports in bounded memory; it can be consumed once (by write_import or consume).
    events: Iterable[Event] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)   # record type -> how many were not understood
    # Understood but deliberately not carried over: messages of rewound branches, API error notices.
    left_out: Counter[str] = field(default_factory=Counter)
    totals: Counter[str] = field(default_factory=Counter)    # messages, subagents, compactions: filled while consumed

    def counts(self) -> tuple[int, int, int]:
        """(messages, subagents, compactions) seen so far (all of them once the events were consumed)."""
        return self.totals["messages"], self.totals["subagents"], self.totals["compactions"]

    def not_understood(self, kind: object) -> None:
        """Count a record not understood; a hostile file's endless or huge type names stay a short list."""
        name = str(kind)[:40]
        if name in self.skipped or len(self.skipped) < 20:
            self.skipped[name] += 1
        else:
            self.skipped["other kinds"] += 1

    def tally(self, event: Event) -> Event:
        kind = "messages" if isinstance(event, Message) else "compactions" if isinstance(event, Compaction) \
            else "subagents"
        self.totals[kind] += 1
        return event


MAX_LINE = 64 << 20   # a longer line (no real record is) is skipped unread, so memory stays bounded
MAX_DEPTH = 64        # JSON nested deeper is skipped: the session's encoder refuses depth past 254


def read_lines(path: Path, skipped: Counter[str], look: int | None = None) -> Iterator[dict[str, Any]]:
    """The JSON objects of a JSONL file, one per line, streamed. What is not one is counted, never raised:
    torn or binary lines, lines past MAX_LINE (read in chunks and dropped), nesting past what Python parses."""
    with open(path, "rb") as f:
        while look is None or (look := look - 1) >= 0:
            raw = f.readline(MAX_LINE + 1)
            if not raw:
                return
            if len(raw) > MAX_LINE and not raw.endswith(b"\n"):
                while (rest := f.readline(1 << 20)) and not rest.endswith(b"\n"):
                    pass
                skipped["line too long"] += 1
                continue
            if not raw.strip():
                continue
            record = _parsed(raw)
            if isinstance(record, dict):
                yield record
            else:
                skipped["unreadable line"] += 1


def _parsed(raw: bytes) -> object:
    """The JSON value of one line (None when it is not JSON). Bytes that are not UTF-8 (a damaged disk, a hand
    edit) cost only themselves, read as U+FFFD as Claude Code (Node) reads them: the line, often the user's
    prompt, is kept."""
    try:
        return json.loads(raw)
    except UnicodeDecodeError:
        try:
            return json.loads(raw.decode("utf-8", "replace"))
        except (ValueError, RecursionError):
            return None
    except (ValueError, RecursionError):
        return None


def head_records(path: Path, look: int) -> list[dict[str, Any]]:
    """The JSON objects among a file's first `look` lines (none when it cannot be read): for a listing."""
    out: list[dict[str, Any]] = []
    try:
        lines = read_lines(path, Counter(), look)
        out.extend(lines)
    except OSError:
        pass
    return out


def recorded_within(cwd: object, project_dir: Path) -> bool:
    """Whether a transcript's recorded `cwd` is the project or a directory below it (never a sibling whose
    name merely begins with the project's)."""
    project = str(project_dir)
    return isinstance(cwd, str) and (cwd == project or cwd.startswith(project.rstrip("/") + "/"))


def too_deep(value: object, limit: int = MAX_DEPTH) -> bool:
    """Whether `value` nests more than `limit` levels (stops early; values kept as-is are small)."""
    if limit <= 0:
        return True
    if isinstance(value, dict):
        return any(too_deep(v, limit - 1) for v in value.values())
    if isinstance(value, list):
        return any(too_deep(v, limit - 1) for v in value)
    return False


def stamp_of(record: dict[str, Any]) -> str | None:
    """A record's timestamp when it is a string (a hostile file may put anything there)."""
    value = record.get("timestamp")
    return value if isinstance(value, str) and len(value) < 64 else None


def _not_ahead(stamp: str | None, now_ms: int) -> dict[str, Any]:
    """`{"timestamp": stamp}`, or {} (the record is stamped when written) for a stamp later than `now_ms`: a
    transcript written on a machine whose clock was ahead would make the new session "dated in the future",
    which evo-agent takes for someone else's and never resumes. A stamp it cannot read is kept as it is."""
    if stamp is None:
        return {}
    from datetime import datetime

    try:  # read as the session's own meta reads it (a stamp without a zone is local time)
        ahead = datetime.fromisoformat(stamp).timestamp() * 1000 > now_ms
    except (ValueError, OverflowError, OSError):
        return {"timestamp": stamp}
    return {} if ahead else {"timestamp": stamp}


def consume(imported: ImportedSession) -> None:
    """Read every event without writing anything (--dry-run): fills `totals` and `skipped`."""
    for event in imported.events:
        imported.tally(event)


def source_fingerprint(path: Path) -> dict[str, Any]:
    """Size and hash of a source file: an unchanged source names its earlier import instead of duplicating."""
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
            size += len(chunk)
    return {"size": size, "sha256": digest.hexdigest()}


def earlier_imports(store: SessionStore, agent: str, source_id: str) -> list[tuple[str, dict[str, Any]]]:
    """(evo-agent id, imported_from) of every earlier import of this source, oldest first."""
    found = []
    for row in sorted(store.list(include_empty=True), key=lambda r: r.id):
        records = first_records(os.path.join(row.dir, MESSAGES_NAME), 1)
        origin = records[0].get("imported_from") if records else None
        if isinstance(origin, dict) and origin.get("agent") == agent and origin.get("source_id") == source_id:
            found.append((row.id, origin))
    return found


class ImportNotWritten(Exception):
    """The imported session could not be written whole (one printable line); nothing of it is left."""


def write_import(
    store: SessionStore, imported: ImportedSession, fingerprint: dict[str, Any], previous: str | None
) -> str | None:
    """Record `imported` as a new session of `store`; returns its id. The source is never written.

    None, and nothing created, when the source holds no conversation (not this agent's transcript).
    ImportNotWritten when a write failed: the staged session is removed, not published cut short."""
    events = iter(imported.events)
    first = next(events, None)
    if first is None:
        return None
    origin = {"agent": imported.agent, "version": imported.version, "source_path": str(imported.source_path),
              "source_id": imported.source_id, **fingerprint}
    if previous:
        origin["previous_import"] = previous
    recorder = store.create(model=imported.model, provider=imported.agent, staged=True,
                            git_branch=imported.git_branch, start_fields={"imported_from": origin})
    compactions = 0
    now_ms = int(time.time() * 1000)
    for event in chain((first,), events):
        imported.tally(event)
        stamp = _not_ahead(event.timestamp, now_ms)
        if isinstance(event, Message):
            if event.message["role"] == "assistant":
                recorder.assistant(event.message, **event.tokens, **stamp)
            else:
                recorder.user(event.message, **stamp)
        elif isinstance(event, Compaction):
            compactions += 1
            # The other tool's summary is its model's text, written while it read what others wrote: sealed as ours.
            recorder.compact_boundary(seal_summary(event.summary), compactions, event.trigger, **stamp)
        else:
            side = recorder.start_subagent(event.agent_name, event.tool_use_id, model=imported.model,
                                           provider=imported.agent)
            for message in event.messages:
                side_stamp = _not_ahead(message.timestamp, now_ms)
                if message.message["role"] == "assistant":
                    side.assistant(message.message, **message.tokens, **side_stamp)
                else:
                    side.user(message.message, **side_stamp)
            recorder.end_subagent(side, event.tool_use_id, event.result)
    # Its registry line, when appending it failed at the start (a full disk): without it the import would be
    # "not made by your evo-agent", refused by --resume -p and passed by -c, for good.
    unvouched = recorder.unvouched is not None and not recorder.unvouched()
    if unvouched or not recorder.publish():  # a write failed (a full disk): never a half session, never "imported"
        import shutil

        shutil.rmtree(recorder.session_dir, ignore_errors=True)  # made just now, by this import
        if unvouched:
            from evo_agent.session import made_file

            raise ImportNotWritten(f"the new session {recorder.session_id} could not be recorded as yours in "
                                   f"{made_file()}")
        raise ImportNotWritten(f"the new session {recorder.session_id} could not be written whole")
    recorder.checkpoint()
    return recorder.session_id
