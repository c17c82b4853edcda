"""Every git process evo-agent starts, through one door that cannot run a repository's code (SPEC §9).

A repository is content, never authority. Yet plain `git` in a directory of a
cloned repository (or of an unpacked archive, or inside a committed
`.evo-agent/sessions/` holding `HEAD`, `config`, `objects/`, `refs/`) reads
configuration that directory chose, and that configuration names programs git
runs: `core.fsmonitor` on every index read, hooks, pagers, external diff and
textconv drivers, clean/smudge filters, `core.sshCommand`. So evo-agent never
runs git plainly:

- the repository is named explicitly (`--git-dir` the worktree root's own
  `.git`, `--work-tree` the root): git discovers nothing, so a directory that
  merely looks like a repository is never one to it; `safe.bareRepository=explicit`
  and `GIT_CEILING_DIRECTORIES` stop discovery even if a command tried;
- the command line turns off what could run a program, whatever any config file
  says (`-c` outranks the repository's config): fsmonitor, hooks, pager,
  external diff, attributes file, transports (`protocol.allow=never`),
  credential helpers, ssh and askpass commands, gpg programs, submodule summaries;
- nothing is fetched: a repository whose config says it is a partial clone
  (`extensions.partialClone`, `remote.X.promisor`) makes git fetch any object it
  lacks, through the remote's `uploadpack` or a remote helper, on a plain
  `rev-list`; the repository's own `protocol.file.allow=always` outranks a
  command line's `protocol.allow=never`. So the environment carries
  `GIT_ALLOW_PROTOCOL` (a list no transport is on; it outranks every config
  file, and git checks it for every transport and remote helper, git 2.39 included),
  `GIT_NO_LAZY_FETCH=1` (git >= 2.45 then does not even try), and the command
  line turns each built-in transport off by name (`SAFE_ENV`, `SAFE_CONFIG`);
- only read-only plumbing runs (`ALLOWED`): none of it checks files out, diffs
  contents or fetches, so no filter or textconv driver named in `.gitattributes`
  has a reason to run;
- the environment carries no `GIT_*` variable of the caller's (a `GIT_DIR` or
  `GIT_CONFIG_PARAMETERS` inherited from a hook would redirect it), and HOME and
  XDG_CONFIG_HOME name an empty private directory, with GIT_CONFIG_NOSYSTEM
  (`config_pins`): no global or system configuration file is read at all;
- a repository another user owns (a `/tmp/.git` above a shared directory, or the
  common directory a `commondir` names) is not read at all: git refuses one it
  discovers (`safe.directory`) but trusts an explicit `--git-dir`, so the door
  checks the owner itself;
- nor is one whose own files (`HEAD`, `config`, `index`, `packed-refs`, …:
  project.GIT_OWN_FILES, every file under refs/ and objects/, and under each alternate
  object directory) include a FIFO, device or socket: git would block
  opening a FIFO until the timeout kills it (an unpacked archive keeps FIFOs);
- nor is one whose configuration includes (`[include]`, `[includeIf]`, however spelled) anything but a regular
  file: git opens an included path as configuration whatever it is, and `path = /dev/tty` (or `/dev/pts/N`) had
  it read the keys the user typed until the timeout (project.included_special_file).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    import subprocess

__all__ = ["ALLOWED", "GIT_SAFE_CONFIG", "GIT_SAFE_ENV", "GitRefused", "SAFE_CONFIG", "SAFE_ENV",
           "config_pins", "git_argv", "git_config_pins", "git_env", "git_program", "repository", "run_git",
           "start_git", "start_in"]

GIT_TIMEOUT_S = 10

# What could make git run a program, turned off on the command line (outranks every config file).
SAFE_CONFIG: tuple[str, ...] = (
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "core.attributesFile=/dev/null",
    "core.sshCommand=false",
    "core.askPass=false",
    "core.gitProxy=false",
    "core.untrackedCache=false",
    "diff.external=",
    "diff.autoRefreshIndex=false",  # else `git diff` rewrites the index (GIT_OPTIONAL_LOCKS does not stop it)
    "credential.helper=",
    "protocol.allow=never",
    # A transport the repository allows by name outranks protocol.allow: each one off by name too.
    *(f"protocol.{name}.allow=never" for name in ("file", "ext", "fd", "ssh", "git", "http", "https", "ftp", "ftps")),
    "submodule.recurse=false",
    "status.submoduleSummary=false",   # `git submodule summary`, run inside each submodule
    "diff.ignoreSubmodules=all",
    "diff.submodule=short",
    "log.showSignature=false",
    "gpg.program=false",
    "gpg.ssh.program=false",
    "gpg.x509.program=false",
    "safe.bareRepository=explicit",
)

# What every git evo-agent starts (the door's, and the bash tool's unasked git) has in its environment.
SAFE_ENV: dict[str, str] = {
    # The only transports allowed: none ("/" names no protocol or remote helper). Outranks every config file.
    "GIT_ALLOW_PROTOCOL": "/",
    "GIT_NO_LAZY_FETCH": "1",     # git >= 2.45: a missing object is never fetched from a promisor remote
    "GIT_OPTIONAL_LOCKS": "0",    # a read never takes the index lock (or rewrites the index)
    "GIT_TERMINAL_PROMPT": "0",
}
_pinned_home: list[str] = []


def config_pins() -> dict[str, str]:
    """What keeps every configuration file but the repository's own from git: HOME and XDG_CONFIG_HOME pinned to
    an empty directory of this process's own (made once, 0700, removed at exit), no system file.

    The user's `~/.gitconfig` is the user's, yet HOME is only a variable: an unasked `printf -v HOME <clone>/cfg`
    (now refused too) or an environment naming a directory inside the project handed git a configuration the
    clone wrote, and the filter scan, which read the real one, never saw its clean filter. git's global
    settings only change how a status, log or diff looks, so nothing is lost that a read needs.
    """
    if not _pinned_home:
        import atexit

        from .writer import new_private_temp_dir

        home = new_private_temp_dir("evo-agent-git-home")
        atexit.register(_remove_empty, home)
        _pinned_home.append(home)
    home = _pinned_home[0]
    return {"HOME": home, "XDG_CONFIG_HOME": home, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null"}


def _remove_empty(path: str) -> None:
    try:
        os.rmdir(path)
    except OSError:
        pass


git_config_pins = config_pins  # the name evo_agent.session exports
GIT_SAFE_CONFIG = SAFE_CONFIG  # the names evo_agent.session exports (tools/shell_readonly.py uses them)
GIT_SAFE_ENV = SAFE_ENV

# The only git commands evo-agent runs (a command, then the arguments it must start with): read-only plumbing.
ALLOWED: tuple[tuple[str, ...], ...] = (
    ("ls-files",),
    ("rev-parse",),
    ("symbolic-ref",),
    ("rev-list",),
    ("worktree", "list"),
    ("config", "--get"),
)


class GitRefused(ValueError):
    """A git command outside `ALLOWED`: a programming error, never a user's."""


