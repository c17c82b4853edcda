"""Which repository a project belongs to, the same on every clone and every machine.

A session is grouped by (repository, directory inside it), never by an
absolute path: two clones of one repository on two machines share one
history. The repository is the normalised `origin` URL — scheme, user,
password, port and `.git` dropped, host lowercased, so
`git@github.com:Org/App.git`, `https://tok@github.com/Org/App` and
`ssh://git@github.com:22/Org/App.git` are all `github.com/Org/App` — else
`root:<hash>` of the first root commit, else (no git at all)
`local:<host>:<absolute path>`.
"""

from __future__ import annotations

import getpass
import os
import re
import socket
from dataclasses import dataclass
from pathlib import Path

_SCP_LIKE = re.compile(r"^(?:[^@/]+@)?([^:/]+):(?!//)(.+)$")  # git@host:path (no scheme)
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)


@dataclass(frozen=True)
class Identity:
    repo: str
    subdir: str  # "" for the repository's root, else a relative POSIX path
    user: str
    host: str

    @property
    def who(self) -> str:
        return f"{self.user}@{self.host}"


def normalise_remote_url(url: str) -> str:
    """`host/path` of a git remote URL, however it is spelled (see the module docstring)."""
    url = url.strip()
    if _SCHEME.match(url):
        rest = _SCHEME.sub("", url, count=1)
        scheme = url[: len(url) - len(rest)].lower()
        if scheme == "file://":
            return _strip_path(rest)
        rest = rest.split("#", 1)[0].split("?", 1)[0]  # a query or fragment names no repository (?private_token=)
        host, _, path = rest.partition("/")
        host = host.rpartition("@")[2]  # drop user[:password]@
        if host.startswith("["):  # [ipv6]:port
            host = host.partition("]")[0] + "]"
        else:
            host = host.partition(":")[0]
        return f"{host.lower()}/{_strip_path(path)}"
    match = _SCP_LIKE.match(url)
    if match and "/" not in match.group(1):
        return f"{match.group(1).lower()}/{_strip_path(match.group(2))}"
    return _strip_path(url)  # a local path used as a remote


def _masked(repo: str) -> str:
    """The identity with any secret shape masked (SPEC §9: only what is redacted leaves the machine). It goes
    into every session row the store keeps; a token in an origin's path (`https://host/glpat-…/app`) went
    with it. Masking is the same on every machine, so clones with the same origin still share one history."""
    from evo_agent.session import redact_text

    return redact_text(repo)


def _strip_path(path: str) -> str:
    path = path.strip().strip("/")
    while path.endswith((".git", "/")):
        path = path[:-4] if path.endswith(".git") else path[:-1]
    return path


def _git(project_dir: Path, *args: str) -> str | None:
    """git through the session library's one door (no repository code runs: `evo_agent.session.run_git`)."""
    from evo_agent.session import run_git

    out = run_git(project_dir, *args)
    return out.strip() if out and out.strip() else None


def current_user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return str(os.getuid())


def project_identity(project_dir: Path | str) -> Identity:
    """The identity of `project_dir` (runs git two or three times: call it off the turn's path)."""
    project_dir = Path(project_dir).absolute()
    user, host = current_user(), socket.gethostname()
    top = _git(project_dir, "rev-parse", "--show-toplevel")
    if top is None:
        return Identity(f"local:{host}:{project_dir}", "", user, host)
    subdir = os.path.relpath(project_dir.resolve(), Path(top).resolve())
    subdir = "" if subdir == "." else Path(subdir).as_posix()
    origin = _git(project_dir, "config", "--get", "remote.origin.url")
    if origin:
        return Identity(_masked(normalise_remote_url(origin)), subdir, user, host)
    roots = _git(project_dir, "rev-list", "--max-parents=0", "HEAD")
    if roots:
        return Identity(f"root:{sorted(roots.split())[0]}", subdir, user, host)
    return Identity(f"local:{host}:{top}", subdir, user, host)
