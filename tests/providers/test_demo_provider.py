"""The demo provider: offline, deterministic, labelled, and it drives the real tools."""

from __future__ import annotations

import json
import socket
import threading

import pytest

from evo_agent.providers import ProviderCancelled, wire
from evo_agent.providers.demo_provider import DEMO_LABEL, DemoProvider
from tests.fake_model_server import validate_request
from tests.scripted_provider import sink

TOOL_NAMES = ["bash", "read_file", "write_file", "edit_file", "glob", "grep", "task", "compact"]
TOOLS = [{"name": n, "description": n, "input_schema": {"type": "object", "properties": {}}} for n in TOOL_NAMES]
NO_TASK = [t for t in TOOLS if t["name"] != "task"]


def ask(prompt, tools=TOOLS, history=(), **kw):
    messages = list(history) + [{"role": "user", "content": prompt}]
    return DemoProvider().complete(system="sys", messages=messages, tools=tools, **kw)


def tool_uses(response):
    return [(b["name"], b["input"]) for b in response.message["content"] if b["type"] == "tool_use"]


def text_of(response):
    return "".join(b["text"] for b in response.message["content"] if b["type"] == "text")


@pytest.mark.parametrize(
    "prompt,expected",
    [
        ("list the files", ("glob", {"pattern": "**/*"})),
        ("Please list all the files.", ("glob", {"pattern": "**/*"})),
        ("read README.md", ("read_file", {"path": "README.md"})),
        ("read `src/app.py`", ("read_file", {"path": "src/app.py"})),
        ("run ls -la", ("bash", {"command": "ls -la"})),
        ("run `echo hi && pwd`", ("bash", {"command": "echo hi && pwd"})),
        ("search for TODO", ("grep", {"pattern": "TODO"})),
        ("search for foo(", ("grep", {"pattern": "foo\\("})),
        (
            "delegate find every TODO in the code and list them",
            ("task", {"description": "find every TODO in the code…", "prompt": "find every TODO in the code and list them", "subagent_type": "general-purpose"}),
        ),
    ],
)
def test_recognised_requests_call_the_right_tool(prompt, expected):
    response = ask(prompt)
    assert tool_uses(response) == [expected]
    assert response.stop_reason == "tool_use"
    assert response.message["content"][0]["type"] == "text"


def test_first_answer_is_labelled_and_later_ones_are_not():
    first = ask("hello there")
    assert text_of(first).startswith(DEMO_LABEL)
    assert "You said: «hello there»" in text_of(first) and "list the files" in text_of(first)
    assert tool_uses(first) == [] and first.stop_reason == "end_turn"
    later = ask("hello again", history=[{"role": "user", "content": "hi"}, first.message])
    assert not text_of(later).startswith(DEMO_LABEL)
    tool_first = ask("list the files")
    assert text_of(tool_first).startswith(DEMO_LABEL)


def test_deterministic():
    history = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": [{"type": "text", "text": "yo"}]}]
    a = ask("run echo 1", history=history)
    b = ask("run echo 1", history=history)
    assert a == b


def test_tool_results_are_summarised_as_text():
    first = ask("read notes.txt")
    (use,) = [b for b in first.message["content"] if b["type"] == "tool_use"]
    output = "\n".join(f"line {i}" for i in range(1, 21))
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use["id"], "content": output}]}
    answer = DemoProvider().complete(system="", messages=[{"role": "user", "content": "read notes.txt"}, first.message, result], tools=TOOLS)
    text = text_of(answer)
    assert tool_uses(answer) == [] and answer.stop_reason == "end_turn"
    assert "`read_file` tool returned 20 lines" in text and "line 1" in text and "line 8" in text
    assert "line 9" not in text and "12 more lines" in text

    failed = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use["id"], "content": [{"type": "text", "text": "no such file"}], "is_error": True}]}
    text = text_of(DemoProvider().complete(system="", messages=[{"role": "user", "content": "read notes.txt"}, first.message, failed], tools=TOOLS))
    assert "reported an error" in text and "no such file" in text


