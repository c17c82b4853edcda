"""A stream in a shape no API sends is a bad answer in one line, never a crash, and nothing invalid is recorded.

The Messages API stream was folded trusting each field's type: `"delta": [1]`, `"index": [0]`, `"message": [1, 2]`,
a tool_use block without its id, `"input_tokens": "lots"` each ended the run with `evo-agent: internal error:
AttributeError/TypeError/KeyError/ValueError …`, the line kept for evo-agent's own bugs (SPEC §7: an API error
is one clear line). A text block whose text is a number was recorded as it came, and every later request of the
session would have carried it. Both providers now say "the … API at URL sent …" and record nothing of such an
answer. A captive portal's HTML page with a 200 (any framing, invalid UTF-8 in it) is one line too. The control:
the honest fake API's answer, deltas and all, is used as ever.
"""

from __future__ import annotations

import json

import pytest

from tests.builders import read_records
from tests.cli_runner import Cli, clean_env
from tests.fake_model_server import text
from tests.hostile_endpoint import http_answer

KEY = "sk-ant-api03-" + "m" * 40
MESSAGE = {"id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": [], "stop_reason": None,
           "usage": {"input_tokens": 3, "output_tokens": 1}}


def _sse(event: str, payload: object) -> bytes:
    return f"event: {event}\ndata: {json.dumps(payload)}\n\n".encode()


START = _sse("message_start", {"type": "message_start", "message": MESSAGE})
TEXT_START = _sse("content_block_start", {"type": "content_block_start", "index": 0,
                                          "content_block": {"type": "text", "text": ""}})
END = (_sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                              "usage": {"output_tokens": 1}})
       + _sse("message_stop", {"type": "message_stop"}))


def _stream(*events: bytes) -> bytes:
    return http_answer("200 OK", {"Content-Type": "text/event-stream"}, b"".join(events))


def _delta(delta: object, index: object = 0) -> bytes:
    return _sse("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})


def _block(block: object, index: object = 0) -> bytes:
    return _sse("content_block_start", {"type": "content_block_start", "index": index, "content_block": block})


ANTHROPIC = {
    "message a list": _stream(_sse("message_start", {"type": "message_start", "message": [1, 2]}), END),
    "usage a list": _stream(_sse("message_start", {"type": "message_start", "message": {**MESSAGE, "usage": [1]}}),
                            END),
    "usage a word": _stream(_sse("message_start", {"type": "message_start", "message": {
        **MESSAGE, "usage": {"input_tokens": "lots"}}}), END),
    "delta a list": _stream(START, TEXT_START, _delta([1]), END),
    "text delta a number": _stream(START, TEXT_START, _delta({"type": "text_delta", "text": 5}), END),
    "index a list": _stream(START, _block({"type": "text", "text": ""}, index=[0]), END),
    "block a string": _stream(START, _block("x"), END),
    "tool_use without id": _stream(START, _block({"type": "tool_use", "name": "read_file"}),
                                   _sse("content_block_stop", {"type": "content_block_stop", "index": 0}), END),
    "tool_use input a list": _stream(START, _block({"type": "tool_use", "id": "t", "name": "read_file",
                                                    "input": [1]}), END),
    "text block a number": _stream(START, _block({"type": "text", "text": 7}), END),
    "thinking a number": _stream(START, _block({"type": "thinking", "thinking": 7, "signature": "s"}), END),
    "final usage a list": _stream(START, TEXT_START, _delta({"type": "text_delta", "text": "hi"}),
                                  _sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                                                         "usage": [1]}), _sse("message_stop", {"type": "message_stop"})),
    "type a list": _stream(START, _sse("content_block_start", {"type": ["x"], "index": 0}), END),
}


def _assistant_records(project) -> list[dict]:
    return [r for path in (project / ".evo-agent" / "sessions").glob("*/messages.jsonl")
            for r in read_records(path) if r.get("type") == "assistant"]


