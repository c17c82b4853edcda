"""↑/↓ prompt history kept per project across runs, in the user's state directory — never in the project.

A file in the project (evo-agent before 0.2 kept `.evo-agent/history`) is one a repository can commit:
planted "previous prompts" would appear under ↑ as if the user had typed them, and a committed symbolic
link there would make every prompt the user types land in a tracked file. So the history lives in
`$XDG_STATE_HOME/evo-agent/history/<key>` (else `~/.local/state/…`; the key is a hash of the project's
real path, `evo_agent.session.history_file`), in 0700 directories, and is opened without following a
symbolic link (O_NOFOLLOW), read and written alike; it is created 0600.

Every prompt passes through the same secret redaction as transcripts before it is stored: a key
pasted into a prompt is masked on disk. The format is prompt_toolkit's own (`+line` lines after a
`# timestamp` line). A history that cannot be written (read-only disk) is simply not kept; typing
never fails because of it.
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Iterable
from pathlib import Path

from prompt_toolkit.history import FileHistory

from evo_agent.session import DIR_MODE, FILE_MODE, history_file, redact_text

__all__ = ["ProjectHistory", "history_path", "MAX_LOADED"]

MAX_LOADED = 1000  # newest prompts offered by ↑; the file itself keeps everything
MAX_READ = 8 << 20  # a larger history file is read from its end


def history_path(project_dir: Path | str) -> Path:
    """The history file of `project_dir`, in the user's state directory."""
    return history_file(project_dir)


def _parse(data: bytes) -> list[str]:
    """prompt_toolkit's file format, oldest first."""
    strings: list[str] = []
    lines: list[str] = []
    for raw in data.splitlines(keepends=True):
        line = raw.decode("utf-8", errors="replace")
        if line.startswith("+"):
            lines.append(line[1:])
        else:
            if lines:
                strings.append("".join(lines)[:-1])
            lines = []
    if lines:
        strings.append("".join(lines)[:-1])
    return strings


class ProjectHistory(FileHistory):
    """prompt_toolkit's FileHistory, stored 0600 and redacted, never through a link, loaded off the start-up path."""

    def __init__(self, path: Path, *, redact: bool = True) -> None:
        super().__init__(str(path))
        self.path = path
        self.redact = redact

    def load_history_strings(self) -> Iterable[str]:
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            return []
        try:
            size = os.fstat(fd).st_size
            if size > MAX_READ:
                os.lseek(fd, size - MAX_READ, os.SEEK_SET)
            data = b""
            while chunk := os.read(fd, 1 << 20):
                data += chunk
        except OSError:
            return []
        finally:
            os.close(fd)
        return list(reversed(_parse(data)))[:MAX_LOADED]  # newest first

    def store_string(self, string: str) -> None:
        text = redact_text(string) if self.redact else string
        block = f"\n# {datetime.datetime.now().isoformat(timespec='seconds')}\n" + "".join(
            f"+{line}\n" for line in text.split("\n"))
        try:
            self.path.parent.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE)
            try:
                os.write(fd, block.encode("utf-8", "replace"))
            finally:
                os.close(fd)
        except OSError:
            pass
