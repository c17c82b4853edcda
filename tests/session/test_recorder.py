"""What lands on disk: layout, permissions, the envelope, and best effort."""

import json
import os
import re
import stat
import subprocess
import sys
import threading

import pytest

from evo_agent.session import SessionStore, load_for_resume
from tests.builders import assistant_tools, lines_of, quiet_store, tool_results, user_text
from tests.helpers import fill_disk, mount_tmpfs, needs_root, remount, unmount

TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d")


def test_layout_permissions_and_gitignore_whatever_the_umask(project):
    old = os.umask(0)
    try:
        rec = quiet_store(project).create(model="m1", provider="demo")
        rec.user(user_text("hi"))
        side = rec.start_subagent("Explore", "toolu_1")
        side.user(user_text("child"))
    finally:
        os.umask(old)
    sessions = project / ".evo-agent" / "sessions"
    assert (sessions / ".gitignore").read_text() == "*\n"
    for d in (project / ".evo-agent", sessions, rec.session_dir, rec.session_dir / "subagent"):
        assert stat.S_IMODE(d.stat().st_mode) == 0o700, d
    for f in (rec.path, rec.session_dir / "meta.json", side.path):
        assert stat.S_IMODE(f.stat().st_mode) == 0o600, f
    # git agrees that nothing under sessions/ would be committed
    out = subprocess.run(["git", "-C", str(project), "status", "--porcelain", "--untracked-files=all"],
                         capture_output=True, text=True, check=True).stdout
    assert ".evo-agent/sessions/" + rec.id not in out and "messages.jsonl" not in out


def test_every_record_has_the_envelope_with_type_first(project):
    rec = quiet_store(project).create(model="claude-x", provider="anthropic")
    rec.prompt_id = "p1"
    rec.user(user_text("list files"))
    rec.assistant(assistant_tools("", "t1"), input_tokens=10, output_tokens=4,
                  cache_read_input_tokens=7)
    rec.user(tool_results("t1"))
    rec.compact_boundary("sum", 1, "manual")
    lines = lines_of(rec.path)
    records = [json.loads(line) for line in lines]
    assert [r["type"] for r in records] == ["session_start", "user", "assistant", "user", "compact_boundary"]
    for line, r in zip(lines, records):
        assert line.startswith(b'{"type":')
        assert TIMESTAMP.fullmatch(r["timestamp"])
        assert r["session_id"] == rec.id and r["cwd"] == str(project)
        assert r["agent_version"] == "0.1.0"
        assert r["git_branch"] == "main"
    assert records[0]["model"] == "claude-x" and records[0]["provider"] == "anthropic"
    assert "prompt_id" not in records[0] and all(r["prompt_id"] == "p1" for r in records[1:])
    assert records[2]["input_tokens"] == 10 and records[2]["cache_read_input_tokens"] == 7
    assert records[4] | {} == {**records[4], "summary": "sum", "compact_count": 1, "trigger": "manual"}


def test_no_git_branch_outside_a_repository(tmp_path):
    rec = quiet_store(tmp_path).create(model="m", provider="demo")
    assert "git_branch" not in json.loads(lines_of(rec.path)[0])


def test_subagent_records_go_to_the_sidechain_and_markers_to_main(project):
    rec = quiet_store(project).create(model="m", provider="demo")
    rec.user(user_text("delegate"))
    side = rec.start_subagent("General Purpose", "toolu_9", model="m", provider="demo")
    side.user(user_text("child prompt"))
    side.assistant(assistant_tools("child answer"), input_tokens=3, output_tokens=2)
    rec.end_subagent(side, "toolu_9", "child answer")
    main = [json.loads(x) for x in lines_of(rec.path)]
    assert [r["type"] for r in main] == ["session_start", "user", "subagent_start", "subagent_end"]
    start, end = main[2], main[3]
    assert start["agent_name"] == "general-purpose" and start["tool_use_id"] == "toolu_9"
    assert re.fullmatch(r"subagent/\d{13}_general-purpose_[0-9a-f]{4}\.jsonl", start["subagent_path"])
    assert end["subagent_path"] == start["subagent_path"] and end["result"] == "child answer"
    child = [json.loads(x) for x in lines_of(rec.session_dir / start["subagent_path"])]
    assert [r["type"] for r in child] == ["session_start", "user", "assistant"]
    assert child[0]["agent_name"] == "general-purpose" and child[0]["parent_session_id"] == rec.id
    # the main transcript restores without any child turn
    assert load_for_resume(rec.path).messages == [user_text("delegate")]