@pytest.mark.parametrize("name", list(ANTHROPIC))
def test_a_malformed_messages_stream_is_one_line(project, tmp_path, hostile_endpoint, name):
    endpoint = hostile_endpoint(ANTHROPIC[name])
    result = Cli(project, clean_env(tmp_path / "home", ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=endpoint.url)).run(
        "-p", "hi")
    assert result.rc == 1
    assert "internal error" not in result.err and "Traceback" not in result.err
    assert result.err.startswith(f"evo-agent: the Anthropic API at {endpoint.url} sent "), result.err
    assert _assistant_records(project) == []


def _chunks(*chunks: object) -> bytes:
    data = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks)
    return http_answer("200 OK", {"Content-Type": "text/event-stream"}, data + b"data: [DONE]\n\n")


OPENAI = {
    "usage words": _chunks({"choices": [{"index": 0, "delta": {"content": "hi"}}],
                            "usage": {"prompt_tokens": "many", "completion_tokens": [1]}},
                           {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
    "finish_reason a list": _chunks({"choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": ["x"]}]}),
}


@pytest.mark.parametrize("name", list(OPENAI))
def test_a_malformed_chat_stream_is_one_line(project, tmp_path, hostile_endpoint, name):
    endpoint = hostile_endpoint(OPENAI[name])
    result = Cli(project, clean_env(tmp_path / "home", OPENAI_API_KEY=KEY, OPENAI_BASE_URL=endpoint.url + "/v1")).run(
        "-p", "hi")
    assert result.rc == 1
    assert "internal error" not in result.err
    assert result.err.startswith(f"evo-agent: the OpenAI-compatible API at {endpoint.url}/v1 sent "), result.err


def test_many_small_deltas_and_a_block_s_own_text_arrive_whole_and_in_order(project, tmp_path, hostile_endpoint):
    pieces = [f"{n}," for n in range(20_000)]
    events = [START, _block({"type": "text", "text": "start:"})]
    events += [_delta({"type": "text_delta", "text": piece}) for piece in pieces]
    endpoint = hostile_endpoint(_stream(*events, END))
    result = Cli(project, clean_env(tmp_path / "home", ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=endpoint.url)).run(
        "-p", "count")
    assert result.rc == 0, result.err
    assert result.out.strip() == "start:" + "".join(pieces)
    (record,) = _assistant_records(project)
    assert record["message"]["content"] == [{"type": "text", "text": "start:" + "".join(pieces)}]


def test_control_the_honest_fake_api_is_answered_as_ever(cli, model_server):
    model_server.script(text("all fine here"))
    result = cli.run("-p", "hi")
    assert result.rc == 0 and result.out.strip() == "all fine here"


PORTAL = b"<html><head><title>Sign in to the Wi-Fi</title></head><body>\xff\xfe accept the terms</body></html>\n"
PORTALS = {
    "length": http_answer("200 OK", {"Content-Type": "text/html"}, PORTAL),
    "chunked": b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n"
               + f"{len(PORTAL):x}\r\n".encode() + PORTAL + b"\r\n0\r\n\r\n",
    "until close": b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n\r\n" + PORTAL,
}


@pytest.mark.parametrize("framing", list(PORTALS))
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_captive_portal_s_html_is_one_line(project, tmp_path, hostile_endpoint, framing, provider):
    endpoint = hostile_endpoint(PORTALS[framing])
    env = (dict(ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=endpoint.url) if provider == "anthropic"
           else dict(OPENAI_API_KEY=KEY, OPENAI_BASE_URL=endpoint.url + "/v1"))
    result = Cli(project, clean_env(tmp_path / "home", **env)).run("-p", "hi")
    assert result.rc == 1 and "internal error" not in result.err
    expected = "sent no message" if provider == "anthropic" else "sent an empty stream"
    assert expected in result.err_lines[0], result.err
    assert _assistant_records(project) == []
