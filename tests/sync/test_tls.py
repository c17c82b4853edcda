"""Verified TLS by default (SPEC §9): a store that is not on loopback is reached with sslmode=verify-full.

A real cluster with a certificate for `db.team.test` signed by a CA made in the test (openssl); the client is
told the name and connects to 127.0.0.1 (libpq's hostaddr), so the name is what the certificate is checked against.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evo_agent.sync.db import StoreUnavailable, connect, connection_options
from tests.cli_runner import Cli

from .helpers import migrated
from .pgcluster import PgCluster, TlsCluster, find_bin_dir
from .test_cli import team_cli

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is not installed")


@pytest.fixture(scope="module")
def tls_cluster():
    bin_dir = find_bin_dir()
    if bin_dir is None:
        pytest.skip("PostgreSQL server binaries are not installed")
    cluster = TlsCluster(bin_dir, "db.team.test", in_memory=True).init().start()
    migrated(cluster.url())  # the admin migrated the store (over the socket the test reaches it by)
    try:
        yield cluster
    finally:
        cluster.remove()


@pytest.mark.parametrize(("url", "wanted"), [
    ("postgresql://u:p@db.example.com/team", {"sslmode": "verify-full", "sslrootcert": "system"}),
    ("postgresql://u:p@10.1.2.3:6432/team", {"sslmode": "verify-full", "sslrootcert": "system"}),
    ("postgresql://u:p@localhost/team", {}),
    ("postgresql://u:p@127.0.0.1/team", {}),
    ("postgresql://u:p@[::1]/team", {}),
    ("postgresql:///team?host=/var/run/postgresql", {}),
    ("postgresql://u:p@db.example.com/team?sslmode=require", {}),
    ("postgresql://u:p@db.example.com/team?sslrootcert=/etc/team-ca.pem", {"sslmode": "verify-full"}),
    # where the bytes go is the address: no host, or a loopback name, in front of a remote address is remote
    ("postgresql://u:p@/team?hostaddr=10.1.2.3", {"sslmode": "verify-full", "sslrootcert": "system"}),
    ("postgresql://u:p@localhost/team?hostaddr=10.1.2.3", {"sslmode": "verify-full", "sslrootcert": "system"}),
    ("postgresql://u:p@/team?hostaddr=127.0.0.1,192.0.2.7", {"sslmode": "verify-full", "sslrootcert": "system"}),
    ("postgresql://u:p@localhost/team?hostaddr=127.0.0.1", {}),
    ("postgresql://u:p@/team?hostaddr=::1", {}),
])
def test_tls_is_verified_unless_on_loopback_or_the_url_says_otherwise(url: str, wanted: dict) -> None:
    options = connection_options(url)
    assert {k: options[k] for k in ("sslmode", "sslrootcert") if k in options} == wanted


def test_the_right_ca_is_accepted(tls_cluster: TlsCluster) -> None:
    url = tls_cluster.named_url("db.team.test", sslrootcert=str(tls_cluster.tls["ca"]))
    with connect(url) as conn:
        assert conn.execute("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").fetchone() == (True,)
        assert conn.pgconn.ssl_in_use


@pytest.mark.parametrize("case", ["wrong name", "unknown CA"])
def test_a_certificate_that_does_not_prove_the_server_is_refused(tls_cluster: TlsCluster, case: str) -> None:
    if case == "wrong name":  # the right CA, but the certificate is for db.team.test
        url = tls_cluster.named_url("evil.team.test", sslrootcert=str(tls_cluster.tls["ca"]))
    else:  # the system's CAs never signed the test CA
        url = tls_cluster.named_url("db.team.test")
    with pytest.raises(StoreUnavailable) as refused:
        connect(url)
    message = str(refused.value)
    assert "\n" not in message and "sslrootcert=" in message and "sslmode=require" in message
    assert "s3cret-pw" not in message


def test_a_server_without_tls_is_refused_unless_the_url_allows_it(pg_cluster: PgCluster, tmp_path: Path) -> None:
    plain = f"postgresql://evo:s3cret-pw@db.team.test:{pg_cluster.port}/postgres?hostaddr=127.0.0.1"
    with pytest.raises(StoreUnavailable, match="sslmode"):
        connect(plain)
    with connect(plain + "&sslmode=disable", check=False) as conn:  # the URL says otherwise: its word
        assert conn.execute("SELECT 1").fetchone() == (1,)


def test_the_command_line_says_what_to_set(tls_cluster: TlsCluster, tmp_path: Path) -> None:
    url = tls_cluster.named_url("evil.team.test", sslrootcert=str(tls_cluster.tls["ca"]))
    dana = team_cli(tmp_path, "dana", "git@github.com:team/app.git", url)
    listed = dana.run("sessions", "list", "--remote")
    assert listed.rc != 0 and len(listed.err_lines) == 1, listed.err
    assert "verified TLS" in listed.err and "Traceback" not in listed.err
    ok = team_cli(tmp_path, "erin", "git@github.com:team/app.git",
                  tls_cluster.named_url("db.team.test", sslrootcert=str(tls_cluster.tls["ca"])))
    assert ok.run("sessions", "list", "--remote").out.startswith("No sessions")


def test_a_remote_pghostaddr_is_remote_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PGHOSTADDR", "10.1.2.3")
    options = connection_options("postgresql://u:p@/team")
    assert (options["sslmode"], options["sslrootcert"]) == ("verify-full", "system")
    monkeypatch.setenv("PGHOSTADDR", "127.0.0.1")
    assert "sslmode" not in connection_options("postgresql://u:p@/team")


@pytest.mark.parametrize("how", ["sslrootcert=ca.pem", "sslrootcert=./ca.pem", "sslrootcert=certs/../ca.pem",
                                 "sslrootcert=ca.pem&sslmode=verify-ca", "env PGSSLROOTCERT=ca.pem"])
def test_a_ca_a_clone_committed_never_vouches_for_the_store(tls_cluster: TlsCluster, tmp_path: Path,
                                                             how: str) -> None:
    """The server's certificate is signed by a CA the clone commits as `ca.pem` (an impostor's, on the path):
    a URL (or PGSSLROOTCERT) naming `ca.pem` relatively made evo-agent trust it from the project directory."""
    from tests.cli_runner import Cli, clean_env
    from tests.security.hostile import clone, upstream

    project = clone(upstream(tmp_path, {"ca.pem": tls_cluster.tls["ca"].read_text(), "certs/notes": "x\n"}),
                    tmp_path / "src" / "clone")
    home = tmp_path / "home"
    home.mkdir()
    if how.startswith("env "):
        url, extra = tls_cluster.named_url("db.team.test"), dict([how[4:].split("=")])
    else:
        url, extra = tls_cluster.named_url("db.team.test") + "&" + how, {}
    user = Cli(project, clean_env(home, EVO_AGENT_PROVIDER="demo", EVO_AGENT_SYNC_URL=url, **extra))
    listed = user.run("sessions", "list", "--remote")
    assert listed.rc != 0 and len(listed.err_lines) == 1 and "Traceback" not in listed.err, listed.err
    assert "No sessions" not in listed.out  # it never took the clone's word for the server
    assert "s3cret-pw" not in listed.err
    if not how.startswith("env "):
        assert "relative path" in listed.err and how.split("&")[0] in listed.err
    absolute = tls_cluster.named_url("db.team.test", sslrootcert=str(project / "ca.pem"))
    chosen = Cli(project, clean_env(home, EVO_AGENT_PROVIDER="demo", EVO_AGENT_SYNC_URL=absolute))
    ok = chosen.run("sessions", "list", "--remote")  # the control: a path the user wrote out in full is theirs
    assert ok.rc == 0 and ok.out.startswith("No sessions"), ok.err


@pytest.mark.parametrize("param", ["passfile=.pgpass", "sslcert=client.crt&sslkey=client.key", "sslcrl=revoked.crl",
                                   "sslkeylogfile=keys.log"])
def test_every_file_the_url_names_must_be_absolute(pg_cluster: PgCluster, tmp_path: Path, param: str) -> None:
    with pytest.raises(StoreUnavailable, match="relative path") as refused:
        connect(pg_cluster.url() + "?" + param)
    assert "s3cret-pw" not in str(refused.value)
    with connect(pg_cluster.url() + "?" + param.replace("=", f"={tmp_path}/"), check=False) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)  # absolute: libpq's business (missing files are fine)


def _service_user(tmp_path: Path, cluster: PgCluster, lines: str, *, name: str = "team",
                  dbname: str = "postgres") -> Cli:
    """A user whose ~/.pg_service.conf holds `[team]` with `lines`, and whose URL names only the service."""
    from tests.cli_runner import clean_env

    from .helpers import project_with_origin

    home = tmp_path / f"home-{name}"
    home.mkdir()
    (home / ".pg_service.conf").write_text(f"[team]\nport={cluster.port}\ndbname={dbname}\nuser=evo\n"
                                           f"password=s3cret-pw\n{lines}\n")
    project = project_with_origin(tmp_path / name, "git@github.com:team/app.git")
    return Cli(project, clean_env(home, EVO_AGENT_PROVIDER="demo", EVO_AGENT_SYNC_URL="postgresql:///?service=team"))


@pytest.mark.parametrize("server", ["TLS from an unknown CA", "no TLS at all"])
def test_a_remote_host_named_by_a_service_file_is_reached_over_verified_tls(
        tls_cluster: TlsCluster, pg_cluster: PgCluster, sync_url: str, tmp_path: Path, server: str) -> None:
    cluster = tls_cluster if server.startswith("TLS") else pg_cluster
    dbname = "postgres" if server.startswith("TLS") else sync_url.rsplit("/", 1)[1]  # both migrated
    user = _service_user(tmp_path, cluster, "host=db.team.test\nhostaddr=127.0.0.1", dbname=dbname)
    listed = user.run("sessions", "list", "--remote")
    assert listed.rc != 0 and len(listed.err_lines) == 1 and "Traceback" not in listed.err, listed.err
    assert "No sessions" not in listed.out and "s3cret-pw" not in listed.err


def test_a_service_file_keeps_its_own_tls_settings_and_loopback_needs_none(
        tls_cluster: TlsCluster, pg_cluster: PgCluster, sync_url: str, tmp_path: Path) -> None:
    """The controls: the service's own CA is used (its word, as the URL's would be); a loopback host needs no TLS."""
    own_ca = _service_user(tmp_path, tls_cluster, f"host=db.team.test\nhostaddr=127.0.0.1\n"
                                                  f"sslrootcert={tls_cluster.tls['ca']}", name="a")
    done = own_ca.run("sessions", "list", "--remote")
    assert done.rc == 0 and done.out.startswith("No sessions"), done.err
    local = _service_user(tmp_path, pg_cluster, "host=127.0.0.1", name="b", dbname=sync_url.rsplit("/", 1)[1])
    done = local.run("sessions", "list", "--remote")
    assert done.rc == 0, done.err


def _old_libpq() -> bool:
    """Whether psycopg's pure-Python implementation finds a libpq older than 16 here (the machine's own)."""
    import subprocess
    import sys

    probe = subprocess.run([sys.executable, "-c", "import psycopg; print(psycopg.pq.version())"], capture_output=True,
                           text=True, timeout=60, env={**__import__("os").environ, "PSYCOPG_IMPL": "python"})
    return probe.returncode == 0 and probe.stdout.strip().isdigit() and int(probe.stdout) < 160000


@pytest.mark.skipif(not _old_libpq(), reason="no libpq older than 16 for psycopg's python implementation here")
def test_with_an_older_libpq_a_file_named_system_in_a_clone_never_vouches_for_the_store(
        tls_cluster: TlsCluster, tmp_path: Path) -> None:
    """libpq before 16 reads `sslrootcert=system` as a file named `system` in the working directory."""
    from tests.cli_runner import Cli, clean_env
    from tests.security.hostile import clone, upstream

    project = clone(upstream(tmp_path, {"system": tls_cluster.tls["ca"].read_text(), "notes": "x\n"}),
                    tmp_path / "src" / "clone")
    home = tmp_path / "home"
    home.mkdir()
    env = clean_env(home, EVO_AGENT_PROVIDER="demo", PSYCOPG_IMPL="python",
                    EVO_AGENT_SYNC_URL=tls_cluster.named_url("db.team.test"))
    listed = Cli(project, env).run("sessions", "list", "--remote")
    assert listed.rc != 0 and len(listed.err_lines) == 1 and "Traceback" not in listed.err, listed.err
    assert "No sessions" not in listed.out and "sslrootcert" in listed.err
    env["EVO_AGENT_SYNC_URL"] = tls_cluster.named_url("db.team.test", sslrootcert="system")  # said in the URL
    said = Cli(project, env).run("sessions", "list", "--remote")
    assert said.rc != 0 and "relative path" in said.err and "No sessions" not in said.out, said.err
    env["EVO_AGENT_SYNC_URL"] = tls_cluster.named_url("db.team.test", sslrootcert=str(tls_cluster.tls["ca"]))
    ok = Cli(project, env).run("sessions", "list", "--remote")  # the control: the CA named by its path
    assert ok.rc == 0 and ok.out.startswith("No sessions"), ok.err


def test_the_system_roots_are_named_so_no_libpq_reads_a_relative_file() -> None:
    from evo_agent.sync.db import system_roots

    roots = system_roots()
    assert roots == "system" or roots.startswith("/")
