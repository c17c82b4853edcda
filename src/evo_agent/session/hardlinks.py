"""Whether a file read from a project is also a name of a file elsewhere (a hard link).

A symbolic link is seen and refused before a file is opened; a hard link is not a link at all to `lstat`: it is
the file itself under a second name. git cannot commit one, but an archive can carry one, and an extractor that
honours it (Python's `tarfile`, `shutil.unpack_archive`: `../../.ssh/id_rsa` or an absolute name) makes the
project's `AGENTS.md` or memory topic file the user's private key, which evo-agent would read unasked. A file
with more than one name is the project's only when every name is in the directory it was read from (`ln
AGENTS.md CLAUDE.md`): one `lstat` per entry of that directory, and only for a file that has other names.
"""

from __future__ import annotations

import os

__all__ = ["linked_elsewhere"]


def linked_elsewhere(directory: int | str | os.PathLike[str], info: os.stat_result) -> bool:
    """Whether the file `info` describes (its `fstat`) has a name outside `directory` (a path or descriptor).

    False for a file with one name (every file git checks out), True when the directory cannot be listed."""
    if info.st_nlink <= 1:
        return False
    names = 0
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                try:
                    found = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if found.st_ino == info.st_ino and found.st_dev == info.st_dev:
                    names += 1
    except OSError:
        return True
    return names < info.st_nlink
