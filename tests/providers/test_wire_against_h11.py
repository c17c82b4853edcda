"""providers/wire.py against h11, a second HTTP/1.1 parser, on the same byte streams.

wire.py is ~260 lines of our own (it keeps `http.client` and its imports off the start-up path);
h11 is the parser httpx and httpcore build on. Hypothesis writes HTTP/1.1 and 1.0 responses —
status lines with and without a reason, an interim 100 Continue, headers in any case with folded
whitespace around values, bodies framed by Content-Length, by chunks (cut at random, with chunk
extensions and trailers) or by the end of the connection, 204s without a body — and delivers them
cut at random points, one piece per read of the socket. Both parsers must see the same status,
reason, headers and body, whether wire.py's body is read whole (`read`) or line by line
(`readline`, as the SSE reader does), and agree on whether the connection closes after it.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import h11
from hypothesis import given, settings
from hypothesis import strategies as st

from evo_agent.providers.wire import read_response

_TOKEN = st.text("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-!#$%&'*+.^_`|~", min_size=1,
                 max_size=12)
_FRAMING = {"content-length", "transfer-encoding", "connection"}
_VISIBLE = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=20)
_VALUE = st.lists(_VISIBLE, min_size=0, max_size=3).map(" ".join)  # words: no whitespace at either end
_REASON = st.sampled_from(["", "OK", "Not Found", "Too Many Requests", "Overloaded", "weird  reason"])
_BODY = st.binary(max_size=600) | st.lists(st.sampled_from([b"data: {}\n", b"event: x\r\n", b"\n", b": ping\n"]),
                                            max_size=20).map(b"".join)


@dataclass
class Answer:
    raw: bytes
    version: str
    status: int
    reason: str
    headers: list[tuple[str, str]]  # (name as written, value) of the final response
    body: bytes
    closes: bool  # the connection closes after this answer


@st.composite
def answers(draw) -> Answer:
    version = draw(st.sampled_from(["1.1", "1.1", "1.0"]))
    status = draw(st.sampled_from([200, 200, 201, 204, 400, 401, 404, 429, 500, 529]))
    reason = draw(_REASON)
    names = draw(st.lists(_TOKEN.filter(lambda n: n.lower() not in _FRAMING), max_size=6, unique_by=str.lower))
    headers = [(name, draw(_VALUE)) for name in names]
    body = b"" if status == 204 else draw(_BODY)
    framing = "none" if status == 204 else draw(st.sampled_from(
        ["length", "chunked", "eof"] if version == "1.1" else ["length", "eof"]))
    close = draw(st.booleans())
    if close or framing == "eof":
        headers.append((draw(st.sampled_from(["Connection", "connection", "CONNECTION"])), "close"))
    if framing == "length":
        headers.append(("Content-Length", str(len(body))))
    if framing == "chunked":
        headers.append((draw(st.sampled_from(["Transfer-Encoding", "transfer-encoding"])), "chunked"))
    head = f"HTTP/{version} {status}" + (f" {reason}" if reason else draw(st.sampled_from(["", " "])))
    lines = [head] + [f"{name}:{draw(st.sampled_from(['', ' ', '  ', chr(9)]))}{value}" for name, value in headers]
    raw = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    if draw(st.booleans()):
        raw = b"HTTP/1.1 100 Continue\r\n\r\n" + raw
    if framing == "chunked":
        raw += _chunked(draw, body)
    else:
        raw += body
    return Answer(raw, version, status, reason, headers, body, closes=close or framing == "eof" or version == "1.0")


def _chunked(draw, body: bytes) -> bytes:
    cuts = sorted(draw(st.lists(st.integers(0, len(body)), max_size=6)))
    pieces = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)]) if b > a]
    out = b""
    for piece in pieces:
        size = draw(st.sampled_from(["{:x}", "{:X}", "{:04x}"])).format(len(piece))
        extension = draw(st.sampled_from(["", ";name=value", "; x"]))
        out += f"{size}{extension}\r\n".encode() + piece + b"\r\n"
    trailers = draw(st.sampled_from(["", "Expires: never\r\n"]))
    return out + f"0\r\n{trailers}\r\n".encode()


class Pieces(io.RawIOBase):
    """A socket that delivers `data` in the given pieces: each read returns at most the rest of one piece."""

    def __init__(self, pieces: list[bytes]) -> None:
        self.pieces = [p for p in pieces if p]

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if not self.pieces:
            return 0
        piece = self.pieces[0]
        n = min(len(buffer), len(piece))
        buffer[:n] = piece[:n]
        if n == len(piece):
            self.pieces.pop(0)
        else:
            self.pieces[0] = piece[n:]
        return n


def _cut(data: bytes, points: list[int]) -> list[bytes]:
    cuts = sorted({min(p, len(data)) for p in points})
    return [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)]) if b > a]


def _by_h11(pieces: list[bytes]) -> tuple[h11.Response, bytes, bool]:
    conn = h11.Connection(our_role=h11.CLIENT)
    conn.send(h11.Request(method="POST", target="/v1/messages", headers=[("Host", "api.example"),
                                                                          ("Content-Length", "0")]))
    conn.send(h11.EndOfMessage())
    response, body = None, b""
    feed = [*pieces, b""]  # b"": the connection's end
    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            conn.receive_data(feed.pop(0))
            continue
        if isinstance(event, h11.Response):
            response = event
        elif isinstance(event, h11.Data):
            body += event.data
        elif isinstance(event, h11.EndOfMessage):
            assert response is not None
            return response, body, conn.their_state is h11.MUST_CLOSE
        else:
            assert isinstance(event, h11.InformationalResponse), event


@settings(max_examples=400, deadline=None)
@given(answer=answers(), points=st.lists(st.integers(0, 2000), max_size=12), by_line=st.booleans(),
       buffer=st.sampled_from([1, 7, 64, 8192]))
def test_wire_and_h11_read_the_same_answer(answer: Answer, points: list[int], by_line: bool, buffer: int) -> None:
    pieces = _cut(answer.raw, points)
    expected, expected_body, h11_closes = _by_h11(pieces)

    response = read_response(io.BufferedReader(Pieces(pieces), buffer_size=buffer))
    if by_line:
        lines = []
        while line := response.readline():
            lines.append(line)
        body = b"".join(lines)
        assert all(line.endswith(b"\n") for line in lines[:-1])
    else:
        body = response.read()
    assert response.read() == b"" and response.readline() == b""  # the end stays the end

    assert response.status == expected.status_code == answer.status
    assert response.reason == expected.reason.decode("latin-1") == answer.reason.strip()
    assert [(n.lower(), v) for n, v in response.getheaders()] == [
        (n.decode("latin-1"), v.decode("latin-1")) for n, v in expected.headers]
    assert body == expected_body == answer.body
    assert response.will_close == answer.closes
    if answer.version == "1.1":
        assert response.will_close == h11_closes
