"""Hostile and broken input: ids, links out of the project, huge and undecodable output, broken files.

Every case ends with one clear `evo-agent: ` line or a working session, never a
traceback, never a read or a write outside the project, never a lost record.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evo_agent.session import (
    SCENE_TYPES,
    SessionError,
    SessionStore,
    is_session_id,
    load_for_resume,
    resolve_session_id,
)
from evo_agent.session.jsonio import encode_line
from tests.api_rules import check_conversation, check_request
from tests.builders import seed_session
from tests.cli_runner import COMMAND
from tests.fake_model_server import text, tool_use
from tests.prompt_cache import plain

pytestmark = pytest.mark.faults

REAL = "1780227556183_b525857d"
OTHER = "1780227556183_c0ffee00"


def _tree_hash(root, skip: str = "\0") -> str:
    """Names and contents of everything under `root` (but `skip`), links not followed."""
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if skip not in p.relative_to(root).parts):
        digest.update(str(path.relative_to(root)).encode())
        if path.is_file() and not path.is_symlink():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def _one_line_error(result, rc=1):
    assert result.rc == rc, (result.rc, result.out, result.err)
    assert "Traceback" not in result.err and result.out == ""
    assert len(result.err_lines) == 1 and result.err_lines[0].startswith("evo-agent: "), result.err
    assert len(result.err_lines[0]) < 300


# --------------------------------------------------------------------------- ids


@pytest.fixture(scope="module")
def decoy_tree(tmp_path_factory):
    """A sessions dir with one real session, and outside it the names a path-building resolver would reach."""
    root = tmp_path_factory.mktemp("decoys")
    sessions = root / "project" / ".evo-agent" / "sessions"
    (sessions / REAL).mkdir(parents=True)
    (sessions / REAL / "messages.jsonl").write_text("")
    for name in ("etc", "x", OTHER, "1780227556183_b525857d_", "..", "outside"):
        (root / "project" / name).mkdir(exist_ok=True)
    return sessions


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(typed=st.one_of(
    st.text(max_size=60),
    st.text(alphabet="0123456789abcdef_/.\\\x00 \n-", max_size=40),
    st.builds(lambda a, b: a + b, st.sampled_from(["", "../", "/", REAL, REAL[:14], "./", "~/"]),
              st.text(alphabet="0123456789abcdefABCDEF_/.\x00\n ١٢", max_size=24)),
))
def test_any_typed_id_resolves_to_a_real_session_or_is_refused_with_a_session_error(decoy_tree, typed):
    try:
        sid = resolve_session_id(decoy_tree, typed)
    except SessionError as exc:
        assert "\n" not in str(exc) and len(str(exc)) < 300
        return
    assert sid == REAL and is_session_id(sid)
    assert REAL.startswith(typed)


HOSTILE = [
    "..", "../..", "/etc/passwd", f"{REAL}/../../outside", f"{REAL}\x00", "\x00", "١٧٨٠٢٢٧٥٥٦١٨٣_b525857d",
    REAL.upper(), "%2e%2e%2f", "~", "~root", "*", "17802275561831", "1" * 10_000, "a b", "$(touch pwned)",
    "`touch pwned`", "; touch pwned", f"{REAL}\\..\\..", "\u202e" + REAL, REAL + " ",
]


def test_every_hostile_id_typed_in_the_repl_is_one_error_line_and_the_session_goes_on(cli, model_server):
    (cli.project / "outside").mkdir()
    before = _tree_hash(cli.project, skip=".evo-agent")
    model_server.script(text("Still answering."))
    result = cli.run(input="".join(f"/resume {h}\n" for h in HOSTILE) + "hello?\n")
    assert result.rc == 0 and "Traceback" not in result.err
    errors = [line for line in result.err_lines if line.startswith("evo-agent: ")]
    assert len(errors) == len(HOSTILE), result.err
    assert all(("invalid session id" in e or "no session" in e) and len(e) < 300 for e in errors), errors
    assert "Still answering." in result.out
    assert len(model_server.requests) == 1 and plain(model_server.requests[0]["messages"]) == plain([
        {"role": "user", "content": "hello?"}])
    assert not (cli.project / "pwned").exists()
    sid = result.hint_id("err")
    assert cli.session_ids() == [sid]  # no other session was created
    assert _tree_hash(cli.project, skip=".evo-agent") == before  # and nothing else in the project changed


@pytest.mark.parametrize("typed", ["١٧٨٠٢٢٧٥٥٦١٨٣", f"{REAL}\n", "1" * 10_000, f"{REAL}/.."])
def test_hostile_ids_on_the_command_line_are_refused_before_anything_is_created(cli, model_server, typed):
    result = cli.run("--resume", typed, "-p", "hi")
    _one_line_error(result)
    assert not (cli.project / ".evo-agent").exists() and model_server.requests == []


# --------------------------------------------------------------------------- links out of the project


def _outside_session(tmp_path):
    """A transcript outside the project, holding something that must never be read through a link."""
    outside = tmp_path / "outside" / REAL
    outside.mkdir(parents=True)
    (outside / "messages.jsonl").write_bytes(encode_line(
        {"type": "user", "message": {"role": "user", "content": "PRIVATE NOTES FROM ELSEWHERE"}}))
    return outside


def test_a_symlinked_session_directory_is_refused_everywhere(cli, model_server, tmp_path):
    outside = _outside_session(tmp_path)
    cli.sessions_dir.mkdir(parents=True)
    (cli.sessions_dir / REAL).symlink_to(outside, target_is_directory=True)
    before = _tree_hash(tmp_path / "outside")
    for args in (["--resume", REAL, "-p", "hi"], ["--resume", REAL[:16], "-p", "hi"]):
        result = cli.run(*args)
        _one_line_error(result)
        assert "symbolic link" in result.err
    _one_line_error(cli.run("--continue", "-p", "hi"))
    slash = cli.run(input=f"/resume {REAL}\n")
    assert slash.rc == 0 and sum("symbolic link" in line for line in slash.err_lines) == 1
    listed = [row.id for row in SessionStore(cli.project).list(include_empty=True)]
    assert REAL not in listed and listed == []  # the REPL said nothing: it saved no session either
    assert "Resume this session with" not in slash.err
    assert model_server.requests == []
    assert _tree_hash(tmp_path / "outside") == before
    copies = [p / "messages.jsonl" for p in cli.sessions_dir.iterdir() if p.is_dir() and not p.is_symlink()]
    assert "PRIVATE NOTES" not in "".join(p.read_text() for p in copies)


def test_a_symlinked_transcript_inside_a_real_session_is_refused(cli, model_server, tmp_path):
    outside = _outside_session(tmp_path)
    sid = seed_session(cli.project, ("hello", "hi"))
    transcript = cli.transcript(sid)
    transcript.unlink()
    transcript.symlink_to(outside / "messages.jsonl")
    result = cli.run("--resume", sid, "-p", "what did I say?")
    _one_line_error(result)
    assert "symbolic link" in result.err and model_server.requests == []


# --------------------------------------------------------------------------- what commands print


def test_a_ten_megabyte_tool_output_is_capped_recorded_whole_and_resumable(cli, model_server):
    model_server.script(
        tool_use("bash", {"command": "head -c 10485760 /dev/zero | tr '\\0' a; echo; echo END-OF-OUTPUT"}),
        text("That was long."),
    )
    result = cli.run("-p", "print a lot", "--permission-mode", "bypass")
    assert result.rc == 0 and result.out == "That was long.\n", result.err
    model_server.assert_all_valid()
    sid = result.hint_id()
    raw = cli.transcript(sid).read_bytes()
    records = [r for r in map(json.loads, raw.splitlines()) if r["type"] not in SCENE_TYPES]  # the prefix's records aside
    output = records[3]["message"]["content"][0]["content"]
    assert "END-OF-OUTPUT" in output and "characters cut" in output and len(output) <= 50_000
    assert model_server.requests[1]["messages"][-1]["content"][0]["content"] == output
    model_server.script(text("Resumed."))
    # The capped output is as large as the default compaction threshold: keep this resume uncompacted.
    again = cli.run("--resume", sid, "-p", "and now?", env={**cli.env, "EVO_AGENT_COMPACT_CHARS": "10000000"})
    assert again.rc == 0 and again.out == "Resumed.\n"
    assert model_server.requests[-1]["messages"][2]["content"][0]["content"] == output
    model_server.assert_all_valid()


def test_a_ten_megabyte_record_lands_as_one_line_and_loads_exactly(project):
    """The recorder itself has no cap: a 10 MB tool result (a secret at its very end) is one line."""
    store = SessionStore(project, warn=lambda line: None)
    rec = store.create(model="m", provider="demo")
    rec.user({"role": "user", "content": "dump it"})
    rec.assistant({"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_big", "name": "bash", "input": {"command": "cat dump"}}]})
    huge = "0123456789abcdef\n" * (10 * 1024 * 1024 // 17) + "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    assert rec.user({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_big", "content": huge}]}) is True
    lines = rec.path.read_bytes().split(b"\n")
    assert len(lines) == 5 and lines[-1] == b"" and len(lines[3]) > 10 * 1024 * 1024
    loaded = load_for_resume(rec.path)
    stored = loaded.messages[-1]["content"][0]["content"]
    assert stored == huge.replace("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "[REDACTED:secret]")
    check_conversation(loaded.messages)


def test_bytes_that_are_not_utf8_from_a_command_and_from_the_user(cli, model_server):
    model_server.script(
        tool_use("bash", {"command": "printf 'ok \\377\\376 bad \\303( \\355\\240\\200 nul:\\000: end'"}),
        text("Decoded."),
        text("Typed."),
    )
    result = cli.run("-p", "print some bytes", "--permission-mode", "bypass")
    assert result.rc == 0 and result.out == "Decoded.\n", result.err
    model_server.assert_all_valid()
    sid = result.hint_id()
    raw = cli.transcript(sid).read_bytes()
    raw.decode("utf-8")  # every byte of the transcript is UTF-8
    output = [r for r in map(json.loads, raw.splitlines()) if r["type"] not in SCENE_TYPES][3]["message"]["content"][0][
        "content"]  # the prefix's records aside (memory_index, system_prompt)
    assert output.startswith("ok \ufffd\ufffd bad \ufffd( ") and "nul:\x00: end" in output
    assert load_for_resume(cli.transcript(sid)).messages[2]["content"][0]["content"] == output

    # The user's own bytes: a Latin-1 line piped into the REPL.
    proc = subprocess.run(
        COMMAND, cwd=cli.project, env=cli.env,
        input=b"caf\xe9 \xff\xfe typed\n", capture_output=True, timeout=60)
    assert proc.returncode == 0 and b"Traceback" not in proc.stderr and b"Typed." in proc.stdout, proc.stderr
    model_server.assert_all_valid()
    assert plain(model_server.requests[-1]["messages"]) == plain([{"role": "user", "content": "caf\ufffd \ufffd\ufffd typed"}])


# --------------------------------------------------------------------------- broken files


def test_a_transcript_of_only_garbage_resumes_empty_with_one_warning(cli, model_server):
    sid = seed_session(cli.project)
    cli.transcript(sid).write_bytes(b"\x00\xff garbage\n{not json\n[1, 2]\n\"a string\"\n{\"type\": \n" + os.urandom(3000))
    model_server.script(text("Fresh start."))
    result = cli.run("--resume", sid, "-p", "anything left?")
    assert result.rc == 0 and result.out == "Fresh start.\n", result.err
    warnings = [line for line in result.err_lines if "unreadable line" in line]
    assert len(warnings) == 1 and "Traceback" not in result.err
    assert plain(model_server.requests[-1]["messages"]) == plain([{"role": "user", "content": "anything left?"}])
    model_server.assert_all_valid()


def test_a_meta_json_that_is_a_directory_before_and_during_a_session(cli, model_server, project):
    sid = seed_session(project, ("one", "1"), ("two", "2"))
    meta = project / ".evo-agent" / "sessions" / sid / "meta.json"
    meta.unlink()
    meta.mkdir()
    (row,) = SessionStore(project).list()
    assert row.id == sid and row.meta.message_count == 4 and row.meta.first_prompt == "one"
    model_server.script(text("Three."))
    result = cli.run("--resume", sid, "-p", "three")
    assert result.rc == 0 and result.out == "Three.\n" and "Traceback" not in result.err

    warnings: list[str] = []
    store = SessionStore(project, warn=warnings.append)
    rec = store.create(model="m", provider="demo", meta_interval=0)
    rec.user({"role": "user", "content": "before"})
    (rec.session_dir / "meta.json").unlink()
    (rec.session_dir / "meta.json").mkdir()
    for word in ("during", "after"):
        assert rec.user({"role": "user", "content": word}) is True
    rec.checkpoint()
    assert len(warnings) == 1 and "meta.json" in warnings[0] and "rebuild" in warnings[0], warnings
    assert store.info(rec.id).meta.message_count == 3
    assert [m["content"] for m in load_for_resume(rec.path).messages] == ["before", "during", "after"]


LISTER = "import sys; from evo_agent.session import SessionStore; print(len(SessionStore(sys.argv[1]).list()))"


@pytest.mark.parametrize("name", ["meta.json", "messages.jsonl"])
def test_a_fifo_in_a_session_directory_does_not_hang_the_listing(project, name):
    sid = seed_session(project, ("one", "1"))
    path = project / ".evo-agent" / "sessions" / sid / name
    path.unlink()
    os.mkfifo(path)
    try:
        listed = subprocess.run([sys.executable, "-c", LISTER, str(project)], capture_output=True, text=True,
                                timeout=5)
    except subprocess.TimeoutExpired:
        pytest.fail(f"listing sessions hangs on a FIFO named {name}")
    assert listed.returncode == 0 and "Traceback" not in listed.stderr


# --------------------------------------------------------------------------- the loader, fuzzed


_scalar = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.text(max_size=6))
_ids = st.sampled_from(["t1", "t2", "t3", "", None, 7])
_block = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": st.one_of(st.text(max_size=6), _scalar)}),
    st.fixed_dictionaries({"type": st.just("tool_use"), "id": _ids, "name": st.sampled_from(["bash", "", None]),
                           "input": st.one_of(st.just({}), st.just({"command": "ls"}), _scalar)}),
    st.fixed_dictionaries({"type": st.just("tool_result"), "tool_use_id": _ids,
                           "content": st.one_of(st.text(max_size=6), _scalar,
                                                st.lists(st.fixed_dictionaries({"type": st.just("text"),
                                                                                "text": st.text(max_size=4)}),
                                                         max_size=2))},
                          optional={"is_error": st.booleans()}),
    st.fixed_dictionaries({"type": st.sampled_from(["thinking", "redacted_thinking", "image", "unknown", 7])}),
    _scalar,
)
_message = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "system", None])},
    optional={"content": st.one_of(st.text(max_size=6), st.lists(_block, max_size=4), _scalar)})
_record = st.fixed_dictionaries(
    {"type": st.sampled_from(["user", "assistant", "compact_boundary", "resume_marker", "subagent_end", "zzz"])},
    optional={"message": st.one_of(_message, _scalar), "summary": st.one_of(st.text(max_size=6), _scalar),
              "compact_count": _scalar, "restored": st.booleans()})


@st.composite
def damaged_transcripts(draw):
    """Records of every plausible and implausible shape, then byte damage: cuts, flips, splices, duplicates."""
    lines = [encode_line(r) for r in draw(st.lists(_record, max_size=12))]
    for _ in range(draw(st.integers(0, 3))):
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        action = draw(st.sampled_from(["cut", "flip", "dup", "join", "garbage"]))
        line = lines[i]
        if action == "cut":
            lines[i] = line[: draw(st.integers(0, len(line)))]
        elif action == "flip" and line:
            at = draw(st.integers(0, len(line) - 1))
            lines[i] = line[:at] + bytes([line[at] ^ (1 << draw(st.integers(0, 7)))]) + line[at + 1:]
        elif action == "dup":
            lines.insert(i, line)
        elif action == "join" and i + 1 < len(lines):
            lines[i:i + 2] = [line.rstrip(b"\n") + lines[i + 1]]
        else:
            lines.insert(i, draw(st.binary(max_size=40)))
    return b"".join(lines)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=damaged_transcripts())
def test_the_loader_never_raises_and_always_returns_a_history_the_api_takes(tmp_path, data):
    path = tmp_path / "messages.jsonl"
    path.write_bytes(data)
    loaded = load_for_resume(path, REAL)
    json.dumps(loaded.messages)
    if loaded.messages:
        check_conversation(loaded.messages)
        check_request(loaded.messages + [{"role": "user", "content": "next"}])
        assert all(set(m) >= {"role", "content"} and m["role"] in ("user", "assistant") for m in loaded.messages)
    assert loaded.skipped_lines >= 0 and (loaded.warning is None) == (loaded.skipped_lines == 0)

