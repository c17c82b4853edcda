"""A demanding user's keys in the real console script, in tmux at 80×24: what each one does at each stage.

Each test drives `evo-agent` in its own tmux server (tests/tmux_terminal.py) and asserts what is on the
screen. Every wait is for something on the screen, with a generous bound, never a fixed sleep.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

import pytest

from tests.fake_model_server import hang, text, tool_use
from tests.tmux_terminal import EVO, Terminal, open_app, ready

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
HINT = r"Resume this session with: evo-agent --resume (\d{13}_[0-9a-f]{8})"


def test_ctrl_z_suspends_the_app_to_the_shell_and_fg_brings_it_back_with_the_text_typed(terminals, project):
    """Ctrl+Z stops the app as it stops any terminal program (Claude Code and Codex do too): it put a
    literal ^Z into the prompt, sent to the model with the next Enter."""
    t = open_app(terminals, project, job_control=True)
    ready(t)
    t.type("half a thought")
    t.wait(r"› half a thought")
    t.keys("C-z")
    screen = t.wait(r"Stopped")
    assert "^Z" not in screen and "› half a thought" not in screen  # the app's frame is gone: the shell has it
    t.type("fg")
    t.keys("Enter")
    t.wait(r"› half a thought\s*\n")  # back, with what was typed
    t.type(" and the rest")
    t.keys("Enter")
    screen = t.wait(r"I am the offline demo provider")
    assert "› half a thought and the rest" in screen
    t.type("/exit")
    t.keys("Enter")
    t.wait(HINT + r"\n\$\s*$")  # the exit hint, right above the shell's prompt
    t.type("echo EXITED-$?")
    t.keys("Enter")
    t.wait(r"(?m)^EXITED-0")
    assert re.fullmatch(HINT, t.last_lines(4)[0]), t.screen()


def test_ctrl_z_in_the_resume_picker_suspends_it_too(terminals, project):
    """The picker's filter took a literal ^Z, and then matched no session."""
    made = subprocess.run([EVO, "-p", "list the files"], cwd=project, capture_output=True, text=True,
                          env={**os.environ, "EVO_AGENT_PROVIDER": "demo"})
    assert made.returncode == 0, made.stderr
    t = open_app(terminals, project, "--resume", job_control=True)
    t.wait(r"Filter:")
    t.type("list")
    t.wait(r"Filter: list\s*\n")
    t.keys("C-z")
    screen = t.wait(r"Stopped")
    assert "^Z" not in screen
    t.type("fg")
    t.keys("Enter")
    screen = t.wait(r"Filter: list\s*\n")
    assert re.search(r'> .*"list the files"', screen) and "1 session" in screen  # the filter still matches it
    t.keys("Escape")
    t.wait(r"\$ fg\n(.*\n)*\$\s*$")  # the picker left, the shell's prompt is back


def test_esc_closes_the_slash_menu_and_only_a_second_esc_stops_the_turn(terminals, project):
    """Esc left the `/` menu's thirteen rows up (idle), or stopped the running turn under it; Claude Code and
    Codex close their menu with Esc, keeping what was typed."""
    t = open_app(terminals, project)
    ready(t)
    t.type("/")
    t.wait(r"(?m)^  … \d+ more: .*/exit")
    t.keys("Escape")
    t.wait(r"(?m)^› /\n─+\ndemo · ")  # the menu gone, the `/` kept, the status line right under the box
    t.type("co")
    t.wait(r"(?m)^  /cost ")  # typing brings it back
    t.keys("C-u")
    t.type("run sleep 30")
    t.keys("Enter")
    t.wait(r"working \d+ s .*bash\(sleep 30\)")
    t.type("/")
    t.wait(r"(?m)^  … \d+ more: .*/exit")
    t.keys("Escape")
    screen = t.wait(r"(?m)^› /\n─+\n⠀*\S* ?working ")
    assert "Interrupted" not in screen, screen  # the turn goes on
    t.keys("Escape")
    t.wait(r"Interrupted by user")


