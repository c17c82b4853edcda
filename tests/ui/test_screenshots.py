"""The README's screenshots, captured from the real app in tmux at 80×24 (colours included) and drawn as SVG.

A first day with evo-agent: the welcome screen, a turn whose command asks for approval, the turn done,
the session picker and a resume. Only what differs per machine and run (the temporary project path,
session ids, dates and seconds) is replaced before drawing, so the pictures change only when the app's
look does; the files are rewritten only then.
"""

from __future__ import annotations

import io
import re
import shutil
from pathlib import Path

import pytest

from tests.fake_model_server import reply, text, tool_use
from tests.tmux_terminal import Terminal

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
SHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


def _steady(screen: str, project: Path) -> str:
    """The captured screen with the per-run strings replaced (path, ids, dates, seconds, the fake's port)."""
    screen = screen.replace(str(project), "~/src/shop")
    screen = re.sub(r"…[^ \x1b]*/project\b", "~/src/shop", screen)
    ids: dict[str, str] = {}  # each session keeps an id of its own, in order of appearance
    screen = re.sub(r"\d{13}_[0-9a-f]{8}", lambda m: ids.setdefault(m.group(), f"179635000000{len(ids)}_5e55104{len(ids)}"),
                    screen)
    screen = re.sub(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}", "2026-12-04 09:30", screen)
    return re.sub(r"\b\d+ s\b", "3 s", screen)


def _shoot(t: Terminal, project: Path, name: str) -> str:
    """Capture the pane with its colours, draw it as an SVG in docs/screenshots/NAME.svg; the plain text."""
    from rich.console import Console
    from rich.text import Text

    ansi = _steady(t.tmux("capture-pane", "-t", t.name, "-p", "-e", "-J"), project)  # wrapped lines joined
    console = Console(width=80, record=True, force_terminal=True, color_system="truecolor", file=io.StringIO())
    for line in ansi.rstrip("\n").split("\n"):
        console.print(Text.from_ansi(line), overflow="fold")  # wrapped at 80 again, as the terminal did
    svg = console.export_svg(title=f"evo-agent — {name}", clear=False)
    SHOTS.mkdir(parents=True, exist_ok=True)
    target = SHOTS / f"{name}.svg"
    if not target.exists() or target.read_text() != svg:
        target.write_text(svg)
    return console.export_text()


def test_the_readme_screenshots_come_from_the_running_app(terminals, project, model_server):
    (project / "check.sh").write_text("echo 'tests/test_price.py .  [100%]'\necho '1 passed in 0.03s'\n")
    model_server.script(
        reply(text("Let me run the tests first."), tool_use("bash", {"command": "sh check.sh"})),
        text("The price test passes: `gross()` already rounds to cents. Nothing to fix."),
    )
    t = Terminal(project, [], env=model_server.env())
    terminals.append(t)
    t.wait(r"tokens · context")
    assert "/help for help" in _shoot(t, project, "welcome")

    t.type("the price test fails, fix it")
    t.keys("Enter")
    t.wait(r"No, and tell the model why")
    asked = _shoot(t, project, "approval")
    assert "sh check.sh" in asked and "Yes" in asked

    t.keys("Down", "Enter")
    t.wait(r"Nothing to fix\.")
    t.wait(r"tokens · context")
    assert "1 passed" in _shoot(t, project, "turn")
    t.type("/exit")
    t.keys("Enter")
    t.wait(r"EXITED-0")

    picker = Terminal(project, ["--resume"], env=model_server.env())
    terminals.append(picker)
    picker.wait(r"1 session")
    assert "the price test fails, fix it" in _shoot(picker, project, "picker")
    picker.keys("Enter")
    picker.wait(r"messages restored")
    picker.wait(r"tokens · context")
    assert "Nothing to fix." in _shoot(picker, project, "resume")
