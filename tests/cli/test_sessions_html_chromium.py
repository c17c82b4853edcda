"""The HTML export opened in a real headless Chromium (Debian's `chromium`): it renders, and folds open on a click.

Playwright drives the system browser through `executable_path`; it never
downloads one. JavaScript is disabled in the page, to prove that nothing in
the export needs it. Skipped, with the reason, where chromium or the
playwright package cannot be had (`.ci/run` installs chromium best effort).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.cli.sessions_helpers import rich_session

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--no-first-run"]

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")


@pytest.fixture
def browser_page(tmp_path):
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[test]')")
    with sync_api.sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"), executable_path=CHROMIUM, headless=True, args=FLAGS,
            java_script_enabled=False, viewport={"width": 1100, "height": 900},
        )
        try:
            page = context.new_page()
            page.requests = []  # type: ignore[attr-defined]
            page.dialogs = []  # type: ignore[attr-defined]
            page.on("request", lambda request: page.requests.append(request.url))
            page.on("dialog", lambda dialog: (page.dialogs.append(dialog.message), dialog.dismiss()))
            yield page
        finally:
            context.close()


def test_the_export_renders_and_its_tool_results_and_subagent_runs_expand(demo_cli, browser_page, tmp_path):
    page = browser_page
    rich = rich_session(demo_cli.project)
    target = tmp_path / "session.html"
    assert demo_cli.run("sessions", "export", rich.source, "-o", str(target)).rc == 0
    page.goto(Path(target).as_uri())

    assert page.title() == "Find the flaky upload test and explain it"
    assert page.locator("h1").is_visible()
    assert page.locator("main > article.turn").count() == 6  # the subagent's 3 are nested in its run
    assert page.locator("main").bounding_box()["height"] > 600  # laid out, not an empty page
    assert page.get_by_text("Hostile text: </script><script>alert(1)</script>").is_visible()
    assert page.locator("script").count() == 0

    # A tool result is folded until its summary is clicked.
    grep = page.locator('[data-tool-id="toolu_01"] > details.result')
    output = grep.locator("pre.output")
    assert not output.is_visible()
    grep.locator("summary").click()
    assert output.is_visible() and "line 14" in output.inner_text()
    assert grep.get_attribute("open") is not None

    # A subagent run is folded under its task call, and opens the same way.
    run = page.locator('[data-tool-id="toolu_03"] > details.subagent')
    inner = run.get_by_text("Explain test_upload_retries", exact=True)
    assert not inner.is_visible()
    run.locator("> summary").click()
    assert inner.is_visible()
    nested = run.locator('[data-tool-id="toolu_s1"] > details.result')
    nested.locator("summary").click()
    assert "sleep(0.1)" in nested.locator("pre.output").inner_text()

    # Token totals are on the page; nothing was fetched but the file itself; no script ran.
    totals = page.locator("table.tokens tr.total").inner_text()
    assert "5,050" in totals and "226" in totals and "5,276" in totals
    assert page.requests == [Path(target).as_uri()]
    assert page.dialogs == []


LEAK = "http://127.0.0.1:9/leak"
HOSTILE_MARKDOWN = "\n\n".join([
    "[a](javascript:alert(1))", "[b](JaVaScRiPt:alert(2))", "[c](java&#x09;script:alert(3))", "<javascript:alert(4)>",
    "[d](data:text/html;base64,PHNjcmlwdD5hbGVydCg1KTwvc2NyaXB0Pg==)", "[e](vbscript:msgbox(6))",
    "<img src=x onerror=alert(7)>", "<script>alert(8)</script>", f"<style>@import url({LEAK}/css);</style>",
    f"![pixel]({LEAK}/img.png)", "[ref]\n\n[ref]: javascript:alert(9)", f"<iframe src={LEAK}/frame></iframe>",
    f"| a | b |\n|---|---|\n| <img src={LEAK}/cell> | x |", "[i](&#106;avascript:alert(10))",
    "<svg onload=alert(11)>", "<a href='javascript:alert(12)'>x</a>", f"<link rel=stylesheet href={LEAK}/link>",
    f'<div style="background:url({LEAK}/bg)">x</div>', f"<meta http-equiv=refresh content='0;url={LEAK}/meta'>",
])


def _open_with_javascript(path: Path, tmp_path: Path):  # noqa: ANN202
    """(requests, dialogs, hrefs) of a page opened in headless Chromium with JavaScript ON."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    with sync_api.sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(tmp_path / f"profile-{path.stem}"), executable_path=CHROMIUM, headless=True, args=FLAGS,
            java_script_enabled=True)
        try:
            page = context.new_page()
            requests: list[str] = []
            dialogs: list[str] = []
            page.on("request", lambda request: requests.append(request.url))
            page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
            page.goto(path.as_uri())
            page.wait_for_timeout(500)
            hrefs = page.eval_on_selector_all("a", "els => els.map(e => e.getAttribute('href'))")
            return requests, dialogs, hrefs
        finally:
            context.close()


def test_a_hostile_transcript_exported_runs_no_script_and_loads_nothing(demo_cli, tmp_path):
    from markdown_it import MarkdownIt

    from tests.builders import quiet_store

    control = tmp_path / "control.html"  # the same text through a Markdown renderer that keeps raw HTML
    control.write_text(MarkdownIt("commonmark", {"html": True}).render(HOSTILE_MARKDOWN))
    requests, dialogs, _ = _open_with_javascript(control, tmp_path)
    assert dialogs and any(url.startswith(LEAK) for url in requests)  # the payloads are live in this browser

    rec = quiet_store(demo_cli.project).create(model='m"><script>alert(20)</script>', provider="p<b>")
    rec.user({"role": "user", "content": HOSTILE_MARKDOWN})
    rec.assistant({"role": "assistant", "content": [
        {"type": "text", "text": HOSTILE_MARKDOWN}, {"type": "thinking", "thinking": HOSTILE_MARKDOWN, "signature": "x"},
        {"type": "tool_use", "id": 'id"><img src=x onerror=alert(21)>', "name": "<img src=x onerror=alert(22)>",
         "input": {"command": f"<img src={LEAK}/input>"}}]})
    rec.user({"role": "user", "content": [{"type": "tool_result", "tool_use_id": 'id"><img src=x onerror=alert(21)>',
                                           "content": HOSTILE_MARKDOWN}]})
    rec.compact_boundary(HOSTILE_MARKDOWN, 1, "manual")
    rec.checkpoint()
    page = tmp_path / "hostile.html"
    assert demo_cli.run("sessions", "export", rec.session_id, "-o", str(page)).rc == 0
    requests, dialogs, hrefs = _open_with_javascript(page, tmp_path)
    assert dialogs == [] and requests == [page.as_uri()], (dialogs, requests)
    assert not [h for h in hrefs if h.strip().lower().startswith(("javascript:", "data:", "vbscript:"))], hrefs
