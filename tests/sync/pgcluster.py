"""A throwaway PostgreSQL cluster for the sync tests and benchmarks: real server, temp dir, loopback port.

The server refuses to run as root, so as root `initdb` and `pg_ctl` run as
`nobody` (via `runuser`) over a data directory that user owns, inside a
private temp dir removed by `stop()`. It listens on a free 127.0.0.1 port
with password (SCRAM) authentication, so a wrong password is a real refusal.
`crash()` stops it the way `kill -9` of the server would (immediate mode: no
checkpoint, crash recovery on the next `start()`). `fsync=off` only gives up
durability against the machine losing power; commits are still synchronous,
so a committed transaction survives a crash of the server.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path

USER = "evo"
PASSWORD = "s3cret-pw"
_BIN_GLOB = "/usr/lib/postgresql/*/bin"


def find_bin_dir() -> Path | None:
    """The directory holding initdb and pg_ctl (Debian's layout, else PATH), or None."""
    for candidate in sorted(glob.glob(_BIN_GLOB), reverse=True):
        if os.access(os.path.join(candidate, "initdb"), os.X_OK):
            return Path(candidate)
    found = shutil.which("initdb")
    return Path(found).parent if found else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def memory_dir(need: int = 2 << 30) -> str | None:
    """/dev/shm when it exists and has `need` bytes free (a container's is often 64 MB), else None."""
    try:
        st = os.statvfs("/dev/shm")
    except OSError:
        return None
    return "/dev/shm" if st.f_bavail * st.f_frsize >= need and os.access("/dev/shm", os.W_OK) else None


class PgCluster:
    def __init__(self, bin_dir: Path, *, in_memory: bool = False) -> None:
        """`in_memory`: the data directory in /dev/shm when it has room (the tests' throwaway cluster: its
        files are never wanted after the run, and every CREATE DATABASE and checkpoint then skips the disk);
        the benchmarks keep a disk-backed cluster, as a team's store would be."""
        self.bin_dir = bin_dir
        # As root the server runs as nobody, who must be able to reach the directory: /tmp, not a private TMPDIR.
        base = memory_dir() if in_memory else None
        if base is None and os.geteuid() == 0 and os.path.isdir("/tmp"):
            base = "/tmp"
        self.root = Path(tempfile.mkdtemp(prefix="evo-pg-", dir=base))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self.port = free_port()
        self.as_user: list[str] = []
        if os.geteuid() == 0:
            nobody = pwd.getpwnam("nobody")
            os.chown(self.root, nobody.pw_uid, nobody.pw_gid)
            self.as_user = ["runuser", "-u", "nobody", "--"]
        os.chmod(self.root, 0o700)

    def _run(self, *args: str) -> None:
        subprocess.run([*self.as_user, *args], check=True, capture_output=True, cwd=self.root, timeout=120)

    def init(self) -> PgCluster:
        pwfile = self.root / "pw"
        pwfile.write_text(PASSWORD + "\n")
        if self.as_user:
            nobody = pwd.getpwnam("nobody")
            os.chown(pwfile, nobody.pw_uid, nobody.pw_gid)
        self._run(str(self.bin_dir / "initdb"), "-D", str(self.data), "-U", USER, "--auth=scram-sha-256",
                  f"--pwfile={pwfile}", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync")
        pwfile.unlink()
        return self

    def start(self, **settings: str) -> PgCluster:
        options = (f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off "
                   "-c max_connections=60")
        for key, value in settings.items():
            options += f" -c {key}={value}"
        self._run(str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-o", options,
                  "-w", "-t", "60", "start")
        return self

    def stop(self, mode: str = "fast") -> None:
        subprocess.run([*self.as_user, str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w",
                        "stop"], capture_output=True, cwd=self.root, timeout=120)

    def crash(self) -> None:
        """Stop like a killed server: no shutdown checkpoint; open transactions are lost, committed ones kept."""
        self.stop("immediate")

    def remove(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)

    def url(self, database: str = "postgres", password: str = PASSWORD) -> str:
        return f"postgresql://{USER}:{password}@127.0.0.1:{self.port}/{database}"

    def new_database(self, template: str | None = None) -> str:
        """A fresh database, empty or a copy of the database `template`; its URL."""
        import psycopg

        name = "t_" + uuid.uuid4().hex[:12]
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))
        return self.url(name)

    def freeze_as_template(self, url: str) -> str:
        """Make the database at `url` a template nobody may connect to (CREATE DATABASE … TEMPLATE
        refuses a source with other sessions on it); its name."""
        import psycopg

        name = url.rsplit("/", 1)[1]
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'ALTER DATABASE "{name}" WITH IS_TEMPLATE true ALLOW_CONNECTIONS false')
        return name


