"""Where the team store is: `EVO_AGENT_SYNC_URL`, else `sync_url` in the user's config file.

The config file is user-level (`$XDG_CONFIG_HOME/evo-agent/config.toml`, else
`~/.config/evo-agent/config.toml`), never the project's: a URL holds a
password, and a project's files get committed. `EVO_AGENT_SYNC_URL=` (set but
empty) turns sync off even when the file names a URL.

The URL is never printed as is: `redact_url` replaces the password, and every
message about the store names it that way.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from evo_agent.session import lazy_re

ENV_NAME = "EVO_AGENT_SYNC_URL"
CONFIG_KEY = "sync_url"
_SCHEMES = ("postgresql://", "postgres://")


class SyncConfigError(Exception):
    """The configured URL or config file cannot be used: one printable line."""


def config_path(environ: Mapping[str, str]) -> Path:
    base = environ.get("XDG_CONFIG_HOME") or os.path.join(environ.get("HOME") or os.path.expanduser("~"), ".config")
    return Path(base) / "evo-agent" / "config.toml"


def configured_url(environ: Mapping[str, str] | None = None) -> str | None:
    """The store's URL, or None when sync is off. Raises SyncConfigError for a URL that cannot be one."""
    environ = os.environ if environ is None else environ
    url: str | None
    if ENV_NAME in environ:
        url = environ[ENV_NAME].strip()
        source = ENV_NAME
    else:
        url, source = _from_file(config_path(environ))
    if not url:
        return None
    if not url.startswith(_SCHEMES):
        _mask_typo_password(url)  # sync stays off, but the value is still in the variable or the file
        raise SyncConfigError(f"{source} must be a postgresql://… URL, not {_head(url)!r}")
    _mask_password(url)
    return url


def _mask_password(url: str) -> None:
    """The store's password is the agent's own secret: masked in transcripts in every form (SPEC §9)."""
    from evo_agent.session import add_secret_value

    for spelling in password_spellings(url):
        add_secret_value(spelling, ENV_NAME)


def password_spellings(url: str) -> list[str]:
    """The URL's password as written (in the user part, in each `password=` parameter) and decoded, as the
    server sees it (%-escapes undone: what a tool, or an error quoting it, could print); no empty one."""
    found = []
    netloc = url.partition("://")[2].split("/", 1)[0].split("?", 1)[0]
    userinfo, at, _host = netloc.rpartition("@")
    if at and ":" in userinfo:
        found.append(userinfo.partition(":")[2])
    found += [url[match.end(1):match.end()] for match in _PASSWORD_PARAM.finditer(url)]
    decoded = url_password(url)
    if decoded:
        found.append(decoded)
    return [p for p in found if p]


_TYPO_USERINFO = lazy_re(r"(?:^|[/\s\"'])[^\s:/@\"']+:([^\s@/\"']+)@")


def _mask_typo_password(value: str) -> None:
    """The password of a value that was meant to be the URL (`bob:pw@db/team`, `postgresql:/bob:pw@db`) is the
    agent's own secret all the same: an approved `cat` of the config file would hand it to the model."""
    from urllib.parse import unquote

    from evo_agent.session import add_secret_value

    for match in _TYPO_USERINFO.finditer(value):
        for spelling in {match.group(1), unquote(match.group(1))}:
            add_secret_value(spelling, ENV_NAME)


def _head(value: str) -> str:
    """What an error may quote of a value that is not a postgresql:// URL: up to its first `:` (`mysql:…`).

    Such a value is a typo of the URL as often as not (`postgresql:/bob:pw@db/team`, `bob:pw@db/team`), and
    redact_url finds the password only where `://` says where the user part is: the rest stays unquoted."""
    head, colon, _ = value.partition(":")
    head = head[:20]
    return head + ":…" if colon else head + ("…" if len(value) > 20 else "")


def _from_file(path: Path) -> tuple[str | None, str]:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None, str(path)
    except OSError as exc:
        raise SyncConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    import tomllib

    try:
        table = tomllib.loads(data.decode("utf-8", "replace"))
    except tomllib.TOMLDecodeError as exc:
        raise SyncConfigError(f"{path} is not valid TOML: {exc}") from None
    value = table.get(CONFIG_KEY)
    if value is None:
        return None, str(path)
    if not isinstance(value, str):
        raise SyncConfigError(f"{path}: {CONFIG_KEY} must be a string")
    return value.strip(), f"{CONFIG_KEY} in {path}"


_PASSWORD_PARAM = lazy_re(r"(password=)[^&\s]*", re.IGNORECASE)


def url_password(url: str) -> str | None:
    """The password a URL holds (in its user part or a `password=` parameter), decoded; None when it holds none."""
    from urllib.parse import unquote

    netloc = url.partition("://")[2].split("/", 1)[0].split("?", 1)[0]
    userinfo, at, _ = netloc.rpartition("@")
    if at and ":" in userinfo:
        return unquote(userinfo.partition(":")[2]) or None
    match = re.search(r"[?&]password=([^&\s]*)", url, re.IGNORECASE)
    return unquote(match.group(1)) if match and match.group(1) else None


def redact_url(url: str) -> str:
    """The URL with its password (in the user part or a `password=` parameter) replaced by `***`."""
    scheme, sep, rest = url.partition("://")
    if sep:
        end = min((i for i in (rest.find("/"), rest.find("?")) if i >= 0), default=len(rest))
        netloc, tail = rest[:end], rest[end:]
        userinfo, at, hostport = netloc.rpartition("@")
        if at and ":" in userinfo:
            netloc = f"{userinfo.partition(':')[0]}:***@{hostport}"
        url = f"{scheme}://{netloc}{tail}"
    return _PASSWORD_PARAM.sub(r"\1***", url)
