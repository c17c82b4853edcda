"""Search inside sessions (issue #19): the byte test never loses a hit that decoding would find."""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from evo_agent.session import search as search_module
from evo_agent.session.inspect import parse_record, sidechain_paths
from evo_agent.session.search import record_texts, search_sessions
from tests.builders import assistant_text, quiet_store, user_text
from tests.cli.sessions_helpers import rich_session


def _rows(project):
    store = quiet_store(project)
    rows = store.list()
    ids = {r.id for r in rows}
    return [(r.id, r.dir, r.meta.resumed_from) for r in rows], ids.__contains__


def _search(project, needle, **kw):
    rows, exists = _rows(project)
    return list(search_sessions(rows, needle, exists=exists, **kw))


def test_finds_summaries_tool_inputs_and_subagents(tmp_path):
    rich = rich_session(tmp_path)
    summary = _search(tmp_path, "instead of waiting for the retry")
    assert [(h.session_id, h.kind) for h in summary] == [(rich.source, "summary")]
    call = _search(tmp_path, "pytest -q tests/test_upload")
    assert [(h.session_id, h.kind) for h in call] == [(rich.source, "tool call")]
    side = _search(tmp_path, "sleep(0.1)")
    assert {(h.file, h.kind) for h in side} == {(rich.sidechain, "tool result")}
    result = _search(tmp_path, "sleeps instead of waiting")
    kinds = {(h.file, h.kind) for h in result}
    assert ("messages.jsonl", "subagent result") in kinds and (rich.sidechain, "answer") in kinds


def test_a_resumed_copy_is_not_a_second_hit_while_its_source_exists(tmp_path):
    rich = rich_session(tmp_path)
    hits = _search(tmp_path, "Fix it")
    assert [h.session_id for h in hits] == [rich.source]
    new = _search(tmp_path, "Did it pass")
    assert [h.session_id for h in new] == [rich.resumed]
    # Once the source is gone, the copy is where the conversation lives.
    rows, _ = _rows(tmp_path)
    alone = [r for r in rows if r[0] == rich.resumed]
    assert [h.session_id for h in search_sessions(alone, "Fix it")] == [rich.resumed]


def test_newest_session_first_and_limit(tmp_path):
    store = quiet_store(tmp_path)
    made = []
    for i in range(3):
        rec = store.create(model="m", provider="demo")
        rec.user(user_text(f"deploy step {i}"))
        rec.assistant(assistant_text("ok"))
        rec.checkpoint()
        made.append(rec.session_id)
        # the next session starts in a later millisecond: newest first is then what the user saw happen (two
        # sessions of one millisecond tie on both their update and their id's instant, and the id's random
        # part decides, which failed this test about once in a few hundred runs)
        last_ms = int(time.time() * 1000)
        while int(time.time() * 1000) <= last_ms:
            time.sleep(0.0002)
    hits = _search(tmp_path, "DEPLOY STEP")
    assert [h.session_id for h in hits] == made[::-1]
    assert len(_search(tmp_path, "deploy", limit=2)) == 2


def test_escaped_and_non_ascii_needles(tmp_path):
    store = quiet_store(tmp_path)
    rec = store.create(model="m", provider="demo")
    rec.user(user_text('He said "ship it" \\ then\nleft. Größe'))
    rec.assistant(assistant_text("ok"))
    rec.checkpoint()
    assert len(_search(tmp_path, 'said "ship it" \\ then')) == 1
    assert len(_search(tmp_path, "then\nleft")) == 1
    assert len(_search(tmp_path, "GRÖßE")) == 1
    assert len(_search(tmp_path, r"ship\s+it", regex=True)) == 1


def test_damaged_lines_are_skipped_not_fatal(tmp_path):
    store = quiet_store(tmp_path)
    rec = store.create(model="m", provider="demo")
    rec.user(user_text("before the damage: needle one"))
    rec.checkpoint()
    with open(rec.path, "ab") as f:
        f.write(b'{"type":"user","message":{"role":"user","content":"needle in garbage\n')  # unterminated JSON
        f.write(b"\x00\xff needle \n")
    rec.user(user_text("after the damage: needle two"))
    rec.assistant(assistant_text("ok"))
    rec.checkpoint()
    with open(rec.path, "ab") as f:
        f.write(b'{"type":"user","message":{"role":"user","content":"torn needle')  # torn last line
    hits = _search(tmp_path, "needle")
    assert [h.snippet for h in hits] == ["before the damage: needle one", "after the damage: needle two"]


