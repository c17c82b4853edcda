"""`evo-agent -p`: what a run leaves on disk (SPEC §1–3) and what it prints."""

from __future__ import annotations

import json
import re
import stat

from evo_agent.agent.prompt import PROMPT_VERSION
from evo_agent.providers import DEMO_NOTICE
from tests.fake_model_server import error, text, tool_use
from tests.prompt_cache import plain

TIMESTAMP = re.compile(r"\A\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d\Z")


def test_a_print_run_with_a_tool_call_leaves_the_spec_layout_records_and_meta(cli, model_server, project):
    model_server.script(
        [text("Let me check."), tool_use("bash", {"command": "echo from-the-tool"})],
        text("The tool said from-the-tool."),
    )
    result = cli.run("-p", "what does the tool say?", env={**cli.env, "EVO_AGENT_MODEL": "claude-env-model"})
    assert result.rc == 0, result.err
    assert result.out == "The tool said from-the-tool.\n"
    sid = result.hint_id("err")
    model_server.assert_all_valid()
    assert len(model_server.requests) == 2

    # Layout and permissions (§1).
    sessions = project / ".evo-agent" / "sessions"
    assert (sessions / ".gitignore").read_text() == "*\n"
    assert cli.session_ids() == [sid]
    session_dir = sessions / sid
    assert stat.S_IMODE(session_dir.stat().st_mode) == 0o700
    for name in ("messages.jsonl", "meta.json"):
        assert stat.S_IMODE((session_dir / name).stat().st_mode) == 0o600
    assert re.fullmatch(r"\d{13}_[0-9a-f]{8}", sid)

    # Records (§2): order, envelope, one prompt_id, token counts as the API reported them.
    raw_lines = cli.transcript(sid).read_bytes().split(b"\n")
    assert raw_lines[-1] == b"" and all(raw_lines[:-1])
    recs = cli.records(sid)
    # The read-only command ran unasked in the default mode; the decision is on record (SPEC §9).
    assert [r["type"] for r in recs] == ["session_start", "memory_index", "system_prompt", "user", "assistant",
                                         "permission", "user", "assistant"]
    assert recs.pop(2)["version"] == PROMPT_VERSION  # the system prompt's template (agent/prompt.py)
    memory = recs.pop(1)  # the Auto Memory section of the prefix, as sent (empty memory here)
    assert memory["text"].startswith("# Auto Memory\n") and "(empty)" in memory["text"]
    permission = recs.pop(3)
    assert permission["decision"] == "allowed" and permission["rule"] == "mode ask: read-only command"
    for line in raw_lines[:-1]:
        assert line.startswith(b'{"type":')
    for r in recs:
        assert r["session_id"] == sid and r["cwd"] == str(project) and r["git_branch"] == "main"
        assert TIMESTAMP.match(r["timestamp"]) and r["agent_version"]
    assert recs[0]["provider"] == "anthropic" and recs[0]["model"] == "claude-env-model"
    assert model_server.requests[0]["model"] == "claude-env-model"
    assert len({r["prompt_id"] for r in recs[1:]}) == 1
    assert recs[1]["message"] == {"role": "user", "content": "what does the tool say?"}
    first_answer = recs[2]["message"]
    assert first_answer["content"][0] == {"type": "text", "text": "Let me check."}  # no SDK null fields
    tool_block = first_answer["content"][1]
    assert tool_block["name"] == "bash" and tool_block["input"] == {"command": "echo from-the-tool"}
    result_block = recs[3]["message"]["content"][0]
    assert result_block["tool_use_id"] == tool_block["id"] and "from-the-tool" in result_block["content"]
    usages = [entry["usage"] for entry in model_server.log]
    for rec, usage in zip((recs[2], recs[4]), usages):
        assert rec["input_tokens"] == usage["input_tokens"] and rec["output_tokens"] == usage["output_tokens"]
        assert rec["cache_read_input_tokens"] == 0 and rec["cache_creation_input_tokens"] == 0

    # What the model was sent is what was stored.
    assert plain(model_server.requests[1]["messages"]) == plain([r["message"] for r in recs[1:4]])

    # meta.json (§3).
    meta = json.loads((session_dir / "meta.json").read_text())
    assert meta["id"] == sid and meta["first_prompt"] == "what does the tool say?"
    assert meta["total_input_tokens"] == sum(u["input_tokens"] for u in usages)
    assert meta["total_output_tokens"] == sum(u["output_tokens"] for u in usages)
    assert meta["message_count"] == 4 and meta["compact_count"] == 0 and meta["resumed_from"] is None
    assert meta["git_branch"] == "main" and meta["cwd"] == str(project) and meta["model"] == recs[0]["model"]
    assert meta["created_ms"] == int(sid[:13]) and meta["updated_ms"] >= meta["created_ms"]
    assert set(meta) >= {"id", "created_ms", "updated_ms", "agent_version", "cwd", "git_branch", "model",
                         "first_prompt", "total_input_tokens", "total_output_tokens", "message_count",
                         "compact_count", "resumed_from"}


