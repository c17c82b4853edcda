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
