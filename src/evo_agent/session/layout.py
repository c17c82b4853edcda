"""The on-disk layout, said once: SPEC §1 in code.

```
<project>/.evo-agent/                 PROJECT_DIR_NAME (also the project marker, SPEC §1)
  settings.json, .settings.lock       SETTINGS_NAME, SETTINGS_LOCK_NAME (a repository's shared rules: obeyed
                                      only once the user trusts the project, workspace.py)
  .gitignore                          GITIGNORE_NAME
  sessions/                           SESSIONS_DIR_NAME; SESSIONS_SUBDIR from the project dir
    .gitignore                        GITIGNORE_NAME holding GITIGNORE_TEXT ("*")
    <session-id>/                     DIR_MODE (0700)
      messages.jsonl                  MESSAGES_NAME, FILE_MODE (0600), append-only (SPEC §2–3)
      .messages.jsonl.partial         STAGING_NAME: a resume's copy until it is complete
      meta.json                       META_NAME, replaced atomically through META_TMP_NAME
      .lock                           LOCK_NAME: held by the process recording the session
      fetched                         FETCHED_NAME: a copy from the team store of a session this user did not
                                      write: whose it is (one line); makes the copy foreign (trust.py)
      subagent/                       SUBAGENT_DIR
        <unix_ms>_<agent>_<4 hex>.jsonl   one sidechain per subagent run (SIDECHAIN_PATH_RE)
      file-history/                   FILE_HISTORY_DIR
      mcp_tools.json                  MCP_TOOLS_NAME: the MCP tool definitions the session's requests carry
                                      (fixed at its first request, SPEC §12), read back by a resume
        <unix_ms>_<4 hex>             a file's content before a tool changed it (BACKUP_NAME_RE)
    .fetch-<id>-<hex>/                FETCH_STAGING_RE: a team-store fetch before its rename
  tasks/                              TASKS_DIR_NAME: the Session Plan (SPEC §11); TASKS_SUBDIR from the project dir
    .lock                             TASKS_LOCK_NAME: flock'ed by every writer of a plan
    todo/<YYYY-MM-DD>-<slug>/         PLAN_TODO_DIR: the open plan (PLAN_ID_RE names it)
      plan.md                         PLAN_FILE_NAME: goal, approach, steps (a person may edit it)
      task_<n>.json                   TASK_FILE_RE: one task each
    done/<YYYY-MM-DD>-<slug>/         PLAN_DONE_DIR: a finished plan, moved here whole
  memory/                             MEMORY_DIR_NAME: the project's Auto Memory (SPEC §11); MEMORY_SUBDIR from the
                                      project dir. Not ignored: a team may commit and review it
    MEMORY.md                         MEMORY_INDEX_NAME: the index evo-agent writes from the topic files' front matter
    <topic>.md                        MEMORY_TOPIC_RE: front matter name, description, type; FILE_MODE
<project>/.mcp.json                   MCP_CONFIG_NAME (MCP servers; obeyed only in a trusted project)

$XDG_CONFIG_HOME/evo-agent/           USER_DIR_NAME (else ~/.config/evo-agent): the user's own, never a repository's
  memory/                             MEMORY_DIR_NAME: the user's own Auto Memory, for every project (0700/0600)
  mcp.json                            USER_MCP_CONFIG_NAME: the user's own MCP servers (always obeyed)
  projects/<key>.json                 PROJECTS_DIR_NAME: per project (key: its real path) the trust answer and
                                      the rules granted with "always in this project"
$XDG_STATE_HOME/evo-agent/            (else ~/.local/state/evo-agent)
  history/<key>                       HISTORY_DIR_NAME: the prompt box's ↑ history of one project
  made                                MADE_NAME: the id of every session this user's evo-agent made (origin.py)
  plans-made                          PLANS_MADE_NAME: the id of every Session Plan it made (origin.py)
$XDG_CACHE_HOME/evo-agent/            (else ~/.cache/evo-agent): what can be deleted at any time
  list-index/<key>.json               LIST_INDEX_DIR_NAME: the listing index of one sessions directory (key: its
                                      real path), a cache of every meta.json for `list()` (list_index.py)
  list-index/<key>.tracked.json       TRACKED_CACHE_SUFFIX: git's answer of which sessions it tracks, with the
                                      identity of the git index it read (tracked_cache.py)
```

Directories are created 0700 and files 0600 (SPEC §1): transcripts hold source
code, command output and sometimes secrets. Renaming a file on disk is a change
here; tests that check the on-disk contract itself keep the literal names.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

__all__ = [
    "BACKUP_NAME_RE",
    "DIR_MODE",
    "FILE_HISTORY_DIR",
    "FETCHED_NAME",
    "FILE_MODE",
    "GITIGNORE_NAME",
    "GITIGNORE_TEXT",
    "LIST_INDEX_DIR_NAME",
    "LIST_INDEX_SUFFIX",
    "LOCK_NAME",
    "MADE_NAME",
    "PLANS_MADE_NAME",
    "MESSAGES_NAME",
    "META_NAME",
    "META_TMP_NAME",
    "PROJECT_DIR_NAME",
    "FETCH_STAGING_RE",
    "HISTORY_DIR_NAME",
    "MCP_CONFIG_NAME",
    "MEMORY_DIR_NAME",
    "MEMORY_INDEX_NAME",
    "MEMORY_SUBDIR",
    "MEMORY_TOPIC_RE",
    "MCP_TOOLS_NAME",
    "PROJECTS_DIR_NAME",
    "PROJECTS_LOCK_NAME",
    "PROMPT_HISTORY_NAME",
    "USER_DIR_NAME",
    "USER_MCP_CONFIG_NAME",
    "SESSIONS_DIR_NAME",
    "SESSIONS_SUBDIR",
    "SETTINGS_LOCK_NAME",
    "SETTINGS_NAME",
    "SIDECHAIN_PATH_RE",
    "SIDECHAIN_SUFFIX",
    "STAGING_NAME",
    "SUBAGENT_DIR",
    "memory_dir",
    "PLAN_DONE_DIR",
    "PLAN_FILE_NAME",
    "PLAN_ID_RE",
    "PLAN_TODO_DIR",
    "TASK_FILE_RE",
    "TASKS_DIR_NAME",
    "TASKS_LOCK_NAME",
    "TASKS_SUBDIR",
    "sessions_dir",
    "task_file_name",
    "tasks_dir",
    "transcript_path",
    "user_state_dir",
]

# The project's own directory: where evo-agent keeps everything it writes (SPEC §1).
PROJECT_DIR_NAME = ".evo-agent"
SETTINGS_NAME = "settings.json"
SETTINGS_LOCK_NAME = ".settings.lock"
PROMPT_HISTORY_NAME = "history"  # where evo-agent before 0.2 kept the ↑ history (now the user's state dir)
MCP_CONFIG_NAME = ".mcp.json"
MCP_TOOLS_NAME = "mcp_tools.json"

# The user's own directories (XDG): what a repository can neither put nor change.
USER_DIR_NAME = "evo-agent"
USER_MCP_CONFIG_NAME = "mcp.json"
PROJECTS_DIR_NAME = "projects"
PROJECTS_LOCK_NAME = ".lock"  # flock'ed for each read-modify-write of a project's record
HISTORY_DIR_NAME = "history"
MADE_NAME = "made"
PLANS_MADE_NAME = "plans-made"
# In the user's cache dir: the listing index of each sessions directory (list_index.py), never the source of
# truth; outside the project, so a repository cannot plant one and older versions never see it.
LIST_INDEX_DIR_NAME = "list-index"
LIST_INDEX_SUFFIX = ".json"
TRACKED_CACHE_SUFFIX = ".tracked.json"  # beside the index: `git ls-files`'s answer (tracked_cache.py)
GIT_INDEX_NAME = "index"  # in the git directory: what `git ls-files` reads

SESSIONS_DIR_NAME = "sessions"
SESSIONS_SUBDIR = Path(PROJECT_DIR_NAME) / SESSIONS_DIR_NAME
GITIGNORE_NAME = ".gitignore"
GITIGNORE_TEXT = "*\n"  # transcripts never get committed by accident

# One session's directory.
MESSAGES_NAME = "messages.jsonl"
STAGING_NAME = ".messages.jsonl.partial"
META_NAME = "meta.json"
META_TMP_NAME = ".meta.json.tmp"  # the recorder's: one writer per session, under the file's lock
LOCK_NAME = ".lock"
FETCHED_NAME = "fetched"  # a team store's copy of someone else's session: whose it is (trust.py)
SUBAGENT_DIR = "subagent"
SIDECHAIN_SUFFIX = ".jsonl"
FILE_HISTORY_DIR = "file-history"

# The name patterns (`*_RE`) are compiled at their first use (`__getattr__` below): `sessions list` loads this
# module and needs none of them, and compiling them all was ~2% of it.
_PATTERNS: dict[str, str] = {
    # `subagent/<unix ms>_<slug>_<4 hex>.jsonl` (SPEC §1); anything else a marker names is not followed.
    "SIDECHAIN_PATH_RE":
        rf"\A{SUBAGENT_DIR}/[0-9]{{13}}_[a-z0-9-]{{1,40}}_[0-9a-f]{{4}}{re.escape(SIDECHAIN_SUFFIX)}\Z",
    # A team-store fetch being staged in the sessions directory (sync/remote.py), renamed to its id when complete.
    "FETCH_STAGING_RE": r"\A\.fetch-[0-9]{13}_[0-9a-f]{8}-[0-9a-f]{8}\Z",
    # `file-history/<unix ms>_<4 hex>`: never a path out of the session.
    "BACKUP_NAME_RE": rf"\A{FILE_HISTORY_DIR}/[0-9]{{13}}_[0-9a-f]{{4}}\Z",
}

# The Session Plan (SPEC §11): `tasks/{todo,done}/<YYYY-MM-DD>-<slug>/` holding plan.md and task_<n>.json.
TASKS_DIR_NAME = "tasks"
TASKS_SUBDIR = Path(PROJECT_DIR_NAME) / TASKS_DIR_NAME
TASKS_LOCK_NAME = ".lock"
PLAN_TODO_DIR = "todo"
PLAN_DONE_DIR = "done"
PLAN_FILE_NAME = "plan.md"
_PATTERNS["PLAN_ID_RE"] = r"\A[0-9]{4}-[0-9]{2}-[0-9]{2}-[a-z0-9][a-z0-9-]{0,59}\Z"
_PATTERNS["TASK_FILE_RE"] = r"\Atask_([1-9][0-9]{0,8})\.json\Z"

# Auto Memory (SPEC §11): `memory/` holding MEMORY.md (generated) and flat topic files `<name>.md`, in the project's
# `.evo-agent/` and in the user's own config directory.
MEMORY_DIR_NAME = "memory"
MEMORY_SUBDIR = Path(PROJECT_DIR_NAME) / MEMORY_DIR_NAME
MEMORY_INDEX_NAME = "MEMORY.md"
_PATTERNS["MEMORY_TOPIC_RE"] = r"\A[A-Za-z0-9][A-Za-z0-9._-]{0,99}\.md\Z"

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:  # what `__getattr__` makes of `_PATTERNS`, as checkers see it
    SIDECHAIN_PATH_RE: re.Pattern[str]
    FETCH_STAGING_RE: re.Pattern[str]
    BACKUP_NAME_RE: re.Pattern[str]
    PLAN_ID_RE: re.Pattern[str]
    TASK_FILE_RE: re.Pattern[str]
    MEMORY_TOPIC_RE: re.Pattern[str]


def __getattr__(name: str) -> re.Pattern[str]:
    """A name pattern, compiled on first use and kept as the module's attribute (PEP 562)."""
    source = _PATTERNS.get(name)
    if source is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    compiled = globals()[name] = re.compile(source)
    return compiled

