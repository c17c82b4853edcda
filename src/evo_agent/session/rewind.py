"""Going back: a new session whose history ends just before user turn N, and the files as they were.

Like every resume, a rewind never touches the session it starts from: it writes a new session
(`session_start`, a `resume_marker` with `at_turn` and `source_bytes`, the restored messages).
Turns are the typed prompts of a transcript, numbered from 1 in file order, restored ones included
(`sessions show` and `/rewind` number them the same way).

The file changes since turn N are found in this session's transcript and, when turn N is one a
resume copied in, in its source up to where that resume read it (`source_bytes`), and so on up
the chain: the k-th restored prompt of a session is the k-th prompt after its source's last
compaction before `source_bytes`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .file_history import BACKUP, WRITTEN, FileChange, collect_changes
from .ids import SessionError
from .inspect import iter_transcript
from .layout import MESSAGES_NAME
from .messages import INTERRUPTED_MARKER
from .meta import prompt_text
from .repair import repair_history
from .resume import LoadedSession, summary_message

MAX_CHAIN = 64  # how far up a resume chain file changes are followed


@dataclass(frozen=True)
class PromptTurn:
    number: int        # 1-based
    offset: int        # byte offset of its user record
    text: str          # the prompt, one line
    timestamp: str
    restored: bool     # copied in by a resume


def prompt_turns(transcript: Path | str, end: int | None = None) -> list[PromptTurn]:
    """The typed prompts of a transcript (up to byte `end`), numbered from 1: not the interruption notice an
    interrupted turn leaves (a user message too), which `/rewind` listed as a prompt the user never typed."""
    turns: list[PromptTurn] = []
    for line in iter_transcript(transcript):
        if end is not None and line.offset >= end:
            break
        record = line.record
        if record is None or record.get("type") != "user":
            continue
        text = prompt_text(record.get("message"))
        if text is None or text == INTERRUPTED_MARKER:  # recorded for the model when a turn was cut, never typed
            continue
        stamp = record.get("timestamp")
        turns.append(PromptTurn(len(turns) + 1, line.offset, text, stamp if isinstance(stamp, str) else "",
                                record.get("restored") is True))
    return turns


def choose_turn(transcript: Path | str, number: int) -> PromptTurn:
    turns = prompt_turns(transcript)
    if not turns:
        raise SessionError("this session has no user turn to go back to")
    if not 1 <= number <= len(turns):
        raise SessionError(f"there is no user turn {number}: this session has turns 1 to {len(turns)}")
    return turns[number - 1]


def load_before(transcript: Path | str, session_id: str, offset: int) -> LoadedSession:
    """What a session held just before byte `offset`: replay from the last compaction before it, repaired."""
    messages: list[dict[str, Any]] = []
    result = LoadedSession(session_id=session_id, messages=[])
    for line in iter_transcript(transcript):
        if line.offset >= offset:
            break
        record = line.record
        if record is None:
            result.skipped_lines += 1
            continue
        rtype = record.get("type")
        if rtype == "compact_boundary" and isinstance(record.get("summary"), str):
            messages = [summary_message(record["summary"])]
            count = record.get("compact_count")
            result.compact_count = count if isinstance(count, int) else result.compact_count + 1
            result.summary = record["summary"]
        elif rtype in ("user", "assistant") and isinstance(record.get("message"), dict):
            messages.append(record["message"])
            if rtype == "user" and result.first_prompt is None:
                result.first_prompt = prompt_text(record["message"])
        elif rtype == "resume_marker" and isinstance(record.get("first_prompt"), str):
            result.first_prompt = record["first_prompt"]
        result.records += 1
    result.messages, result.repairs = repair_history(messages)
    return result


def _file_events(transcript: Path, start: int, end: int | None,
                 types: tuple[str, ...] = (BACKUP, WRITTEN)) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """(records of `types` in [start, end), the resume_marker) of one transcript."""
    events, marker = [], None
    for line in iter_transcript(transcript):
        if end is not None and line.offset >= end:
            break
        record = line.record
        if record is None:
            continue
        if record.get("type") == "resume_marker" and marker is None:
            marker = record
        elif record.get("type") in types and line.offset >= start:
            events.append(record)
    return events, marker


def _last_boundary_before(transcript: Path, end: int | None) -> int:
    last = 0
    for line in iter_transcript(transcript):
        if end is not None and line.offset >= end:
            break
        if line.record is not None and line.record.get("type") == "compact_boundary":
            last = line.offset
    return last


def changes_since(sessions_dir: Path, session_id: str, number: int) -> list[FileChange]:
    """The files evo-agent's file tools changed since user turn `number` of `session_id`, up the resume chain."""
    return collect_changes(_events_since(sessions_dir, session_id, number, (BACKUP, WRITTEN)))


def plan_updates_since(sessions_dir: Path, session_id: str, number: int) -> list[dict[str, Any]]:
    """The `plan_update` records written since user turn `number` of `session_id`, up the resume chain, oldest first.

    What a rewind undoes to put the Session Plan back as it was (`PlanStore.undo`).
    """
    return [record for _, record in _events_since(sessions_dir, session_id, number, ("plan_update",))]


def _events_since(sessions_dir: Path, session_id: str, number: int,
                  types: tuple[str, ...]) -> list[tuple[Path, dict[str, Any]]]:
    """(session dir, record) of every record of `types` since user turn `number`, up the resume chain."""
    chain: list[tuple[Path, list[dict[str, Any]]]] = []
    sid, turn_no, end = session_id, number, None
    for _ in range(MAX_CHAIN):
        session_dir = Path(sessions_dir) / sid
        transcript = session_dir / MESSAGES_NAME
        turns = prompt_turns(transcript, end)
        if not 1 <= turn_no <= len(turns):
            break
        turn = turns[turn_no - 1]
        events, marker = _file_events(transcript, 0 if turn.restored else turn.offset, end, types)
        chain.append((session_dir, events))
        if not turn.restored or marker is None:
            break
        source = marker.get("from_session_id")
        source_end = marker.get("source_bytes")
        if not isinstance(source, str) or not isinstance(source_end, int) or not (sessions_dir / source).is_dir():
            break
        k = sum(1 for t in turns[:turn_no] if t.restored)  # turn is the k-th restored prompt
        source_transcript = Path(sessions_dir) / source / MESSAGES_NAME
        boundary = _last_boundary_before(source_transcript, source_end)
        source_turns = prompt_turns(source_transcript, source_end)
        after = [t for t in source_turns if t.offset >= boundary]
        if not 1 <= k <= len(after):
            break
        sid, turn_no, end = source, after[k - 1].number, source_end
    return [(d, record) for d, events in reversed(chain) for record in events]  # oldest session first
