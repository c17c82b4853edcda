"""Issue #14 item 4: resuming a history far over the compaction threshold, with no compaction in it.

Through the real `evo-agent` script against the local Messages API. The history (~9 MiB, no
compact_boundary) is over the resume window (4 MiB at this threshold, agent/compaction.py
`resume_window`), so only its head and tail are loaded: the first request is the summary,
small; the new session holds the summary, never a copy; the source is never written.
"""

from __future__ import annotations

import hashlib
import json
import re

from evo_agent.session import summary_message
from tests.agent.helpers import is_summary_request, model_requests, summarizer
from tests.fake_model_server import error
from tests.prompt_cache import plain
from tests.session.test_windowed_load import SID, write_history

TURNS = 3000  # 12,000 messages, ~9 MiB
API_LIMIT = 32 * 1024 * 1024


def oversized(cli):  # noqa: ANN001, ANN201
    source = write_history(cli.sessions_dir / SID / "messages.jsonl", TURNS)
    return source, hashlib.sha256(source.read_bytes()).hexdigest()


def env_of(cli) -> dict:  # noqa: ANN001
    return {**cli.env, "EVO_AGENT_COMPACT_CHARS": "20000"}


def kept_records(cli, session_id: str) -> list[dict]:  # noqa: ANN001
    """The new session's records but Auto Memory's prefix record (tests/cli/test_memory_command.py) and the
    date reminder SID's old day brings (tests/cli/test_resume.py)."""
    return [r for r in cli.records(session_id) if r["type"] != "memory_index"
            and not (r["type"] == "reminder" and r["reason"] == "date")]


def undated(messages: list[dict]) -> list[dict]:
    """`messages` without the date reminder's block (SID's day is not today's)."""
    return [{**m, "content": [b for b in m["content"] if "Today's date is" not in str(b.get("text", ""))]}
            if isinstance(m.get("content"), list) else m for m in messages]


