"""The record types of a transcript (SPEC §2): one row per type, saying what the library does with it.

Adding a record type starts here (docs/architecture.md, "Add a record type"): the sets the
library's modules test a record's type against are derived from this table, never spelled
again. What a type's fields mean stays with the code that reads them (meta.py's fold,
search.py's `record_texts`, the `sessions show` model); a row says only which of those care.
Readers skip types they do not know (SPEC §2), so a type missing here is written and kept,
only not searched, shown or carried.
"""

from __future__ import annotations

from .plaindata import plain_dataclass

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: `sessions list` loads this module

__all__ = ["CONVERSATION_TYPES", "ENVELOPE_FIELDS", "HELD_UNTIL_SAID", "MESSAGE_TYPES", "META_AT_ONCE",
           "NOT_ACTIVITY", "RECORD_TYPES", "SCENE_TYPES", "SEARCHED_TYPES", "RecordType", "Shown"]

# How `sessions show` (cli/sessions/model.py) presents a type: "" not at all; "note" one line of its own
# (the model's NOTE_BUILDERS makes it); the others each have their own item there.
if TYPE_CHECKING:
    from typing import Literal

    Shown = Literal["", "header", "turn", "boundary", "resume", "subagent", "note", "in message"]
else:
    Shown = str


@plain_dataclass(frozen=True)
class RecordType:
    """One record type and the facts about it that modules act on (a plain data class: `sessions list` and
    `-p` load this module and must not import `dataclasses`; a NamedTuple's class costs ~2 ms to make)."""

    name: str
    searched: bool = False  # `sessions search` reads its text (search.py's record_texts says which fields)
    scene: bool = False  # part of the request's fixed prefix (SPEC §12): the recorder keeps the last; a resume
    # carries it into the new session
    held: bool = False  # only sets the scene: a session started deferred holds it in memory until something is said
    message: bool = False  # a conversation message: counted in meta.json's message_count
    conversation: bool = False  # the conversation has begun: no scene-setting record follows it in the head
    activity: bool = True  # moves meta.json's updated_ms (renaming an old session must not make it the newest)
    meta_at_once: bool = False  # meta.json is written right after it, not at the recorder's next interval
    shown: Shown = ""


RECORD_TYPES: tuple[RecordType, ...] = (
    RecordType("session_start", held=True, meta_at_once=True, shown="header"),
    RecordType("user", searched=True, message=True, conversation=True, shown="turn"),
    RecordType("assistant", searched=True, message=True, conversation=True, shown="turn"),
    RecordType("compact_boundary", searched=True, conversation=True, shown="boundary"),
    RecordType("compact_failed", shown="note"),  # a summary call paid for that compacted nothing: its `usage`
    RecordType("resume_marker", meta_at_once=True, shown="resume"),
    RecordType("subagent_start", shown="subagent"),
    RecordType("subagent_end", searched=True, shown="subagent"),
    RecordType("session_name", activity=False),
    RecordType("file_backup"),
    RecordType("file_written"),
    RecordType("permission"),
    RecordType("instructions", held=True, shown="note"),
    RecordType("plan_update", searched=True, shown="note"),
    RecordType("memory_write", searched=True, shown="note"),
    RecordType("memory_index", held=True, scene=True),
    RecordType("system_prompt", held=True, scene=True),  # {version}: the template (agent/prompt.py)
    RecordType("reminder", held=True, shown="in message"),
)

SEARCHED_TYPES: frozenset[str] = frozenset(t.name for t in RECORD_TYPES if t.searched)
# A tuple: a resume writes them in this order, right after its resume_marker (SessionStore.resume).
SCENE_TYPES: tuple[str, ...] = tuple(t.name for t in RECORD_TYPES if t.scene)
HELD_UNTIL_SAID: frozenset[str] = frozenset(t.name for t in RECORD_TYPES if t.held)
MESSAGE_TYPES: frozenset[str] = frozenset(t.name for t in RECORD_TYPES if t.message)
CONVERSATION_TYPES: frozenset[str] = frozenset(t.name for t in RECORD_TYPES if t.conversation)
NOT_ACTIVITY: frozenset[str] = frozenset(t.name for t in RECORD_TYPES if not t.activity)
META_AT_ONCE: frozenset[str] = frozenset(t.name for t in RECORD_TYPES if t.meta_at_once)

# The envelope every record carries (SPEC §2): what is left of a record without it is the type's own fields.
ENVELOPE_FIELDS: frozenset[str] = frozenset(
    {"type", "timestamp", "agent_version", "session_id", "cwd", "prompt_id", "git_branch"})
