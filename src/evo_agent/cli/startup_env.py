"""What a project could steer in the environment evo-agent starts with, dropped before anything runs (SPEC §9).

`export LD_LIBRARY_PATH=/opt/x/lib:$LD_LIBRARY_PATH` with the variable unset leaves `/opt/x/lib:`, whose empty
entry the dynamic loader reads as "the directory the program runs in": the project, where a clone commits
`libz.so.1` whose constructor then runs inside evo-agent's own git, bwrap (outside the sandbox), the reaper and
every unasked command. `PYTHONPATH=/opt/x:` puts the project ahead of the standard library for evo-agent's own
imports (a committed `json.py`). A relative `BASH_ENV`, `RIPGREP_CONFIG_PATH` or XDG base directory names a
file the clone commits (`.bashenv`, `.ripgreprc` with `--pre=sh`, `.config/git/config` with `core.fsmonitor`).

Such entries and values are dropped from `os.environ` before anything starts; since the loader and Python read
theirs when the process started, evo-agent then starts itself again, once (`_RESTARTED`), with the cleaned
variables. What it cannot reach: the interpreter's own libraries (Debian's python3 links libz and libexpat)
and a `sitecustomize.py` found through PYTHONPATH load before any of its code runs; only the shell that starts
it keeps those out. Commands the user approves see the cleaned variables too (a `build/lib` entry is gone).
"""

from __future__ import annotations

import os
import sys

from evo_agent.session import search_entries

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: `--help` runs this first
if TYPE_CHECKING:
    from collections.abc import MutableMapping

_RESTARTED = "EVO_AGENT_RESTARTED_CLEAN"  # set for the one restart, removed by it: never two

# Variables naming a file or directory a program reads its settings from (or writes its temporary files to),
# honoured by it as given. An approved git keeps the caller's GIT_* (unasked git drops them all).
_SETTINGS_PATHS = ("RIPGREP_CONFIG_PATH", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME",
                   "XDG_RUNTIME_DIR", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "TMPDIR", "SSL_CERT_FILE",
                   "NODE_EXTRA_CA_CERTS", "SSLKEYLOGFILE", "PGSSLROOTCERT", "PGSERVICEFILE", "PGPASSFILE",
                   "PGSYSCONFDIR", "PGSSLCERT", "PGSSLKEY", "PGSSLCRL", "PGSSLCRLDIR", "CLAUDE_CONFIG_DIR",
                   "CODEX_HOME", "OPENSSL_CONF", "OPENSSL_CONF_INCLUDE", "OPENSSL_MODULES", "OPENSSL_ENGINES")

# The beginnings of a BASH_ENV that is the user's: absolute, or under a directory of theirs (the XDG ones are
# made absolute or unset first); `$PWD/.bashenv` is the project's.
_USERS_OWN = ("/", "$HOME/", "${HOME}/", *(f"{form}/" for name in _SETTINGS_PATHS[1:4]
                                            for form in (f"${name}", f"${{{name}}}")))


def drop_relative_entries(environ: MutableMapping[str, str], name: str, separators: str = ":;") -> bool:
    """`environ[name]` without its relative entries and its empty ones (each read from where a program runs:
    the project); unset when none is left. True when it changed the variable. An empty variable is no list
    (the loader and Python ignore it) and stays."""
    value = environ.get(name)
    if not value:
        return False
    entries = search_entries(value) if ";" in separators else value.split(":")
    kept = [entry for entry in entries if entry.startswith("/")]
    if kept == entries and (";" not in separators or ";" not in value):
        return False
    if kept:
        environ[name] = ":".join(kept)
    else:
        del environ[name]
    return True


def drop_relative_startup_files(environ: MutableMapping[str, str]) -> None:
    """`BASH_ENV`, `RIPGREP_CONFIG_PATH` and the XDG base directories unset when a project could steer them.

    Every non-interactive bash sources `$BASH_ENV` (after parameter expansion) before its command: the reaper's
    bash around every bash call runs outside any sandbox, so a clone's `.bashenv` ran before the first command;
    only an absolute path or one under `$HOME` or an XDG directory stays (`$PWD/.bashenv` is the project's).
    ripgrep takes options
    from `$RIPGREP_CONFIG_PATH`, git reads `$XDG_CONFIG_HOME/git/config` (and an approved git, which keeps the
    caller's GIT_*, `$GIT_CONFIG_GLOBAL`/`$GIT_CONFIG_SYSTEM`: a committed `.gitconfig` naming a `core.fsmonitor`):
    relative, they name the project's files; a relative `$TMPDIR` puts Python's and bash's temporary files (the
    memory file `memory edit` hands the editor, here-documents) in the clone. The XDG spec says to ignore a
    relative value, as evo-agent's own directories already do. An empty GIT_CONFIG_* (no file, to git) stays.
    A relative `$SSL_CERT_FILE` (or `$SSL_CERT_DIR` entry, `$NODE_EXTRA_CA_CERTS` for MCP servers) let a clone's
    committed certificate decide whom evo-agent's own HTTPS trusts: the API key went to its holder; a relative
    `$SSLKEYLOGFILE` wrote the keys of its TLS sessions into the project, where a commit takes them along; libpq
    (the team store) takes its CA, service file and password file from `$PGSSLROOTCERT`, `$PGSERVICEFILE`,
    `$PGPASSFILE` (and `$PGSYSCONFDIR/pg_service.conf`, its client certificate, key and revocation lists from
    `$PGSSLCERT`, `$PGSSLKEY`, `$PGSSLCRL`, `$PGSSLCRLDIR`); `sessions import` took a clone's committed
    transcripts from `$CLAUDE_CONFIG_DIR`/`$CODEX_HOME` as the user's own. A relative `$OPENSSL_CONF` (or
    `$OPENSSL_CONF_INCLUDE`, `$OPENSSL_MODULES`, `$OPENSSL_ENGINES`) let a clone's `openssl.cnf` load a library
    of its own into evo-agent at its first HTTPS request, API key and all
    (tests/security/test_clone_never_supplies_openssl_config.py)."""
    for name in _SETTINGS_PATHS:  # first: BASH_ENV may start with one of them
        value = environ.get(name)
        if value is not None and not value.startswith("/") and (value or not name.startswith("GIT_")):
            del environ[name]
    drop_relative_entries(environ, "SSL_CERT_DIR", separators=":")  # OpenSSL reads each entry of the list
    bash_env = environ.get("BASH_ENV")
    if bash_env is not None and not bash_env.startswith(_USERS_OWN):
        del environ["BASH_ENV"]



def clean_start() -> None:
    """Drop what a project could steer (module docstring) and, where the loader or Python already read it,
    start again without it: the same interpreter and arguments, once. Where that exec cannot be done (no
    `sys.executable`), evo-agent goes on in this process: what it starts gets the cleaned variables."""
    environ = os.environ
    restarted = environ.pop(_RESTARTED, None) is not None
    drop_relative_startup_files(environ)
    changed = drop_relative_entries(environ, "LD_LIBRARY_PATH")
    changed = drop_relative_entries(environ, "PYTHONPATH", separators=":") or changed
    if not changed or restarted or not sys.executable:
        return
    environ[_RESTARTED] = "1"
    try:
        os.execv(sys.executable, [sys.executable, *sys.orig_argv[1:]])
    except OSError:
        del environ[_RESTARTED]


__all__ = ["clean_start", "drop_relative_entries", "drop_relative_startup_files"]
