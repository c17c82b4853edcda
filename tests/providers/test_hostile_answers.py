"""What a hostile or broken model API sends never fills evo-agent's memory, loops it, or escapes as a traceback.

Each test is a real loopback server (tests/hostile_endpoint.py) writing bytes no API sends, to the real client with
its own limits set small (a line of 4 KB, a body of 64 KB, where the defaults are 32 MB and 512 MB): one streamed
line that never ends, under every framing; one event of many short data lines; more events than an answer holds; an error body of tens of megabytes;
absurd or signed chunk sizes and Content-Lengths (`int()` took "-1", "0x10", "1_0"; a declared size was allocated
before a byte of it came: MemoryError); an endless run of interim 100 Continue answers; a status code in
superscript digits (`int("²00")`: ValueError); a status line and headers sent a byte at a time, each byte
well within the read timeout (with the client's timeout at 0.5 s, the head took as long as the server liked), and a proxy's answer to CONNECT
sent the same way; a stream of keep-alives alone (comments, ping events, blank lines, a line trickled a byte at a
time), and a whole body or an error body trickled.
Where the server could have gone on sending, it saw the client hang up before it finished. The controls: an
honest answer just under each limit is read whole, and a body that pauses (each pause within the timeout)
for longer than the timeout in all is read to its end.
"""

from __future__ import annotations

import gzip
import json
import socket
import threading
import time

import pytest

from evo_agent.providers.anthropic_provider import AnthropicProvider
from evo_agent.providers.base import ProviderError
from evo_agent.providers.http_client import (
    MAX_ERROR_BYTES,
    Client,
    ConnectError,
    StatusError,
    StreamBroken,
    Timeout,
    TooLarge,
)
from tests.hostile_endpoint import http_answer

MAX_LINE = 4096
MAX_BODY = 64 * 1024
FLOOD = 64 << 20  # what a server tries to send past a limit: far more than the sockets' buffers hold


