"""Foreseeable failures: one clear line, a non-zero exit, no traceback, nothing created."""

from __future__ import annotations

import json
import os

import pytest

from tests.builders import seed_session


def tree(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if ".git" not in p.parts)


def assert_one_line_error(result, rc=None):
    assert result.rc != 0 if rc is None else result.rc == rc, (result.rc, result.err)
    assert "Traceback" not in result.err and "Traceback" not in result.out
    assert len(result.err_lines) == 1, result.err
    assert result.err_lines[0].startswith("evo-agent: ")
    assert result.out == ""


@pytest.mark.parametrize("bad", ["../x", "1" * 300, "1780227556183_deadbeef", "/etc/passwd", "17802275561_"])
def test_hostile_or_unknown_ids_are_refused_before_anything_is_created(cli, model_server, bad):
    before = tree(cli.project)
    for args in (["--resume", bad, "-p", "hi"], ["--resume", bad]):
        result = cli.run(*args)
        assert_one_line_error(result, rc=1)
        assert bad[:20] in result.err or "no session" in result.err
    assert tree(cli.project) == before
    assert not (cli.project / ".evo-agent").exists()
    assert model_server.requests == []


def test_an_ambiguous_prefix_names_the_candidates(cli, model_server):
    a = seed_session(cli.project, ("one", "1"))
    b = seed_session(cli.project, ("two", "2"))
    prefix = os.path.commonprefix([a, b])  # noqa: RUF071 — ids, not paths
    before = tree(cli.project)
    result = cli.run("--resume", prefix, "-p", "hi")
    assert_one_line_error(result, rc=1)
    assert "ambiguous" in result.err and a in result.err and b in result.err
    assert tree(cli.project) == before
    slash = cli.run(input=f"/resume {prefix}\n/resume ../../etc\n")
    assert slash.rc == 0
    errors = [line for line in slash.err_lines if line.startswith("evo-agent: ")]
    assert len(errors) == 2 and "ambiguous" in errors[0] and "invalid session id" in errors[1]
    assert model_server.requests == []
    assert "Resume this session with" not in slash.err  # nothing was said: no session was saved to resume
    assert tree(cli.project) == before


@pytest.mark.parametrize(
    "args,needle",
    [
        (["--resume", "-p", "hi"], "--resume needs a session id"),
        (["--resume", "1780227556183", "--continue"], "cannot be used together"),
        (["-p", "  "], "prompt is empty"),
        (["--bogus"], "unrecognized arguments"),
        (["--provider", "gpt5", "-p", "hi"], "unknown provider"),
    ],
)
def test_usage_errors_exit_2_with_one_line(cli, args, needle):
    result = cli.run(*args)
    assert_one_line_error(result, rc=2)
    assert needle in result.err
    assert not (cli.project / ".evo-agent").exists()


def test_continue_without_sessions_and_a_missing_project_dir(cli, tmp_path):
    result = cli.run("--continue", "-p", "hi")
    assert_one_line_error(result, rc=1)
    assert "no session to continue" in result.err
    missing = cli.run("--project-dir", str(tmp_path / "nope"), "-p", "hi")
    assert_one_line_error(missing, rc=1)
    listing = cli.run("sessions", "list", "--project-dir", str(tmp_path / "nope"))
    assert_one_line_error(listing, rc=1)


def test_a_file_where_the_sessions_dir_should_be_does_not_stop_the_answer(demo_cli):
    (demo_cli.project / ".evo-agent").mkdir()
    (demo_cli.project / ".evo-agent" / "sessions").write_text("not a directory\n")
    result = demo_cli.run("-p", "run echo still-answering")
    assert result.rc == 0
    assert "still-answering" in result.out
    warnings = [line for line in result.err_lines if line.startswith("evo-agent: cannot write")]
    assert len(warnings) == 1 and "not being saved" in warnings[0]
    assert len(result.err_lines) == 2 and "Traceback" not in result.err
    result.hint_id()
    assert (demo_cli.project / ".evo-agent" / "sessions").read_text() == "not a directory\n"
    listing = demo_cli.run("sessions", "list")
    assert listing.rc == 0 and "No sessions" in listing.out


def test_a_broken_meta_json_is_still_listed(demo_cli):
    sid = seed_session(demo_cli.project, ("fix the flaky upload test", "done"), ("and the docs", "done too"))
    empty = seed_session(demo_cli.project)
    (demo_cli.sessions_dir / sid / "meta.json").write_text('{"id": "broken", "created_ms": ')
    listing = demo_cli.run("sessions", "list")
    assert listing.rc == 0 and "Traceback" not in listing.err
    assert listing.out_lines[0].split() == ["ID", "CREATED", "UPDATED", "MESSAGES", "TOKENS", "BRANCH", "NAME", "OR", "FIRST", "PROMPT"]
    (row,) = [line for line in listing.out_lines if line.startswith(sid)]
    assert row.split()[5:8] == ["4", "220", "main"] and row.endswith("fix the flaky upload test")
    assert empty not in listing.out

    as_json = json.loads(demo_cli.run("sessions", "list", "--json").out)
    assert [r["id"] for r in as_json] == [sid]
    assert as_json[0]["message_count"] == 4 and as_json[0]["total_tokens"] == 220
    everything = json.loads(demo_cli.run("sessions", "list", "--json", "--all").out)
    assert {r["id"] for r in everything} == {sid, empty}
