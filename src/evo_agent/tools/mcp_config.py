"""MCP servers as users already write them (SPEC §13): Claude Code's `.mcp.json` shape, in two places.

    {"mcpServers": {"NAME": {"command": "npx", "args": ["-y", "pkg"], "env": {"KEY": "${KEY}"}},
                    "NAME2": {"type": "http", "url": "https://…/mcp", "headers": {"Authorization": "Bearer ${T}"}}}}

- the user's own `~/.config/evo-agent/mcp.json` (XDG_CONFIG_HOME honoured): obeyed as configured;
- the project's `.mcp.json`: obeyed only in a project the user trusts (session.project_trusted, SPEC §9),
  never through a link, another user's file or one others can write. On a name in both, the user's wins:
  a repository cannot replace a server the user configured.

`${VAR}` and `${VAR:-default}` are expanded in command, args, env, url and headers when the servers are
loaded for a session; a project's file may not expand the agent's own credentials (tools/tool_env.py). The
credentials a server receives (env and header values whose names say KEY, TOKEN, SECRET, AUTH…, and
secret-named variables) are registered as the agent's own secrets (`session.add_secret_value`), so the
recorder masks them wherever they would reach a transcript; plain values and defaults are not.

A server entry may also say `"trustReadOnlyHint": true`: its tools the server annotates `readOnlyHint` then
run unasked (as reads do) — the user's choice, since the annotation is the server's own claim.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evo_agent.session import MCP_CONFIG_NAME, USER_MCP_CONFIG_NAME, json_object, user_config_dir
from evo_agent.session import plain_dataclass as dataclass
from evo_agent.session import plain_field as field

from .tool_env import is_secret_var

if TYPE_CHECKING:
    from evo_agent.session import WorkspaceTrust

SCOPES = ("user", "project")
MAX_BYTES = 1 << 20
MIN_SECRET = 8  # a shorter value is no credential worth masking, and masking it would garble every result
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_SECRET_KEY = re.compile(r"(KEY|TOKEN|SECRET|PASSW|AUTH|CREDENTIAL|COOKIE|SESSION|(^|_)PAT($|_))", re.IGNORECASE)


class McpConfigError(ValueError):
    """A configuration that cannot be used; the message is one printable line."""


@dataclass(frozen=True)
class ServerConfig:
    """One configured server, as written (`${VAR}` not yet expanded)."""

    name: str
    scope: str                       # "user" | "project"
    transport: str                   # "stdio" | "http"
    command: str = ""
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    url: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    trust_read_only: bool = False
    source: str = ""                 # the file it was read from
    cwd: str = ""                    # a stdio server's directory as written ("": mcp_client.server_directory)

    def as_json(self) -> dict[str, Any]:
        """The entry as it is written in a config file."""
        entry: dict[str, Any] = {}
        if self.transport == "http":
            entry["type"] = "http"
            entry["url"] = self.url
            if self.headers:
                entry["headers"] = dict(self.headers)
        else:
            entry["command"] = self.command
            if self.args:
                entry["args"] = list(self.args)
            if self.env:
                entry["env"] = dict(self.env)
            if self.cwd:
                entry["cwd"] = self.cwd
        if self.trust_read_only:
            entry["trustReadOnlyHint"] = True
        return entry


@dataclass
class Expanded:
    """A server ready to start: every `${VAR}` replaced; `secrets` are the values to keep off disk."""

    config: ServerConfig
    command: str = ""
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    secrets: list[str] = field(default_factory=list)
    cwd: str = ""


@dataclass
class Loaded:
    """The servers that apply to a session, and one line for each thing that was skipped."""

    servers: list[ServerConfig]
    problems: list[str]
    held: list[ServerConfig] = field(default_factory=list)  # a project's servers, waiting for trust


def user_config_path(environ: Mapping[str, str] | None = None) -> Path:
    return user_config_dir(environ) / USER_MCP_CONFIG_NAME


def project_config_path(project_dir: Path | str) -> Path:
    return Path(project_dir) / MCP_CONFIG_NAME


# ---------------------------------------------------------------- reading


def read_file(path: Path) -> dict[str, Any] | None:
    """The file's top-level object; None when it does not exist. McpConfigError when it cannot be used."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise McpConfigError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    try:
        raw = os.read(fd, MAX_BYTES + 1)
    except OSError as exc:
        raise McpConfigError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    finally:
        os.close(fd)
    return parse_config(path, raw)


