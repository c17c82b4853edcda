"""The project's `.evo-agent/settings.json`: permission rules, default mode, sandbox.

    {
      "permission_mode": "ask",                       optional; --permission-mode and the env win
      "permissions": {"allow": ["Bash(npm test)", "Edit(src/**)"]},
      "sandbox": false, "sandbox_network": false      optional; --sandbox / --sandbox-network win
    }

The file lives beside the sessions, where the model's tools may never write, so a
prompt-injected model cannot grant itself rules. "Always in this project" adds a rule by
re-reading the file and replacing it atomically (temp file 0600, fsync, rename): a reader
never sees half of it and another process's rule added in between is kept.
"""

from __future__ import annotations

import fcntl
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from evo_agent.session import DIR_MODE, FILE_MODE, PROJECT_DIR_NAME, SETTINGS_LOCK_NAME, SETTINGS_NAME

from .rules import Rule, RuleError, parse_rules


class SettingsError(ValueError):
    """The settings file cannot be used; one printable line."""


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
    return Settings(allow, mode, bool(data.get("sandbox", False)), bool(data.get("sandbox_network", False)))


def _read(path: Path) -> dict | None:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise SettingsError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise SettingsError(f"{path} is not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise SettingsError(f"{path} must hold a JSON object")
    return data


def add_project_rule(project_dir: Path | str, rule: Rule) -> Path:
    """Append `rule` to the project's allow list (once), atomically; returns the file's path."""
    path = settings_path(project_dir)
    path.parent.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    lock_fd = os.open(path.parent / SETTINGS_LOCK_NAME, os.O_RDWR | os.O_CREAT, FILE_MODE)
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX)
        data = _read(path) or {}
        perms = data.setdefault("permissions", {})
        if not isinstance(perms, dict):
            raise SettingsError(f"{path}: \"permissions\" must be an object")
        allow = perms.setdefault("allow", [])
        if str(rule) not in allow:
            allow.append(str(rule))
        _write_atomic(path, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    finally:
        os.close(lock_fd)
    return path


def _write_atomic(path: Path, data: bytes) -> None:
    import tempfile  # only when a rule is saved: not on the start-up path

    fd, tmp = tempfile.mkstemp(prefix=".settings.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, FILE_MODE)
        os.write(fd, data)
        os.fsync(fd)
        os.close(fd)
        fd = -1
        os.replace(tmp, path)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


__all__ = ["Settings", "SettingsError", "add_project_rule", "load_settings", "settings_path"]
