"""Where a path really points: inside the project, inside `.evo-agent/`, or outside (SPEC §9).

Every check resolves the path the way the kernel will when the tool opens it: `~` expanded,
relative to the project (never to the agent's own working directory), `..` and symlinks
followed (`os.path.realpath`, which also resolves a missing tail as far as it exists). A
symlink inside the project that points at `~/.ssh` is therefore outside the project.
"""

from __future__ import annotations

import os
from pathlib import Path

from evo_agent.session import PROJECT_DIR_NAME

AGENT_DIR = PROJECT_DIR_NAME  # the tools' name for it: what write_file/edit_file never touch
# Paths whose change would let a later "read-only" command execute code (git runs
# `core.fsmonitor`, pagers, diff drivers from `.git/config`): edits here always ask.
SENSITIVE_DIRS = (".git",)


def real(path: str | os.PathLike[str]) -> Path:
    return Path(os.path.realpath(path))


def resolve_in(project_dir: Path | str, path: str) -> Path:
    """The real path a tool would touch for `path` given by the model."""
    p = os.path.expanduser(path)
    if not os.path.isabs(p):
        p = os.path.join(project_dir, p)
    return real(p)


def is_within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def inside_project(project_dir: Path | str, resolved: Path) -> bool:
    return is_within(resolved, real(project_dir))


def in_agent_dir(project_dir: Path | str, resolved: Path) -> bool:
    """True when `resolved` lies in the project's `.evo-agent/` (its transcripts and rules), in any letter case:
    on a case-insensitive file system (macOS's default) `.EVO-AGENT/settings.json` is that very file."""
    root = real(project_dir)
    if not is_within(resolved, root) or resolved == root:
        return False
    return resolved.relative_to(root).parts[0].casefold() == AGENT_DIR


def in_user_config(resolved: Path) -> bool:
    """`resolved` lies in the user's own evo-agent config (`~/.config/evo-agent`): MCP servers started at every
    launch, "always" rules, trust answers, instructions and memory for every project. More than `.evo-agent/`
    grants, so the file tools refuse it as they refuse that."""
    from evo_agent.session import user_config_dir

    return is_within(resolved, real(user_config_dir()))


def in_sensitive_dir(project_dir: Path | str, resolved: Path) -> bool:
    """`resolved` lies in (or is) a `.git` of the project: the top one, or a nested repository's (`vendor/x/.git`,
    or one a write would create, `docs/.git/config`), in any letter case: git run there later obeys its config and
    hooks."""
    root = real(project_dir)
    if not is_within(resolved, root):
        return False
    return any(part.casefold() in SENSITIVE_DIRS for part in resolved.relative_to(root).parts)  # `.GIT` too (macOS)


def relative_posix(project_dir: Path | str, resolved: Path) -> str | None:
    """The project-relative path (posix), or None when `resolved` is outside the project."""
    root = real(project_dir)
    if not is_within(resolved, root):
        return None
    return resolved.relative_to(root).as_posix() or "."


__all__ = [
    "AGENT_DIR",
    "in_agent_dir",
    "in_sensitive_dir",
    "in_user_config",
    "inside_project",
    "is_within",
    "real",
    "relative_posix",
    "resolve_in",
]
