"""↑/↓ prompt history kept per project across runs, in `<project>/.evo-agent/history`.

The file is private (0600, like transcripts) and every prompt passes through the same secret
redaction as transcripts before it is stored: a key pasted into a prompt is masked on disk. The
format is prompt_toolkit's own (`+line` lines after a `# timestamp` line). A history that cannot be
written (read-only disk) is simply not kept; typing never fails because of it.
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Iterable
from pathlib import Path

from prompt_toolkit.history import FileHistory

from evo_agent.session import DIR_MODE, FILE_MODE, GITIGNORE_NAME, PROJECT_DIR_NAME, PROMPT_HISTORY_NAME, redact_text

__all__ = ["ProjectHistory", "history_path", "MAX_LOADED"]

MAX_LOADED = 1000  # newest prompts offered by ↑; the file itself keeps everything


def history_path(project_dir: Path | str) -> Path:
    return Path(project_dir) / PROJECT_DIR_NAME / PROMPT_HISTORY_NAME


class ProjectHistory(FileHistory):
    """prompt_toolkit's FileHistory, stored 0600 and redacted, loaded off the start-up path."""

    def __init__(self, path: Path, *, redact: bool = True) -> None:
        super().__init__(str(path))
        self.path = path
        self.redact = redact

    def load_history_strings(self) -> Iterable[str]:
        try:
            strings = list(super().load_history_strings())  # newest first
        except OSError:
            return []
        return strings[:MAX_LOADED]

    def store_string(self, string: str) -> None:
        text = redact_text(string) if self.redact else string
        block = f"\n# {datetime.datetime.now().isoformat(timespec='seconds')}\n" + "".join(
            f"+{line}\n" for line in text.split("\n"))
        try:
            self.path.parent.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
            _ignore_in_git(self.path)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, FILE_MODE)
            try:
                os.write(fd, block.encode("utf-8", "replace"))
            finally:
                os.close(fd)
        except OSError:
            pass


def _ignore_in_git(path: Path) -> None:
    """`.evo-agent/.gitignore` names the history, so prompts are never committed by accident."""
    ignore = path.parent / GITIGNORE_NAME
    if not ignore.exists():
        fd = os.open(ignore, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            os.write(fd, f"/{PROMPT_HISTORY_NAME}\n".encode())
        finally:
            os.close(fd)