class Flood:
    """An answer: `head`, then `prefix` and `FLOOD` bytes of `piece`, framed as `framing`; `finished` tells
    whether the server got all of it out (it cannot, when the client stops reading and hangs up)."""

    def __init__(self, head: bytes, prefix: bytes, piece: bytes, framing: str) -> None:
        self.head, self.prefix, self.piece, self.framing = head, prefix, piece, framing
        self.finished = threading.Event()
        self.done = threading.Event()

    def __call__(self, conn: socket.socket, request: bytes) -> None:
        try:
            conn.sendall(self.head)
            block = self.piece * max(1, (1 << 20) // len(self.piece))
            if self.framing == "one chunk":
                conn.sendall(f"{FLOOD + len(self.prefix):x}\r\n".encode() + self.prefix)
            elif self.framing == "chunks" and self.prefix:  # (an empty chunk would end the body)
                conn.sendall(f"{len(self.prefix):x}\r\n".encode() + self.prefix + b"\r\n")
            elif self.framing != "chunks":
                conn.sendall(self.prefix)
            for _ in range(FLOOD // len(block)):
                if self.framing == "chunks":
                    conn.sendall(f"{len(block):x}\r\n".encode() + block + b"\r\n")
                else:
                    conn.sendall(block)
            self.finished.set()
        finally:
            self.done.set()


def _head(status: str, framing: str, content_type: str = "text/event-stream") -> bytes:
    fields = {"one chunk": "Transfer-Encoding: chunked", "chunks": "Transfer-Encoding: chunked",
              "length": f"Content-Length: {FLOOD + 100}", "eof": "Connection: close"}[framing]
    return f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\n{fields}\r\n\r\n".encode()


def _client(url: str) -> Client:
    return Client(url, timeout=10, max_retries=0, max_line=MAX_LINE, max_body=MAX_BODY)


FRAMINGS = ["one chunk", "chunks", "length", "eof"]


@pytest.mark.parametrize("framing", FRAMINGS)
def test_a_streamed_line_that_never_ends_stops_at_the_line_limit(hostile_endpoint, framing):
    flood = Flood(_head("200 OK", framing), b"event: content_block_delta\ndata: ", b"x", framing)
    endpoint = hostile_endpoint(flood)
    response = _client(endpoint.url).post("/v1/messages", b"{}")
    with pytest.raises(TooLarge, match="a line of more than 4096 bytes"):
        list(response.events())
    assert flood.done.wait(30)
    assert not flood.finished.is_set(), "the client read the whole flood"


@pytest.mark.parametrize("framing", FRAMINGS)
def test_events_past_the_body_limit_stop_there(hostile_endpoint, framing):
    flood = Flood(_head("200 OK", framing), b"", b"event: ping\ndata: {\"type\": \"ping\"}\n\n", framing)
    endpoint = hostile_endpoint(flood)
    response = _client(endpoint.url).post("/v1/messages", b"{}")
    events = 0
    with pytest.raises(TooLarge, match="more than 65536 bytes"):
        for _ in response.events():
            events += 1
    assert 0 < events < MAX_BODY
    assert flood.done.wait(30) and not flood.finished.is_set()


@pytest.mark.parametrize("framing", FRAMINGS)
def test_one_event_of_many_short_data_lines_stops_at_the_line_limit(hostile_endpoint, framing):
    flood = Flood(_head("200 OK", framing), b"event: content_block_delta\n", b"data: xy\n", framing)
    endpoint = hostile_endpoint(flood)  # each line short; the event, joined, as long as the server likes
    response = _client(endpoint.url).post("/v1/messages", b"{}")
    with pytest.raises(TooLarge, match="an event of more than 4096 bytes"):
        list(response.events())
    assert flood.done.wait(30) and not flood.finished.is_set()


@pytest.mark.parametrize("framing", FRAMINGS)
def test_a_json_answer_past_the_body_limit_stops_there(hostile_endpoint, framing):
    flood = Flood(_head("200 OK", framing, "application/json"), b'{"a": "', b"y", framing)
    endpoint = hostile_endpoint(flood)
    response = _client(endpoint.url).post("/v1/chat/completions", b"{}")
    with pytest.raises(TooLarge):
        response.json()
    assert flood.done.wait(30) and not flood.finished.is_set()


@pytest.mark.parametrize("framing", FRAMINGS)
def test_a_huge_error_body_is_cut_and_still_says_the_status(hostile_endpoint, framing):
    flood = Flood(_head("400 Bad Request", framing, "text/plain"), b"the request was bad because ", b"z",
                  framing)
    endpoint = hostile_endpoint(flood)
    with pytest.raises(StatusError) as caught:
        _client(endpoint.url).post("/v1/messages", b"{}")
    assert caught.value.status == 400
    assert caught.value.body.startswith("the request was bad because zzz")
    assert len(caught.value.body) <= MAX_ERROR_BYTES
    assert flood.done.wait(30) and not flood.finished.is_set()


DECLARED_SIZES = {
    "absurd chunk": b"HTTP/1.1 400 Bad\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\nabc",
    "absurd length": b"HTTP/1.1 400 Bad\r\nContent-Length: 99999999999999999999\r\n\r\nabc",
}


@pytest.mark.parametrize("name", list(DECLARED_SIZES))
def test_a_declared_size_is_never_allocated_before_it_arrives(hostile_endpoint, name):
    endpoint = hostile_endpoint(DECLARED_SIZES[name])
    with pytest.raises(StatusError) as caught:  # not MemoryError
        _client(endpoint.url).post("/v1/messages", b"{}")
    assert caught.value.status == 400


@pytest.mark.parametrize("size", [b"-1", b"+5", b"0x5", b"5_0", b" ", b"1" * 17, "\u0665".encode()])
def test_a_chunk_size_that_is_not_plain_hexadecimal_breaks_the_stream(hostile_endpoint, size):
    body = size + b"\r\n" + b"data: x\n\n" * 20 + b"\r\n0\r\n\r\n"
    endpoint = hostile_endpoint(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + body)
    response = _client(endpoint.url).post("/v1/messages", b"{}")
    with pytest.raises(StreamBroken, match="chunk size"):
        list(response.events())


@pytest.mark.parametrize("length", ["-1", "+5", "5_0", "\u0665", "0x5"])
def test_a_content_length_that_is_not_plain_digits_is_no_answer(hostile_endpoint, length):
    endpoint = hostile_endpoint(f"HTTP/1.1 200 OK\r\nContent-Length: {length}\r\n\r\nhello".encode())
    with pytest.raises(ConnectError, match="Content-Length"):
        _client(endpoint.url).post("/v1/messages", b"{}")


def test_an_endless_run_of_interim_answers_is_no_answer(hostile_endpoint):
    endpoint = hostile_endpoint(b"HTTP/1.1 100 Continue\r\n\r\n" * 10_000)
    with pytest.raises(ConnectError, match="interim"):
        _client(endpoint.url).post("/v1/messages", b"{}")


@pytest.mark.parametrize("status", ["\u00b200", "\u00b900", "4\u00b30"])
def test_a_status_in_other_digits_is_no_answer(hostile_endpoint, status):
    endpoint = hostile_endpoint(f"HTTP/1.1 {status} OK\r\nContent-Length: 0\r\n\r\n".encode("latin-1"))
    with pytest.raises(ConnectError, match=r"not an HTTP/1\.x status line"):
        _client(endpoint.url).post("/v1/messages", b"{}")


def test_a_gzip_body_is_never_inflated(hostile_endpoint):
    bomb = gzip.compress(b"\0" * (32 << 20))  # 32 MB of zeros in ~32 KB: the client asked for identity
    endpoint = hostile_endpoint(http_answer("200 OK", {"Content-Encoding": "gzip"}, bomb))
    response = _client(endpoint.url).post("/v1/chat/completions", b"{}")
    with pytest.raises(ValueError):  # the compressed bytes, not JSON: a bad answer
        response.json()
    assert b"accept-encoding: identity" in endpoint.requests[0].lower()


def test_invalid_utf8_in_a_stream_is_replaced_not_raised(hostile_endpoint):
    body = b"event: x\ndata: \xff\xfe caf\xc3 \xed\xa0\x80\n\n"
    endpoint = hostile_endpoint(http_answer("200 OK", {"Content-Type": "text/event-stream"}, body))
    events = list(_client(endpoint.url).post("/v1/messages", b"{}").events())
    assert len(events) == 1 and events[0][0] == "x" and "\ufffd" in events[0][1]


def test_control_an_honest_answer_just_under_the_limits_is_read_whole(hostile_endpoint):
    line = b"data: " + b"a" * (MAX_LINE - 8) + b"\n\n"  # the line with its "\n" is MAX_LINE - 1 bytes
    events = line * ((MAX_BODY - 1) // len(line))
    endpoint = hostile_endpoint(http_answer("200 OK", {"Content-Type": "text/event-stream"}, events))
    got = list(_client(endpoint.url).post("/v1/messages", b"{}").events())
    assert len(got) == (MAX_BODY - 1) // len(line) and all(len(data) == MAX_LINE - 8 for _, data in got)


def test_the_provider_says_what_was_too_large_in_one_line(hostile_endpoint):
    flood = Flood(_head("200 OK", "chunks"), b"data: ", b"x", "chunks")
    endpoint = hostile_endpoint(flood)
    provider = AnthropicProvider(api_key="sk-ant-test-" + "k" * 20, base_url=endpoint.url, max_retries=0, timeout=10)
    provider._client.max_line = MAX_LINE
    with pytest.raises(ProviderError) as caught:
        provider.complete(system="s", messages=[{"role": "user", "content": "hi"}], tools=[])
    assert str(caught.value) == (f"the Anthropic API at {endpoint.url} sent a line of more than 4096 bytes; "
                                 "the rest was not read")
    assert json.loads(endpoint.requests[0].split(b"\r\n\r\n", 1)[1])["messages"]  # the request went out whole


class Trickle:
    """Sends `data` one byte at a time, `gap` seconds apart (each gap well within the client's read timeout)."""

    def __init__(self, data: bytes, gap: float = 0.02, head: bytes = b"") -> None:
        self.data, self.gap, self.head = data, gap, head
        self.finished = threading.Event()
        self.done = threading.Event()

    def __call__(self, conn: socket.socket, request: bytes) -> None:
        try:
            conn.sendall(self.head)  # at once: only `data` trickles
            for byte in self.data:
                conn.sendall(bytes([byte]))
                time.sleep(self.gap)
            self.finished.set()
        finally:
            self.done.set()


HEAD_TRICKLES = {
    "status line": b"HTTP/1.1 200 " + b"O" * 3000 + b"\r\n\r\n",
    "headers": b"HTTP/1.1 200 OK\r\n" + b"X-Pad: a\r\n" * 300 + b"\r\n",
    "interim answers": b"HTTP/1.1 100 Continue\r\n\r\n" * 120,
}


@pytest.mark.parametrize("name", list(HEAD_TRICKLES))
def test_a_head_sent_a_byte_at_a_time_ends_at_the_timeout(hostile_endpoint, name):
    trickle = Trickle(HEAD_TRICKLES[name])  # 3000 bytes: a minute of trickling
    endpoint = hostile_endpoint(trickle)
    with pytest.raises(Timeout):
        Client(endpoint.url, timeout=0.5, max_retries=0).post("/v1/messages", b"{}")
    assert trickle.done.wait(30) and not trickle.finished.is_set()


def _pinging(keep_alive: bytes, count: int = 600):
    """A stream that starts, then sends only `keep_alive`, every 0.05 s, `count` times (30 s)."""
    state = {"finished": threading.Event(), "done": threading.Event()}

    def answer(conn: socket.socket, request: bytes) -> None:
        try:
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
                         b"event: message_start\ndata: {}\n\n")
            for _ in range(count):
                conn.sendall(keep_alive)
                time.sleep(0.05)
            state["finished"].set()
        finally:
            state["done"].set()
    return answer, state


KEEP_ALIVES = {"comments": b": ping\n\n", "ping events": b"event: ping\ndata: {\"type\": \"ping\"}\n\n",
               "a line trickled": b"x", "blank lines": b"\n"}


@pytest.mark.parametrize("name", list(KEEP_ALIVES))
def test_a_stream_of_keep_alives_alone_ends_at_the_timeout(hostile_endpoint, name):
    answer, state = _pinging(KEEP_ALIVES[name])
    endpoint = hostile_endpoint(answer)
    response = Client(endpoint.url, timeout=0.5, max_retries=0).post("/v1/messages", b"{}")
    names = []
    with pytest.raises(Timeout):
        for event, _ in response.events():
            names.append(event)
    assert names[0] == "message_start"
    assert state["done"].wait(30) and not state["finished"].is_set()


@pytest.mark.parametrize("status", ["200 OK", "400 Bad Request"])
def test_a_whole_body_trickled_ends_at_the_timeout(hostile_endpoint, status):
    trickle = Trickle(b"{" * 3000, head=f"HTTP/1.1 {status}\r\nContent-Length: 3000\r\n\r\n".encode())
    endpoint = hostile_endpoint(trickle)
    client = Client(endpoint.url, timeout=0.5, max_retries=0)
    if status.startswith("200"):
        response = client.post("/v1/chat/completions", b"{}")  # the head came at once
        with pytest.raises(Timeout):
            response.json()
    else:
        with pytest.raises(StatusError) as caught:  # what came of the error body in time
            client.post("/v1/chat/completions", b"{}")
        assert caught.value.status == 400
    assert trickle.done.wait(30) and not trickle.finished.is_set()


def test_a_proxy_answering_connect_a_byte_at_a_time_ends_at_the_timeout(hostile_endpoint, monkeypatch):
    trickle = Trickle(b"HTTP/1.1 200 Connection established\r\n" + b"X-Pad: a\r\n" * 300 + b"\r\n")
    proxy = hostile_endpoint(trickle)
    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    with pytest.raises(Timeout):
        Client("https://api.example.invalid", timeout=0.5, max_retries=0).post("/v1/messages", b"{}")
    assert proxy.requests[0].startswith(b"CONNECT api.example.invalid:443 ")
    assert trickle.done.wait(30) and not trickle.finished.is_set()


def test_control_a_body_that_pauses_within_the_timeout_is_read_to_its_end(hostile_endpoint):
    events = b"".join(b"data: %d\n\n" % n for n in range(8))

    def answer(conn: socket.socket, request: bytes) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")
        for event in events.split(b"\n\n")[:-1]:
            time.sleep(0.2)  # 1.6 s in all, past the 1 s timeout; each pause within it
            conn.sendall(event + b"\n\n")

    endpoint = hostile_endpoint(answer)
    response = Client(endpoint.url, timeout=1, max_retries=0).post("/v1/messages", b"{}")
    assert [data for _, data in response.events()] == [str(n) for n in range(8)]