# Modes (SPEC §1): private to the user, whatever the umask.
DIR_MODE = 0o700
FILE_MODE = 0o600


def sessions_dir(project_dir: str | os.PathLike[str]) -> Path:
    """`<project>/.evo-agent/sessions`."""
    return Path(project_dir) / SESSIONS_SUBDIR


def transcript_path(session_dir: str | os.PathLike[str]) -> Path:
    """A session's main transcript, `<session dir>/messages.jsonl`."""
    return Path(session_dir) / MESSAGES_NAME


def tasks_dir(project_dir: str | os.PathLike[str]) -> Path:
    """`<project>/.evo-agent/tasks`: where the Session Plan lives."""
    return Path(project_dir) / TASKS_SUBDIR


def task_file_name(task_id: int) -> str:
    """`task_<n>.json`."""
    return f"task_{task_id}.json"


def memory_dir(project_dir: str | os.PathLike[str]) -> Path:
    """`<project>/.evo-agent/memory`: the project's Auto Memory."""
    return Path(project_dir) / MEMORY_SUBDIR


def user_state_dir(environ: Mapping[str, str] | None = None) -> Path:
    """`$XDG_STATE_HOME/evo-agent`, else `~/.local/state/evo-agent`: what evo-agent keeps for the user (history).

    Here rather than in workspace.py: the listing reads `made` (origin.py) from it, and should not load the rest.
    """
    return Path(xdg_base("XDG_STATE_HOME", (".local", "state"), environ)) / USER_DIR_NAME


def xdg_base(variable: str, under_home: tuple[str, ...], environ: Mapping[str, str] | None = None) -> str:
    """`$variable` when it is an absolute path, else `$HOME/<under_home>` (the user's own directories).

    A relative value is ignored, as the XDG spec says: it names a directory inside whatever project evo-agent
    runs in, whose committed `.config/evo-agent/mcp.json` would be "the user's own" servers
    (tests/security/test_relative_xdg_is_not_the_users.py). A relative `$HOME` likewise: the password
    database's home directory is taken instead.
    """
    env = os.environ if environ is None else environ
    value = env.get(variable) or ""
    if os.path.isabs(value):
        return value
    home = env.get("HOME") or ""
    if not os.path.isabs(home):
        import pwd

        try:
            home = pwd.getpwuid(os.getuid()).pw_dir
        except KeyError:
            home = "/"
    return os.path.join(home, *under_home)
