"""JSON nested past what evo-agent can parse or record, sent by the model API, is a bad answer, not a crash (SPEC §7).

A server that sends `[[[[…` a hundred thousand deep in a stream event, an error body or a tool call's arguments
raised the parser's RecursionError: `evo-agent: internal error: RecursionError` (a crash, as for a bug) or `call
failed: RecursionError`. Nested 600 deep, the arguments parsed, and the session could not record the assistant's
message: `cannot write session …; this conversation is not being saved`, while the turn went on unsaved. Now an
event or a body nested deeper than MAX_JSON_DEPTH is a bad answer in one line, and such tool arguments are kept as
text, like any arguments that are not one JSON object (the tool runner refuses them, the model is told, the
transcript keeps everything). The control: the same answers nested a little are used as they come.
"""

from __future__ import annotations

import json

import pytest

from evo_agent.providers.http_client import MAX_JSON_DEPTH
from evo_agent.session import INVALID_ARGUMENTS_KEY
from tests.builders import read_records
from tests.cli_runner import Cli, clean_env
from tests.hostile_endpoint import http_answer

KEY = "sk-ant-api03-" + "d" * 40


def _sse(event: str, payload: dict | str) -> bytes:
    data = payload if isinstance(payload, str) else json.dumps(payload)
    return f"event: {event}\ndata: {data}\n\n".encode()


def _stream(*events: bytes) -> bytes:
    return http_answer("200 OK", {"Content-Type": "text/event-stream"}, b"".join(events))


START = _sse("message_start", {"type": "message_start", "message": {
    "id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": [], "stop_reason": None,
    "usage": {"input_tokens": 3, "output_tokens": 1}}})


def _end(reason: str) -> bytes:
    return (_sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": reason},
                                   "usage": {"output_tokens": 2}})
            + _sse("message_stop", {"type": "message_stop"}))


def _text_answer(text: str) -> bytes:
    return _stream(START, _sse("content_block_start", {"type": "content_block_start", "index": 0,
                                                       "content_block": {"type": "text", "text": ""}}),
                   _sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                "delta": {"type": "text_delta", "text": text}}),
                   _sse("content_block_stop", {"type": "content_block_stop", "index": 0}), _end("end_turn"))


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def _tool_call(arguments: str) -> bytes:
    return _stream(START, _sse("content_block_start", {
        "type": "content_block_start", "index": 0,
        "content_block": {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}}),
        _sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                     "delta": {"type": "input_json_delta", "partial_json": arguments}}),
        _sse("content_block_stop", {"type": "content_block_stop", "index": 0}), _end("tool_use"))


def _then_done(first: bytes):
    """The first request gets `first`, every later one a plain "done"."""
    def answer(conn, request: bytes) -> None:
        conn.sendall(first if not answer.sent else _text_answer("done"))  # type: ignore[attr-defined]
        answer.sent = True  # type: ignore[attr-defined]
    answer.sent = False  # type: ignore[attr-defined]
    return answer


def _run(project, tmp_path, url: str, *args: str):
    env = clean_env(tmp_path / "home", ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=url)
    return Cli(project, env).run("-p", "read it", "--permission-mode", "read-only", *args)


BAD_ANSWERS = {
    "event": _stream(b"event: message_start\ndata: " + _nested(100_000).encode() + b"\n\n"),
    "event a little past the limit": _stream(START, _sse("ping", {"type": "ping", "x": json.loads(
        _nested(MAX_JSON_DEPTH + 10))}), _end("end_turn")),
    "error body": http_answer("400 Bad Request", {"Content-Type": "application/json"}, _nested(100_000).encode()),
    "block start input": _stream(START, _sse("content_block_start", {
        "type": "content_block_start", "index": 0,
        "content_block": {"type": "tool_use", "id": "toolu_1", "name": "read_file",
                          "input": {"path": json.loads(_nested(600))}}}),
        _sse("content_block_stop", {"type": "content_block_stop", "index": 0}), _end("tool_use")),
}


