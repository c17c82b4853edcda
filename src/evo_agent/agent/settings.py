"""The project's `.evo-agent/settings.json` (rules, default mode, sandbox) and the user's own rules.

    {
      "permission_mode": "ask",                       optional; --permission-mode and the env win
      "permissions": {"allow": ["Bash(npm test)", "Edit(src/**)"]},
      "sandbox": false, "sandbox_network": false      optional; --sandbox / --sandbox-network win
    }

`.evo-agent/settings.json` is what a repository shares with everyone who clones it, so it grants
authority only in a project the user trusts (`evo_agent.session.workspace_trust`; the command line
decides whether to read it at all), and never when it is a symbolic link, another user's, writable
by group or others (`SettingsRefused`: whoever could write it could grant themselves rules), or larger
than the 1 MiB the trust question reads.

The rules the user grants with "always in this project" are not written there, where a repository
could have put them or could change them with the next pull: they live in the user's own config
(`~/.config/evo-agent/projects/<key>.json`, `evo_agent.session.add_user_rule`), under a lock,
replaced atomically. The model's tools can write neither place.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from evo_agent.session import (
    AUTHORITY_MAX_BYTES,
    AUTHORITY_TOO_LARGE,
    PROJECT_DIR_NAME,
    SETTINGS_NAME,
    add_user_rule,
    json_object,
    user_rules,
)
from evo_agent.session import plain_dataclass as dataclass
from evo_agent.session import plain_field as field

from .rules import Rule, RuleError, parse_rules

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)
if TYPE_CHECKING:
    from typing import Any

    from evo_agent.session import Brought


class SettingsError(ValueError):
    """The settings file cannot be used; one printable line."""


class SettingsRefused(SettingsError):
    """The settings file is never obeyed (a symbolic link, another owner's, writable by others); one line."""


@dataclass
class Settings:
    allow: list[Rule] = field(default_factory=list)
    permission_mode: str | None = None
    sandbox: bool = False
    sandbox_network: bool = False


def settings_path(project_dir: Path | str) -> Path:
    return Path(project_dir) / PROJECT_DIR_NAME / SETTINGS_NAME


def load_settings(project_dir: Path | str) -> Settings:
    """The project's settings; defaults when there is no file. Raises SettingsError when it is unusable."""
    path = settings_path(project_dir)
    data = _read(path)
    if data is None:
        return Settings()
    return _settings(path, data)


def settings_as_shown(project_dir: Path | str, brought: tuple[Brought, ...]) -> Settings:
    """The project's settings as the trust question showed them (`brought`, read once for it), judged as
    `load_settings` judges the file; defaults when it brought none.

    Not the file read again: a pull in another terminal while the question waited swapped `Bash(npm test)`
    for `Bash`, and the "yes" given to the first obeyed the second for that run."""
    path = settings_path(project_dir)
    for b in brought:
        if b.path != f"{PROJECT_DIR_NAME}/{SETTINGS_NAME}":
            continue
        if b.unsafe:
            fix = f" until it is not (chmod go-w {_quoted(path)})" \
                if b.kind == "file" and b.uid == os.geteuid() else ""
            raise SettingsRefused(f"{path} is {b.unsafe}; it is never obeyed{fix}")
        try:
            data = json_object(b.data)
        except ValueError as exc:
            raise SettingsError(f"{path} is {exc}") from None
        return _settings(path, data)
    return Settings()


def _settings(path: Path, data: dict[str, Any]) -> Settings:
    """Settings from the file's object; SettingsError naming `path` when a field is unusable."""
    perms = data.get("permissions", {})
    if not isinstance(perms, dict) or not isinstance(perms.get("allow", []), list):
        raise SettingsError(f"{path}: \"permissions\" must be an object with an \"allow\" list")
    try:
        allow = parse_rules([str(r) for r in perms.get("allow", [])])
    except RuleError as exc:
        raise SettingsError(f"{path}: {exc}") from None
    mode = data.get("permission_mode")
    if mode is not None and not isinstance(mode, str):
        raise SettingsError(f"{path}: \"permission_mode\" must be a string")
    return Settings(allow, mode, _switch(data, "sandbox", path), _switch(data, "sandbox_network", path))


def _switch(data: dict[str, Any], key: str, path: Path) -> bool:
    """A JSON true or false, nothing else: `bool("false")` is true, so `"sandbox_network": "false"` (which the
    trust question shows as "false") gave every command the network."""
    value = data.get(key, False)
    if not isinstance(value, bool):
        raise SettingsError(f"{path}: \"{key}\" must be true or false, not {json.dumps(value)[:40]}")
    return value


def _read(path: Path) -> dict[str, Any] | None:
    """The file's JSON object; None when there is none. Opened without following a link, checked on the
    descriptor: a regular file of this user's that nobody else can write."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if os.path.islink(path):
            raise SettingsRefused(f"{path} is a symbolic link; it is never obeyed") from None
        raise SettingsError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise SettingsRefused(f"{path} is not a regular file; it is never obeyed")
        if st.st_uid != os.geteuid():
            raise SettingsRefused(f"{path} belongs to uid {st.st_uid}, not to you; it is never obeyed")
        if stat.S_IMODE(st.st_mode) & 0o022:
            raise SettingsRefused(f"{path} is writable by others (mode {stat.S_IMODE(st.st_mode):04o}); it is never "
                                  f"obeyed until it is not (chmod go-w {_quoted(path)})")
        raw = b""
        while len(raw) <= AUTHORITY_MAX_BYTES and (chunk := os.read(fd, AUTHORITY_MAX_BYTES + 1 - len(raw))):
            raw += chunk
        if len(raw) > AUTHORITY_MAX_BYTES:  # the trust question judged only its first MiB: never obeyed (workspace.py)
            raise SettingsRefused(f"{path} is {AUTHORITY_TOO_LARGE}; it is never obeyed")
    except OSError as exc:
        raise SettingsError(f"cannot read {path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    try:
        return json_object(raw)
    except ValueError as exc:
        raise SettingsError(f"{path} is {exc}") from None


def _quoted(path: Path) -> str:
    """`path` as a shell word: the refusal's `chmod go-w PATH` is meant to be pasted (an archive names the path)."""
    import shlex  # only when a file is refused: the start-up of `-p` imports no shlex

    return shlex.quote(str(path))


def load_user_rules(project_dir: Path | str) -> list[Rule]:
    """The rules the user granted with "always in this project" (kept in their own config, never the project's)."""
    try:
        return parse_rules(user_rules(project_dir))
    except RuleError as exc:
        raise SettingsError(f"your rules for this project: {exc}") from None


def add_project_rule(project_dir: Path | str, rule: Rule) -> Path:
    """Keep `rule` ("always in this project") in the user's own config for `project_dir`; returns the file."""
    return add_user_rule(project_dir, str(rule))


__all__ = ["Settings", "SettingsError", "SettingsRefused", "add_project_rule", "load_settings", "load_user_rules",
           "settings_as_shown", "settings_path"]