_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(prompts=st.lists(_text, min_size=1, max_size=5), pick=st.integers(0, 4), start=st.integers(0, 40),
       length=st.integers(2, 12))
@example(prompts=["0\x7f"], pick=0, start=0, length=2)  # DEL: json escapes it, orjson writes it raw
@example(prompts=["a\tb"], pick=0, start=0, length=3)  # a control character every encoder escapes
def test_byte_test_finds_what_decoding_finds(tmp_path_factory, prompts, pick, start, length):
    project = tmp_path_factory.mktemp("p")
    store = quiet_store(project)
    rec = store.create(model="m", provider="demo")
    for text in prompts:
        rec.user(user_text(text or "x"))
        rec.assistant(assistant_text("ok"))
    rec.checkpoint()
    source = prompts[pick % len(prompts)] or "x"
    needle = source[start % max(1, len(source)):][:length]
    if not needle.strip():
        return
    pattern = re.compile(re.escape(needle), re.IGNORECASE)  # the oracle: decode every record, then search
    expected = []
    with open(rec.path, "rb") as f:
        for number, raw in enumerate(f, 1):
            record = json.loads(raw)
            if record.get("type") in ("user", "assistant") and any(
                    pattern.search(text) for _, text in record_texts(record)):
                expected.append(number)
    found = _search(project, needle, limit=None)
    assert expected and [h.line for h in found] == expected


# --------------------------------------------------------------------------- the ripgrep prefilter

needs_rg = pytest.mark.skipif(shutil.which("rg") is None, reason="ripgrep is not installed")


@contextlib.contextmanager
def prefilter(rg: str | None):
    """Searches through ripgrep at `rg` (None: none) even for a few bytes, in batches of a file or two."""
    saved = search_module._ripgrep, search_module.RIPGREP_MIN_BYTES, search_module.FIRST_BATCH_BYTES
    search_module._ripgrep = lambda project: rg
    search_module.RIPGREP_MIN_BYTES, search_module.FIRST_BATCH_BYTES = 0, 1
    try:
        yield
    finally:
        search_module._ripgrep, search_module.RIPGREP_MIN_BYTES, search_module.FIRST_BATCH_BYTES = saved


def _hits(project, needle, **kw) -> list[tuple]:
    return [(h.session_id, h.file, h.line, h.kind, h.snippet) for h in _search(project, needle, limit=None, **kw)]


def _reference(project, needle) -> list[tuple]:
    """The search as its semantics say, naively: every line of every file, the byte test (the needle's longest
    printable-ASCII run, JSON-escaped, in the ASCII-lowercased line), then decoding and a case-insensitive search."""
    run = max(re.findall(r"[\x20-\x7e]+", needle) or [""], key=len)
    form = json.dumps(run)[1:-1].encode("ascii").lower() if len(run.strip()) >= 2 else None
    pattern = re.compile(re.escape(needle), re.IGNORECASE)
    rows, exists = _rows(project)
    out = []
    for sid, session_dir, resumed_from in rows:
        skip_restored = bool(resumed_from) and exists(resumed_from)
        for relative in ["messages.jsonl", *sidechain_paths(session_dir)]:
            lines = (Path(session_dir) / relative).read_bytes().split(b"\n")
            if lines[-1] == b"":
                lines.pop()  # the file ends with a newline; a torn last line is searched too
            for number, line in enumerate(lines, 1):
                if form is not None and form not in line.lower():
                    continue
                record = parse_record(line)
                if record is None or record.get("type") not in search_module.SEARCHED_TYPES:
                    continue
                if skip_restored and record.get("restored") is True:
                    continue
                for kind, text in record_texts(record):
                    found = pattern.search(text)
                    if found:
                        out.append((sid, relative, number, kind, search_module._snippet(text, *found.span())))
                        break
    return out


