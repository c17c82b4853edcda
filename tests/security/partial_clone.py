"""Hostile repositories that make git run code without any program-naming setting git's door turns off:
a "partial clone" whose missing objects git fetches on a plain read (the fetch runs the remote's
`uploadpack`, or a remote helper), a submodule with its own filter driver, a filter named with `=`.
Each is what an unpacked tarball (or a copied directory) brings in its `.git/`.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path

from tests.security.hostile import GIT, git

# How the promisor remote reaches a program: (remote url, extra config), given the marker and a helper dir.
LAZY_FETCH_SPELLINGS = ("uploadpack", "file-url", "ext", "remote-helper", "vcs-helper")


def _run(repo: Path, *args: str) -> str:
    result = git(repo, *args)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def partial_clone(tmp_path: Path, marker: Path, spelling: str = "uploadpack") -> tuple[Path, Path]:
    """(the victim, a directory to put on PATH): a repository whose root commit and newest blob are missing and
    whose config names a promisor remote that runs `touch marker` when git lazily fetches them."""
    origin = tmp_path / "origin"
    origin.mkdir()
    subprocess.run([*GIT, "init", "-q", str(origin)], check=True)
    for name, content in (("a.txt", "one\n"), ("b.txt", "two\n")):
        (origin / name).write_text(content)
        _run(origin, "add", name)
        _run(origin, "commit", "-q", "-m", name)
    victim = tmp_path / "victim"
    shutil.copytree(origin, victim, symlinks=True)
    for obj in (_run(victim, "rev-list", "--max-parents=0", "HEAD"), _run(victim, "rev-parse", "HEAD:b.txt")):
        os.remove(victim / ".git" / "objects" / obj[:2] / obj[2:])
    touch = f"touch {shlex.quote(str(marker))}; echo PWNED-lazy-fetch >&2; false"
    helpers = tmp_path / "helpers"
    helpers.mkdir()
    for name in ("git-remote-evil", "git-remote-vcsevil"):
        (helpers / name).write_text(f"#!/bin/sh\n{touch}\n")
        (helpers / name).chmod(0o755)
    url, extra = {
        "uploadpack": (str(origin), {"remote.evil.uploadpack": touch}),
        "file-url": (f"file://{origin}", {"remote.evil.uploadpack": touch}),
        "ext": (f"ext::sh -c touch% {marker}", {}),
        "remote-helper": ("evil::whatever", {}),
        "vcs-helper": ("/nonexistent", {"remote.evil.vcs": "vcsevil"}),
    }[spelling]
    config = {"core.repositoryformatversion": "1", "extensions.partialClone": "evil", "remote.evil.url": url,
              "remote.evil.promisor": "true", "remote.evil.partialclonefilter": "blob:none",
              **{f"protocol.{p}.allow": "always" for p in ("file", "ext", "evil", "vcsevil")}, **extra}
    for key, value in config.items():
        _run(victim, "config", key, value)
    return victim, helpers


def submodule_with_filter(tmp_path: Path, marker: Path) -> Path:
    """A superproject whose submodule's own `.git/config` and `.gitattributes` name a clean filter, with a
    file in the submodule whose stat changed (so `git status` in the submodule re-hashes it)."""
    sup = tmp_path / "super"
    subprocess.run([*GIT, "init", "-q", str(sup)], check=True)
    sub = sup / "sub"
    subprocess.run([*GIT, "init", "-q", str(sub)], check=True)
    (sub / "f.txt").write_text("x\n")
    (sub / ".gitattributes").write_text("* filter=evil\n")
    _run(sub, "add", ".")
    _run(sub, "commit", "-q", "-m", "sub")
    _run(sup, "-c", "protocol.file.allow=always", "submodule", "add", "-q", "./sub", "sub")
    _run(sup, "commit", "-q", "-m", "super")
    _run(sub, "config", "filter.evil.clean", f"touch {shlex.quote(str(marker))}; echo PWNED-submodule >&2; cat")
    _run(sub, "config", "status.submoduleSummary", "true")
    _run(sup, "config", "status.submoduleSummary", "true")
    _run(sup, "config", "diff.submodule", "diff")
    _run(sup, "config", "diff.ignoreSubmodules", "none")
    _run(sup, "config", "submodule.sub.ignore", "none")      # a submodule's own setting outranks diff.ignoreSubmodules
    _run(sup, "config", "-f", ".gitmodules", "submodule.sub.ignore", "none")
    os.utime(sub / "f.txt", (1, 1))
    return sup


def filter_named(tmp_path: Path, marker: Path, name: str) -> Path:
    """A repository whose `.gitattributes` gives every file the filter `name` (say `x=y`), configured to run."""
    repo = tmp_path / "eq"
    subprocess.run([*GIT, "init", "-q", str(repo)], check=True)
    (repo / "f.txt").write_text("s\n")
    (repo / ".gitattributes").write_text(f"* filter={name}\n")
    _run(repo, "add", ".")
    _run(repo, "commit", "-q", "-m", "init")
    _run(repo, "config", f"filter.{name}.clean", f"touch {shlex.quote(str(marker))}; echo PWNED-filter >&2; cat")
    os.utime(repo / "f.txt", (1, 1))
    return repo