def parse_config(path: Path | str, raw: bytes) -> dict[str, Any]:
    """A file's bytes as its top-level object (`{}` when blank). McpConfigError naming `path` when unusable."""
    if len(raw) > MAX_BYTES:
        raise McpConfigError(f"{path}: larger than {MAX_BYTES} bytes")
    if not raw.strip():
        return {}
    try:
        data = json_object(raw)
    except ValueError as exc:
        raise McpConfigError(f"{path}: {exc}") from None
    servers = data.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise McpConfigError(f"{path}: mcpServers must be an object of servers by name")
    return data


def _strings(value: object, what: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise McpConfigError(f"{what} must be a list of strings")
    return tuple(value)


def _pairs(value: object, what: str) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise McpConfigError(f"{what} must be an object of strings")
    return tuple((str(k), v) for k, v in value.items())


def name_problem(name: str) -> str | None:
    """Why `name` cannot name a server: its tools are `mcp__<name>__<tool>`, and rules find the server between
    the first two `__`; a `github__evil` (or `github.`, `github_`) would have tools `mcp__github__*` covers."""
    from .mcp_tools import clean_part

    cleaned = clean_part(name)
    if "__" in cleaned or cleaned.endswith("_") or not name:
        return ("a server's name may not contain `__` nor end in `_` (a character outside [a-zA-Z0-9_-] "
                "counts as `_`): its tools' names would read as another server's")
    return None


def parse_server(name: str, entry: object, scope: str, source: str = "") -> ServerConfig:
    """One entry of `mcpServers`; McpConfigError (one line naming the server) when it cannot be used."""
    where = f"MCP server {name!r} ({source or scope})"
    if not isinstance(entry, dict):
        raise McpConfigError(f"{where}: must be an object")
    problem = name_problem(name)
    if problem:
        raise McpConfigError(f"{where}: {problem}")
    kind = entry.get("type", entry.get("transport", "http" if "url" in entry and "command" not in entry else "stdio"))
    if kind == "streamable-http":
        kind = "http"
    trust = entry.get("trustReadOnlyHint", False) is True
    try:
        if kind == "stdio":
            command = entry.get("command")
            if not isinstance(command, str) or not command.strip():
                raise McpConfigError("needs a command")
            cwd = entry.get("cwd", "")
            if not isinstance(cwd, str):
                raise McpConfigError("cwd must be a string")
            return ServerConfig(name, scope, "stdio", command=command, args=_strings(entry.get("args"), "args"),
                                env=_pairs(entry.get("env"), "env"), trust_read_only=trust, source=source, cwd=cwd)
        if kind == "http":
            url = entry.get("url")
            if not isinstance(url, str) or not url.strip():
                raise McpConfigError("needs a url")
            return ServerConfig(name, scope, "http", url=url, headers=_pairs(entry.get("headers"), "headers"),
                                trust_read_only=trust, source=source)
    except McpConfigError as exc:
        raise McpConfigError(f"{where}: {exc}") from None
    raise McpConfigError(f"{where}: transport {str(kind)[:20]!r} is not supported (stdio or http)")


def servers_in(data: dict[str, Any] | None, scope: str, source: str) -> tuple[list[ServerConfig], list[str]]:
    """The usable servers of one file's object, and one line for each entry that is not."""
    out, problems = [], []
    for name, entry in (data or {}).get("mcpServers", {}).items():
        try:
            out.append(parse_server(str(name), entry, scope, source))
        except McpConfigError as exc:
            problems.append(str(exc))
    return out, problems


def project_file_refusal(project_dir: Path | str) -> str | None:
    """Why a project's `.mcp.json` is never obeyed, trusted or not (a link, another's, writable by others)."""
    from evo_agent.session import what_project_brings

    for brought in what_project_brings(project_dir):
        if brought.path == MCP_CONFIG_NAME and brought.unsafe:
            return f"{MCP_CONFIG_NAME} is {brought.unsafe}: never obeyed"
    return None


def load_servers(project_dir: Path | str, *, trusted: bool | WorkspaceTrust | None = None,
                 environ: Mapping[str, str] | None = None) -> Loaded:
    """The servers a session in `project_dir` uses: the user's, then the trusted project's.

    `trusted`: whether the project's `.mcp.json` may be obeyed (None: ask session.project_trusted); or the
    WorkspaceTrust the user answered, whose bytes are then the project's `.mcp.json` (what was shown).
    A file that cannot be read is one problem line; nothing raises.
    """
    problems: list[str] = []
    servers: list[ServerConfig] = []
    user_path = user_config_path(environ)
    try:
        found, bad = servers_in(read_file(user_path), "user", str(user_path))
        servers += found
        problems += bad
    except McpConfigError as exc:
        problems.append(str(exc))
    held: list[ServerConfig] = []
    shown = None if trusted is None or isinstance(trusted, bool) else trusted
    data = _shown_config(project_dir, shown, problems) if shown is not None else \
        _project_config(project_dir, problems)
    if data is not None:
        found, bad = servers_in(data, "project", MCP_CONFIG_NAME)
        from evo_agent.session import workspace_trust

        status = shown if shown is not None else workspace_trust(project_dir, environ)
        if trusted is None or shown is not None:
            trusted = status.trusted
        mine, aliases = _not_aliasing(found, servers)
        chosen = status.servers if status.trusted else None  # the user chose servers one by one
        if trusted:
            servers += [s for s in mine if chosen is None or s.name in chosen]
            held = [s for s in mine if chosen is not None and s.name not in chosen]
            problems += bad + aliases
        else:
            held = mine
    return Loaded(servers, problems, held)


def _project_config(project_dir: Path | str, problems: list[str]) -> dict[str, Any] | None:
    """The project's `.mcp.json` as it is on disk now; None (and a problem line) when absent or unusable."""
    project_path = project_config_path(project_dir)
    present = project_path.exists() or project_path.is_symlink()
    refusal = project_file_refusal(project_dir) if present else None
    if refusal:
        problems.append(f"evo-agent: {refusal}")
    elif present:
        try:
            return read_file(project_path)
        except McpConfigError as exc:
            problems.append(str(exc))
    return None


def _shown_config(project_dir: Path | str, shown: WorkspaceTrust, problems: list[str]) -> dict[str, Any] | None:
    """The project's `.mcp.json` as the trust question showed it (its bytes, read once): a file swapped in while
    the question waited (a pull in another terminal) starts nothing the person did not read."""
    for brought in shown.brought:
        if brought.path != MCP_CONFIG_NAME:
            continue
        if brought.unsafe:
            problems.append(f"evo-agent: {MCP_CONFIG_NAME} is {brought.unsafe}: never obeyed")
            return None
        try:
            return parse_config(project_config_path(project_dir), brought.data)
        except McpConfigError as exc:
            problems.append(str(exc))
    return None


def _not_aliasing(found: list[ServerConfig], users: list[ServerConfig]) -> tuple[list[ServerConfig], list[str]]:
    """The project's servers whose tools' names are their own, and a line for each left out.

    Tools are `mcp__<server_part>__<tool>`: a project's `git.hub` (or `git hub`) names its tools as the user's
    `git_hub` does, and a rule the user wrote for their server (`mcp__git_hub__*`) judged them by that name,
    so trusting the project (which starts its servers) would have allowed its tools unasked.
    """
    from .mcp_tools import server_part

    taken = {server_part(s.name): s.name for s in users}
    mine: list[ServerConfig] = []
    problems: list[str] = []
    for server in found:
        other = taken.get(server_part(server.name))
        if other is None:
            taken[server_part(server.name)] = server.name
            mine.append(server)
        elif other != server.name:
            problems.append(f"evo-agent: MCP server {server.name!r} ({MCP_CONFIG_NAME}) not started: its tools "
                            f"would be named as those of the server {other!r} (mcp__{server_part(other)}__…)")
    return mine, problems


# ---------------------------------------------------------------- ${VAR}


def expand(text: str, environ: Mapping[str, str], *, scope: str, used: list[str]) -> str:
    """`text` with `${VAR}` and `${VAR:-default}` replaced; McpConfigError for an unset VAR without default.

    A project's file may not expand the agent's own credentials. The value of a variable whose name says it
    is secret (KEY, TOKEN, SECRET, PASSWORD, AUTH…), taken from the environment, goes to `used`: a default
    is written in the file for anyone to read, and `${HOME}` is no secret.
    """
    def one(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if scope == "project" and is_secret_var(name):
            raise McpConfigError(f"${{{name}}} is one of the agent's own credentials; a project's "
                                 f"{MCP_CONFIG_NAME} may not pass it to a server")
        value = environ.get(name)
        if value is None or (value == "" and default is not None):
            if default is None:
                raise McpConfigError(f"${{{name}}} is not set (write ${{{name}:-default}} for a default)")
            return default
        if _SECRET_KEY.search(name):
            used.append(value)
        return value

    return _VAR.sub(one, text)


def variables_of(config: ServerConfig) -> list[str]:
    """Every `${VAR}` name the entry would read from the user's environment, in order, once each."""
    texts = [config.command, *config.args, config.url, config.cwd, *(v for _, v in config.env),
             *(v for _, v in config.headers)]
    return list(dict.fromkeys(m.group(1) for t in texts for m in _VAR.finditer(t)))


def _secret_header(name: str) -> bool:
    """Authorization, Proxy-Authorization, X-Api-Key, Cookie, …: a header whose value is a credential."""
    return bool(_SECRET_KEY.search(name))


def expand_server(config: ServerConfig, environ: Mapping[str, str] | None = None) -> Expanded:
    """`config` with its variables expanded; McpConfigError (one line naming the server) when one is unset.

    `secrets` (masked wherever they would reach a transcript): the values of env variables and headers whose
    names say they are credentials ("Bearer TOKEN": the token alone too), and secret-named variables taken
    from the environment — never a plain variable, a default, or a value shorter than MIN_SECRET characters
    (masking `/home/alice` or `import` would garble every tool result).
    """
    env = os.environ if environ is None else environ
    used: list[str] = []
    scope = config.scope
    try:
        out = Expanded(config,
                       command=expand(config.command, env, scope=scope, used=used),
                       args=[expand(a, env, scope=scope, used=used) for a in config.args],
                       env={k: expand(v, env, scope=scope, used=used) for k, v in config.env},
                       url=expand(config.url, env, scope=scope, used=used),
                       headers={k: expand(v, env, scope=scope, used=used) for k, v in config.headers},
                       cwd=expand(config.cwd, env, scope=scope, used=used))
    except McpConfigError as exc:
        raise McpConfigError(f"MCP server {config.name!r}: {exc}") from None
    secrets = list(used) + [v for k, v in out.env.items() if _SECRET_KEY.search(k)]
    for value in [v for k, v in out.headers.items() if _secret_header(k)]:
        secrets += [value, *value.split()[1:]]  # "Bearer TOKEN": the token alone too
    out.secrets = [s for s in dict.fromkeys(secrets) if len(s) >= MIN_SECRET]
    return out


def register_secrets(expanded: Expanded) -> None:
    """Mask what the server is given (env, headers, expanded values) wherever it would reach a transcript."""
    from evo_agent.session import add_secret_value

    for value in expanded.secrets:
        add_secret_value(value, f"MCP_{expanded.config.name}")


# ---------------------------------------------------------------- writing (evo-agent mcp add/remove)


def write_config(path: Path, data: dict[str, Any], *, private: bool) -> None:
    """Replace the config file atomically; the user's own is 0600 in a 0700 directory."""
    text = (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode()
    if private:
        from evo_agent.session import DIR_MODE, replace_private_file

        path.parent.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)

        fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            replace_private_file(fd, path.name, text)
        finally:
            os.close(fd)
        return
    if path.is_symlink():
        raise McpConfigError(f"{path} is a symbolic link; not written")
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    mode = 0o644
    try:
        mode = os.stat(path).st_mode & 0o777
    except OSError:
        pass
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    try:
        os.write(fd, text)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)


__all__ = [
    "Expanded",
    "Loaded",
    "McpConfigError",
    "SCOPES",
    "ServerConfig",
    "expand",
    "expand_server",
    "load_servers",
    "name_problem",
    "parse_server",
    "project_config_path",
    "read_file",
    "register_secrets",
    "servers_in",
    "user_config_path",
    "variables_of",
    "write_config",
]
