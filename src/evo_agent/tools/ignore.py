"""Which files the search tools skip: what git ignores, as ripgrep does.

The rules come from `.git/info/exclude`, the `.gitignore` at the top of the
repository and every nested `.gitignore` (each relative to its own
directory, deeper files overriding shallower ones, `!` re-including), matched
by `pathspec`'s implementation of git's own rules. Each file is read as
`read_ignore_file` says: no symlink followed, no blocking, at most 1 MiB. Outside a git repository
the project's `.gitignore` files still apply. `.git` and `.evo-agent` are
never walked whatever the rules say.

A walk that starts inside an ignored directory the model named explicitly
(`grep` with `path: ".venv"`, `glob` of `.venv/**/*.py`) searches it: naming
it is asking for it, as with `rg PATTERN .venv`.
"""

from __future__ import annotations

import os
from pathlib import Path

from evo_agent.session import PROJECT_DIR_NAME, git_dir_of, read_git_file

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)
if TYPE_CHECKING:
    from collections.abc import Iterator

    import pathspec

ALWAYS_SKIPPED = frozenset({".git", PROJECT_DIR_NAME})


MAX_IGNORE_BYTES = 1 << 20  # what is read of one ignore file; a longer one's rest is not obeyed


def read_ignore_file(path: Path, limit: int = MAX_IGNORE_BYTES) -> str | None:
    """The text of an ignore file, or None: missing, a symlink, not a regular file, unreadable.

    A repository commits these files, so each is opened as git >= 2.32 opens an in-tree `.gitignore`: never
    through a symlink (`.gitignore -> /dev/zero` would be read forever), without blocking (an unpacked
    archive's FIFO would wait for a writer forever), and at most `limit` bytes of it are read.
    """
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks: list[bytes] = []
        left = limit
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 16))):
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks).decode("utf-8", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)


def _read_spec(path: Path) -> pathspec.GitIgnoreSpec | None:
    text = read_ignore_file(path)
    if text is None:
        return None
    lines = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    if not lines:
        return None
    import pathspec  # here, not at the top: ~25 ms that starting the agent need not pay before the first search

    return pathspec.GitIgnoreSpec.from_lines(lines)


def _repository_root(start: Path) -> Path | None:
    for directory in (start, *start.parents):
        if os.path.lexists(directory / ".git"):
            return directory
    return None


class IgnoreRules:
    """Git's ignore rules for the files under `root` (the repository's top, else the project)."""

    def __init__(self, project_dir: Path | str) -> None:
        project = Path(os.path.abspath(project_dir))
        self.root = _repository_root(project) or project
        self._specs: dict[str, pathspec.GitIgnoreSpec | None] = {}
        git_dir = self._git_dir()
        self._exclude = _read_spec(git_dir / "info" / "exclude") if git_dir else None

    def _git_dir(self) -> Path | None:
        target = git_dir_of(self.root)
        if target is None or target == self.root / ".git":
            return target
        # A linked worktree keeps info/exclude in the main .git (its `commondir`; read without blocking).
        common = (read_git_file(target / "commondir") or "").strip()
        if not common:
            return target
        shared = Path(common)
        return shared if shared.is_absolute() else (target / shared)

    def _spec_of(self, rel_dir: str) -> pathspec.GitIgnoreSpec | None:
        if rel_dir not in self._specs:
            self._specs[rel_dir] = _read_spec(self.root / rel_dir / ".gitignore")
        return self._specs[rel_dir]

    def ignored(self, path: Path | str, is_dir: bool) -> bool:
        """Whether git would ignore `path` (absolute); paths outside `root` are never ignored."""
        try:
            rel = Path(path).relative_to(self.root).as_posix()
        except ValueError:
            return False
        if rel in ("", "."):
            return False
        parts = rel.split("/")
        verdict = False
        if self._exclude is not None:
            verdict = self._decide(self._exclude, rel, is_dir, verdict)
        for depth in range(len(parts)):
            spec = self._spec_of("/".join(parts[:depth]))
            if spec is not None:
                verdict = self._decide(spec, "/".join(parts[depth:]), is_dir, verdict)
        return verdict

    @staticmethod
    def _decide(spec: pathspec.GitIgnoreSpec, rel: str, is_dir: bool, verdict: bool) -> bool:
        result = spec.check_file(rel + "/" if is_dir else rel)
        return verdict if result.include is None else bool(result.include)

    def ignored_within(self, path: Path | str) -> bool:
        """Whether `path` or a directory above it (up to `root`) is ignored: a walk starting there was asked for."""
        here = Path(os.path.abspath(path))
        chain = [here, *here.parents]
        for directory in reversed(chain):
            if directory != self.root and self.root in directory.parents and self.ignored(directory, True):
                return True
        return False


def walk(base: Path, rules: IgnoreRules | None) -> Iterator[tuple[str, list[str], list[str]]]:
    """os.walk of `base` in name order without ALWAYS_SKIPPED and, given `rules`, without what they ignore.

    Yields (dirpath, dirnames, filenames) like os.walk; a caller may still prune `dirnames`.
    """
    if rules is not None and rules.ignored_within(base):
        rules = None  # the walk starts inside an ignored directory the caller named: search it
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if d not in ALWAYS_SKIPPED)
        files = sorted(f for f in filenames if f not in ALWAYS_SKIPPED)
        if rules is not None:
            dirnames[:] = [d for d in dirnames if not rules.ignored(os.path.join(dirpath, d), True)]
            files = [f for f in files if not rules.ignored(os.path.join(dirpath, f), False)]
        yield dirpath, dirnames, files