def joined_lines(t: Terminal) -> list[str]:
    """The screen with the lines only the terminal wrapped joined (`-J`): what a copy of one line gives."""
    return [line.rstrip() for line in t.tmux("capture-pane", "-t", t.name, "-p", "-J").splitlines()]


def test_clear_and_rewind_print_the_previous_sessions_resume_command_on_a_line_of_its_own(terminals, project):
    """`/clear` and `/rewind` ended their notice with `(the previous one: evo-agent --resume <id>)`, wrapped
    between words at 80 columns: the command copied from the screen broke in two (as /rename's did)."""
    t = open_app(terminals, project)
    ready(t)
    t.type("list the files")
    t.keys("Enter")
    t.wait(r"└  README\.md")
    t.wait(r"tokens · context")
    first = re.search(r"session (\d{13}_[0-9a-f]{8})", t.screen()).group(1)
    t.type("/clear")
    t.keys("Enter")
    t.wait(r"Started new session")
    t.wait(r"tokens · context")
    assert f"  evo-agent --resume {first}" in joined_lines(t), t.screen()
    t.type(f"/resume {first}")
    t.keys("Enter")
    t.wait(r"Resumed ")
    t.wait(r"tokens · context")
    resumed = re.search(r"session (\d{13}_[0-9a-f]{8})\s*$", t.screen().rstrip()).group(1)
    t.type("/rewind 1")
    t.keys("Enter")
    t.wait(r"Rewound to before turn 1")
    t.wait(r"tokens · context")
    assert f"  evo-agent --resume {resumed}" in joined_lines(t), t.screen()


def say_and_wait(t: Terminal, line: str) -> None:
    t.type(line)
    t.keys("Enter")
    t.wait(rf"You said: «{re.escape(line)}»")
    t.wait(r"tokens · context")


def test_ctrl_r_searches_the_prompt_history_and_enter_puts_the_match_in_the_box(terminals, project):
    """Ctrl+R did nothing: a bash, Claude Code or Codex user finds an earlier prompt by a word of it."""
    t = open_app(terminals, project)
    ready(t)
    for line in ("deploy the staging server", "fix the login bug", "write the release notes"):
        say_and_wait(t, line)
    t.keys("C-r")
    t.type("stag")
    screen = t.wait(r"(?m)^› deploy the staging server\s*$")
    assert "stag" in screen.split("› deploy the staging server")[1], screen  # what was typed to find it
    t.keys("Enter")  # ends the search with the match in the box, sent by the next Enter only
    t.wait(r"(?m)^› deploy the staging server\s*\n─+\ndemo · ")
    assert t.scrollback().count("You said: «deploy the staging server»") == 1, t.scrollback()  # not sent yet
    t.keys("Enter")
    t.wait(r"(?s)You said: «deploy the staging server».*You said: «deploy the staging server»", where="scrollback")
    t.wait(r"tokens · context")
    t.keys("C-r")
    t.type("nowhere")
    t.keys("C-g")  # gives up: the box as it was before the search
    t.wait(r"(?m)^›\s*\n─+\ndemo · ")


def test_resume_of_the_session_in_use_says_so_and_changes_nothing(terminals, project):
    """`/resume` with this session's id, a prefix of it or its name copied it into a new session, with a warning
    that it was 'in use by pid N', N the app itself."""
    t = open_app(terminals, project)
    ready(t)
    say_and_wait(t, "hello")
    t.type("/rename kept")
    t.keys("Enter")
    t.wait(r"is now named 'kept'")
    t.wait(r"tokens · context")
    current = re.search(r"session (\d{13}_[0-9a-f]{8})\s*$", t.screen().rstrip()).group(1)
    for named in (current, current[:16], "kept"):
        t.type(f"/resume {named}")
        t.keys("Enter")
        t.wait(rf"› /resume {named}\n.*{current} is the session you are in")
        t.wait(r"tokens · context")
    screen = t.screen()
    assert "in use by" not in t.scrollback() and "Resumed" not in t.scrollback(), t.scrollback()
    assert screen.rstrip().endswith(f"session {current}"), screen  # the same session goes on


