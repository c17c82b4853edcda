"""`sessions export`: JSONL as one stream, Markdown and HTML that keep any text as text, files created private."""

from __future__ import annotations

import json
import stat
import tempfile
from html.parser import HTMLParser
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from evo_agent.cli.sessions.model import load_session
from evo_agent.cli.sessions.render_html import render_html
from evo_agent.cli.sessions.render_md import render_markdown
from evo_agent.safe_text import terminal_safe
from evo_agent.session import SessionStore
from tests.cli.sessions_helpers import HOSTILE, rich_session


class Page(HTMLParser):
    """Every element, its attributes, and the text of each `<pre class="output">` (tool results)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.outputs: list[str] = []
        self.text: list[str] = []
        self._in_output = False

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        self.tags.append((tag, attributes))
        if tag == "pre" and attributes.get("class") == "output":
            self._in_output = True
            self.outputs.append("")

    def handle_endtag(self, tag):
        if tag == "pre":
            self._in_output = False

    def handle_data(self, data):
        self.text.append(data)
        if self._in_output:
            self.outputs[-1] += data


def parse(html: str) -> Page:
    page = Page()
    page.feed(html)
    page.close()
    return page


def assert_inert(page: Page) -> None:
    """No script, no event handler, nothing loaded from anywhere."""
    names = {tag for tag, _ in page.tags}
    assert not names & {"script", "iframe", "object", "embed", "link", "img", "base", "form"}
    for tag, attrs in page.tags:
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
        assert "src" not in attrs


def test_jsonl_is_the_main_transcript_with_each_sidechain_after_its_marker(demo_cli):
    rich = rich_session(demo_cli.project)
    result = demo_cli.run("sessions", "export", rich.source, "--format", "jsonl")
    assert result.rc == 0
    lines = result.out.splitlines()
    records = [json.loads(line) for line in lines]
    assert all(next(iter(r)) == "type" for r in records)
    main = demo_cli.transcript(rich.source).read_text().splitlines()
    assert [line for line, r in zip(lines, records) if "sidechain" not in r] == main  # byte for byte, in order
    side = [json.loads(line) for line in (demo_cli.sessions_dir / rich.source / rich.sidechain).read_text().splitlines()]
    start = next(i for i, r in enumerate(records) if r["type"] == "subagent_start")
    assert records[start + 1:start + 1 + len(side)] == [{**r, "sidechain": rich.sidechain} for r in side]
    assert records[start + 1 + len(side)]["type"] == "subagent_end"


def test_output_file_is_private_and_its_suffix_picks_the_format(demo_cli, tmp_path):
    rich = rich_session(demo_cli.project)
    for name, fmt in (("s.html", "html"), ("s.md", "md"), ("s.jsonl", "jsonl")):
        target = tmp_path / name
        result = demo_cli.run("sessions", "export", rich.source, "-o", str(target))
        assert result.rc == 0 and result.out.startswith(f"Wrote {target} (")  # says where it went
        assert stat.S_IMODE(target.stat().st_mode) == 0o600
        assert target.read_text() == demo_cli.run("sessions", "export", rich.source, "--format", fmt).out
    unknown = demo_cli.run("sessions", "export", rich.source, "-o", str(tmp_path / "notes.txt"))
    assert unknown.rc == 0 and unknown.out.startswith(f"Wrote {tmp_path / 'notes.txt'} (Markdown, ")
    assert (tmp_path / "notes.txt").read_text() == demo_cli.run("sessions", "export", rich.source).out
    missing_dir = demo_cli.run("sessions", "export", rich.source, "-o", str(tmp_path / "no" / "s.md"))
    assert missing_dir.rc == 1 and missing_dir.err.startswith("evo-agent: cannot write")


def test_html_is_one_inert_page_with_every_result_folded(demo_cli):
    rich = rich_session(demo_cli.project)
    html = demo_cli.run("sessions", "export", rich.source, "--format", "html").out
    page = parse(html)
    assert_inert(page)
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    details = [attrs.get("class", "") for tag, attrs in page.tags if tag == "details"]
    assert details.count("result") == 3 and details.count("result error") == 1  # grep, task, read_file; bash
    assert details.count("subagent") == 1 and details.count("thinking") == 1
    assert not any("open" in attrs for tag, attrs in page.tags if tag == "details")
    text = "".join(page.text)
    assert HOSTILE.replace("\x1b", "^[") in text  # shown as text, not markup
    for label in ("This session", "Subagents", "Total", "5,276"):
        assert label in text
    assert "It sleeps instead of waiting." in page.outputs


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=200)


def _session_with(project: Path, prompt: str, result: str) -> SessionStore:
    store = SessionStore(project, warn=lambda line: None)
    rec = store.create(model="m", provider="demo", git_branch=None)
    rec.user({"role": "user", "content": prompt or "x"})
    rec.assistant({"role": "assistant", "content": [
        {"type": "text", "text": prompt or "x"},
        {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": prompt}}]})
    rec.user({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": result}]})
    rec.checkpoint()
    return store


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(prompt=_TEXT, result=_TEXT)
def test_any_text_stays_text_in_html_and_markdown(prompt, result):
    with tempfile.TemporaryDirectory() as tmp:
        store = _session_with(Path(tmp), prompt, result)
        view = load_session(store, store.list()[0].id)
        page = parse(render_html(view))
        assert_inert(page)
        assert page.outputs == [terminal_safe(result) or "(empty)"]
        md = render_markdown(view)
        fences = [t.content for t in MarkdownIt("commonmark").parse(md) if t.type == "fence" and t.info == ""]
        expected = terminal_safe(result) or "(empty)"
        assert fences == [expected if expected.endswith("\n") else expected + "\n"]


def test_every_view_shows_what_a_compactions_summary_call_spent(demo_cli, project):
    """A boundary's `usage` (its summary call's tokens) is on its heading and in the totals; none without it."""
    store = SessionStore(project, warn=lambda line: None)
    rec = store.create(model="m", provider="demo")
    rec.user({"role": "user", "content": "hi"})
    rec.assistant({"role": "assistant", "content": [{"type": "text", "text": "hello"}]}, input_tokens=5,
                  output_tokens=1)
    rec.compact_boundary("the old part", 1, "manual")
    rec.compact_boundary("s", 2, "auto", usage={"input_tokens": 1234, "output_tokens": 56})
    rec.checkpoint()
    view = load_session(store, rec.id)
    assert render_markdown(view).count("summary 1,234 in / 56 out") == 1
    assert render_html(view).count("summary 1,234 in / 56 out") == 1
    shown = demo_cli.run("sessions", "show", rec.id).out
    assert shown.count("summary 1,234 in / 56 out") == 1 and "tokens 1,239 in / 57 out" in shown