@pytest.mark.parametrize("name", list(BAD_ANSWERS))
def test_deep_json_in_an_answer_is_one_line_not_a_crash(project, tmp_path, hostile_endpoint, name):
    endpoint = hostile_endpoint(BAD_ANSWERS[name])
    result = _run(project, tmp_path, endpoint.url)
    assert result.rc == 1
    assert "internal error" not in result.err and "Traceback" not in result.err
    assert "RecursionError" not in result.err
    assert "Anthropic API" in result.err, result.err


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 600, 5000, 100_000])
def test_deep_tool_arguments_are_kept_as_text_and_the_session_is_saved(project, tmp_path, hostile_endpoint, depth):
    endpoint = hostile_endpoint(_then_done(_tool_call('{"path": ' + _nested(depth) + "}")))
    result = _run(project, tmp_path, endpoint.url)
    assert result.rc == 0, result.err
    assert "not being saved" not in result.err and "internal error" not in result.err
    assert result.out.strip() == "done"
    (transcript,) = (project / ".evo-agent" / "sessions").glob("*/messages.jsonl")
    calls = [block for record in read_records(transcript) if record.get("type") == "assistant"
             for block in record["message"]["content"] if block["type"] == "tool_use"]
    assert [set(call["input"]) for call in calls] == [{INVALID_ARGUMENTS_KEY}]


def test_control_arguments_nested_a_little_are_used(project, tmp_path, hostile_endpoint):
    (project / "notes.txt").write_text("hello\n")
    arguments = json.dumps({"path": "notes.txt", "x": json.loads(_nested(MAX_JSON_DEPTH - 2))})
    endpoint = hostile_endpoint(_then_done(_tool_call(arguments)))
    result = _run(project, tmp_path, endpoint.url)
    assert result.rc == 0, result.err
    (transcript,) = (project / ".evo-agent" / "sessions").glob("*/messages.jsonl")
    calls = [block for record in read_records(transcript) if record.get("type") == "assistant"
             for block in record["message"]["content"] if block["type"] == "tool_use"]
    assert [call["input"]["path"] for call in calls] == ["notes.txt"]


def _chunks(*chunks: dict | str) -> bytes:
    data = b"".join(b"data: " + (c if isinstance(c, str) else json.dumps(c)).encode() + b"\n\n" for c in chunks)
    return http_answer("200 OK", {"Content-Type": "text/event-stream"}, data + b"data: [DONE]\n\n")


def _openai_tool_call(arguments: str) -> bytes:
    call = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": arguments}}
    return _chunks({"id": "c", "choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [call]},
                                            "finish_reason": None}]},
                   {"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})


def _openai_then_done(first: bytes):
    done = _chunks({"id": "c", "choices": [{"index": 0, "delta": {"role": "assistant", "content": "done"},
                                            "finish_reason": None}]},
                   {"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})

    def answer(conn, request: bytes) -> None:
        conn.sendall(done if answer.sent else first)  # type: ignore[attr-defined]
        answer.sent = True  # type: ignore[attr-defined]
    answer.sent = False  # type: ignore[attr-defined]
    return answer


def _run_openai(project, tmp_path, url: str):
    env = clean_env(tmp_path / "home", OPENAI_API_KEY=KEY, OPENAI_BASE_URL=url + "/v1")
    return Cli(project, env).run("-p", "read it", "--permission-mode", "read-only")


def test_an_openai_chunk_nested_too_deep_is_one_line(project, tmp_path, hostile_endpoint):
    endpoint = hostile_endpoint(_chunks(_nested(100_000)))
    result = _run_openai(project, tmp_path, endpoint.url)
    assert result.rc == 1
    assert "internal error" not in result.err and "RecursionError" not in result.err
    assert "OpenAI-compatible API" in result.err, result.err


@pytest.mark.parametrize("depth", [600, 100_000])
def test_deep_openai_tool_arguments_are_kept_as_text(project, tmp_path, hostile_endpoint, depth):
    endpoint = hostile_endpoint(_openai_then_done(_openai_tool_call('{"path": ' + _nested(depth) + "}")))
    result = _run_openai(project, tmp_path, endpoint.url)
    assert result.rc == 0, result.err
    assert "not being saved" not in result.err and result.out.strip() == "done"
    (transcript,) = (project / ".evo-agent" / "sessions").glob("*/messages.jsonl")
    calls = [block for record in read_records(transcript) if record.get("type") == "assistant"
             for block in record["message"]["content"] if block["type"] == "tool_use"]
    assert [set(call["input"]) for call in calls] == [{INVALID_ARGUMENTS_KEY}]
