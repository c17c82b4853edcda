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
touches. `_EXPORTS` says where each name lives and is the one list of them (`__all__` is its
keys); tests/session/test_public_api.py checks that every name in `__all__` resolves, that
nothing else public leaks, and that the `TYPE_CHECKING` imports name the same. What only the
commands that look after sessions use (fsck, rm/prune, rename) is `evo_agent.session.admin`'s.
"""

import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~3 ms at start-up)

# name -> the submodule defining it: the one table behind `__all__` and `__getattr__`. Names only the
# commands that look after sessions use (fsck, rm, prune, rename) are in evo_agent.session.admin instead.
_EXPORTS: dict[str, str] = {
    **dict.fromkeys(("AmbiguousSessionId", "InvalidSessionId", "SessionError", "SessionNotFound", "is_id_prefix",
                     "is_session_id", "new_session_id", "resolve_session_id", "sidechain_file_name", "slug_agent_name"
                    ), "ids"),
    **dict.fromkeys(("TranscriptLine", "first_records", "is_sidechain_path", "iter_transcript", "open_sidechain",
                     "read_records", "sidechain_paths"), "inspect"),
    **dict.fromkeys(("BACKUP_NAME_RE", "DIR_MODE", "FETCHED_NAME", "FILE_HISTORY_DIR", "FILE_MODE", "GITIGNORE_NAME",
                     "GITIGNORE_TEXT", "LOCK_NAME", "MESSAGES_NAME", "META_NAME", "META_TMP_NAME", "PROJECT_DIR_NAME",
                     "PROMPT_HISTORY_NAME", "SESSIONS_DIR_NAME", "SESSIONS_SUBDIR", "SETTINGS_LOCK_NAME",
                     "SETTINGS_NAME", "SIDECHAIN_PATH_RE", "SIDECHAIN_SUFFIX", "STAGING_NAME", "SUBAGENT_DIR",
                     "sessions_dir", "transcript_path"), "layout"),
    **dict.fromkeys(("LiveLock", "LiveSessionStore", "Liveness", "probe_live"), "live"),
    **dict.fromkeys(("INTERRUPTED_MARKER", "INVALID_ARGUMENTS_KEY", "INVALID_TOOL_NAME_PREFIX", "api_tool_name",
                     "with_api_tool_names",
                     "SUMMARY_PREFIX", "SUMMARY_SUFFIX", "summary_text",
                     "blocks", "content_blocks", "content_text", "has_tool_results", "one_line",
                     "text_block", "text_of", "tool_names_by_id", "tool_result_block", "tool_result_text",
                     "tool_results", "tool_uses", "tool_uses_by_id", "summary_message"), "messages"),
    **dict.fromkeys(("SessionMeta", "clean_name", "prompt_text"), "meta"),
    **dict.fromkeys(("Worktree", "find_project_dir", "git_branch_of", "git_worktree_root", "git_worktrees"), "project"),
    **dict.fromkeys(("Recorder", "SidechainRecorder", "now_iso"), "recorder"),
    **dict.fromkeys(("INTERRUPTED_TEXT", "interrupted_result", "repair_history"), "repair"),
    **dict.fromkeys(("LoadedSession", "load_for_resume"), "resume"),
    **dict.fromkeys(("ResumedSession", "SessionInfo", "SessionStore"), "store"),
    **dict.fromkeys(("ForeignSession", "SessionsDirRefused", "foreign_reason", "tracked_session_ids"), "trust"),
    **dict.fromkeys(("decode", "dumps_compact", "encode_line", "json_object", "orjson_after_send"), "jsonio"),
    **dict.fromkeys(("search_sessions",), "search"),
    **dict.fromkeys(("changes_since", "plan_updates_since", "prompt_turns"), "rewind"),
    **dict.fromkeys(("add_secret_value", "mark_free_of_shapes", "mask_own_secrets", "redact_text"), "redact"),
    **dict.fromkeys(("FileChange", "FileHistory", "permission_bits", "read_backup", "restore_change"),
                   "file_history"),
    **dict.fromkeys(("is_omitted_marker",), "resume"),
    **dict.fromkeys(("check_sessions_dir",), "trust"),
    **dict.fromkeys(("created_ms_of",), "ids"),
    **dict.fromkeys(("replace_file", "replace_private_file"), "atomic"),
    **dict.fromkeys(("GIT_OWN_FILES", "alternate_entries", "git_dir_of", "git_special_file", "read_git_file",
                     "read_regular"), "project"),
    **dict.fromkeys(("GIT_SAFE_CONFIG", "GIT_SAFE_ENV", "GitRefused", "git_config_pins", "run_git", "start_git"),
                    "git"),
    **dict.fromkeys(("AUTHORITY_FILES", "AUTHORITY_MAX_BYTES", "AUTHORITY_TOO_LARGE", "Brought", "WorkspaceTrust",
                     "add_user_rule", "history_file", "project_key",
                     "project_trusted", "remember_trust", "revoke_trust", "rules_set_aside", "sha256",
                     "user_config_dir",
                     "user_record_path",
                     "user_rules", "user_state_dir", "what_project_brings", "workspace_trust"), "workspace"),
    **dict.fromkeys(("MCP_CONFIG_NAME", "MCP_TOOLS_NAME", "USER_DIR_NAME", "USER_MCP_CONFIG_NAME"), "layout"),
    **dict.fromkeys(("read_tool_defs", "write_tool_defs"), "tool_defs"),
    **dict.fromkeys(("OPEN_STATUSES", "Plan", "PlanError", "PlanStore", "Task", "TASK_STATUSES"), "plan_store"),
    **dict.fromkeys(("PLAN_DONE_DIR", "PLAN_FILE_NAME", "PLAN_ID_RE", "PLAN_TODO_DIR", "TASK_FILE_RE",
                     "TASKS_DIR_NAME", "TASKS_LOCK_NAME", "TASKS_SUBDIR", "task_file_name", "tasks_dir"), "layout"),
    **dict.fromkeys(("REMINDER_CLOSE", "REMINDER_OPEN", "is_reminder_block", "reminder_block",
                      "escape_tags", "seal_summary"), "messages"),
    **dict.fromkeys(("MEMORY_COMMANDS", "MEMORY_SCOPES", "MEMORY_TYPES", "MEMORY_WRITE_COMMANDS", "MemoryChange",
                     "MemoryIndex", "MemoryRefused", "MemoryStore", "MemoryTopic", "parse_front_matter",
                     "parse_memory_path"), "memory_store"),
    **dict.fromkeys(("MEMORY_DIR_NAME", "MEMORY_INDEX_NAME", "MEMORY_SUBDIR", "MEMORY_TOPIC_RE", "memory_dir"
                    ), "layout"),
    **dict.fromkeys(("SCENE_TYPES",), "records"),
    **dict.fromkeys(("plain_dataclass", "plain_field", "plain_replace"), "plaindata"),
    **dict.fromkeys(("lazy_re",), "lazyre"),
    **dict.fromkeys(("absolute_program", "library_environment", "program_refused", "program_search_path",
                    "search_entries"), "programs"),
    **dict.fromkeys(("reveal_invisible",), "invisible"),
    **dict.fromkeys(("linked_elsewhere",), "hardlinks"),
    **dict.fromkeys(("new_private_temp_dir",), "writer"),
    **dict.fromkeys(("made_file",), "origin"),
}

__all__ = sorted(_EXPORTS, key=str.casefold)  # written once: the table above says what is public


def _lazy_names(namespace: dict[str, object], exports: dict[str, str]) -> tuple[
        "Callable[[str], object]", "Callable[[], list[str]]"]:
    """A module's `__getattr__` and `__dir__` (PEP 562) for `exports` (name -> submodule of this package).

    Each name is loaded from its submodule at first use and then kept in `namespace` (the next lookup is
    plain). Submodules are imported as usual (`from evo_agent.session.store import ...`); an unknown name
    raises AttributeError, which is also what lets `from evo_agent.session import store` import one.
    Shared by this package and `evo_agent.session.admin`.
    """

    def getattr_(name: str) -> object:
        module = exports.get(name)
        if module is not None:
            full = f"{__name__}.{module}"
            __import__(full)  # importlib.import_module without importing importlib (~0.5 M instructions, issue #30)
            value = getattr(sys.modules[full], name)
            namespace[name] = value
            return value
        raise AttributeError(f"module {namespace['__name__']!r} has no attribute {name!r}")

    def dir_() -> list[str]:
        return sorted(set(namespace) | set(exports))

    return getattr_, dir_


__getattr__, __dir__ = _lazy_names(globals(), _EXPORTS)


# Type checkers and editors see the same names, imported eagerly; `X as X` marks each one re-exported (mypy's
# no_implicit_reexport), since they cannot read `__all__` from the table. test_public_api.py keeps the two equal.
# One statement per submodule (isort would split every `as` into a statement of its own):
# isort: off
if TYPE_CHECKING:
    from .atomic import replace_file as replace_file, replace_private_file as replace_private_file
    from .file_history import (
        FileChange as FileChange, FileHistory as FileHistory, permission_bits as permission_bits,
        read_backup as read_backup, restore_change as restore_change,
    )
    from .git import (
        GIT_SAFE_CONFIG as GIT_SAFE_CONFIG, GIT_SAFE_ENV as GIT_SAFE_ENV, GitRefused as GitRefused, run_git as run_git,
        start_git as start_git, git_config_pins as git_config_pins,
    )
    from .hardlinks import linked_elsewhere as linked_elsewhere
    from .writer import new_private_temp_dir as new_private_temp_dir
    from .invisible import reveal_invisible as reveal_invisible
    from .ids import (
        AmbiguousSessionId as AmbiguousSessionId, InvalidSessionId as InvalidSessionId, SessionError as SessionError,
        SessionNotFound as SessionNotFound, created_ms_of as created_ms_of, is_id_prefix as is_id_prefix,
        is_session_id as is_session_id, new_session_id as new_session_id, resolve_session_id as resolve_session_id,
        sidechain_file_name as sidechain_file_name, slug_agent_name as slug_agent_name,
    )
    from .inspect import (
        TranscriptLine as TranscriptLine, first_records as first_records, is_sidechain_path as is_sidechain_path,
        iter_transcript as iter_transcript, open_sidechain as open_sidechain, read_records as read_records,
        sidechain_paths as sidechain_paths,
    )
    from .jsonio import (
        decode as decode, dumps_compact as dumps_compact, encode_line as encode_line, json_object as json_object,
        orjson_after_send as orjson_after_send,
    )
    from .lazyre import lazy_re as lazy_re
    from .layout import (
        BACKUP_NAME_RE as BACKUP_NAME_RE, DIR_MODE as DIR_MODE, FETCHED_NAME as FETCHED_NAME,
        FILE_HISTORY_DIR as FILE_HISTORY_DIR, FILE_MODE as FILE_MODE, GITIGNORE_NAME as GITIGNORE_NAME,
        GITIGNORE_TEXT as GITIGNORE_TEXT, LOCK_NAME as LOCK_NAME, MCP_CONFIG_NAME as MCP_CONFIG_NAME,
        MCP_TOOLS_NAME as MCP_TOOLS_NAME, MEMORY_DIR_NAME as MEMORY_DIR_NAME, MEMORY_INDEX_NAME as MEMORY_INDEX_NAME,
        MEMORY_SUBDIR as MEMORY_SUBDIR, MEMORY_TOPIC_RE as MEMORY_TOPIC_RE, MESSAGES_NAME as MESSAGES_NAME,
        META_NAME as META_NAME, META_TMP_NAME as META_TMP_NAME, PLAN_DONE_DIR as PLAN_DONE_DIR,
        PLAN_FILE_NAME as PLAN_FILE_NAME, PLAN_ID_RE as PLAN_ID_RE, PLAN_TODO_DIR as PLAN_TODO_DIR,
        PROJECT_DIR_NAME as PROJECT_DIR_NAME, PROMPT_HISTORY_NAME as PROMPT_HISTORY_NAME,
        SESSIONS_DIR_NAME as SESSIONS_DIR_NAME, SESSIONS_SUBDIR as SESSIONS_SUBDIR,
        SETTINGS_LOCK_NAME as SETTINGS_LOCK_NAME, SETTINGS_NAME as SETTINGS_NAME,
        SIDECHAIN_PATH_RE as SIDECHAIN_PATH_RE, SIDECHAIN_SUFFIX as SIDECHAIN_SUFFIX, STAGING_NAME as STAGING_NAME,
        SUBAGENT_DIR as SUBAGENT_DIR, TASKS_DIR_NAME as TASKS_DIR_NAME, TASKS_LOCK_NAME as TASKS_LOCK_NAME,
        TASKS_SUBDIR as TASKS_SUBDIR, TASK_FILE_RE as TASK_FILE_RE, USER_DIR_NAME as USER_DIR_NAME,
        USER_MCP_CONFIG_NAME as USER_MCP_CONFIG_NAME, memory_dir as memory_dir, sessions_dir as sessions_dir,
        task_file_name as task_file_name, tasks_dir as tasks_dir, transcript_path as transcript_path,
    )
    from .live import (
        LiveLock as LiveLock, LiveSessionStore as LiveSessionStore, Liveness as Liveness, probe_live as probe_live,
    )
    from .memory_store import (
        MEMORY_COMMANDS as MEMORY_COMMANDS, MEMORY_SCOPES as MEMORY_SCOPES, MEMORY_TYPES as MEMORY_TYPES,
        MEMORY_WRITE_COMMANDS as MEMORY_WRITE_COMMANDS, MemoryChange as MemoryChange, MemoryIndex as MemoryIndex,
        MemoryRefused as MemoryRefused, MemoryStore as MemoryStore, MemoryTopic as MemoryTopic,
        parse_front_matter as parse_front_matter, parse_memory_path as parse_memory_path,
    )
    from .messages import (
        INTERRUPTED_MARKER as INTERRUPTED_MARKER, INVALID_ARGUMENTS_KEY as INVALID_ARGUMENTS_KEY,
        INVALID_TOOL_NAME_PREFIX as INVALID_TOOL_NAME_PREFIX, api_tool_name as api_tool_name,
        with_api_tool_names as with_api_tool_names,
        SUMMARY_PREFIX as SUMMARY_PREFIX, SUMMARY_SUFFIX as SUMMARY_SUFFIX, summary_message as summary_message,
        summary_text as summary_text,
        REMINDER_CLOSE as REMINDER_CLOSE, REMINDER_OPEN as REMINDER_OPEN,
        blocks as blocks, content_blocks as content_blocks, content_text as content_text,
        has_tool_results as has_tool_results, is_reminder_block as is_reminder_block, one_line as one_line,
        reminder_block as reminder_block, text_block as text_block, text_of as text_of,
        escape_tags as escape_tags, seal_summary as seal_summary,
        tool_names_by_id as tool_names_by_id, tool_result_block as tool_result_block,
        tool_result_text as tool_result_text, tool_results as tool_results, tool_uses as tool_uses,
        tool_uses_by_id as tool_uses_by_id,
    )
    from .meta import (
        SessionMeta as SessionMeta, clean_name as clean_name, prompt_text as prompt_text,
    )
    from .origin import made_file as made_file
    from .plan_store import (
        OPEN_STATUSES as OPEN_STATUSES, Plan as Plan, PlanError as PlanError, PlanStore as PlanStore,
        TASK_STATUSES as TASK_STATUSES, Task as Task,
    )
    from .plaindata import (
        plain_dataclass as plain_dataclass, plain_field as plain_field, plain_replace as plain_replace,
    )
    from .programs import (
        absolute_program as absolute_program, library_environment as library_environment,
        program_refused as program_refused,
        program_search_path as program_search_path, search_entries as search_entries,
    )
    from .project import (
        Worktree as Worktree, find_project_dir as find_project_dir, git_branch_of as git_branch_of,
        git_dir_of as git_dir_of, git_worktree_root as git_worktree_root, git_worktrees as git_worktrees,
        read_git_file as read_git_file, GIT_OWN_FILES as GIT_OWN_FILES, git_special_file as git_special_file,
        read_regular as read_regular, alternate_entries as alternate_entries,
    )
    from .recorder import (
        Recorder as Recorder, SidechainRecorder as SidechainRecorder, now_iso as now_iso,
    )
    from .records import SCENE_TYPES as SCENE_TYPES
    from .redact import (
        add_secret_value as add_secret_value, mark_free_of_shapes as mark_free_of_shapes,
        mask_own_secrets as mask_own_secrets, redact_text as redact_text,
    )
    from .repair import (
        INTERRUPTED_TEXT as INTERRUPTED_TEXT, interrupted_result as interrupted_result,
        repair_history as repair_history,
    )
    from .resume import (
        LoadedSession as LoadedSession, is_omitted_marker as is_omitted_marker, load_for_resume as load_for_resume,
    )
    from .rewind import (
        changes_since as changes_since, plan_updates_since as plan_updates_since, prompt_turns as prompt_turns,
    )
    from .search import (
        search_sessions as search_sessions,
    )
    from .store import (
        ResumedSession as ResumedSession, SessionInfo as SessionInfo, SessionStore as SessionStore,
    )
    from .tool_defs import (
        read_tool_defs as read_tool_defs, write_tool_defs as write_tool_defs,
    )
    from .trust import (
        ForeignSession as ForeignSession, SessionsDirRefused as SessionsDirRefused,
        check_sessions_dir as check_sessions_dir, foreign_reason as foreign_reason,
        tracked_session_ids as tracked_session_ids,
    )
    from .workspace import (
        AUTHORITY_FILES as AUTHORITY_FILES, AUTHORITY_MAX_BYTES as AUTHORITY_MAX_BYTES,
        AUTHORITY_TOO_LARGE as AUTHORITY_TOO_LARGE, Brought as Brought, WorkspaceTrust as WorkspaceTrust,
        add_user_rule as add_user_rule, history_file as history_file, project_key as project_key,
        project_trusted as project_trusted, remember_trust as remember_trust, revoke_trust as revoke_trust,
        rules_set_aside as rules_set_aside, sha256 as sha256,
        user_config_dir as user_config_dir, user_record_path as user_record_path, user_rules as user_rules,
        user_state_dir as user_state_dir, what_project_brings as what_project_brings,
        workspace_trust as workspace_trust,
    )
# isort: on

if TYPE_CHECKING:  # for _lazy_names' annotation only
    from collections.abc import Callable
