"""Keys typed the moment the app is launched (ui/early_input.py), in a real terminal (tmux, 80×24).

The keys are sent as soon as the process has taken the terminal (its mode without echo), long
before the app can draw: they are echoed by the early prompt and then handed to the app. Whether
they land before or after the handover, what is asserted is the same: each key shows once in the
prompt, and what is sent is exactly what was typed (no timing is asserted). Keys typed before the
process even starts are the terminal's own business (its line mode echoes them and turns Enter
into a newline), so the tests wait for the mode, not for a time.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import time

import pytest

from tests.fake_model_server import text
from tests.tmux_terminal import Terminal

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def launch(terminals, project, model_server) -> Terminal:
    """The app launched; returns once its process holds the terminal (echo off), before anything is drawn."""
    t = Terminal(project, [], size=(80, 24), env=model_server.env())
    terminals.append(t)
    tty = t.tmux("display", "-p", "-t", t.name, "#{pane_tty}").strip()
    deadline = time.monotonic() + 20
    while "-echo" not in stty(tty):
        assert time.monotonic() < deadline, "the terminal was never put in the app's mode"
        time.sleep(0.005)
    return t


def stty(tty: str) -> list[str]:
    return subprocess.run(["stty", "-F", tty, "-a"], capture_output=True, text=True).stdout.split()


def last_prompt(model_server) -> str:
    content = model_server.wait_for_requests(1)[-1]["messages"][-1]["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content if b["type"] == "text")


def test_keys_typed_at_launch_show_once_in_the_prompt_and_are_sent_intact(terminals, project, model_server):
    model_server.script(text("Got it."))
    t = launch(terminals, project, model_server)
    typed = "fix the tests — naïve 漢字 ok"
    t.type(typed)
    t.wait(r"tokens · context")  # the app's own frame
    screen = t.wait("› " + re.escape(typed))
    assert screen.count(typed) == 1, screen
    t.keys("Enter")
    t.wait(r"Got it\.")
    assert last_prompt(model_server) == typed
    assert t.scrollback().count(typed) == 1, t.scrollback()  # the early echo left no copy behind


def test_enter_and_backspace_typed_at_launch_mean_what_they_mean_in_the_app(terminals, project, model_server):
    model_server.script(text("Sent."))
    t = launch(terminals, project, model_server)
    t.type("abcx")
    t.keys("BSpace")
    t.type("d")
    t.keys("Enter")
    t.wait(r"Sent\.")
    assert last_prompt(model_server) == "abcd"
    assert t.scrollback().count("abcd") == 1, t.scrollback()


def test_ctrl_c_at_launch_clears_what_was_typed_as_in_the_app(terminals, project, model_server):
    model_server.script(text("Only the second."))
    t = launch(terminals, project, model_server)
    t.type("throw this away")
    t.keys("C-c")
    t.type("keep this")
    t.keys("Enter")
    t.wait(r"Only the second\.")
    assert last_prompt(model_server) == "keep this"
    assert "throw this away" not in t.scrollback()


def test_ctrl_c_twice_at_launch_quits_with_130_and_gives_the_terminal_back(terminals, project, model_server):
    t = launch(terminals, project, model_server)
    t.type("x")
    t.keys("C-c")
    t.keys("C-c")
    t.wait(r"EXITED-130")
    assert "Traceback" not in t.scrollback()
    tty = t.tmux("display", "-p", "-t", t.name, "#{pane_tty}").strip()
    modes = stty(tty)
    assert {"echo", "icanon", "isig", "icrnl"} <= set(modes), modes
    assert model_server.requests == []


def test_the_trust_question_at_launch_gets_the_terminal_and_the_app_still_takes_keys(terminals, project, model_server):
    (project / ".evo-agent").mkdir(exist_ok=True)
    (project / ".evo-agent" / "settings.json").write_text('{"permissions": {"allow": ["Bash(make)"]}}')
    model_server.script(text("After the question."))
    t = launch(terminals, project, model_server)
    screen = t.wait(r"Obey these in this project\? \[y/N\]")
    assert "› This project" not in screen and "›" not in screen, screen  # the early prompt made way for it
    t.type("n")
    t.keys("Enter")
    t.wait(r"tokens · context")
    t.type("after the question")
    t.keys("Enter")
    t.wait(r"After the question\.")
    assert last_prompt(model_server) == "after the question"


def test_an_interrupt_that_lands_where_it_cannot_be_raised_prints_nothing():
    """Ctrl+C twice at launch interrupts the main thread wherever it is: inside an import's module-lock callback
    (a weakref callback, which cannot raise) Python printed `Exception ignored in: … KeyboardInterrupt` and its
    traceback on the terminal (1 launch in ~5 of the test above). Other errors there are still printed."""
    import sys

    program = """if True:
        import weakref
        from evo_agent.ui.early_input import quiet_interrupts

        class Held: pass

        def callback_raising(kind):
            def callback(_):
                raise kind("from a weakref callback")
            held = Held()
            ref = weakref.ref(held, callback)
            del held  # the callback runs now, and cannot raise: an unraisable exception
            return ref

        quiet_interrupts()
        callback_raising(KeyboardInterrupt)
        callback_raising(ValueError)
        print("went on")
    """
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout == "went on\n", done
    assert "KeyboardInterrupt" not in done.stderr and "ValueError: from a weakref callback" in done.stderr, done.stderr