def test_delegate_without_the_task_tool_explains():
    response = ask("delegate count the files", tools=NO_TASK)
    assert tool_uses(response) == [] and "task" in text_of(response)


def test_missing_tools_are_explained_not_called():
    assert tool_uses(ask("run ls", tools=[])) == []
    assert tool_uses(ask("list the files", tools=[t for t in TOOLS if t["name"] == "bash"])) == [("bash", {"command": "ls -la"})]


def test_summary_request_without_tools_summarises_the_conversation():
    history = [{"role": "user", "content": "run make test"}, {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}]
    response = ask("Summarize the conversation so far.", tools=[], history=history)
    assert "run make test" in text_of(response) and tool_uses(response) == []


def test_a_text_only_request_summarises_the_conversation_without_calling_a_tool():
    """Compaction's summary call in place: the tools are there, the last user text is the instruction."""
    history = [{"role": "user", "content": "run make test"},
               {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "make test"}}]},
               {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"},
                                            {"type": "text", "text": "Summarise the conversation above."}]}]
    response = DemoProvider().complete(system="sys", messages=history, tools=TOOLS, text_only=True)
    assert "run make test" in text_of(response) and "bash" in text_of(response) and tool_uses(response) == []
    assert DEMO_LABEL not in text_of(response)


def test_token_counts_and_streaming_callbacks():
    pieces, started = [], []
    messages = [{"role": "user", "content": "list the files"}]
    response = DemoProvider().complete(
        system="",
        messages=messages,
        tools=TOOLS,
        callbacks=sink(text=pieces.append, named=started.append),
    )
    assert len(pieces) >= 2 and "".join(pieces) == text_of(response)
    (use,) = [b for b in response.message["content"] if b["type"] == "tool_use"]
    assert started == [(use["id"], "glob")]
    assert response.input_tokens == len(json.dumps(messages, ensure_ascii=False, sort_keys=True)) // 4
    assert response.output_tokens == max(1, len(json.dumps(response.message["content"], ensure_ascii=False, sort_keys=True)) // 4)


def test_cancel_is_honoured():
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(ProviderCancelled):
        ask("list the files", cancel=cancel)


def test_a_whole_demo_conversation_is_valid_for_the_api_with_no_network(monkeypatch):
    def no_network(*a, **k):
        raise AssertionError("the demo provider touched the network")

    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setattr(wire, "open_tcp", no_network)
    provider = DemoProvider()
    messages: list[dict] = []
    ids = set()
    for prompt in ["list the files", "read README.md", "run echo hi", "search for main", "delegate look around", "thanks"]:
        messages.append({"role": "user", "content": prompt})
        for _ in range(3):
            validate_request({"model": "demo", "max_tokens": 10, "messages": messages, "tools": TOOLS})
            response = provider.complete(system="", messages=messages, tools=TOOLS)
            messages.append(response.message)
            uses = [b for b in response.message["content"] if b["type"] == "tool_use"]
            if not uses:
                break
            ids.update(b["id"] for b in uses)
            messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": b["id"], "content": "fake output"} for b in uses]})
    assert len(ids) == 5  # unique ids, one per recognised request
    assert all(i.startswith("toolu_demo_") for i in ids)
    assert messages[-1]["role"] == "assistant"


def test_the_help_reads_whole_as_the_app_renders_it():
    """The demo's list of requests, rendered as the app renders an answer (Markdown): each placeholder shown
    (`<path>` was taken for an HTML tag and vanished), and the closing sentence its own paragraph."""
    from rich.console import Console

    from evo_agent.providers.demo_provider import HELP
    from evo_agent.ui import render

    console = Console(width=80, record=True, color_system=None)
    console.print(render.answer(HELP))
    shown = [line.strip() for line in console.export_text().splitlines()]
    for request in ("read PATH", "run COMMAND", "search for TEXT", "delegate TASK (to a subagent)"):
        assert f"• {request}" in shown, shown
    assert shown[-1].startswith("Set ANTHROPIC_API_KEY") and shown[-2] == "", shown
