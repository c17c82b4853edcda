"""A disk that fills up while a resume copies its history into the new session.

A resumed session is listed (and picked by `--continue`) only once its copy of
the history is whole: a copy cut short by a full disk must not become the
newest session, holding half of the conversation the model is still being sent.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.builders import history_of, seed_session
from tests.cli_runner import COMMAND
from tests.fake_model_server import FakeModelServer, text
from tests.helpers import fill_disk, needs_root, unmount
from tests.prompt_cache import plain

from .driver import Repl
from .test_disk import _sessions_on_tmpfs, _write_warnings

pytestmark = pytest.mark.faults

# A file named like a session id is neither a session nor a planted entry: start-up ignores it.
FILLER = "0000000000000_00000000"
COPY_WHOLE = "10000000"  # a compaction threshold the history stays under: it is copied, not summarised
TURNS = tuple((f"question {i} " + "q" * 8000, f"Answer {i}.") for i in range(12))  # ~100 KB to copy


def _continue(cli_env, project, prompt: str) -> list[dict]:
    """`-c -p PROMPT` against a fresh server; the messages of its first request."""
    with FakeModelServer() as server:
        server.script(text("Continued."))
        result = subprocess.run([*COMMAND, "-c", "-p", prompt], cwd=project, env=server.env(cli_env, EVO_AGENT_COMPACT_CHARS=COPY_WHOLE),
                                capture_output=True, text=True, timeout=60)
        assert result.returncode == 0 and result.stdout == "Continued.\n", result.stderr
        server.assert_all_valid()
        return plain(server.requests[0]["messages"])


@needs_root
def test_a_resume_whose_copy_hits_a_full_disk_is_continued_whole_once_space_is_back(cli, model_server, project):
    sessions = _sessions_on_tmpfs(project, "1m")
    try:
        source = seed_session(project, *TURNS)
        model_server.script(text("Answer after space."))
        fill_disk(sessions, leave=16384, name=FILLER)  # the copy (~100 KB) is cut short
        env = {**cli.env, "EVO_AGENT_COMPACT_CHARS": COPY_WHOLE}
        with Repl(project, env, "--resume", source) as repl:
            repl.err.wait_for("evo-agent: cannot write session", 30)
            (sessions / FILLER).unlink()  # space is back
            repl.ask("after space", "Answer after space.")
            assert repl.close() == 0
        assert len(_write_warnings(repl.err.text)) == 1, repl.err.text
        assert "Traceback" not in repl.err.text
        # The model was sent the whole history: that is what --continue must bring back.
        assert plain(model_server.requests[0]["messages"]) == plain(
            history_of(*TURNS) + [{"role": "user", "content": "after space"}])
        new = repl.err.text.rstrip("\n").splitlines()[-1].rsplit(" ", 1)[1]
        assert new != source
        records = [json.loads(line) for line in cli.transcript(new).read_bytes().splitlines()]  # no fragment
        assert sum(r.get("restored", False) for r in records) == len(TURNS) * 2
        meta = json.loads((sessions / new / "meta.json").read_text())
        assert meta["message_count"] == sum(r["type"] in ("user", "assistant") for r in records)
        assert meta["messages_bytes"] == cli.transcript(new).stat().st_size
        sent = _continue(cli.env, project, "still there?")
        assert sent == plain(history_of(*TURNS, ("after space", "Answer after space."))
                             + [{"role": "user", "content": "still there?"}])
    finally:
        unmount(sessions)


RESUMER = r"""
import resource, sys
from evo_agent.session import SessionStore
project, source, how = sys.argv[1:4]
if how == "too-much":  # more failed while full than a staged writer keeps: it can never be made whole
    from evo_agent.session.writer import StagedWriter
    StagedWriter.KEEP_BYTES = 10_000
store = SessionStore(project, warn=lambda line: print(line, file=sys.stderr))
hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, hard))  # every file stops at 4 KB: the disk is "full"
resumed = store.resume(source, model="m", provider="demo", copy=how != "compact")
if how == "compact":  # what a resume whose history is summarised writes instead of the copy
    resumed.recorder.compact_boundary("the summary " + "s" * 8000, 1, "auto")
    resumed.publish()