def test_two_subagents_drawing_the_same_file_name_get_two_files(project, monkeypatch):
    import evo_agent.session.ids as ids

    draws = iter(["beef", "beef", "cafe"])  # the second child draws the first one's suffix
    monkeypatch.setattr(ids, "random_hex", lambda n: next(draws))
    monkeypatch.setattr(ids.time, "time", lambda: 1_780_000_000.0)
    rec = quiet_store(project).create(model="m", provider="demo")
    first = rec.start_subagent("explore", "toolu_1")
    second = rec.start_subagent("explore", "toolu_2")
    assert first.relative_path == "subagent/1780000000000_explore_beef.jsonl"
    assert second.relative_path == "subagent/1780000000000_explore_cafe.jsonl"
    first.user(user_text("one"))
    second.user(user_text("two"))
    for side, prompt in ((first, "one"), (second, "two")):
        child = [json.loads(x) for x in lines_of(side.path)]
        assert [r["type"] for r in child] == ["session_start", "user"] and child[1]["message"]["content"] == prompt
        assert stat.S_IMODE(os.stat(side.path).st_mode) == 0o600


def test_sessions_path_is_a_file_warns_once_and_never_raises(project):
    (project / ".evo-agent").mkdir()
    (project / ".evo-agent" / "sessions").write_text("not a directory")
    warnings: list[str] = []
    rec = SessionStore(project, warn=warnings.append).create(model="m", provider="demo")
    for i in range(5):
        assert rec.user(user_text(f"hello {i}")) is False
    rec.checkpoint()
    assert len(warnings) == 1, warnings
    assert warnings[0].startswith(f"evo-agent: cannot write session {rec.id}: ")
    assert warnings[0].endswith("this conversation is not being saved")


def test_unencodable_value_is_reported_not_raised(project):
    warnings: list[str] = []
    rec = SessionStore(project, warn=warnings.append).create(model="m", provider="demo")
    assert rec.user({"role": "user", "content": "x", "big": 2**80}) is True  # stdlib fallback
    assert json.loads(lines_of(rec.path)[-1])["message"]["big"] == 2**80
    assert rec.user({"role": "user", "content": "lone \udcff surrogate"}) is True
    assert "surrogate" in json.loads(lines_of(rec.path)[-1])["message"]["content"]
    assert warnings == []


@needs_root
def test_full_disk_warns_once_and_the_next_record_after_space_returns_is_intact(tmp_path):
    mnt = tmp_path / "small"
    try:
        mount_tmpfs(mnt, "64k")
    except subprocess.CalledProcessError:
        pytest.skip("cannot mount tmpfs here")
    try:
        warnings: list[str] = []
        store = SessionStore(mnt, warn=warnings.append)
        rec = store.create(model="m", provider="demo", meta_interval=3600)
        rec.user(user_text("before the disk filled"))
        fill_disk(mnt, leave=4096)  # one page free: the next record lands torn
        big = "y" * 20000
        for _ in range(3):
            assert rec.user(user_text(big)) is False  # torn: only part of it fits
        assert len(warnings) == 1 and "No space left on device" in warnings[0]
        (mnt / "filler").unlink()
        assert rec.user(user_text("after space came back")) is True
        raw = rec.path.read_bytes()
        loaded = load_for_resume(rec.path)
        assert [m["content"] for m in loaded.messages] == ["before the disk filled", "after space came back"]
        assert loaded.skipped_lines >= 1 and b"\n{" in raw
    finally:
        unmount(mnt)


@needs_root
def test_read_only_directory_warns_once_and_never_raises(tmp_path):
    mnt = tmp_path / "ro"
    try:
        mount_tmpfs(mnt, "1m")
    except subprocess.CalledProcessError:
        pytest.skip("cannot mount tmpfs here")
    try:
        warnings: list[str] = []
        rec = SessionStore(mnt, warn=warnings.append).create(model="m", provider="demo")
        assert rec.user(user_text("written")) is True
        remount(mnt, "ro")
        for _ in range(3):
            assert rec.user(user_text("lost")) is False
        rec.checkpoint()
        assert len(warnings) == 1 and "Read-only file system" in warnings[0], warnings
        assert [m["content"] for m in load_for_resume(rec.path).messages] == ["written"]
    finally:
        unmount(mnt)