# Letters whose case folding differs between ASCII, Unicode and ripgrep: Kelvin sign, long s, dotted I, sharp s.
_folding = st.text(alphabet=st.sampled_from("aAkKsSiIzZ \u212a\u017f\u0130\u0131\u00df\u1e9e\u03a9\u2126é\"\\\t{}:é😀"),
                   min_size=1, max_size=30)
_cases = st.sampled_from([str, str.upper, str.lower, str.swapcase, str.casefold])


@needs_rg
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sessions=st.lists(st.lists(_folding, min_size=1, max_size=4), min_size=1, max_size=4),
       pick=st.integers(0, 50), start=st.integers(0, 30), length=st.integers(1, 8), case=_cases,
       garbage=st.binary(max_size=30))
def test_ripgrep_prefilter_finds_exactly_what_the_search_finds_without_it(tmp_path_factory, sessions, pick, start,
                                                                           length, case, garbage):
    project = tmp_path_factory.mktemp("p")
    store = quiet_store(project)
    texts = []
    for prompts in sessions:
        rec = store.create(model="m", provider="demo")
        for text in prompts:
            rec.user(user_text(text))
            rec.assistant(assistant_text(text[::-1]))
            texts.append(text)
        rec.checkpoint()
        with open(rec.path, "ab") as f:
            f.write(garbage + b"\n")  # damage that must neither match nor hide anything
    source = texts[pick % len(texts)]
    needle = case(source[start % len(source):][:length])
    if not needle.strip():
        return
    expected = _reference(project, needle)
    with prefilter(None):
        assert _hits(project, needle) == expected
    with prefilter(shutil.which("rg")):
        assert _hits(project, needle) == expected


@needs_rg
def test_ripgrep_skips_files_without_the_needle_and_a_failing_ripgrep_skips_nothing(tmp_path, monkeypatch):
    store = quiet_store(tmp_path)
    for text in ("the needle is here", "nothing to see", "nor here"):
        rec = store.create(model="m", provider="demo")
        rec.user(user_text(text))
        rec.assistant(assistant_text("ok"))
        rec.checkpoint()
    scanned = []
    real = search_module._file_hits
    monkeypatch.setattr(search_module, "_file_hits", lambda sid, *a: scanned.append(sid) or real(sid, *a))
    with prefilter(shutil.which("rg")):
        assert [h.snippet for h in _search(tmp_path, "NEEDLE")] == ["the needle is here"]
    assert len(scanned) == 1
    broken = tmp_path / "rg"
    broken.write_text("#!/bin/sh\nexit 2\n")  # an error (say, an unreadable file): ripgrep cannot vouch for any
    broken.chmod(0o755)
    scanned.clear()
    with prefilter(str(broken)):
        assert [h.snippet for h in _search(tmp_path, "NEEDLE")] == ["the needle is here"]
    assert len(scanned) == 3


def test_a_ripgrep_planted_in_the_project_never_runs(tmp_path, monkeypatch):
    """A relative PATH entry (`.`, `bin`) or one pointing into the project must not run the repository's `rg`."""
    store = quiet_store(tmp_path)
    rec = store.create(model="m", provider="demo")
    rec.user(user_text("the needle is here"))
    rec.assistant(assistant_text("ok"))
    rec.checkpoint()
    marker = tmp_path.parent / f"{tmp_path.name}-planted-rg-ran"
    for where in (tmp_path, tmp_path / "bin"):
        where.mkdir(exist_ok=True)
        planted = where / "rg"
        planted.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
        planted.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    for path in (".", "bin", f"bin:{tmp_path}", str(tmp_path / "bin")):
        monkeypatch.setenv("PATH", f"{path}:/usr/bin:/bin")
        search_module._ripgrep_in.cache_clear()
        saved = search_module.RIPGREP_MIN_BYTES
        search_module.RIPGREP_MIN_BYTES = 0
        try:
            assert [h.snippet for h in _search(tmp_path, "needle")] == ["the needle is here"]
        finally:
            search_module.RIPGREP_MIN_BYTES = saved
            search_module._ripgrep_in.cache_clear()
        assert not marker.exists(), path