def test_after_ctrl_l_a_prompt_leaves_no_copy_of_the_prompt_box_in_the_scrollback(terminals, project):
    """Ctrl+L puts the live region at the top of the screen; erasing it there to print the next line (`\\x1b[J` at
    the screen's home) made tmux save the whole screen into the scrollback: the box with the prompt in it, its
    rules and the status line stayed there above the echo."""
    t = open_app(terminals, project)
    ready(t)
    t.keys("C-l")
    t.wait(r"\A─+\n›")  # the box alone at the top of the screen
    t.type("hello there")
    t.wait(r"› hello there")
    t.keys("Enter")
    t.wait(r"You said: «hello there»")
    t.wait(r"tokens · context")
    history = t.scrollback()
    assert history.count("hello there") == 2 and history.count("─" * 80) == 2, history  # echo, answer; one box


def test_narrowing_the_terminal_while_an_answer_streams_leaves_no_copy_of_the_live_region(
        terminals, project, model_server):
    """Narrowed to 40×12 under a streaming answer, the live region sat at the top of the screen, and each erase
    of it there (the end of the answer's print) left a copy of it in the scrollback: a `working N s` status line
    and the answer's last line twice above the answer."""
    partial = "".join(f"streamed line {i:02d} of the answer, long enough to wrap at forty columns\n"
                      for i in range(1, 31))
    model_server.script(hang(120, text("the last line of the answer."), partial=partial))
    t = open_app(terminals, project, env=model_server.env())
    ready(t)
    t.type("stream it")
    t.keys("Enter")
    t.wait(r"streamed line 30 of the answer")
    t.tmux("resize-window", "-t", t.name, "-x", "40", "-y", "12")
    t.wait(r"(?m)^─{40}\n›\s*\n─{40}\n\S+ working")  # the live region drawn again at 40 columns
    model_server.stop()  # the held answer ends
    t.wait(r"the last line of the answer\.\n(.*\n)*─{40}\n›\s*\n─{40}\nclaude-sonnet")
    history = t.scrollback()
    assert "working" not in history and history.count("the last line of the answer.") == 1, history


def test_the_resume_picker_cancelled_at_the_top_of_the_screen_leaves_no_copy_in_the_scrollback(terminals, project):
    """The picker, drawn from the screen's first row, was erased there on Esc: tmux saved its whole screen into
    the scrollback, where the list stayed above the shell's next prompt."""
    made = subprocess.run([EVO, "-p", "list the files"], cwd=project, capture_output=True, text=True,
                          env={**os.environ, "EVO_AGENT_PROVIDER": "demo"})
    assert made.returncode == 0, made.stderr
    t = open_app(terminals, project, "--resume")
    t.wait(r"\AResume a session")
    t.wait(r'> .*"list the files"')
    t.keys("Escape")
    t.wait(r"EXITED-0")
    assert "Resume a session" not in t.scrollback() and "list the files" not in t.scrollback(), t.scrollback()


def test_a_command_cut_in_its_question_counts_one_line_in_the_singular(terminals, project):
    """A one-line command too long for the screen: the status line read `(1 lines not shown)`, and yes chosen
    before Ctrl+O said `1 lines are not shown yet`."""
    t = open_app(terminals, project)
    ready(t)
    t.type("run npm run build -- " + "--flag " * 200)
    t.keys("Enter")
    screen = t.wait(r"Ctrl\+O shows all")
    assert "(1 line not shown)" in screen, screen
    t.keys("Down", "Enter")
    screen = t.wait(r"is not shown yet")
    assert "1 line is not shown yet: Ctrl+O shows it, then yes can be chosen" in screen, screen
    t.keys("Escape")
    t.wait(r"tokens · context")


