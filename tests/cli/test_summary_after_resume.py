"""SPEC §12 through the console script: a resumed session whose first request is a summary — `/compact`
right after `--resume`, or a `-c` of a history over the compaction threshold — sends it in place, so it
repeats its source's prefix byte for byte and reads the source's prompt cache.

Against the loopback Messages API fake pricing the cache as the API documents it (tests/prompt_cache.py).
"""

from __future__ import annotations

from tests.agent.helpers import conversation_of, is_summary_request
from tests.fake_model_server import text, tool_use
from tests.prompt_cache import PromptCache, plain, unmarked


def answer(body: dict):
    """The summary for a summary call; a turn otherwise: read the file with bash, then say what it holds."""
    if is_summary_request(body):
        return text("The user read data.txt twice.")
    content = body["messages"][-1]["content"]
    if isinstance(content, list) and any(b.get("type") == "tool_result" for b in content):
        return text("The file holds lorem ipsum.")
    return tool_use("bash", {"command": "cat data.txt"})


def source_session(cli, model_server, project) -> tuple[str, dict]:
    """A session of two turns over a file big enough to cache; its last request as the server logged it."""
    (project / "data.txt").write_text(("lorem ipsum dolor sit amet " * 200)[:5000])
    model_server.prompt_cache = PromptCache()
    model_server.default = answer
    first = cli.run("-p", "what is in data.txt?", "--permission-mode", "bypass")
    assert first.rc == 0, first.err
    sid = first.hint_id()
    second = cli.run("--resume", sid, "-p", "and again?", "--permission-mode", "bypass")
    assert second.rc == 0, second.err
    return second.hint_id(), model_server.log[-1]


def assert_summary_reads_the_source(model_server, last: dict) -> None:
    """The summary call is in place: the source's last request and its answer, then the instruction."""
    (entry,) = [e for e in model_server.log if e.get("answer") == "message" and is_summary_request(e["body"])]
    body, previous = entry["body"], last["body"]
    assert body["tools"] and unmarked(body["tools"]) == unmarked(previous["tools"])
    assert unmarked(body["system"]) == unmarked(previous["system"])
    assert conversation_of(body)[:len(previous["messages"])] == plain(previous["messages"])
    usage = entry["usage"]
    sent = usage["input_tokens"] + usage["cache_read_input_tokens"] + usage["cache_creation_input_tokens"]
    assert usage["cache_read_input_tokens"] >= 0.8 * sent, usage
    model_server.assert_all_valid()


def test_compact_right_after_a_resume_reads_the_sources_cache(cli, model_server, project):
    sid, last = source_session(cli, model_server, project)
    result = cli.run("--plain", "--resume", sid, "--permission-mode", "bypass", input="/compact\n")
    assert result.rc == 0, result.err
    assert any(line.startswith("Compacted ") for line in result.out_lines), result.out
    assert_summary_reads_the_source(model_server, last)


def test_continuing_a_history_over_the_threshold_summarises_it_from_the_sources_cache(cli, model_server, project):
    sid, last = source_session(cli, model_server, project)
    env = {**cli.env, "EVO_AGENT_COMPACT_CHARS": "4000"}
    result = cli.run("-c", "-p", "go on", "--permission-mode", "bypass", env=env)
    assert result.rc == 0, result.err
    assert_summary_reads_the_source(model_server, last)
    assert "previous-conversation-summary" in str(model_server.requests[-1]["messages"][0])
