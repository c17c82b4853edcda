"""Hostile repositories, built the way an attacker publishes one: a real `git init`, files, a commit, and the
victim's `git clone` (or an unpacked archive, which keeps `.git/config`). Each payload is a real program
git (or evo-agent) would run, and leaves a marker file; a test asserts the marker stays absent, and
runs the same payload through plain git as a control, proving the payload is live.
"""

from __future__ import annotations

import os
import shlex
import shutil
import socket
import ssl
import subprocess
import tarfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.cli_runner import Cli, clean_env
from tests.hostile_endpoint import shut_listener

GIT = ["git", "-c", "user.name=mallory", "-c", "user.email=m@example.invalid", "-c", "init.defaultBranch=main"]


def payload(marker: Path) -> str:
    """A shell command that leaves `marker` (and fails, so git goes on as if nothing ran)."""
    return f"touch {shlex.quote(str(marker))}; false"


def git(repo: Path, *args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([*GIT, "-C", str(repo), *args], capture_output=True, text=True, timeout=60, **kw)


def upstream(tmp_path: Path, files: dict[str, str | bytes], links: dict[str, str] | None = None,
             name: str = "hostile") -> Path:
    """A repository committing `files` (path → content) and `links` (path → symlink target), force-added."""
    origin = tmp_path / name
    origin.mkdir()
    subprocess.run([*GIT, "init", "-q", str(origin)], check=True)
    (origin / "README.md").write_text("# a perfectly normal project\n")
    for rel, content in files.items():
        path = origin / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    for rel, target in (links or {}).items():
        path = origin / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to(target)
    assert git(origin, "add", "-A", "-f").returncode == 0
    assert git(origin, "commit", "-q", "-m", "init").returncode == 0
    return origin


def upstream_of_many(tmp_path: Path, files: dict[str, str], name: str = "hostile") -> Path:
    """`upstream(tmp_path, files)`'s commit (README.md and `files`, regular files), built straight into git's index.

    For tens of thousands of files: each distinct content is hashed once (`git hash-object -w`) and every path
    is entered with `git update-index --index-info`, instead of writing every file and `git add`-ing it (40,000
    files: ~7 s of the 13 s a test took). The commit, and so the victim's clone, holds the same tree; only the
    upstream's own work tree is left empty, which no clone reads."""
    origin = tmp_path / name
    origin.mkdir()
    subprocess.run([*GIT, "init", "-q", str(origin)], check=True)
    every = {"README.md": "# a perfectly normal project\n", **files}
    blob = {}
    for content in set(every.values()):
        hashed = git(origin, "hash-object", "-w", "--stdin", input=content)
        assert hashed.returncode == 0, hashed.stderr
        blob[content] = hashed.stdout.strip()
    entries = "".join(f"100644 {blob[content]}\t{rel}\n" for rel, content in every.items())
    assert git(origin, "update-index", "--add", "--index-info", input=entries).returncode == 0
    assert git(origin, "commit", "-q", "-m", "init").returncode == 0
    return origin


def clone(origin: Path, dest: Path) -> Path:
    subprocess.run(["git", "clone", "-q", str(origin), str(dest)], check=True, timeout=60)
    return dest


def commit_change(origin: Path, files: dict[str, str]) -> None:
    """A later commit upstream (what the victim's `git pull` brings)."""
    for rel, content in files.items():
        (origin / rel).parent.mkdir(parents=True, exist_ok=True)
        (origin / rel).write_text(content)
    assert git(origin, "add", "-A", "-f").returncode == 0
    assert git(origin, "commit", "-q", "-m", "update").returncode == 0


def index_bytes(tmp_path: Path) -> bytes:
    """A real git index (one entry): what makes git consult `core.fsmonitor` when it reads it."""
    scratch = tmp_path / "scratch-index"
    subprocess.run([*GIT, "init", "-q", str(scratch)], check=True)
    (scratch / "a").write_text("a\n")
    assert git(scratch, "add", "a").returncode == 0
    return (scratch / ".git" / "index").read_bytes()


def sessions_as_git_dir(tmp_path: Path, config: str, extra: dict[str, str] | None = None) -> dict[str, str | bytes]:
    """Files that make `.evo-agent/sessions/` a git directory whose `config` is `config` (with a work tree above)."""
    base = ".evo-agent/sessions"
    files: dict[str, str | bytes] = {
        f"{base}/HEAD": "ref: refs/heads/main\n",
        f"{base}/config": config,
        f"{base}/index": index_bytes(tmp_path),
        f"{base}/objects/.keep": "",
        f"{base}/refs/heads/.keep": "",
    }
    files.update({f"{base}/{k}": v for k, v in (extra or {}).items()})
    return files


# Every way a repository's git configuration can name a program, with the marker each leaves.
CONFIG_PAYLOADS = ("fsmonitor", "hook", "pager", "external_diff", "textconv", "filter", "ssh")


def arm_repository(repo: Path, markers: Path) -> dict[str, Path]:
    """Write every CONFIG_PAYLOADS entry into `repo`'s own `.git/config` (and `.gitattributes`, a hooks dir)."""
    markers.mkdir(exist_ok=True)
    marker = {name: markers / name for name in CONFIG_PAYLOADS}
    conf = [
        ("core.fsmonitor", payload(marker["fsmonitor"])),
        ("core.hooksPath", str(repo / ".hooks")),
        ("core.pager", payload(marker["pager"])),
        ("diff.external", payload(marker["external_diff"])),
        ("diff.evil.textconv", payload(marker["textconv"])),
        ("filter.evil.clean", f"touch {shlex.quote(str(marker['filter']))}; cat"),
        ("filter.evil.smudge", f"touch {shlex.quote(str(marker['filter']))}; cat"),
        ("core.sshCommand", payload(marker["ssh"])),
        ("remote.origin.url", "ssh://git@example.invalid/mallory/project.git"),
    ]
    for key, value in conf:
        assert git(repo, "config", key, value).returncode == 0
    hooks = repo / ".hooks"
    hooks.mkdir(exist_ok=True)
    for hook in ("pre-commit", "post-checkout", "post-index-change", "reference-transaction", "pre-auto-gc"):
        (hooks / hook).write_text(f"#!/bin/sh\ntouch {shlex.quote(str(marker['hook']))}\n")
        os.chmod(hooks / hook, 0o755)
    (repo / ".gitattributes").write_text("*.txt diff=evil filter=evil\n")
    (repo / "notes.txt").write_text("hello\n")
    assert git(repo, "add", ".gitattributes", "notes.txt").returncode == 0
    for name in marker.values():  # arming ran the filter (git add): start from nothing
        name.unlink(missing_ok=True)
    (repo / "notes.txt").write_text("hello, changed\n")  # a modified file: diff drivers have something to do
    return marker


def unpack_archive_of(repo: Path, dest: Path) -> Path:
    """`repo` as a downloaded tarball unpacks it, `.git/` and its config included."""
    archive = dest.parent / f"{dest.name}.tar"
    with tarfile.open(archive, "w") as tar:
        tar.add(repo, arcname=dest.name)
    with tarfile.open(archive) as tar:
        tar.extractall(dest.parent)
    return dest


def fire_with_plain_git(repo: Path, name: str, env: dict[str, str] | None = None) -> None:
    """The control: run plain git the way that makes payload `name` fire."""
    env = {**os.environ, **(env or {})}
    if name == "fsmonitor":
        subprocess.run(["git", "ls-files"], cwd=repo, capture_output=True, env=env, timeout=60)
    elif name == "hook":
        subprocess.run([*GIT, "commit", "-q", "--allow-empty", "-m", "x"], cwd=repo, capture_output=True, env=env,
                       timeout=60)
    elif name == "pager":
        import pty

        pid, fd = pty.fork()
        if pid == 0:  # git pages only to a terminal
            os.chdir(repo)
            os.execvpe("git", ["git", "log", "-1"], env)
        try:
            while True:
                try:
                    if not os.read(fd, 4096):
                        break
                except OSError:
                    break
        finally:
            os.waitpid(pid, 0)
            os.close(fd)
    elif name == "external_diff":
        subprocess.run(["git", "diff"], cwd=repo, capture_output=True, env=env, timeout=60)
    elif name == "textconv":
        subprocess.run(["git", "diff", "--no-ext-diff"], cwd=repo, capture_output=True, env=env, timeout=60)
    elif name == "filter":
        subprocess.run(["git", "add", "notes.txt"], cwd=repo, capture_output=True, env=env, timeout=60)
    elif name == "ssh":
        subprocess.run(["git", "fetch", "origin"], cwd=repo, capture_output=True, env=env, timeout=60)
    else:  # pragma: no cover
        raise ValueError(name)


def env_without_bwrap(tmp_path: Path, model_server) -> dict[str, str]:
    """The CLI's environment with a PATH of git, bash and setpriv only (no bwrap): pytest's tmp_path lies under
    /tmp, which the read-only sandbox replaces (hiding a victim's files there as ~ would not be hidden), so the
    checked command alone must hold."""
    bin_dir = tmp_path / "bin"
    if not bin_dir.exists():
        bin_dir.mkdir()
        for program in ("git", "bash", "setpriv"):
            found = shutil.which(program)
            if found:
                os.symlink(found, bin_dir / program)
    return model_server.env(clean_env(tmp_path / "home", PATH=str(bin_dir)))


def cli_in_clone(tmp_path: Path, model_server, files: dict[str, str | bytes], settings: str) -> Cli:
    """The real CLI in the victim's clone of a repository committing `files`, with a fresh home; the settings
    file at `settings` (when committed) made 0644, as a clone under a 022 umask leaves it."""
    project = clone(upstream(tmp_path, files), tmp_path / "clone")
    if (project / settings).exists():
        os.chmod(project / settings, 0o644)
    home = tmp_path / "home"
    home.mkdir()
    return Cli(project, model_server.env(clean_env(home)))


@contextmanager
def self_signed_https(tmp_path: Path) -> Iterator[tuple[int, str, list[bytes]]]:
    """A TLS server on loopback with a self-signed certificate for localhost (and 127.0.0.1), answering each request
    with a 400 JSON error: (its port, the certificate's PEM, what each client that trusted it sent)."""
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", str(tmp_path / "key.pem"),
                    "-out", str(tmp_path / "cert.pem")], check=True, capture_output=True, timeout=60)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp_path / "cert.pem", tmp_path / "key.pem")
    listener = socket.create_server(("127.0.0.1", 0))
    received: list[bytes] = []

    def serve() -> None:
        while True:
            try:
                raw, _ = listener.accept()
            except OSError:
                return
            try:
                with context.wrap_socket(raw, server_side=True) as conn:
                    conn.settimeout(10)
                    received.append(conn.recv(65536))
                    body = b'{"type":"error","error":{"type":"invalid_request_error","message":"no"}}'
                    conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: "
                                 + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body)
            except (OSError, ssl.SSLError):
                pass  # a client that does not trust it hangs up

    acceptor = threading.Thread(target=serve, daemon=True)
    acceptor.start()
    try:
        yield listener.getsockname()[1], (tmp_path / "cert.pem").read_text(), received
    finally:
        shut_listener(listener, acceptor)  # a thread left in accept() took a later test's connections


def run_bash_call(tmp_path: Path, model_server, project: Path, command: str):
    """The model asks for `command` (15 s timeout) in print mode: (the run, its seconds, the tool_result block the
    model was sent). The run's own 120 s timeout fails a hang, whatever the machine's speed."""
    import time

    from tests.cli_runner import Cli, clean_env
    from tests.fake_model_server import text, tool_use

    model_server.script(tool_use("bash", {"command": command, "timeout": 15}, id="t1"), text("done"))
    cli = Cli(project, model_server.env(clean_env(tmp_path / "home")))
    started = time.monotonic()
    result = cli.run("-p", "look", timeout=120)
    return result, time.monotonic() - started, model_server.requests[-1]["messages"][-1]["content"][0]
