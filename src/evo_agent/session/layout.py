"""The on-disk layout, said once: SPEC §1 in code.

```
<project>/.evo-agent/                 PROJECT_DIR_NAME (also the project marker, SPEC §1)
  settings.json, .settings.lock       SETTINGS_NAME, SETTINGS_LOCK_NAME (permission rules)
  history                             PROMPT_HISTORY_NAME (the prompt box's ↑ history)
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
        <unix_ms>_<4 hex>             a file's content before a tool changed it (BACKUP_NAME_RE)
```

Directories are created 0700 and files 0600 (SPEC §1): transcripts hold source
code, command output and sometimes secrets. Renaming a file on disk is a change
here; tests that check the on-disk contract itself keep the literal names.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = [
    "BACKUP_NAME_RE",
    "DIR_MODE",
    "FILE_HISTORY_DIR",
    "FETCHED_NAME",
    "FILE_MODE",
    "GITIGNORE_NAME",
    "GITIGNORE_TEXT",
    "LOCK_NAME",
    "MESSAGES_NAME",
    "META_NAME",
    "META_TMP_NAME",
    "PROJECT_DIR_NAME",
    "PROMPT_HISTORY_NAME",
    "SESSIONS_DIR_NAME",
    "SESSIONS_SUBDIR",
    "SETTINGS_LOCK_NAME",
    "SETTINGS_NAME",
    "SIDECHAIN_PATH_RE",
    "SIDECHAIN_SUFFIX",
    "STAGING_NAME",
    "SUBAGENT_DIR",
    "sessions_dir",
    "transcript_path",
]

# The project's own directory: where evo-agent keeps everything it writes (SPEC §1).
PROJECT_DIR_NAME = ".evo-agent"
SETTINGS_NAME = "settings.json"
SETTINGS_LOCK_NAME = ".settings.lock"
PROMPT_HISTORY_NAME = "history"

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

# `subagent/<unix ms>_<slug>_<4 hex>.jsonl` (SPEC §1); anything else a marker names is not followed.
SIDECHAIN_PATH_RE = re.compile(
    rf"\A{SUBAGENT_DIR}/[0-9]{{13}}_[a-z0-9-]{{1,40}}_[0-9a-f]{{4}}{re.escape(SIDECHAIN_SUFFIX)}\Z")
# `file-history/<unix ms>_<4 hex>`: never a path out of the session.
BACKUP_NAME_RE = re.compile(rf"\A{FILE_HISTORY_DIR}/[0-9]{{13}}_[0-9a-f]{{4}}\Z")

# Modes (SPEC §1): private to the user, whatever the umask.
DIR_MODE = 0o700
FILE_MODE = 0o600


def sessions_dir(project_dir: str | os.PathLike) -> Path:
    """`<project>/.evo-agent/sessions`."""
    return Path(project_dir) / SESSIONS_SUBDIR


def transcript_path(session_dir: str | os.PathLike) -> Path:
    """A session's main transcript, `<session dir>/messages.jsonl`."""
    return Path(session_dir) / MESSAGES_NAME
