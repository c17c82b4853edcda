"""A demanding user's first hour with the real console script in tmux at 80×24: the rough edges they saw.

Each test drives `evo-agent` in its own tmux server (tests/tmux_terminal.py) and asserts what is on the
screen. Every wait is for something on the screen, with a generous bound, never a fixed sleep.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from tests.fake_model_server import hang, text
from tests.tmux_terminal import Terminal, open_app, ready

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def say(t: Terminal, line: str) -> None:
    t.type(line)
    t.keys("Enter")


def commit(project, *paths: str) -> None:
    subprocess.run(["git", "add", *paths], cwd=project, check=True, capture_output=True)
    subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "bring settings"],
                   cwd=project, check=True, capture_output=True)


def test_the_trust_question_wraps_between_words_with_its_lists_indented(terminals, project, tmp_path):
    """A clone's long allow rules and server command were cut by the terminal mid-word (`sr` / `c/components`,
    `ompose`), the pieces at column 0 under an indented list: a question to read carefully, read as a wall."""
    (project / ".evo-agent").mkdir(exist_ok=True)
    rules = ["Bash(npm test)", "Bash(npm run lint -- --fix --max-warnings=0 src/components/very/long/path/to/somewhere)",
             "Read", "Bash(docker compose -f docker-compose.development.yml up --build --remove-orphans)"]
    (project / ".evo-agent" / "settings.json").write_text(json.dumps({"permissions": {"allow": rules}}))
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"github": {
        "command": "npx", "args": ["-y", "@modelcontextprotocol/server-github", "--a-long-flag=with-a-long-value-past-the-edge"],
        "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_TOKEN}"}}}}))
    commit(project, ".evo-agent/settings.json", ".mcp.json")
    t = open_app(terminals, project, env={"XDG_CONFIG_HOME": str(tmp_path / "config")})
    screen = t.wait(r"Obey these in this project\? \[y/N, or c to choose the MCP servers one by one\]")
    lines = [line.rstrip() for line in screen.splitlines() if line.strip()]
    top = lines.index("This project brings settings that would give it authority over evo-agent:")
    question = lines[top:]
    assert all(len(line) <= 80 for line in question), question
    starts = ("This project", "A repository", "  trust it", "Obey these", " ")
    assert all(line.startswith(starts) for line in question), question  # a folded piece is indented
    words = {w for line in question for w in line.split()}
    assert {"src/components/very/long/path/to/somewhere),", "docker-compose.development.yml", "--remove-orphans)",
            "@modelcontextprotocol/server-github", "--a-long-flag=with-a-long-value-past-the-edge",
            "GITHUB_PERSONAL_ACCESS_TOKEN=${GITHUB_TOKEN}", "where", "from."} <= words, question
    t.type("n")
    t.keys("Enter")
    ready(t)


def test_rewind_lists_the_prompts_typed_not_the_interruption_notice(terminals, project, model_server):
    """An answer interrupted with Esc leaves `[Request interrupted by user]` in the transcript for the model:
    `/rewind` listed it as prompt 2, a prompt the user never typed."""
    model_server.script(hang(60, text("never sent"), partial="Streaming the first words"))
    t = open_app(terminals, project, env=model_server.env())
    ready(t)
    say(t, "tell me a long story")
    t.wait(r"Streaming the first words")
    t.keys("Escape")
    t.wait(r"Interrupted by user")
    t.wait(r"tokens · context")
    say(t, "/rewind")
    screen = t.wait(r"Go back to before which prompt\?")
    listed = [line.strip() for line in screen.splitlines() if re.match(r"\s+\d+\. ", line)]
    assert listed == ["1. tell me a long story"], screen


def test_a_slash_command_is_echoed_so_its_output_does_not_run_on_from_the_answer(terminals, project, model_server):
    """`/cost` printed `session …: N input + M output` straight under the answer's last line, as if the model
    had said it; Claude Code and Codex show the command typed first (`> /cost`)."""
    model_server.script(text("The answer ends here."))
    t = open_app(terminals, project, env=model_server.env())
    ready(t)
    say(t, "hello")
    t.wait(r"The answer ends here\.")
    t.wait(r"tokens · context")
    say(t, "/cost")
    lines = t.wait(r"in \d+ model calls?").splitlines()
    end = next(i for i, line in enumerate(lines) if "The answer ends here." in line)
    assert lines[end + 1:end + 4] == ["", "› /cost", lines[end + 3]] and lines[end + 3].startswith("session "), lines
    say(t, "/init")
    t.wait(r"› /init")
    assert t.scrollback().count("› /init") == 1, t.scrollback()  # a command that sends a prompt: echoed once


TABLE = """Here is what changed:

| File | Change | Reason |
|------|--------|--------|
| src/evo_agent/ui/very/deep/package/render_helpers.py | wrapped prose between words | users saw words cut at the edge of the screen |
| 漢字ファイル名.py | 日本語の説明がここに入ります、とても長い説明です | 長い理由 |

That is all."""


def test_a_table_wider_than_the_screen_folds_its_cells_and_keeps_one_blank_line_around_it(
        terminals, project, model_server):
    """Rich's table cut a cell's long word (`src/evo_agent/ui/…`: which file?) and drew blank edges, so two empty
    lines stood above and below it."""
    model_server.script(text(TABLE))
    t = open_app(terminals, project, env=model_server.env())
    ready(t)
    say(t, "what changed")
    lines = [line.rstrip() for line in t.wait(r"That is all\.").splitlines()]
    top = lines.index("Here is what changed:")
    header = next(i for i, line in enumerate(lines) if line.lstrip().startswith("File "))
    end = lines.index("That is all.")
    assert header == top + 2 and lines[top + 1] == "" and lines[end - 1] == "" and lines[end - 2] != "", lines
    rows = lines[header + 2:end - 1]
    assert all(len(line) <= 80 for line in lines) and not any("…" in row for row in rows), rows
    first_column = "".join(row.split("  ")[0] for row in rows)
    assert "src/evo_agent/ui/very/deep/package/render_helpers.py" in first_column, rows
    assert "漢字ファイル名.py" in first_column, rows


def test_a_prompt_in_japanese_wraps_under_its_first_word_not_at_column_0(terminals, project, model_server):
    """Japanese has no spaces: the echoed prompt's run of kanji was one "word", left to the terminal, whose
    wrap put its second piece at column 0, under the `›`."""
    model_server.script(text("読みました。"))
    t = open_app(terminals, project, env=model_server.env())
    ready(t)
    prompt = "このファイルのアップロード処理とその周りの再試行ロジックを見て、指数バックオフを独自のモジュールに移してください"
    say(t, "please: " + prompt)
    lines = t.wait(r"読みました。").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("› please:"))
    end = next(i for i, line in enumerate(lines) if "読みました。" in line)
    echoed = lines[start:end]
    assert len(echoed) > 1 and all(line.startswith("  ") for line in echoed[1:]), echoed
    assert "".join(line.strip() for line in echoed).replace(" ", "") == "›please:" + prompt, echoed


def test_a_long_commands_question_stays_on_screen_whole_above_its_first_lines(terminals, project, model_server):
    """A 31-line script whose first line is long: the question repeated that line over three rows, and with the
    command's first lines below it, its start (`? run: docker …`) scrolled off the top at 80×24; the note under
    the lines was cut mid-word by the terminal (`yes waits unti` / `l then`); under it all, `● bash …` said the
    call was still streaming in."""
    from tests.fake_model_server import tool_use

    first = ("docker run --rm -it -v \"$PWD\":/work -w /work -e HOME=/tmp python:3.12-slim bash -c 'pip install -r "
             "requirements.txt && python -m pytest -q tests/unit --maxfail=1 -k \"not slow and not network\"'")
    command = first + "\n" + "\n".join(f"echo step {i} of the long script" for i in range(30))
    model_server.script(tool_use("bash", {"command": command}), text("Not run."))
    t = open_app(terminals, project, env=model_server.env())
    ready(t)
    say(t, "run the script")
    t.wait(r"Ctrl\+O shows all \(\d+ lines not sho")  # the status line, drawn with the menu
    lines = t.screen().splitlines()
    assert any(line.startswith("? run: docker run --rm") for line in lines), lines
    question = next(i for i, line in enumerate(lines) if line.startswith("? run: "))
    assert lines[question + 1] == "  (the command uses expansion or substitution ('$'))", lines  # why it asks
    assert lines[question + 2].startswith("   1 docker run"), lines
    note = [line for line in lines if "more lines not shown" in line or line.startswith("      ")]
    assert " ".join(" ".join(note).split()).endswith("Ctrl+O shows them all; yes waits until then"), note
    assert all(len(line) <= 80 for line in lines), lines
    assert "● bash …" not in lines, lines  # the question names the call: no line says it is still streaming
    t.keys("Escape")
    t.wait(r"Not run\.")


def test_a_slash_lists_every_command_under_the_prompt_with_its_help(terminals, project):
    """`/` showed one line of names cut at the screen's edge (`… /cost /p…`): /permissions, /mcp, /help and /exit,
    what a new user types `/` to find, were not on the screen at all."""
    t = open_app(terminals, project)
    ready(t)
    t.type("/")
    screen = t.wait(r"/exit")
    lines = screen.splitlines()
    assert all(len(line) <= 80 for line in lines), lines
    rows = [line for line in lines if line.startswith("  /")]
    assert rows[0].startswith("  /resume [ID|NAME]  resume a session") and len(rows) >= 8, lines
    assert all(name in screen for name in ("/permissions", "/mcp", "/help", "/exit")), lines
    assert [line for line in lines if line.strip()][-1].startswith("demo · "), lines  # the status line stays last
    t.type("re")
    screen = t.wait(r"(?m)^› /re$")
    rows = [line.split()[0] for line in screen.splitlines() if line.startswith("  /")]
    assert rows == ["/resume", "/rename", "/rewind", "/remember"], screen


def test_a_heading_in_an_answer_starts_at_the_left_edge(terminals, project, model_server):
    """Rich centred a `#` heading: `Plan` stood alone mid-screen above left-aligned text."""
    model_server.script(text("# The plan\n\nFirst, read the handler."))
    t = open_app(terminals, project, env=model_server.env())
    ready(t)
    say(t, "plan it")
    lines = t.wait(r"First, read the handler\.").splitlines()
    assert "The plan" in [line.rstrip() for line in lines], lines


def test_a_pasted_tab_shows_as_blanks_in_the_prompt_and_is_sent_as_a_tab(terminals, project, model_server, tmp_path):
    """A pasted Makefile line showed `^I` in the prompt box, as if the paste had been garbled."""
    model_server.script(text("Got the tab."))
    t = open_app(terminals, project, env=model_server.env())
    ready(t)
    (tmp_path / "paste").write_text("all:\n\tmake build")
    t.tmux("load-buffer", "-b", "p", str(tmp_path / "paste"))
    t.tmux("paste-buffer", "-p", "-b", "p", "-t", t.name)
    screen = t.wait(r"make build")
    assert "^I" not in screen and "\n" + " " * 6 + "make build" in screen, screen  # indent 2, the tab to 4
    t.keys("Enter")
    t.wait(r"Got the tab\.")
    content = model_server.requests[-1]["messages"][-1]["content"]
    assert (content if isinstance(content, str) else content[0]["text"]) == "all:\n\tmake build", content


def test_a_call_the_user_refused_says_not_run_not_an_error_addressed_to_the_model(terminals, project, model_server):
    """Esc at an approval: the call's line then read, in red, `error: Not run: the user refused this call. Ask them
    what to do instead, o…`, the words meant for the model, cut at the edge, as if something had failed."""
    from tests.fake_model_server import tool_use

    model_server.script(tool_use("bash", {"command": "touch MARKER"}), text("Not run, then."))
    t = open_app(terminals, project, env=model_server.env())
    ready(t)
    say(t, "make the marker")
    t.wait(r"Esc says no")
    t.keys("Escape")
    lines = t.wait(r"Not run, then\.").splitlines()
    call = next(i for i, line in enumerate(lines) if line.startswith("● bash(touch MARKER)"))
    assert lines[call + 1] == "  └  not run: you said no", lines
    assert not any("error" in line or "Ask them" in line for line in lines), lines
    assert not (project / "MARKER").exists()


def test_at_60_columns_the_welcome_is_one_line_and_help_wraps_under_its_indent(terminals, project):
    """At 60×20 the welcome line wrapped (`… · /help` / `for help`), and /help's rows went on at column 0,
    between the commands' names."""
    t = open_app(terminals, project, size=(60, 20), env={"EVO_AGENT_PROVIDER": "anthropic",
                                                        "ANTHROPIC_API_KEY": "never-used"})
    t.wait(r"tokens · context")
    say(t, "/help")
    t.wait(r"whole \(yes waits until it has been shown\)")
    lines = t.scrollback().splitlines()
    assert lines[0].startswith("evo-agent · anthropic/claude-sonnet-4-5 · ") and lines[0].endswith("/help"), lines
    assert lines[1] == "", lines
    help_lines = lines[lines.index("› /help") + 1:lines.index("─" * 60)]
    assert all(line.startswith(("Commands:", "Keys:", "  ")) for line in help_lines), help_lines
    assert all(len(line) <= 60 for line in lines), lines


@pytest.mark.parametrize("size", [(80, 24), (60, 20)], ids=["80x24", "60x20"])
def test_what_yes_waits_for_is_never_cut_off_the_menu_or_the_status_line(terminals, project, model_server, size):
    """A command longer than the screen: at 60 columns the Yes rows lost their `(after Ctrl+O)` to the edge
    (`… for this session (after`), and at 80 the status line ended `Ctrl+O shows all (23 lines not sho…`."""
    from tests.fake_model_server import tool_use

    command = "\n".join(f"echo step {i} of the long script that does many things" for i in range(40))
    model_server.script(tool_use("bash", {"command": command}), text("Not run."))
    t = open_app(terminals, project, size=size, env=model_server.env())
    ready(t)
    say(t, "run the script")
    screen = t.wait(r"Ctrl\+O shows all \(\d+ lines not shown\)")
    lines = [line.rstrip() for line in screen.splitlines()]
    yes_rows = [line for line in lines if line.lstrip("❯ ").startswith("Yes")]
    assert len(yes_rows) == 3 and all(row.endswith(" (after Ctrl+O)") for row in yes_rows), yes_rows
    assert lines[-1].startswith("Ctrl+O shows all (") and "…" not in lines[-1], lines[-1]
    assert all(len(line) <= size[0] for line in lines), lines
    t.keys("Escape")
    t.wait(r"Not run\.")


def test_an_api_error_wraps_between_words(terminals, project, model_server):
    """A 401's line was cut by the terminal mid-word (`the ke` / `y you gave`)."""
    from tests.fake_model_server import error

    message = "invalid x-api-key: the key you gave is not valid for this organisation, please check the console page"
    model_server.script(error(401, "authentication_error", message))
    t = open_app(terminals, project, env=model_server.env())
    ready(t)
    say(t, "hello")
    lines = t.wait(r"ANTHROPIC_API_KEY").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("error: "))
    end = next(i for i, line in enumerate(lines) if "ANTHROPIC_API_KEY" in line)
    shown = lines[start:end + 1]
    assert len(shown) > 1 and set(message.split()) <= {w.strip(";") for line in shown for w in line.split()}, shown


def test_a_one_line_commands_question_copies_as_the_one_line_it_is(terminals, project):
    """A long one-line command is shown only in its question: the terminal wraps it, nothing is inserted between
    its words (a line break and an indent made a copy pasted into a shell run its first half alone)."""
    t = open_app(terminals, project)
    ready(t)
    command = ("printf 'a very long output line that goes on and on past the right edge of the screen %s\\n' 1 2 3 "
               "&& echo done-with-it")
    say(t, f"run {command}")
    lines = t.wait(r"Esc says no").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("? run: printf"))
    end = next(i for i, line in enumerate(lines) if "done-with-it" in line and i >= start)
    question = lines[start:end + 1]
    assert len(question) > 1 and all(len(line) == 80 for line in question[:-1]), question  # wrapped at the edge
    assert "".join(question).startswith("? run: " + command), question
    t.keys("Escape")
    t.wait(r"tokens · context")


def test_resume_says_so_when_there_is_no_other_session_or_none_was_chosen(terminals, project):
    """`/resume` in a project with no other session did nothing at all, and Esc in its picker left no word."""
    from tests.builders import seed_session

    t = open_app(terminals, project)
    ready(t)
    say(t, "/resume")
    t.wait(r"No other session in this project to resume\.")
    seed_session(project, ("an earlier question", "an answer"))
    say(t, "/resume")
    t.wait(r"\"an earlier question\"")  # a row of the picker
    t.keys("Escape")
    t.wait(r"No session chosen; this one goes on\.")
    t.wait(r"tokens · context")


def test_narrowing_the_terminal_during_an_approval_leaves_no_second_menu_row(terminals, project, model_server):
    """The menu was drawn over the idle frame's full-width rules, whose width tmux kept for its short rows: at
    60 columns those took two rows each, the erase before the redraw stopped short, and `Yes (after Ctrl+O)`
    showed twice."""
    from tests.fake_model_server import tool_use

    command = "\n".join(f"echo step {i} of the long script that does many things" for i in range(40))
    model_server.script(text("An answer first."), tool_use("bash", {"command": command}), text("Not run."))
    t = open_app(terminals, project, env=model_server.env())
    ready(t)
    say(t, "hello")
    t.wait(r"An answer first\.")
    t.wait(r"tokens · context")
    say(t, "run the script")
    t.wait(r"Ctrl\+O shows all \(\d+ lines not shown\)")
    t.tmux("resize-window", "-t", t.name, "-x", "60", "-y", "20")
    screen = t.wait(r"for th… \(after Ctrl\+O\)")  # the menu drawn again at the new width
    assert screen.count("Yes (after Ctrl+O)") == 1, screen
    t.tmux("resize-window", "-t", t.name, "-x", "80", "-y", "24")
    screen = t.wait(r"for this session \(after Ctrl\+O\)")
    assert screen.count("Yes (after Ctrl+O)") == 1, screen
    t.keys("Escape")
    t.wait(r"Not run\.")


def test_a_long_model_names_welcome_stays_one_line_with_its_help_hint(terminals, project, model_server):
    """`--model` with a dated or proxy model's long name: the welcome wrapped at the edge (`… · /he` / `lp`), and the
    status line had room for nothing after it but the tokens (no context, no permission mode)."""
    model = "claude-sonnet-4-5-20250929-served-through-the-company-proxy-eu-west"
    t = open_app(terminals, project, "--model", model, env=model_server.env())
    t.wait(r"(?m)^claude-sonnet-4-5-2025.* · 0 tokens")  # the status line: the frame is drawn
    lines = t.screen().splitlines()
    assert lines[0].startswith("evo-agent · anthropic/claude-sonnet-4-5-2025") and lines[0].endswith("… · /help"), lines
    assert lines[1].startswith("─"), lines  # the frame's first rule right under it: the welcome took one row
    status = lines[4]  # the model's name cut, so the context and the permission mode still show
    assert status.startswith("claude-sonnet-4-5-2025") and "… · 0 tokens · context 0% · mode ask" in status, lines


def test_rewind_before_the_first_prompt_says_there_is_nothing_to_rewind(terminals, project):
    """`/rewind` in a new session (its transcript not written yet) showed `error: [Errno 2] No such file or
    directory: '…/messages.jsonl'`."""
    t = open_app(terminals, project)
    ready(t)
    say(t, "/rewind")
    screen = t.wait(r"Nothing to rewind: no prompt in this session yet\.")
    assert "Errno" not in screen and "error" not in screen, screen


def test_the_slash_menu_is_chosen_with_the_arrows_and_enter_runs_the_chosen_command(terminals, project):
    """With the `/` menu up, ↓ chose nothing and Enter sent `/` to the model as a prompt (a paid call answering
    `/`); Claude Code and Codex move a highlight through their menu with ↑/↓ and run it with Enter."""
    t = open_app(terminals, project)
    ready(t)
    t.type("/")
    t.wait(r"/exit")
    t.keys("Enter")
    t.wait(r"Choose a command with ↓, or type its name")  # nothing sent: no prompt echoed, the menu still up
    assert "› /\n" in t.screen() and "You said" not in t.scrollback(), t.scrollback()
    t.keys("C-u")
    t.type("/co")
    t.wait(r"(?m)^  /cost ")
    t.keys("Down", "Down")
    screen = t.wait(r"(?m)^❯ /cost ")
    assert "❯ /compact" not in screen, screen
    t.keys("Enter")
    t.wait(r"› /cost\nsession \d{13}_")  # /cost's totals under its echo (the status line names the session too)
    t.keys("Up")
    t.wait(r"(?m)^› /cost$")  # the history holds the command run, not the `/co` typed
    t.keys("C-u")
    t.type("/ren")
    t.wait(r"(?m)^  /rename NAME")
    t.keys("Down", "Enter")  # a command that needs an argument waits for it
    t.wait(r"(?m)^› /rename$")  # `/rename ` (tmux drops the trailing blank): not run yet
    assert "› /rename\n" not in t.scrollback().split("› /cost")[-1].split("─")[0], t.scrollback()
    t.type("my session")
    t.keys("Enter")
    t.wait(r"(?m)^› /rename my session$")


def test_a_5000_line_paste_is_sent_whole_and_echoed_by_its_start(terminals, project, model_server, tmp_path):
    """A pasted log of 5,000 lines was echoed whole above the answer: tmux's 2,000 lines of scrollback then held
    nothing but the paste's end, the welcome and every earlier answer gone."""
    model_server.script(text("An earlier answer."), text("Got the log."))
    t = open_app(terminals, project, env=model_server.env())
    ready(t)
    say(t, "hello")
    t.wait(r"An earlier answer\.")
    t.wait(r"tokens · context")
    log = "\n".join(f"line {i}: ERROR something failed 日本語" for i in range(5000))
    (tmp_path / "paste").write_text(log)
    t.type("what is wrong here? ")
    t.tmux("load-buffer", "-b", "p", str(tmp_path / "paste"))
    t.tmux("paste-buffer", "-p", "-b", "p", "-t", t.name)
    t.wait(r"line 4999: ERROR")  # the prompt box shows the paste's end
    t.keys("Enter")
    t.wait(r"Got the log\.")
    history = t.scrollback()
    assert "An earlier answer." in history and "line 4999" not in history, history[-2000:]
    assert "› what is wrong here? line 0: ERROR something failed 日本語" in history, history[-2000:]
    assert "  … 4,980 more lines not shown (all sent)" in history, history[-2000:]
    content = model_server.requests[-1]["messages"][-1]["content"]
    assert (content if isinstance(content, str) else content[0]["text"]) == "what is wrong here? " + log


def test_a_long_line_in_an_answers_code_block_copies_as_the_one_line_it_is(terminals, project, model_server):
    """Rich wrapped a code block's long line, putting a line break and an indent inside it: the `docker run …`
    the model gave, copied from the screen into a shell, ran its first half alone. The terminal wraps it now
    (tmux joins what it wrapped: `capture-pane -J`), as an approval's long command."""
    command = ("docker run --rm -it -v \"$PWD\":/work -w /work python:3.12-slim bash -c 'pip install -r "
               "requirements.txt && python -m pytest -q'")
    model_server.script(text(f"Run this:\n\n```bash\n{command}\necho done\n```\n\nThen tell me."))
    t = open_app(terminals, project, env=model_server.env())
    ready(t)
    say(t, "how do I run the tests")
    t.wait(r"Then tell me\.")
    t.wait(r"tokens · context")  # the turn is over: all of the answer is printed
    joined = t.tmux("capture-pane", "-t", t.name, "-p", "-J").splitlines()
    assert "  " + command in [line.rstrip() for line in joined], joined
    lines = t.screen().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("  docker run"))
    assert len(lines[start]) == 80 and lines[start + 2] == "  echo done", lines  # wrapped once, at the edge
    assert lines[start - 1] == "" and lines[start + 3] == "", lines


def test_after_ctrl_o_the_status_line_no_longer_says_the_lines_are_not_shown(terminals, project, model_server):
    """Enter on Yes before Ctrl+O says `N lines are not shown yet: Ctrl+O shows them`; after Ctrl+O showed them
    and the Yes rows came back, the status line still said so for seconds, contradicting the menu above it."""
    from tests.fake_model_server import tool_use

    (project / "big.py").write_text("".join(f"value_{i} = {i}\n" for i in range(200)))
    new = "".join(f"value_{i} = {i * 2}\n" for i in range(200))
    model_server.script(tool_use("write_file", {"path": "big.py", "content": new}), text("Written."))
    t = open_app(terminals, project, env=model_server.env())
    ready(t)
    say(t, "double the values")
    t.wait(r"Ctrl\+O shows all \(\d+ lines not shown\)")
    t.keys("Down", "Enter")
    t.wait(r"lines are not shown yet: Ctrl\+O shows them")
    t.keys("C-o")
    t.wait(r"(?m)^❯ Yes$")
    # The frame that shows ❯ Yes draws the status line too: the bound only has to be shorter than the hint's
    # 4 s (it held the stale hint until then), not a guess at how long a redraw takes.
    t.wait(r"(?m)^↑/↓ choose · Enter answers", timeout=3)
    t.keys("Enter")
    t.wait(r"Written\.")


def test_the_reason_after_a_long_one_line_command_wraps_between_words(terminals, project):
    """The command shown only in its question is wrapped by the terminal (it copies as one line); the reason
    after it was too: a 65-character command left `(the c` at the edge and `ommand runs 'npm', …` below. The
    reason now goes on lines of its own under the command, wrapped between words."""
    t = open_app(terminals, project)
    ready(t)
    command = "npm run build -- --prod --verbose --output-path=dist/apps/website"
    say(t, f"run {command}")
    lines = t.wait(r"Esc says no").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("? run: npm"))
    assert lines[start].rstrip() == "? run: " + command, lines
    assert lines[start + 1].rstrip() == "  (the command runs 'npm', which may have side effects)", lines
    t.keys("Escape")
    t.wait(r"tokens · context")


def test_compact_stopped_with_esc_says_so_without_an_error(terminals, project, model_server):
    """Esc during `/compact` printed, in red, `error: cannot compact: the summary was interrupted; …`: the user
    stopped it, nothing failed."""
    model_server.script(text("First answer."), hang(60, text("never sent"), partial="Summ"))
    t = open_app(terminals, project, env=model_server.env())
    ready(t)
    say(t, "hello")
    t.wait(r"First answer\.")
    t.wait(r"tokens · context")
    say(t, "/compact")
    t.wait(r"compacting \d+ s · Esc interrupts")
    model_server.hanging.wait(30)  # the summary's request is in: Esc stops it, not the start of the command
    t.keys("Escape")
    screen = t.wait(r"nothing was compacted")
    assert "Interrupted: cannot compact: the summary was interrupted; nothing was compacted" in " ".join(
        screen.split()), screen
    assert "error" not in screen, screen


def test_the_reason_for_a_no_wraps_under_its_start(terminals, project, model_server):
    """`└  refused: because …`: the reason typed for a no went on at column 0, under the └, cut where the
    screen ended."""
    from tests.fake_model_server import tool_use

    model_server.script(tool_use("bash", {"command": "rm -rf build"}), text("OK, not removing."))
    t = open_app(terminals, project, env=model_server.env())
    ready(t)
    say(t, "clean up")
    t.wait(r"Esc says no")
    t.keys("Down", "Down", "Down", "Down", "Down")
    t.wait(r"(?m)^❯ No, and tell the model why")
    t.keys("Enter")
    t.wait(r"reason for no \(optional\)")
    reason = "because the build directory holds the release candidate we ship tonight, and rebuilding it takes an hour"
    t.type(reason)
    t.keys("Enter")
    lines = t.wait(r"OK, not removing\.").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("  └  refused: because"))
    end = next(i for i, line in enumerate(lines) if line.startswith("● bash(rm -rf build)"))
    said = lines[start:end]
    assert len(said) > 1 and all(line.startswith("     ") for line in said[1:]), said
    assert " ".join(" ".join(said).split()) == "└ refused: " + reason, said


def test_a_long_url_in_an_answer_copies_as_the_one_line_it_is(terminals, project, model_server):
    """A paragraph's URL wider than the screen was folded by Rich at the edge with a line break: the link copied
    from the screen (or clicked) was its first 80 characters. The terminal wraps it now (tmux joins what it
    wrapped: `capture-pane -J`), and the words around it still wrap between words."""
    url = "https://github.com/example-org/example-repository/blob/main/src/some/deeply/nested/path/to/file.py#L120"
    model_server.script(text(f"The failing line is at {url} where the retry loop gives up too early and the "
                             "error is swallowed."))
    t = open_app(terminals, project, env=model_server.env())
    ready(t)
    say(t, "where does it fail")
    t.wait(r"swallowed\.")
    t.wait(r"tokens · context")  # the turn is over: the answer is printed, no longer the live region's tail
    joined = [line.rstrip() for line in t.tmux("capture-pane", "-t", t.name, "-p", "-J").splitlines()]
    assert url in joined, joined
    assert "The failing line is at" in joined, joined  # the words before it end their line, between words
    assert "where the retry loop gives up too early and the error is swallowed." in joined, joined


def test_rewind_puts_the_prompt_gone_back_before_in_the_prompt_box(terminals, project, model_server):
    """After `/rewind 2` the prompt box was empty: the prompt the user went back to fix had to be typed again
    (Claude Code and Codex put it back in their input box to edit and send)."""
    model_server.script(text("First answer."), text("Second answer."), text("Better answer."))
    t = open_app(terminals, project, env=model_server.env())
    ready(t)
    say(t, "list the files")
    t.wait(r"First answer\.")
    t.wait(r"tokens · context")
    say(t, "explain the retry logic in uploader.py")
    t.wait(r"Second answer\.")
    t.wait(r"tokens · context")
    say(t, "/rewind 2")
    t.wait(r"Rewound to before turn 2")
    screen = t.wait(r"(?m)^› explain the retry logic in uploader\.py$")
    lines = [line for line in screen.splitlines() if line.strip()]
    assert lines[-3] == "› explain the retry logic in uploader.py" and lines[-1].startswith("claude-sonnet-4-5 · "), lines
    t.type(" and its tests")
    t.keys("Enter")
    t.wait(r"Better answer\.")
    content = model_server.requests[-1]["messages"][-1]["content"]
    sent = content if isinstance(content, str) else content[0]["text"]
    assert sent == "explain the retry logic in uploader.py and its tests", sent


def test_a_paste_larger_than_the_context_window_is_refused_and_given_back_to_edit(
        terminals, project, model_server, tmp_path):
    """A huge paste showed `context 388%`, was sent, refused by the API, and stayed in the history: every later
    turn resent it. Now one line says so before anything is sent, and the paste is back in the box."""
    model_server.script(text("Just hello."))
    t = open_app(terminals, project, env={**model_server.env(), "EVO_AGENT_COMPACT_CHARS": "1000"})
    ready(t)
    (tmp_path / "paste").write_text(" ".join(f"word{i}" for i in range(2000)))  # 17,889 characters
    t.tmux("load-buffer", "-b", "p", str(tmp_path / "paste"))
    t.tmux("paste-buffer", "-p", "-b", "p", "-t", t.name)
    t.wait(r"word1999")
    t.keys("Enter")
    screen = t.wait(r"(?s)nothing was sent.*word1999")  # the paste is back in the box, below the refusal
    assert "over the 12,000 characters the model's context" in screen.replace("\n", " "), screen
    assert model_server.requests == []
    t.keys("C-c")  # clears the box
    t.wait(r"tokens · context 0%")
    say(t, "hello")
    t.wait(r"Just hello\.")
    sent = model_server.requests[-1]["messages"]
    assert len(sent) == 1 and "word1" not in json.dumps(sent) and "hello" in json.dumps(sent), sent


def test_ctrl_c_at_an_approval_stops_the_turn_while_esc_only_says_no(terminals, project, model_server):
    """Ctrl+C at an approval said no to that call and the model went on with its turn (the next call, another
    question); Codex's Ctrl+C and Claude Code's Esc stop the turn there. Ctrl+C now does; Esc still says no."""
    from tests.fake_model_server import tool_use

    model_server.script(tool_use("bash", {"command": "touch MARKER"}), text("Carried on anyway."),
                        text("Picking up again."))
    t = open_app(terminals, project, env=model_server.env())
    ready(t)
    say(t, "make the marker")
    t.wait(r"Esc says no")
    t.keys("C-c")
    t.wait(r"Interrupted by user")
    t.wait(r"tokens · context")
    assert len(model_server.requests) == 1 and "Carried on anyway." not in t.scrollback(), t.scrollback()
    assert not (project / "MARKER").exists()
    say(t, "why did you stop?")  # the call refused, the turn interrupted: that is what the model reads next
    t.wait(r"Carried on anyway\.")
    sent = json.dumps(model_server.requests[-1]["messages"])
    assert "refused" in sent and "[Request interrupted by user]" in sent, sent


def test_the_resume_hint_of_a_long_rename_copies_as_one_line(terminals, project):
    """`/rename` with a long name: its `--resume '<name>'` hint was wrapped between words with a line break, so
    the command copied from the screen broke in two. The terminal wraps it now (tmux joins it: `-J`)."""
    name = "fix the flaky upload test in the billing service before the release on friday afternoon"
    t = open_app(terminals, project)
    ready(t)
    say(t, f"/rename {name}")
    t.wait(r"is now named")
    t.wait(r"tokens · context")
    joined = [line.rstrip() for line in t.tmux("capture-pane", "-t", t.name, "-p", "-J").splitlines()]
    assert f"  evo-agent --resume '{name}'" in joined, joined


def test_a_pasted_text_of_several_lines_starting_with_a_slash_command_is_a_prompt(terminals, project, model_server,
                                                                                  tmp_path):
    """A paste of notes whose first line was `/rename release` ran /rename with the whole rest of the paste as the
    session's name; Claude Code sends a multi-line paste as a prompt."""
    model_server.script(text("Read your notes."))
    t = open_app(terminals, project, env=model_server.env())
    ready(t)
    pasted = "/rename release\nthen summarise these notes\n- the parser is done"
    (tmp_path / "paste").write_text(pasted)
    t.tmux("load-buffer", "-b", "p", str(tmp_path / "paste"))
    t.tmux("paste-buffer", "-p", "-b", "p", "-t", t.name)
    t.wait(r"the parser is done")
    t.keys("Enter")
    screen = t.wait(r"Read your notes\.")
    assert "is now named" not in t.scrollback(), screen
    content = model_server.requests[-1]["messages"][-1]["content"]
    assert (content if isinstance(content, str) else content[0]["text"]) == pasted, content


def test_the_remember_path_and_the_memory_hint_copy_as_one_line_each(terminals, project):
    """At 80 columns `/remember`'s file path was cut by the terminal and its `).` left alone on the next line,
    and `/memory`'s `evo-agent memory edit|rm NAME` was wrapped between its words: each is whole on a line of
    its own now, as /rename's hint is (tmux joins what only the terminal wrapped: `-J`)."""
    t = open_app(terminals, project)
    ready(t)
    say(t, "/remember always run the whole test suite with nice before pushing a branch")
    t.wait(r"Saved to")
    t.wait(r"tokens · context")
    memory_dir = project / ".evo-agent" / "memory"
    saved = next(p for p in memory_dir.iterdir() if p.name != "MEMORY.md")
    joined = [line.rstrip() for line in t.tmux("capture-pane", "-t", t.name, "-p", "-J").splitlines()]
    assert f"  {saved}" in joined, joined
    assert "." not in [line.strip() for line in t.screen().splitlines()], t.screen()
    say(t, "/memory")
    t.wait(r"edit\|rm NAME")
    t.wait(r"tokens · context")
    joined = [line.rstrip() for line in t.tmux("capture-pane", "-t", t.name, "-p", "-J").splitlines()]
    assert "  evo-agent memory edit|rm NAME" in joined, joined
    assert all(len(line) <= 80 for line in t.screen().splitlines())
