"""/compact with nothing to compact says so, and no model call is made."""

from __future__ import annotations

from tests.fake_model_server import text


def test_a_second_compact_right_after_one_says_there_is_nothing_to_compact(cli, model_server):
    model_server.script(text("Noted: 42."), text("The user asked to remember 42."))
    result = cli.run("--plain", input="remember 42\n/compact\n/compact\n")
    assert result.rc == 0, result.err
    assert len(model_server.requests) == 2  # the answer and one summary; the second /compact called nothing
    assert any(line.startswith("Compacted 2 messages") for line in result.out_lines)
    assert "evo-agent: cannot compact: there is nothing to compact: the conversation is already one summary" \
        in result.err_lines
    sid = result.hint_id()
    assert [r["type"] for r in cli.records(sid)].count("compact_boundary") == 1