def _check(args: Sequence[str]) -> None:
    if not any(tuple(args[: len(allowed)]) == allowed for allowed in ALLOWED):
        raise GitRefused(f"evo-agent does not run `git {' '.join(args[:2])}`: only {ALLOWED}")


def git_program(worktree: Path, environ: Mapping[str, str] | None = None) -> str:
    """git by its absolute path, from a PATH entry that counts (programs.absolute_program): absolute, outside
    `worktree` however spelled (a relative entry is looked up from the repository's root, where a clone can
    commit a `git`; an activated in-repo `.venv/bin` is the clone's). Plain "git" when there is none, which
    `start_in` never starts (the lookup of a bare name would search exactly those entries)."""
    from .programs import absolute_program

    return absolute_program("git", outside=worktree, environ=environ) or "git"


def git_argv(worktree: Path, git_dir: Path, args: Sequence[str]) -> list[str]:
    """The whole command line: explicit repository, every code-running setting off, then `args`."""
    _check(args)
    argv = [git_program(worktree), "--no-pager", "--literal-pathspecs", f"--git-dir={git_dir}",
            f"--work-tree={worktree}"]
    for setting in SAFE_CONFIG:
        argv += ["-c", setting]
    return [*argv, *args]


def git_env(worktree: Path, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The caller's environment without any `GIT_*` (and no library search entry the worktree can steer:
    programs.library_environment), plus what keeps git from looking or asking further."""
    from .programs import library_environment

    base = os.environ if environ is None else environ
    env = library_environment(worktree, {k: v for k, v in base.items() if not k.startswith("GIT_")})
    env.update(
        SAFE_ENV,
        **config_pins(),
        GIT_CEILING_DIRECTORIES=str(worktree.parent),
        GIT_NO_REPLACE_OBJECTS="1",
        GIT_ATTR_NOSYSTEM="1",
        GIT_PAGER="cat",
        PAGER="cat",
    )
    return env


def repository(start: Path | str) -> tuple[Path, Path] | None:
    """(worktree root, its git directory) for `start`, found without running git; None outside one."""
    from .project import git_dir_of, git_special_file, git_worktree_root

    root = git_worktree_root(start)
    if root is None:
        return None
    git_dir = git_dir_of(root)
    if git_dir is None:
        return None
    me = os.geteuid()
    # git's own safe.directory rule, which an explicit --git-dir skips; and the common directory its `commondir`
    # names, where git reads `config`, refs and objects (another user's could rewrite them after any check here)
    # the entries themselves (lstat), and the directories git reads whatever link of ours leads there (stat): a
    # `.git -> /tmp/theirs/.git` is our link to another user's repository
    common = [(c, os.stat) for c in _common_dir(git_dir)]
    for path, owner_of in [(root / ".git", os.lstat), (git_dir, os.lstat), (git_dir, os.stat), *common]:
        try:
            if owner_of(path).st_uid != me:
                return None
        except OSError:
            return None
    if git_special_file(git_dir) is not None:
        return None  # a FIFO for its config, index, HEAD…: git would wait on it until the timeout, every time
    return root, git_dir


def _common_dir(git_dir: Path) -> tuple[Path, ...]:
    """The directory `git_dir/commondir` names (a linked worktree's main `.git`), as git reads it: whole."""
    from .project import COMMONDIR_LIMIT, read_git_file

    common = (read_git_file(git_dir / "commondir", COMMONDIR_LIMIT) or "").strip()
    return (Path(os.path.join(git_dir, common)),) if common else ()


def start_git(start: Path | str, *args: str) -> tuple[subprocess.Popen[bytes], Path] | None:
    """Start `git args` for the repository holding `start`; (process, worktree root), or None (no repository,
    no git). Output is bytes on the process's stdout; paths it prints are relative to the worktree root."""
    found = repository(start)
    return None if found is None else start_in(found, *args)


def start_in(found: tuple[Path, Path], *args: str) -> tuple[subprocess.Popen[bytes], Path] | None:
    """`start_git` in the repository `repository()` found: (worktree root, git directory), checked by the caller
    (tracked_cache.py keys git's answer to the exact repository it ran in)."""
    root, git_dir = found
    argv = git_argv(root, git_dir, args)
    if not os.path.isabs(argv[0]):
        return None  # no git in an absolute PATH entry: as if none were installed, never the clone's through `.`
    import subprocess  # here, not at the top: outside a repository (and `sessions list` there) git never runs

    try:
        proc = subprocess.Popen(argv, cwd=root, env=git_env(root), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, close_fds=True)
    except OSError:
        return None
    return proc, root


def run_git(start: Path | str, *args: str, timeout: float = GIT_TIMEOUT_S) -> str | None:
    """`git args` for the repository holding `start`: its stdout (text), or None when there is no repository,
    no git, a failure or a timeout."""
    started = start_git(start, *args)
    if started is None:
        return None
    proc, _ = started
    import subprocess

    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.SubprocessError:
        proc.kill()
        proc.communicate()
        return None
    if proc.returncode != 0:
        return None
    return out.decode("utf-8", "replace")
