"""A relative `SSL_CERT_FILE`/`SSL_CERT_DIR` never makes evo-agent trust a certificate the clone committed (SPEC §9).

OpenSSL reads `$SSL_CERT_FILE` (and each entry of `$SSL_CERT_DIR`) when a TLS context loads its default CA store, a
relative name from the directory evo-agent started in: the project. A clone committing `certs/ca.pem` then chose
whom evo-agent's own HTTPS trusts, and anyone on the network path holding that certificate's key read the API key
(`x-api-key`) and the whole conversation. The same for `NODE_EXTRA_CA_CERTS`, which MCP servers are given. Unset
at start when relative, like a relative `XDG_CONFIG_HOME` (and a relative `SSLKEYLOGFILE`, which wrote the TLS keys
into the project). The control: a Python in the clone with the same
variable trusts the planted certificate and talks to the impostor.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from evo_agent.cli.startup_env import drop_relative_startup_files
from tests.cli_runner import Cli, clean_env

from .hostile import clone, self_signed_https, upstream

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is not installed")

API_KEY = "sk-ant-api03-" + "k" * 80


@pytest.fixture
def impostor(tmp_path):
    """A TLS server with a self-signed certificate for localhost that records what each client sends."""
    with self_signed_https(tmp_path) as server:
        yield server


def _armed_clone(tmp_path, cert: str):
    return clone(upstream(tmp_path, {"certs/ca.pem": cert, "certs/dir/ca.pem": cert, "notes.txt": "x\n"}),
                 tmp_path / "src" / "clone")


def test_control_a_relative_ssl_cert_file_trusts_the_clone_s_certificate(tmp_path, impostor):
    port, cert, received = impostor
    project = _armed_clone(tmp_path, cert)
    probe = ("import ssl, urllib.request\n"
             f"urllib.request.urlopen('https://localhost:{port}/', context=ssl.create_default_context(), timeout=10)\n")
    subprocess.run([sys.executable, "-c", probe], cwd=project, capture_output=True, timeout=60,
                   env={**os.environ, "SSL_CERT_FILE": "certs/ca.pem"})
    assert received and received[0].startswith(b"GET / ")  # it talked to the impostor


@pytest.mark.parametrize(("name", "value"), [("SSL_CERT_FILE", "certs/ca.pem"), ("SSL_CERT_FILE", "./certs/ca.pem"),
                                             ("SSL_CERT_FILE", "certs/../certs/ca.pem")])
def test_evo_agent_never_sends_the_api_key_to_a_certificate_the_clone_chose(tmp_path, impostor, name, value):
    port, cert, received = impostor
    project = _armed_clone(tmp_path, cert)
    env = clean_env(tmp_path / "home", ANTHROPIC_API_KEY=API_KEY, ANTHROPIC_BASE_URL=f"https://localhost:{port}",
                    **{name: value})
    result = Cli(project, env).run("-p", "hi")
    assert result.rc != 0
    assert not any(API_KEY.encode() in request for request in received), "the impostor got the API key"
    assert "cannot connect securely" in result.err


def test_relative_ca_variables_are_dropped_and_absolute_ones_stay():
    environ = {"SSL_CERT_FILE": "certs/ca.pem", "SSL_CERT_DIR": "/etc/ssl/certs:certs/dir",
               "NODE_EXTRA_CA_CERTS": "./certs/ca.pem", "SSLKEYLOGFILE": "tls-keys.log", "PGSSLROOTCERT": "certs/ca.pem",
               "PGSERVICEFILE": "pg_service.conf", "PGPASSFILE": ".pgpass", "PGSYSCONFDIR": ".",
               "PGSSLCERT": "client.crt", "PGSSLKEY": "./client.key", "PGSSLCRL": "revoked.crl", "PGSSLCRLDIR": "crl"}
    drop_relative_startup_files(environ)
    assert environ == {"SSL_CERT_DIR": "/etc/ssl/certs"}
    own = {"SSL_CERT_FILE": "/etc/corp/ca.pem", "SSL_CERT_DIR": "/etc/ssl/certs", "NODE_EXTRA_CA_CERTS": "/x/ca.pem",
           "SSLKEYLOGFILE": "/tmp/keys.log", "PGSYSCONFDIR": "/etc/postgresql-common", "PGSSLCERT": "/h/.pg/c.crt"}
    kept = dict(own)
    drop_relative_startup_files(kept)
    assert kept == own