def test_model_and_provider_flags_win_over_the_environment(cli, model_server):
    env = {**cli.env, "EVO_AGENT_MODEL": "claude-from-env", "EVO_AGENT_PROVIDER": "demo"}
    result = cli.run("-p", "hi", "--model", "claude-test-model", "--provider", "anthropic", env=env)
    assert result.rc == 0 and result.out == "ok\n"
    assert model_server.requests[0]["model"] == "claude-test-model"
    assert cli.records(result.hint_id())[0]["model"] == "claude-test-model"


def test_an_api_error_is_one_line_and_the_session_stays_resumable(cli, model_server):
    model_server.script(error(401, "authentication_error", "invalid x-api-key"))
    failed = cli.run("-p", "hello?")
    assert failed.rc == 1
    assert "Traceback" not in failed.err
    sid = failed.hint_id()
    assert len(failed.err_lines) == 2
    assert failed.err_lines[0].startswith("evo-agent: ") and "401" in failed.err_lines[0]
    assert failed.out == ""

    model_server.script(*[error(500, "api_error")] * 5)  # a 5xx is retried four times, each retry a notice
    failed_again = cli.run("--resume", sid, "-p", "still there?")
    assert failed_again.rc == 1 and "500" in failed_again.err_lines[-2] and "Traceback" not in failed_again.err
    retries = [line for line in failed_again.err_lines if "retrying in" in line]
    assert retries == [f"evo-agent: Anthropic API error 500, retrying in 10 ms, attempt {n} of 5" for n in (2, 3, 4, 5)]
    second = failed_again.hint_id()

    model_server.script(text("back"))
    ok = cli.run("--resume", second, "-p", "now?")
    assert ok.rc == 0 and ok.out == "back\n"
    model_server.assert_all_valid()
    assert plain(model_server.requests[-1]["messages"]) == plain([
        {"role": "user", "content": "hello?"},
        {"role": "user", "content": "still there?"},
        {"role": "user", "content": "now?"},
    ])


def test_the_demo_provider_works_end_to_end_without_a_network(demo_cli, project):
    result = demo_cli.run("-p", "list the files")
    assert result.rc == 0, result.err
    assert "README.md" in result.out
    sid = result.hint_id()
    recs = [r for r in demo_cli.records(sid) if r["type"] not in ("permission", "memory_index", "system_prompt")]
    assert [r["type"] for r in recs] == ["session_start", "user", "assistant", "user", "assistant"]
    assert recs[0]["provider"] == "demo"
    tool = recs[2]["message"]["content"][-1]
    assert tool["type"] == "tool_use" and tool["name"] in ("glob", "bash")
    assert "README.md" in recs[3]["message"]["content"][0]["content"]
    assert recs[2]["input_tokens"] > 0 and recs[2]["output_tokens"] > 0

    again = demo_cli.run("--continue", "-p", "run echo resumed-ok")
    assert again.rc == 0 and "resumed-ok" in again.out
    assert any(line.startswith(f"Resumed {sid}: 4 messages restored") for line in again.err_lines)


def test_the_demo_is_chosen_with_a_notice_when_no_key_is_set(demo_cli):
    env = {k: v for k, v in demo_cli.env.items() if k != "EVO_AGENT_PROVIDER"}
    result = demo_cli.run("-p", "hello", env=env)
    assert result.rc == 0
    assert result.err_lines[0] == DEMO_NOTICE and DEMO_NOTICE.startswith("evo-agent: ")
    assert "demo" in result.out
    result.hint_id()


def test_an_answer_cut_at_max_tokens_is_told_in_one_line(cli, model_server):
    from tests.fake_model_server import reply

    model_server.script(reply("The first half of a long", stop_reason="max_tokens"))
    result = cli.run("-p", "explain everything")
    assert result.rc == 0, result.err
    assert result.out == "The first half of a long\n"
    cut = [line for line in result.err.splitlines() if "cut" in line]
    assert cut == ['evo-agent: the answer was cut at the 8192-token limit (max_tokens); send "continue" for the rest']