print(resumed.recorder.path.name, flush=True)
resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))  # space is back
resumed.recorder.user({"role": "user", "content": "after space"})
resumed.recorder.checkpoint()
print(resumed.recorder.path.name)
print(resumed.recorder.id)
"""


def test_a_staged_copy_larger_than_what_is_kept_is_never_published(project):
    from evo_agent.session import SessionStore
    from evo_agent.session.layout import STAGING_NAME

    source = seed_session(project, *TURNS)
    result = subprocess.run([sys.executable, "-c", RESUMER, str(project), source, "too-much"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[:2] == [STAGING_NAME, STAGING_NAME]  # space came back too late
    assert [row.id for row in SessionStore(project).list(include_empty=True)] == [source]


@pytest.mark.parametrize("how", ["copy", "compact"])
def test_a_staged_resume_cut_by_a_file_size_limit_is_published_only_whole(project, how):
    """Runs as any user: RLIMIT_FSIZE stands in for the full disk, in a child process of its own."""
    from evo_agent.session import SessionStore, load_for_resume
    from evo_agent.session.layout import STAGING_NAME

    source = seed_session(project, *TURNS)
    result = subprocess.run([sys.executable, "-c", RESUMER, str(project), source, how],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    while_full, after, new = result.stdout.split()
    assert while_full == STAGING_NAME  # never listed while cut short
    assert after == "messages.jsonl"
    assert result.stderr.count("evo-agent: cannot write session") == 1, result.stderr
    path = project / ".evo-agent" / "sessions" / new / "messages.jsonl"
    assert not path.with_name(STAGING_NAME).exists()
    records = [json.loads(line) for line in path.read_bytes().splitlines()]  # no torn fragment
    assert [r["type"] for r in records[:2]] == ["session_start", "resume_marker"]
    loaded = load_for_resume(path)
    assert loaded.skipped_lines == 0
    if how == "copy":
        assert loaded.messages == history_of(*TURNS) + [{"role": "user", "content": "after space"}]
    else:
        (summary,) = loaded.messages[0]["content"]
        assert summary["text"].startswith("<previous-conversation-summary>\nthe summary ")
        assert loaded.messages[1:] == [{"role": "user", "content": "after space"}]
    info = SessionStore(project).info(new)
    assert info is not None and info.meta.message_count == sum(r["type"] in ("user", "assistant") for r in records)


def _no_file_may_grow() -> None:
    """In the child: RLIMIT_FSIZE 0, so every write to a file fails (EFBIG) as on a disk with no space left."""
    import resource

    resource.setrlimit(resource.RLIMIT_FSIZE, (0, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))


def _unsaved_run(cli, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*COMMAND, *args], cwd=cli.project, env=cli.env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=60, preexec_fn=_no_file_may_grow)


def _hinted(err: str) -> str:
    last = err.rstrip("\n").splitlines()[-1]
    assert last.startswith("Resume this session with: evo-agent --resume "), err
    return last.rsplit(" ", 1)[1]


def test_the_exit_hint_of_a_resume_nothing_could_be_saved_of_names_its_source(cli, model_server):
    """The hint is the one line a user copies: it must name a session `--resume` can open."""
    source = seed_session(cli.project, ("first question", "First answer."))
    model_server.script(text("Answer, not saved."))
    result = _unsaved_run(cli, "--resume", source, "-p", "second question")
    assert result.returncode == 0 and result.stdout == "Answer, not saved.\n", result.stderr
    assert "this conversation is not being saved" in result.stderr
    assert _hinted(result.stderr) == source  # the new session holds nothing: the source is what is left
    model_server.script(text("Back."))
    again = cli.run("--resume", source, "-p", "third question")
    assert again.rc == 0 and again.out == "Back.\n", again.err


def test_an_import_that_cannot_be_written_whole_fails_and_leaves_nothing(cli):
    """An import is staged like a resume's copy: cut short by a full disk, it is an error, not a half session."""
    from tests.cli.import_helpers import fixture

    source = fixture("claude_code", "compact")  # ~26 KB: more than RLIMIT_FSIZE lets through
    result = subprocess.run([*COMMAND, "sessions", "import", "claude-code", str(source)], cwd=cli.project,
                            env=cli.env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
                            preexec_fn=_four_kilobytes_per_file)
    assert result.returncode == 1 and result.stdout == "", (result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert lines[-1].startswith(f"evo-agent: cannot import {source}: ") and "Traceback" not in result.stderr
    assert [p.name for p in cli.sessions_dir.iterdir() if p.is_dir()] == []  # no staged leftover
    again = cli.run("sessions", "import", "claude-code", str(source))  # space is back: it imports whole
    assert again.rc == 0 and again.out.startswith(f"{source} → "), again.err


def _four_kilobytes_per_file() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
