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

The public API is `__all__`; each name loads its submodule at first use (PEP 562),
so `import evo_agent.session` costs almost nothing and a caller pays only for what it
touches. `_EXPORTS` says where each name lives; tests/session/test_public_api.py checks that every name in
`__all__` resolves and that nothing else public leaks.
"""

import importlib

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~3 ms at start-up)

# name -> the submodule defining it: the one table behind `__all__` and `__getattr__`.
_EXPORTS: dict[str, str] = {
    **dict.fromkeys(("AmbiguousSessionId", "InvalidSessionId", "SessionError", "SessionNotFound", "is_id_prefix",
                     "is_session_id", "new_session_id", "resolve_session_id", "sidechain_file_name",
                     "slug_agent_name"), "ids"),
    **dict.fromkeys(("TranscriptLine", "first_records", "is_sidechain_path", "iter_transcript",
                     "open_sidechain", "read_records", "sidechain_paths"), "inspect"),
    **dict.fromkeys(("BACKUP_NAME_RE", "DIR_MODE", "FETCHED_NAME", "FILE_HISTORY_DIR", "FILE_MODE", "GITIGNORE_NAME",
                     "GITIGNORE_TEXT",
                     "LOCK_NAME", "MESSAGES_NAME", "META_NAME", "META_TMP_NAME", "PROJECT_DIR_NAME",
                     "PROMPT_HISTORY_NAME", "SESSIONS_DIR_NAME", "SESSIONS_SUBDIR", "SETTINGS_LOCK_NAME",
                     "SETTINGS_NAME", "SIDECHAIN_PATH_RE", "SIDECHAIN_SUFFIX", "STAGING_NAME", "SUBAGENT_DIR",
                     "sessions_dir", "transcript_path"), "layout"),
    **dict.fromkeys(("LiveLock", "LiveSessionStore", "Liveness", "SessionInUse", "held_for_removal", "probe_live"),
                    "live"),
    **dict.fromkeys(("INTERRUPTED_MARKER", "blocks", "content_blocks", "content_text", "has_tool_results", "one_line",
                     "text_block", "text_of", "tool_names_by_id", "tool_result_block", "tool_result_text",
                     "tool_results", "tool_uses", "tool_uses_by_id"), "messages"),
    **dict.fromkeys(("SessionMeta", "clean_name", "prompt_text", "read_meta", "rebuild_meta"), "meta"),
    **dict.fromkeys(("Worktree", "find_project_dir", "git_branch_of", "git_worktree_root", "git_worktrees"),
                    "project"),
    **dict.fromkeys(("Recorder", "SidechainRecorder", "now_iso"), "recorder"),
    **dict.fromkeys(("INTERRUPTED_TEXT", "interrupted_result", "repair_history"), "repair"),
    **dict.fromkeys(("LoadedSession", "load_for_resume", "summary_message"), "resume"),
    **dict.fromkeys(("ResumedSession", "SessionInfo", "SessionStore"), "store"),
    **dict.fromkeys(("ForeignSession", "SessionsDirRefused", "foreign_reason", "tracked_session_ids"), "trust"),
    **dict.fromkeys(("decode", "encode_line",), "jsonio"),
    **dict.fromkeys(("search_sessions",), "search"),
    **dict.fromkeys(("changes_since", "plan_updates_since", "prompt_turns",), "rewind"),
    **dict.fromkeys(("add_secret_value", "count_secrets", "mask_own_secrets", "may_hold_secret", "redact_text",),
                    "redact"),
    **dict.fromkeys(("FileChange", "FileHistory", "restore_change",), "file_history"),
    **dict.fromkeys(("is_omitted_marker",), "resume"),
    **dict.fromkeys(("check_sessions_dir",), "trust"),
    **dict.fromkeys(("created_ms_of",), "ids"),
    **dict.fromkeys(("replace_private_file", "write_meta"), "meta"),
    **dict.fromkeys(("rename_session",), "naming"),
    **dict.fromkeys(("git_dir_of",), "project"),
    **dict.fromkeys(("GIT_SAFE_CONFIG", "GIT_SAFE_ENV", "GitRefused", "run_git", "start_git"), "git"),
    **dict.fromkeys(("gitignore_problem", "repair_gitignore", "restore_gitignore", "unexpected_entries"), "trust"),
    **dict.fromkeys(("AUTHORITY_FILES", "Brought", "WorkspaceTrust", "add_user_rule", "history_file", "project_key",
                     "project_trusted", "remember_trust", "revoke_trust", "user_config_dir", "user_record_path",
                     "user_rules", "user_state_dir", "what_project_brings", "workspace_trust"), "workspace"),
    **dict.fromkeys(("MCP_CONFIG_NAME", "MCP_TOOLS_NAME", "USER_DIR_NAME", "USER_MCP_CONFIG_NAME"), "layout"),
    **dict.fromkeys(("read_tool_defs", "write_tool_defs"), "tool_defs"),
    **dict.fromkeys(("OPEN_STATUSES", "Plan", "PlanError", "PlanStore", "Task", "TASK_STATUSES"), "plan_store"),
    **dict.fromkeys(("PLAN_DONE_DIR", "PLAN_FILE_NAME", "PLAN_ID_RE", "PLAN_TODO_DIR", "TASK_FILE_RE", "TASKS_DIR_NAME",
                     "TASKS_LOCK_NAME", "TASKS_SUBDIR", "task_file_name", "tasks_dir"), "layout"),
    **dict.fromkeys(("REMINDER_CLOSE", "REMINDER_OPEN", "is_reminder_block", "reminder_block"), "messages"),
    **dict.fromkeys(("MEMORY_COMMANDS", "MEMORY_SCOPES", "MEMORY_TYPES", "MEMORY_WRITE_COMMANDS", "MemoryChange",
                     "MemoryIndex", "MemoryRefused", "MemoryStore", "MemoryTopic", "parse_front_matter",
                     "parse_memory_path"), "memory_store"),
    **dict.fromkeys(("MEMORY_DIR_NAME", "MEMORY_INDEX_NAME", "MEMORY_SUBDIR", "MEMORY_TOPIC_RE", "memory_dir"),
                    "layout"),
    **dict.fromkeys(("SCENE_TYPES",), "recorder"),
}

__all__ = [  # sorted, case-insensitively
    "add_secret_value", "add_user_rule", "AmbiguousSessionId", "AUTHORITY_FILES", "BACKUP_NAME_RE", "blocks", "Brought",
    "changes_since", "check_sessions_dir", "clean_name", "content_blocks", "content_text", "count_secrets",
    "created_ms_of", "decode", "DIR_MODE", "encode_line", "FETCHED_NAME", "FILE_HISTORY_DIR", "FILE_MODE", "FileChange",
    "FileHistory", "find_project_dir", "first_records", "foreign_reason", "ForeignSession", "git_branch_of",
    "git_dir_of", "GIT_SAFE_CONFIG", "GIT_SAFE_ENV", "git_worktree_root", "git_worktrees", "GITIGNORE_NAME",
    "gitignore_problem", "GITIGNORE_TEXT", "GitRefused", "has_tool_results", "held_for_removal", "history_file",
    "INTERRUPTED_MARKER", "interrupted_result", "INTERRUPTED_TEXT", "InvalidSessionId", "is_id_prefix",
    "is_omitted_marker", "is_reminder_block", "is_session_id", "is_sidechain_path", "iter_transcript", "LiveLock",
    "Liveness", "LiveSessionStore", "load_for_resume", "LoadedSession", "LOCK_NAME", "mask_own_secrets",
    "may_hold_secret", "MCP_CONFIG_NAME", "MCP_TOOLS_NAME", "MEMORY_COMMANDS", "memory_dir", "MEMORY_DIR_NAME",
    "MEMORY_INDEX_NAME", "MEMORY_SCOPES", "MEMORY_SUBDIR", "MEMORY_TOPIC_RE", "MEMORY_TYPES", "MEMORY_WRITE_COMMANDS",
    "MemoryChange", "MemoryIndex", "MemoryRefused", "MemoryStore", "MemoryTopic", "MESSAGES_NAME", "META_NAME",
    "META_TMP_NAME", "new_session_id", "now_iso", "one_line", "open_sidechain", "OPEN_STATUSES", "parse_front_matter",
    "parse_memory_path", "Plan", "PLAN_DONE_DIR", "PLAN_FILE_NAME", "PLAN_ID_RE", "PLAN_TODO_DIR", "plan_updates_since",
    "PlanError", "PlanStore", "probe_live", "PROJECT_DIR_NAME", "project_key", "project_trusted", "PROMPT_HISTORY_NAME",
    "prompt_text", "prompt_turns", "read_meta", "read_records", "read_tool_defs", "rebuild_meta", "Recorder",
    "redact_text", "remember_trust", "reminder_block", "REMINDER_CLOSE", "REMINDER_OPEN", "rename_session",
    "repair_gitignore", "repair_history", "replace_private_file", "resolve_session_id", "restore_change",
    "restore_gitignore", "ResumedSession", "revoke_trust", "run_git", "SCENE_TYPES", "search_sessions", "SessionError",
    "SessionInfo", "SessionInUse", "SessionMeta", "SessionNotFound", "sessions_dir", "SESSIONS_DIR_NAME",
    "SESSIONS_SUBDIR", "SessionsDirRefused", "SessionStore", "SETTINGS_LOCK_NAME", "SETTINGS_NAME",
    "sidechain_file_name", "SIDECHAIN_PATH_RE", "sidechain_paths", "SIDECHAIN_SUFFIX", "SidechainRecorder",
    "slug_agent_name", "STAGING_NAME", "start_git", "SUBAGENT_DIR", "summary_message", "Task", "task_file_name",
    "TASK_FILE_RE", "TASK_STATUSES", "tasks_dir", "TASKS_DIR_NAME", "TASKS_LOCK_NAME", "TASKS_SUBDIR", "text_block",
    "text_of", "tool_names_by_id", "tool_result_block", "tool_result_text", "tool_results", "tool_uses",
    "tool_uses_by_id", "tracked_session_ids", "transcript_path", "TranscriptLine", "unexpected_entries",
    "user_config_dir", "USER_DIR_NAME", "USER_MCP_CONFIG_NAME", "user_record_path", "user_rules", "user_state_dir",
    "what_project_brings", "workspace_trust", "WorkspaceTrust", "Worktree", "write_meta", "write_tool_defs",
]


def __getattr__(name: str) -> object:
    """A public name, loaded from its submodule at first use and then kept here (the next lookup is plain).

    Submodules are imported as usual (`from evo_agent.session.store import ...`); an unknown name
    raises AttributeError, which is also what lets `from evo_agent.session import store` import one.
    """
    module = _EXPORTS.get(name)
    if module is not None:
        value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:  # what type checkers and editors see: the same names, imported eagerly
    from .file_history import FileChange, FileHistory, restore_change
    from .git import GIT_SAFE_CONFIG, GIT_SAFE_ENV, GitRefused, run_git, start_git
    from .ids import (
        AmbiguousSessionId,
        InvalidSessionId,
        SessionError,
        SessionNotFound,
        created_ms_of,
        is_id_prefix,
        is_session_id,
        new_session_id,
        resolve_session_id,
        sidechain_file_name,
        slug_agent_name,
    )
    from .inspect import (
        TranscriptLine,
        first_records,
        is_sidechain_path,
        iter_transcript,
        open_sidechain,
        read_records,
        sidechain_paths,
    )
    from .jsonio import decode, encode_line
    from .layout import (
        BACKUP_NAME_RE,
        DIR_MODE,
        FILE_HISTORY_DIR,
        FILE_MODE,
        GITIGNORE_NAME,
        GITIGNORE_TEXT,
        LOCK_NAME,
        MCP_CONFIG_NAME,
        MEMORY_DIR_NAME,
        MEMORY_INDEX_NAME,
        MEMORY_SUBDIR,
        MEMORY_TOPIC_RE,
        MESSAGES_NAME,
        META_NAME,
        META_TMP_NAME,
        PLAN_DONE_DIR,
        PLAN_FILE_NAME,
        PLAN_ID_RE,
        PLAN_TODO_DIR,
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
        TASK_FILE_RE,
        TASKS_DIR_NAME,
        TASKS_LOCK_NAME,
        TASKS_SUBDIR,
        USER_DIR_NAME,
        memory_dir,
        sessions_dir,
        task_file_name,
        tasks_dir,
        transcript_path,
    )
    from .live import LiveLock, Liveness, LiveSessionStore, SessionInUse, held_for_removal, probe_live
    from .memory_store import (
        MEMORY_COMMANDS,
        MEMORY_SCOPES,
        MEMORY_TYPES,
        MEMORY_WRITE_COMMANDS,
        MemoryChange,
        MemoryIndex,
        MemoryRefused,
        MemoryStore,
        MemoryTopic,
        parse_front_matter,
        parse_memory_path,
    )
    from .messages import (
        INTERRUPTED_MARKER,
        REMINDER_CLOSE,
        REMINDER_OPEN,
        blocks,
        content_blocks,
        content_text,
        has_tool_results,
        is_reminder_block,
        reminder_block,
        text_block,
        text_of,
        tool_names_by_id,
        tool_result_block,
        tool_result_text,
        tool_results,
        tool_uses,
        tool_uses_by_id,
    )
    from .meta import SessionMeta, clean_name, prompt_text, read_meta, rebuild_meta, replace_private_file, write_meta
    from .naming import rename_session
    from .plan_store import OPEN_STATUSES, TASK_STATUSES, Plan, PlanError, PlanStore, Task
    from .project import Worktree, find_project_dir, git_branch_of, git_dir_of, git_worktree_root, git_worktrees
    from .recorder import SCENE_TYPES, Recorder, SidechainRecorder, now_iso
    from .redact import add_secret_value, count_secrets, mask_own_secrets, may_hold_secret, redact_text
    from .repair import INTERRUPTED_TEXT, interrupted_result, repair_history
    from .resume import LoadedSession, is_omitted_marker, load_for_resume, summary_message
    from .rewind import changes_since, plan_updates_since, prompt_turns
    from .search import search_sessions
    from .store import ResumedSession, SessionInfo, SessionStore
    from .trust import (
        ForeignSession,
        SessionsDirRefused,
        check_sessions_dir,
        foreign_reason,
        gitignore_problem,
        repair_gitignore,
        restore_gitignore,
        tracked_session_ids,
        unexpected_entries,
    )
    from .workspace import (
        AUTHORITY_FILES,
        Brought,
        WorkspaceTrust,
        add_user_rule,
        history_file,
        project_key,
        project_trusted,
        remember_trust,
        revoke_trust,
        user_config_dir,
        user_record_path,
        user_rules,
        user_state_dir,
        what_project_brings,
        workspace_trust,
    )
