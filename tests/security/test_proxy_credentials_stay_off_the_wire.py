"""A proxy evo-agent cannot speak to is refused before anything is sent to it, its password above all.

The client speaks to a proxy in plain HTTP (CONNECT, then TLS to the API inside the tunnel). Given
`HTTPS_PROXY=https://alice:PASSWORD@proxy:443` (a proxy reached over TLS) or `socks5://alice:PASSWORD@proxy:1080`,
it opened a plain TCP connection to that port and sent `CONNECT … Proxy-Authorization: Basic <alice:PASSWORD>` in
clear text: anyone on the path to the proxy read the password the user had put behind TLS (or given to a SOCKS
proxy that never asked for HTTP). Such a proxy is now refused in one line that names its scheme, with nothing
sent, and the line shows the proxy without its password. The control: an `http://` proxy gets its CONNECT with
the credentials, as the user asked.
"""

from __future__ import annotations

import base64
import socket
import threading

import pytest

from tests.cli_runner import Cli, clean_env
from tests.hostile_endpoint import shut_listener

PASSWORD = "proxy-secret-pw-771"
KEY = "sk-ant-api03-" + "p" * 40


@pytest.fixture
def listener():
    """A loopback port that records every byte sent to it (what the network between evo-agent and a proxy sees)."""
    server = socket.create_server(("127.0.0.1", 0))
    received: list[bytes] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(5)
                try:
                    while data := conn.recv(65536):
                        received.append(data)
                        if b"\r\n\r\n" in b"".join(received):
                            conn.sendall(b"HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n")
                            break
                except OSError:
                    pass

    acceptor = threading.Thread(target=serve, daemon=True)
    acceptor.start()
    yield server.getsockname()[1], received
    shut_listener(server, acceptor)  # a thread left in accept() took a later test's connections


def _seen(received: list[bytes]) -> bytes:
    return b"".join(received)


def _run(project, tmp_path, **env: str):
    return Cli(project, clean_env(tmp_path / "home", ANTHROPIC_API_KEY=KEY,
                                  ANTHROPIC_BASE_URL="https://api.example.invalid", **env)).run("-p", "hi")


SPELLINGS = [("HTTPS_PROXY", "https"), ("https_proxy", "https"), ("ALL_PROXY", "https"), ("HTTPS_PROXY", "socks5"),
             ("HTTPS_PROXY", "socks5h"), ("all_proxy", "socks4"), ("HTTPS_PROXY", "HTTPS")]


@pytest.mark.parametrize(("variable", "scheme"), SPELLINGS)
def test_a_proxy_the_client_cannot_speak_to_gets_no_byte(project, tmp_path, listener, variable, scheme):
    port, received = listener
    result = _run(project, tmp_path, **{variable: f"{scheme}://alice:{PASSWORD}@127.0.0.1:{port}"})
    assert result.rc == 1
    secret = base64.b64encode(f"alice:{PASSWORD}".encode())
    assert PASSWORD.encode() not in _seen(received) and secret not in _seen(received)
    assert _seen(received) == b"", "something was sent to a proxy evo-agent cannot speak to"
    assert PASSWORD not in result.err
    assert f"{scheme.lower()}://" in result.err and "HTTPS_PROXY" in result.err, result.err  # what to change


def test_a_proxy_url_without_a_host_is_named_without_its_password(project, tmp_path):
    result = _run(project, tmp_path, HTTPS_PROXY=f"http://alice:{PASSWORD}@:3128")
    assert result.rc == 1 and "names no host" in result.err
    assert PASSWORD not in result.err


def test_control_an_http_proxy_gets_its_connect_with_the_credentials(project, tmp_path, listener):
    port, received = listener
    result = _run(project, tmp_path, HTTPS_PROXY=f"http://alice:{PASSWORD}@127.0.0.1:{port}")
    assert result.rc == 1  # the proxy answers 407
    seen = _seen(received)
    assert seen.startswith(b"CONNECT api.example.invalid:443 HTTP/1.1\r\n")
    assert b"Proxy-Authorization: Basic " + base64.b64encode(f"alice:{PASSWORD}".encode()) in seen
    assert KEY.encode() not in seen  # the key goes inside the tunnel's TLS, never to the proxy