def test_the_first_request_is_a_small_summary_and_the_new_session_stores_only_it(cli, model_server):
    source, digest = oversized(cli)
    model_server.default = summarizer("Summary: 3000 tasks done; the last was task 2999.")
    result = cli.run("--resume", SID, "-p", "what next?", env=env_of(cli))
    assert result.rc == 0 and result.out == "ok\n", result.err
    assert "Compacted 12,000 messages" in result.err and f"{TURNS * 4} messages restored" in result.err

    first, second = model_server.log[:2]
    assert len(model_server.log) == 2 and first["valid"] and second["valid"]
    assert not first["body"].get("tools") and first["bytes"] < API_LIMIT // 32  # the summary request, far below 32 MB
    flat = first["body"]["messages"][0]["content"]
    assert "task 0:" in flat and "done 2999" in flat  # the head and the tail...
    gap = re.search(r"\[… ([\d,]+) messages of the middle of this conversation were not loaded", flat)  # ...not all
    assert gap and 1_000 < int(gap.group(1).replace(",", "")) < 12_000 and len(flat) < 250_000

    new = result.hint_id()
    records = kept_records(cli, new)
    assert [r["type"] for r in records] == ["session_start", "resume_marker", "compact_boundary", "user", "assistant"]
    assert records[1]["restored_count"] == TURNS * 4 and records[1]["source_bytes"] == source.stat().st_size
    assert records[2]["summary"].startswith("Summary: 3000 tasks done")
    assert plain(undated(second["body"]["messages"])) == plain(
        [summary_message(records[2]["summary"]), {"role": "user", "content": "what next?"}])
    assert cli.transcript(new).stat().st_size < 16 * 1024  # the summary and the new turn, never the history
    assert hashlib.sha256(source.read_bytes()).hexdigest() == digest  # the source, byte for byte

    again = cli.run("--resume", new, "-p", "and then?", env=env_of(cli))  # what was stored is what is restored
    assert again.rc == 0 and again.out == "ok\n", again.err
    last = model_requests(model_server)[-1]["messages"]
    assert plain(last) == plain(second["body"]["messages"] + [{"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
                                                 {"role": "user", "content": "and then?"}])
    assert len(model_server.log) == 3  # no second summary: the new session is small
    model_server.assert_all_valid()


def test_the_line_repl_compacts_it_before_the_first_prompt_too(cli, model_server):
    oversized(cli)
    model_server.default = summarizer("Summary of the big one.")
    result = cli.run("--resume", SID, input="what next?\n/exit\n", env=env_of(cli))
    assert result.rc == 0, result.err
    assert "done 2999" in result.out and "task 0:" not in result.out  # the view shows the last exchanges
    assert "Compacted 12,000 messages" in result.out
    first, second = model_server.valid_requests[:2]
    assert not first.get("tools") and second["messages"][0]["content"][0]["text"].endswith(
        "Summary of the big one.\n\nRecently touched files: " + ", ".join(
            f"src/file_{i}.py" for i in range(TURNS - 1, TURNS - 16, -1)) + "\n</previous-conversation-summary>")


def test_when_the_summary_fails_nothing_is_sent_and_nothing_is_published(cli, model_server):
    source, digest = oversized(cli)
    model_server.script(error(400, "invalid_request_error", "no summaries today"))
    result = cli.run("--resume", SID, "-p", "go on", env=env_of(cli))
    assert result.rc == 1 and result.out == ""
    assert result.err_lines[-1].startswith(
        f"evo-agent: session {SID} holds 12,000 messages ({source.stat().st_size / 2**20:.1f} MiB), too many to send "
        "without a summary, and the summary failed: the summary call failed ("), result.err
    assert "no summaries today" in result.err_lines[-1] and "Traceback" not in result.err
    assert len(model_server.log) == 1  # the summary call only: the history was never sent
    assert sorted(p.parent.name for p in cli.sessions_dir.glob("*/messages.jsonl")) == [SID]  # nothing to continue
    assert hashlib.sha256(source.read_bytes()).hexdigest() == digest
    listing = json.loads(cli.run("sessions", "list", "--json").out or "[]")
    assert [row["id"] for row in listing] == [SID]


def test_slash_resume_in_the_repl_summarises_it_before_the_next_request(cli, model_server):
    source, digest = oversized(cli)
    model_server.default = summarizer("Summary via /resume.")
    result = cli.run(input=f"/resume {SID}\nwhat next?\n/exit\n", env=env_of(cli))
    assert result.rc == 0, result.err
    assert f"{TURNS * 4} messages restored" in result.out and "Compacted 12,000 messages" in result.out
    first, second = model_server.log[:2]
    assert len(model_server.log) == 2 and not first["body"].get("tools") and first["bytes"] < API_LIMIT // 32
    new = result.hint_id()
    records = kept_records(cli, new)
    assert [r["type"] for r in records] == ["session_start", "resume_marker", "compact_boundary", "user", "assistant"]
    assert plain(undated(second["body"]["messages"])) == plain(
        [summary_message(records[2]["summary"]), {"role": "user", "content": "what next?"}])
    assert cli.transcript(new).stat().st_size < 16 * 1024
    assert hashlib.sha256(source.read_bytes()).hexdigest() == digest


def test_slash_resume_keeps_the_history_whole_when_its_summary_fails(cli, model_server):
    source, digest = oversized(cli)
    model_server.script(error(400, "invalid_request_error", "no summaries today"))
    model_server.default = summarizer("Summary at the first turn.")
    result = cli.run(input=f"/resume {SID}\nwhat next?\n/exit\n", env=env_of(cli))
    assert result.rc == 0, result.err
    assert "the restored history could not be compacted" in result.out and "no summaries today" in result.out
    records = cli.records(result.hint_id())
    restored = [r for r in records if r.get("restored")]
    assert len(restored) == TURNS * 4  # loaded whole after all, and copied as any resume copies
    # the first turn summarises it before sending: in place, the source's own prefix (SPEC §12)
    assert is_summary_request(model_server.log[1]["body"]) and model_server.log[1]["body"].get("tools")
    assert all(entry["bytes"] < API_LIMIT for entry in model_server.log)
    assert hashlib.sha256(source.read_bytes()).hexdigest() == digest