SHORT_WRITE_CHILD = r"""
import resource, signal, sys
from pathlib import Path
from evo_agent.session import SessionStore
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
warnings = []
rec = SessionStore(Path(sys.argv[1]), warn=warnings.append).create(model="m", provider="demo", meta_interval=3600)
rec.user({"role": "user", "content": "first"})
size = rec.path.stat().st_size
soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
resource.setrlimit(resource.RLIMIT_FSIZE, (size + 100, hard))   # the next record is cut after 100 bytes
ok = rec.user({"role": "user", "content": "z" * 1000})
resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
ok2 = rec.user({"role": "user", "content": "second"})
print(ok, ok2, len(warnings))
"""


def test_torn_fragment_then_good_record_keeps_the_good_record(tmp_path):
    """A real short write (RLIMIT_FSIZE), no root needed."""
    out = subprocess.run([sys.executable, "-c", SHORT_WRITE_CHILD, str(tmp_path)],
                         capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "True", "1"]
    transcript = next((tmp_path / ".evo-agent" / "sessions").glob("*/messages.jsonl"))
    lines = transcript.read_bytes().split(b"\n")
    assert len(lines[2]) == 100  # the fragment, alone on its line
    loaded = load_for_resume(transcript)
    assert [m["content"] for m in loaded.messages] == ["first", "second"]
    assert loaded.skipped_lines == 1 and "skipped 1 unreadable line" in loaded.warning


def test_eight_threads_times_500_records_into_one_file(project):
    rec = quiet_store(project).create(model="m", provider="demo")

    def work(t: int) -> None:
        for i in range(500):
            rec.user(user_text(f"thread {t} record {i} " + "p" * (i % 7 * 300)))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    records = [json.loads(line) for line in lines_of(rec.path)]  # every line parses
    seen = {r["message"]["content"].split(" p")[0].rstrip("p ") for r in records[1:]}
    assert len(records) == 1 + 8 * 500
    assert seen == {f"thread {t} record {i}" for t in range(8) for i in range(500)}
    rec.checkpoint()
    assert quiet_store(project).info(rec.id).meta.message_count == 4000


APPENDER_CHILD = r"""
import sys
from pathlib import Path
from evo_agent.session import Recorder
rec = Recorder(Path(sys.argv[1]), sys.argv[2], cwd="x", agent_version="t")
for i in range(500):
    rec.user({"role": "user", "content": f"proc {sys.argv[3]} record {i} " + "q" * 6000})
"""


def test_four_processes_appending_to_one_file(project):
    rec = quiet_store(project).create(model="m", provider="demo")
    procs = [subprocess.Popen([sys.executable, "-c", APPENDER_CHILD, str(rec.session_dir), rec.id, str(p)])
             for p in range(4)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0, 0]
    records = [json.loads(line) for line in lines_of(rec.path)]
    contents = {r["message"]["content"].rstrip("q").strip() for r in records[1:]}
    assert len(records) == 1 + 4 * 500
    assert contents == {f"proc {p} record {i}" for p in range(4) for i in range(500)}


@pytest.mark.parametrize("zone", ["UTC", "Asia/Kathmandu", "America/St_Johns", "Europe/Dublin"])
def test_the_stamps_number_is_what_reading_its_text_back_gives(zone, monkeypatch):
    """The recorder folds its meta from `stamp_now`'s number instead of parsing the text it wrote:
    the two must agree to the millisecond, or a rebuilt meta.json would differ from the recorder's."""
    import random
    import time as time_module

    from evo_agent.session import recorder as recorder_module
    from evo_agent.session.meta import timestamp_ms

    monkeypatch.setenv("TZ", zone)
    time_module.tzset()
    draw = random.Random(zone)
    try:
        for _ in range(3000):
            now = draw.uniform(1.6e9, 2.2e9)
            if draw.random() < 0.3:
                now = int(now) + draw.randrange(1000) / 1000  # exact millisecond boundaries, the float's edge
            monkeypatch.setattr(time_module, "time", lambda now=now: now)
            text, number = recorder_module.stamp_now()
            assert number == timestamp_ms(text), (zone, now, text)
    finally:
        monkeypatch.delenv("TZ")
        monkeypatch.undo()
        time_module.tzset()
