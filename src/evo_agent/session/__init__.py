"""evo_agent.session — record and restore agent conversations, crash-proof.

A small library with no dependency on the rest of evo-agent. Layout, record
schema and rules: SPEC.md §1–4; the README's "Using the session library".

    from evo_agent.session import SessionStore

    store = SessionStore(project_dir)
    rec = store.create(model="claude-sonnet-4-5", provider="anthropic")
    rec.user({"role": "user", "content": "hello"})
    rec.assistant({"role": "assistant", "content": [{"type": "text", "text": "hi"}]},
                  input_tokens=12, output_tokens=3)
    rec.checkpoint()                      # end of a turn: refresh meta.json

    row = store.latest()                  # --continue (never a foreign session: row.foreign is None)
    resumed = store.resume(row.id, model=..., provider=...)
    resumed.loaded.messages               # what to send the model next
    resumed.recorder                      # the new session's recorder

Every write is open/append/close and best effort: a failure prints one
warning per kind on stderr and never raises. Errors about ids a user typed
are `SessionError` subclasses whose message is one printable line.
"""

from .ids import (
    AmbiguousSessionId,
    InvalidSessionId,
    SessionError,
    SessionNotFound,
    is_session_id,
    new_session_id,
    resolve_session_id,
    sidechain_file_name,
    slug_agent_name,
)
from .inspect import (
    TranscriptLine,
    first_records,
    is_id_prefix,
    is_sidechain_path,
    iter_transcript,
    open_sidechain,
    read_records,
    sidechain_paths,
)
from .layout import (
    BACKUP_NAME_RE,
    DIR_MODE,
    FILE_HISTORY_DIR,
    FILE_MODE,
    GITIGNORE_NAME,
    GITIGNORE_TEXT,
    LOCK_NAME,
    MESSAGES_NAME,
    META_NAME,
    META_TMP_NAME,
    PROJECT_DIR_NAME,
    PROMPT_HISTORY_NAME,
    SESSIONS_DIR_NAME,
    SESSIONS_SUBDIR,
    SETTINGS_LOCK_NAME,
    SETTINGS_NAME,
    SIDECHAIN_PATH_RE,
    SIDECHAIN_SUFFIX,
    STAGING_NAME,
    SUBAGENT_DIR,
    sessions_dir,
    transcript_path,
)
from .live import LiveLock, Liveness, LiveSessionStore, SessionInUse, held_for_removal, probe_live
from .messages import (
    blocks,
    content_blocks,
    content_text,
    has_tool_results,
    text_block,
    text_of,
    tool_names_by_id,
    tool_result_block,
    tool_result_text,
    tool_results,
    tool_uses,
    tool_uses_by_id,
)
from .meta import SessionMeta, clean_name, prompt_text, read_meta, rebuild_meta
from .project import Worktree, find_project_dir, git_branch_of, git_worktree_root, git_worktrees
from .recorder import Recorder, SidechainRecorder, now_iso
from .repair import INTERRUPTED_TEXT, interrupted_result, repair_history
from .resume import LoadedSession, load_for_resume, summary_message
from .store import ResumedSession, SessionInfo, SessionStore
from .trust import ForeignSession, SessionsDirRefused, foreign_reason, tracked_session_ids

__all__ = [
    "AmbiguousSessionId", "InvalidSessionId", "SessionError", "SessionNotFound",
    "is_session_id", "new_session_id", "resolve_session_id", "sidechain_file_name", "slug_agent_name",
    "SessionMeta", "clean_name", "prompt_text", "read_meta", "rebuild_meta",
    "Recorder", "SidechainRecorder", "git_branch_of", "now_iso",
    "Worktree", "find_project_dir", "git_worktree_root", "git_worktrees",
    "INTERRUPTED_TEXT", "interrupted_result", "repair_history",
    "LoadedSession", "load_for_resume", "summary_message",
    "ResumedSession", "SessionInfo", "SessionStore",
    "TranscriptLine", "first_records", "is_id_prefix", "is_sidechain_path", "iter_transcript", "open_sidechain",
    "read_records", "sidechain_paths",
    "LiveLock", "LiveSessionStore", "Liveness", "SessionInUse", "held_for_removal", "probe_live",
    "ForeignSession", "SessionsDirRefused", "foreign_reason", "tracked_session_ids",
    "blocks", "content_blocks", "content_text", "has_tool_results", "text_block", "text_of", "tool_names_by_id",
    "tool_result_block", "tool_result_text", "tool_results", "tool_uses", "tool_uses_by_id",
    "BACKUP_NAME_RE", "DIR_MODE", "FILE_HISTORY_DIR", "FILE_MODE", "GITIGNORE_NAME", "GITIGNORE_TEXT", "LOCK_NAME",
    "MESSAGES_NAME", "META_NAME", "META_TMP_NAME", "PROJECT_DIR_NAME", "PROMPT_HISTORY_NAME", "SESSIONS_DIR_NAME",
    "SESSIONS_SUBDIR", "SETTINGS_LOCK_NAME", "SETTINGS_NAME", "SIDECHAIN_PATH_RE", "SIDECHAIN_SUFFIX", "STAGING_NAME",
    "SUBAGENT_DIR", "sessions_dir", "transcript_path",
]