def add_teammate(admin_url: str, repos: list[str], password: str = "pw-of-a-teammate") -> tuple[str, str]:
    """A login role of its own in the store, as the README tells an admin: (role, its URL).

    The store's schema must exist (the admin connected once). Roles are cluster-wide: each gets a fresh name.
    """
    import psycopg

    role = "mate_" + uuid.uuid4().hex[:8]
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{password}' IN ROLE evo_agent_member")
        for repo in repos:
            conn.execute("INSERT INTO evo_agent_access (grantee, repo) VALUES (%s, %s)", (role, repo))
    head, _, tail = admin_url.partition("@")
    return role, f"postgresql://{role}:{password}@{tail}"


def make_tls_files(directory: Path, server_name: str) -> dict[str, Path]:
    """A private CA and a server certificate for `server_name` it signed (openssl); {ca, cert, key}."""
    directory.mkdir(parents=True, exist_ok=True)
    ca_key, ca, key, csr, cert = (directory / n for n in ("ca.key", "ca.pem", "server.key", "server.csr",
                                                          "server.pem"))
    ext = directory / "san.cnf"
    ext.write_text(f"subjectAltName=DNS:{server_name}\n")

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], check=True, capture_output=True, timeout=60)

    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(ca_key), "-out", str(ca),
            "-days", "2", "-subj", "/CN=evo test CA")
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(csr),
            "-subj", f"/CN={server_name}")
    openssl("x509", "-req", "-in", str(csr), "-CA", str(ca), "-CAkey", str(ca_key), "-CAcreateserial",
            "-out", str(cert), "-days", "2", "-extfile", str(ext))
    return {"ca": ca, "cert": cert, "key": key}


class TlsCluster(PgCluster):
    """A cluster that speaks TLS with a certificate for `server_name`, signed by a CA made for the test."""

    def __init__(self, bin_dir: Path, server_name: str, *, in_memory: bool = False) -> None:
        super().__init__(bin_dir, in_memory=in_memory)
        self.server_name = server_name
        self.tls = make_tls_files(self.root / "tls", server_name)
        os.chmod(self.root / "tls", 0o755)
        os.chmod(self.tls["ca"], 0o644)
        os.chmod(self.tls["key"], 0o600)
        if self.as_user:
            nobody = pwd.getpwnam("nobody")
            for path in (self.root / "tls", *self.tls.values()):
                os.chown(path, nobody.pw_uid, nobody.pw_gid)

    def start(self, **settings: str) -> PgCluster:
        return super().start(ssl="on", ssl_cert_file=str(self.tls["cert"]), ssl_key_file=str(self.tls["key"]),
                             **settings)

    def named_url(self, host: str, database: str = "postgres", **params: str) -> str:
        """A URL naming the server `host` (as a certificate is checked) while connecting to 127.0.0.1."""
        query = "&".join(f"{k}={v}" for k, v in {"hostaddr": "127.0.0.1", **params}.items())
        return f"postgresql://{USER}:{PASSWORD}@{host}:{self.port}/{database}?{query}"