@pytest.mark.parametrize("key", ["C-c", "C-d"])
def test_ctrl_c_or_ctrl_d_at_the_trust_question_ends_its_line(terminals, project, tmp_path, key):
    """Ctrl+C (or Ctrl+D) at `Obey these in this project? [y/N]` is a no; what it printed ran on from the
    question's line: `[y/N] ^Cevo-agent: ignoring .evo-agent/settings.json` cut at the screen's edge."""
    (project / ".evo-agent").mkdir(exist_ok=True)
    (project / ".evo-agent" / "settings.json").write_text(json.dumps({"permissions": {"allow": ["Bash(npm test)"]}}))
    subprocess.run(["git", "add", ".evo-agent/settings.json"], cwd=project, check=True, capture_output=True)
    subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "settings"], cwd=project,
                   check=True, capture_output=True)
    t = open_app(terminals, project, env={"XDG_CONFIG_HOME": str(tmp_path / "config")})
    t.wait(r"Obey these in this project\? \[y/N\]")
    t.keys(key)
    ready(t)
    lines = t.screen().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("Obey these in this project?"))
    assert lines[at + 1].startswith("evo-agent: ignoring .evo-agent/settings.json"), lines


def test_ctrl_r_at_an_approval_leaves_the_keyboard_on_the_question(terminals, project, model_server):
    """Ctrl+R at an approval started the history search under the question's own keys line (`Enter answers`),
    where Enter then took the search and not the answer."""
    model_server.script(tool_use("bash", {"command": "npm run build --prod"}), text("done"))
    t = open_app(terminals, project, env=model_server.env())
    ready(t)
    t.type("build it")
    t.keys("Enter")
    t.wait(r"Enter answers")
    t.keys("C-r")
    t.wait(r"Answer the question first \(Ctrl\+R searches from the prompt: Tab\)")
    t.keys("Down", "Down", "Down", "Down", "Enter")  # No (a search would have taken ↓ and Enter)
    t.wait(r"not run: you said no")
    assert "search history" not in t.screen(), t.screen()


def test_slash_status_says_the_session_model_project_and_mode_each_whole_on_a_line(terminals, project):
    """`/status` (Claude Code's and Codex's) was an unknown command; at 80 columns the status line drops the
    session's id first, and the project's path is cut in the welcome line."""
    t = open_app(terminals, project)
    ready(t)
    say_and_wait(t, "hello")
    t.type("/rename kept")
    t.keys("Enter")
    t.wait(r"is now named 'kept'")
    t.type("/status")
    t.keys("Enter")
    screen = t.wait(r"› /status\n(.*\n)+─+\n›")
    lines = [line.rstrip() for line in screen.split("› /status\n")[1].splitlines()]
    session = re.search(r"--resume (\d{13}_[0-9a-f]{8})", t.scrollback()) or re.search(
        r"Session (\d{13}_[0-9a-f]{8})", t.scrollback())
    assert f"Session: {session.group(1)} ('kept')" in lines, lines
    assert "Model: demo (demo)" in lines and "Permission mode: ask" in lines, lines
    assert any(line.startswith("Context: ") and "% of the compaction threshold" in line for line in lines), lines
    assert "Project:" in screen and any(line.endswith(str(project)) for line in joined_lines(t)), screen  # whole


def test_a_backslash_before_enter_starts_a_new_line_instead_of_sending(terminals, project, model_server):
    """Claude Code's quick new line: `\\` then Enter. Enter sent the half-written prompt with its backslash."""
    model_server.script(text("Two lines received."))
    t = open_app(terminals, project, env=model_server.env())
    ready(t)
    t.type("first line \\")
    t.keys("Enter")
    t.wait(r"(?m)^› first line *\n *\n─")  # the box: the first line, and a second one to write on
    t.type("second line")
    t.keys("Enter")
    t.wait(r"Two lines received\.")
    prompt = model_server.requests[-1]["messages"][-1]["content"]
    text_of = prompt if isinstance(prompt, str) else "".join(b.get("text", "") for b in prompt if b["type"] == "text")
    assert "first line \nsecond line" in text_of and "\\" not in text_of, text_of
